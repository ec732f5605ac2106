/// \file Tensor cores on the PTX target: the matmul sample (f32 inputs: TF32) and its f16, bf16
/// and i8 variants lower to mma.sync with ldmatrix fragment loads and a cp.async pipeline, and
/// assemble with ptxas for sm_80 and sm_90; IEEE f32 keeps the FMA form; num_stages = 1 has no
/// cp.async.
#include "core/lang/tl.h"
#include "core/lang/trace.h"
#include "core/passes/pipeline.h"
#include "helpers.h"
#include "samples/kernels/matmul_relu.h"
#include "targets/compile.h"
#include "tests/core/lower/matmul_kernel.h"

namespace ptx_test {
namespace {

namespace tl = tessera::tl;
namespace ir = tessera::ir;
using ir::DType;

using matmul_test::matmul_kernel;

using matmul_test::const_arg;
using matmul_test::i32_arg;
using matmul_test::ptr_arg;

std::unique_ptr<ir::Module> matmul(DType in, bool ieee = false) {
  auto m = matmul_test::trace_matmul(in, 64, 64, 32, ieee);
  tessera::passes::optimize(*m);
  return m;
}

/// The sample itself: f32 inputs (TF32 dot), 64x64x32 blocks, unit inner strides.
std::unique_ptr<ir::Module> sample() {
  tl::ArgSpec f32 = ptr_arg(DType::f32), one;
  one.equal_to_one = true;
  std::vector<tl::ArgSpec> specs = {
      f32,       f32, f32,       i32_arg(), i32_arg(),     i32_arg(),     i32_arg(),    one,
      i32_arg(), one, i32_arg(), one,       const_arg(64), const_arg(64), const_arg(32)};
  std::vector<std::string> names;
  for (size_t i = 0; i < specs.size(); ++i) names.push_back("p" + std::to_string(i));
  auto m = tl::trace(samples::matmul_relu_kernel, "matmul_relu", names, specs);
  tessera::passes::optimize(*m);
  return m;
}

/// PTX for `target` (assembled by ptxas when present).
Emitted compile(const ir::Module& tile, const char* target, int stages = 3) {
  Target t = profile(target);
  tessera::CompileOptions o;
  o.num_warps = 4;
  o.num_stages = stages;
  Emitted e;
  e.artifact = tessera::targets::compile(tile, t, o);
  e.ptx = e.artifact.ptx;
  Assembled a = assemble(e.ptx, target + 5);
  if (!a.ran) {
    MESSAGE(
        "SKIP: ptxas not found (no CUDA toolkit in /usr/local/cuda or $CUDA_HOME): PTX not assembled");
  } else {
    INFO("ptxas -arch=", target + 5, " says:\n", a.log);
    CHECK(a.ok);
  }
  return e;
}

}  // namespace

TEST_CASE("ptx mma: the matmul sample's f32 dot is TF32 mma.sync with cp.async stages") {
  auto tile = sample();
  for (const char* target : {"cuda-sm_80", "cuda-sm_90"}) {
    CAPTURE(target);
    Emitted e = compile(*tile, target);
    // 64x64 over 2x2 warps: 2 x 4 tiles of 16x8 per warp, 4 k steps of 8 per iteration.
    CHECK(e.count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") % 32 == 0);
    CHECK(e.count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") >= 32);
    CHECK(e.has("cvt.rna.tf32.f32"));
    // A (k-contiguous) through ldmatrix; B (n-contiguous f32) through scalar shared loads.
    CHECK(e.has("ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
    CHECK(!e.has(".trans"));
    CHECK(e.has("cp.async.cg.shared.global"));
    CHECK(e.has("cp.async.commit_group;"));
    CHECK(e.has("cp.async.wait_group 1;"));
    CHECK(e.has("cp.async.wait_group 0;"));
    CHECK(!e.has("fma.rn.f32"));
  }
  // One stage: no pipeline, the operands staged from registers.
  Emitted one = compile(*tile, "cuda-sm_90", 1);
  CHECK(one.has("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"));
  CHECK(!one.has("cp.async"));
  CHECK(one.has("st.shared.v4.f32"));
}

TEST_CASE("ptx mma: f16, bf16 and i8 matmuls, ldmatrix (.trans for B), cp.async") {
  struct Case {
    DType in;
    const char* mma;
    bool trans;
  };
  const Case cases[] = {
      {DType::f16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", true},
      {DType::bf16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", true},
      {DType::i8, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", false},
  };
  for (const Case& c : cases) {
    auto tile = matmul(c.in);
    for (const char* target : {"cuda-sm_80", "cuda-sm_90"}) {
      CAPTURE(ir::dtype_name(c.in));
      CAPTURE(target);
      Emitted e = compile(*tile, target);
      // 2x4 tiles per warp, 32 / k steps per iteration.
      const int steps = c.in == DType::i8 ? 1 : 2;
      CHECK(e.count(c.mma) % (8 * steps) == 0);
      CHECK(e.count(c.mma) >= 8 * steps);
      CHECK(e.has("ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
      CHECK(e.has("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == c.trans);
      CHECK(e.has("cp.async.cg.shared.global"));
      CHECK(e.has("cp.async.wait_group 1;"));
    }
  }
}

TEST_CASE("ptx mma: IEEE f32 dots keep the FMA form") {
  Emitted e = compile(*matmul(DType::f32, /*ieee=*/true), "cuda-sm_90");
  CHECK(!e.has("mma.sync"));
  CHECK(!e.has("cp.async"));
  CHECK(e.has("fma.rn.f32"));
}
}  // namespace ptx_test
