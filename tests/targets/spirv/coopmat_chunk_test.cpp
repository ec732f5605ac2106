/// \file Cooperative-matrix dots whose whole operand tiles do not fit the target's shared memory
/// (core/lower/lower_coopmat.cpp): staged K-chunk by K-chunk, the chunk chosen from the target's
/// limit. The shared memory the compile path reports for bench's attention at 128x128 blocks and
/// head dimension 128, and for 128x128x128 matmul tiles, on NVIDIA's Vulkan driver (48 KiB); the
/// chunk shrinks with the limit; dots whose operands fit stage all of K as before.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <variant>

#include "core/ir/ir.h"
#include "core/lang/trace.h"
#include "core/passes/pipeline.h"
#include "core/support/error.h"
#include "core/target/target.h"
#include "samples/kernels/attention.h"
#include "targets/compile.h"
#include "tests/core/lower/matmul_kernel.h"

namespace ir = tessera::ir;
namespace tl = tessera::tl;
using ir::DType;

namespace {

/// samples/kernels/attention.h traced for f16 with head dimension `d`, `bm` x `bn` blocks.
std::unique_ptr<ir::Module> trace_attention(int d, int bm, int bn, bool causal) {
  using matmul_test::const_arg;
  using matmul_test::ptr_arg;
  tl::ArgSpec scale;
  scale.dtype = DType::f32;
  const std::vector<tl::ArgSpec> specs = {ptr_arg(DType::f16),
                                          ptr_arg(DType::f16),
                                          ptr_arg(DType::f16),
                                          ptr_arg(DType::f16),
                                          scale,
                                          matmul_test::i32_arg(),
                                          const_arg(d),
                                          const_arg(bm),
                                          const_arg(bn),
                                          const_arg(causal ? 1 : 0)};
  return tl::trace(
      samples::attention_kernel, "attention_kernel",
      {"q", "k", "v", "out", "qk_scale", "seq", "HEAD_DIM", "BLOCK_M", "BLOCK_N", "CAUSAL"}, specs);
}

tessera::target::Target nvidia() {
  return *tessera::target::profile("vulkan-nvidia");
}

/// The elements of each shared buffer of the kernel's SIMT IR, by dtype.
std::map<DType, int64_t> simt_buffers(const ir::Module& traced, const tessera::target::Target& t,
                                      const tessera::CompileOptions& options) {
  tessera::passes::Compiled c =
      tessera::passes::compile(traced, t, options, tessera::passes::Stage::Simt);
  std::map<DType, int64_t> out;
  const ir::Function& fn = c.simt->kernel();
  for (int i = 0;; ++i) {
    const ir::AttrValue* a = ir::find_attr(fn.attrs, "shared_" + std::to_string(i));
    if (!a) break;
    const ir::Type& type = std::get<ir::Type>(*a);
    out[type.dtype] += type.shape[0];
  }
  return out;
}

}  // namespace

TEST_CASE(
    "coopmat chunks: attention at 128x128 blocks, head dim 128, fits NVIDIA Vulkan's 48 KiB") {
  const tessera::CompileOptions options{.num_warps = 8, .num_stages = 2};
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    auto traced = trace_attention(128, 128, 128, causal);
    const tessera::target::Artifact a = tessera::targets::compile(*traced, nvidia(), options);
    CHECK(a.shared_bytes <= 49152);
    // Both dots stage K 64 at a time: a 128 x (64 + 8) f16 chunk of each operand (the second
    // dot's B, 64 x (128 + 8), is smaller and shares the buffer), and one 16x16 f32 matrix per
    // subgroup for the accumulator's conversion. Staging all of K took 77824 bytes.
    const std::map<DType, int64_t> bufs = simt_buffers(*traced, nvidia(), options);
    CHECK(bufs.at(DType::f16) == 2 * 128 * 72);
    CHECK(bufs.at(DType::f32) == 8 * 16 * 16);
    CHECK(a.shared_bytes == 2 * 128 * 72 * 2 + 8 * 16 * 16 * 4);
  }
}

TEST_CASE("coopmat chunks: 128x128x128 matmul tiles compile for vulkan-nvidia within its limit") {
  const tessera::CompileOptions options{.num_warps = 8, .num_stages = 3};
  auto traced = matmul_test::trace_matmul(DType::f16, 128, 128, 128);
  const tessera::target::Artifact a = tessera::targets::compile(*traced, nvidia(), options);
  CHECK(a.shared_bytes <= 49152);
  // No register ring fits (69632 bytes a stage): the plain loop's dot stages K 64 at a time,
  // A's chunk 128 x (64 + 8), B's 64 x (128 + 8).
  const std::map<DType, int64_t> bufs = simt_buffers(*traced, nvidia(), options);
  CHECK(bufs.at(DType::f16) == 128 * 72 + 64 * 136);
}

TEST_CASE("coopmat chunks: the chunk follows the target's shared-memory limit") {
  const tessera::CompileOptions options{.num_warps = 8, .num_stages = 2};
  auto traced = trace_attention(128, 128, 128, false);
  tessera::target::Target t = nvidia();
  // 32 KiB: chunks of 32 (2 x 128 x 40 f16 and the 8 KiB of f32 scratch: 28672 bytes).
  t.max_shared_bytes = 32768;
  CHECK(simt_buffers(*traced, t, options).at(DType::f16) == 2 * 128 * 40);
  CHECK(tessera::targets::compile(*traced, t, options).shared_bytes <= 32768);
  // 96 KiB: all of K (two 128 x 136 tiles), as before.
  t.max_shared_bytes = 98304;
  CHECK(simt_buffers(*traced, t, options).at(DType::f16) == 2 * 128 * 136);
  // 16 KiB: not even chunks of the matrices' K (16) fit; the limit's error names the kernel.
  t.max_shared_bytes = 16384;
  try {
    (void)tessera::targets::compile(*traced, t, options);
    FAIL("compiled within 16 KiB");
  } catch (const tessera::Error& e) {
    CHECK(e.kind() == tessera::ErrorKind::Unsupported);
    CHECK(std::string(e.what()).find("kernel 'attention_kernel' needs") != std::string::npos);
  }
}

TEST_CASE("coopmat chunks: dots whose operands fit stage all of K, as before") {
  // Attention at 64x64 blocks, head dim 64: both dots' whole operands, 64 x (64 + 8) each.
  const tessera::CompileOptions options{.num_warps = 4, .num_stages = 3};
  auto traced = trace_attention(64, 64, 64, false);
  CHECK(simt_buffers(*traced, nvidia(), options).at(DType::f16) == 2 * 64 * 72);
}
