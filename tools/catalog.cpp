/// \file The tool's kernel catalogue: the samples' kernels with example arguments.
#include "tools/catalog.h"

#include "samples/kernels/gelu.h"
#include "samples/kernels/matmul_relu.h"
#include "samples/kernels/row_sum.h"
#include "samples/kernels/softmax.h"
#include "samples/kernels/vector_add.h"

namespace tessera::tools {
namespace {

std::vector<CatalogEntry> build() {
  std::vector<CatalogEntry> c;
  c.push_back({"vector_add_kernel", "out = x + y, BLOCK = 1024", [](const Device& d) {
                 auto k =
                     TESSERA_KERNEL(samples::vector_add_kernel, x_ptr, y_ptr, out_ptr, n, BLOCK);
                 auto b = d.alloc<float>(16);
                 return k.traced(b, b, b, 1000, 1024);
               }});
  c.push_back({"gelu_kernel", "GeLU (tanh form), BLOCK = 1024", [](const Device& d) {
                 auto k = TESSERA_KERNEL(samples::gelu_kernel, x_ptr, y_ptr, n, BLOCK);
                 auto b = d.alloc<float>(16);
                 return k.traced(b, b, 1000, 1024);
               }});
  c.push_back({"softmax_kernel", "row softmax, BLOCK_SIZE = 1024", [](const Device& d) {
                 auto k = TESSERA_KERNEL(samples::softmax_kernel, x_ptr, y_ptr, x_row_stride,
                                         y_row_stride, num_cols, BLOCK_SIZE);
                 auto b = d.alloc<float>(16);
                 return k.traced(b, b, 1000, 1000, 1000, 1024);
               }});
  c.push_back(
      {"row_sum_kernel", "row sums with a loop over tiles, BLOCK_SIZE = 1024", [](const Device& d) {
         auto k = TESSERA_KERNEL(samples::row_sum_kernel, x_ptr, out_ptr, N, BLOCK_SIZE);
         auto b = d.alloc<float>(16);
         return k.traced(b, b, 5000, 1024);
       }});
  c.push_back({"matmul_relu_kernel", "relu(A @ B), 64x64x32 tiles", [](const Device& d) {
                 auto k = TESSERA_KERNEL(samples::matmul_relu_kernel, a_ptr, b_ptr, c_ptr, M, N, K,
                                         stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                                         stride_cn, BLOCK_M, BLOCK_N, BLOCK_K);
                 auto b = d.alloc<float>(16);
                 return k.traced(b, b, b, 1000, 1000, 1000, 1000, 1, 1000, 1, 1000, 1, 64, 64, 32);
               }});
  return c;
}

}  // namespace

const std::vector<CatalogEntry>& catalog() {
  static const std::vector<CatalogEntry> c = build();
  return c;
}

const CatalogEntry* find_kernel(const std::string& name) {
  for (const CatalogEntry& e : catalog())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace tessera::tools
