/// \file Hopper's warpgroup tensor cores on the PTX target: the wgmma family's PTX (descriptors,
/// fences, groups) assembles for sm_90a and is refused elsewhere; matmuls of every wgmma dtype
/// compile through the pipeline to wgmma on sm_90a (mma.sync on sm_80) with no spills and no
/// serialized wgmma (ptxas -v); tf32 and i8 matmuls whose B lies N-major run swapped (C^T = B^T
/// A^T, B^T from registers) and match a reference on simt:cuda-sm_90a.
#include <cmath>
#include <random>

#include "core/lang/tl.h"
#include "core/lang/trace.h"
#include "core/passes/pipeline.h"
#include "helpers.h"
#include "runtime/tessera.h"
#include "samples/kernels/attention.h"
#include "targets/compile.h"
#include "tests/core/lower/matmul_kernel.h"

namespace ptx_test {
namespace {

namespace tl = tessera::tl;
namespace ir = tessera::ir;
using ir::DType;

/// A warpgroup kernel: one wgmma of (a, shape) on a 1024-byte-aligned buffer of `in` elements,
/// the fences, a commit and a wait passing the accumulators through, then a store of them.
std::string wgmma_kernel(const char* a, const char* shape, DType in, DType acc, int n, int trans) {
  const std::string t(ir::dtype_name(in)), c(ir::dtype_name(acc));
  std::string accs, types, zeros;
  for (int i = 0; i < n / 2; ++i) {
    accs += std::string(i ? ", " : "") + "%z";
    types += std::string(i ? ", " : "") + c;
  }
  std::string results, waited;
  for (int i = 0; i < n / 2; ++i) {
    results += std::string(i ? ", " : "") + "%d" + std::to_string(i);
    waited += std::string(i ? ", " : "") + "%w" + std::to_string(i);
  }
  const std::string layout = "[0, 128, 16384, 1024, " + std::to_string(trans) + "]";
  std::string body = std::string("  %z = constant {value = 0} : ") + c + "\n" +
                     "  %s = constant {value = 64} : i32\n"
                     "  fence_async_shared\n  barrier\n  wgmma_fence\n  " +
                     results + " = wgmma %s, %s, " + accs + " {a = \"" + a +
                     "\", a_smem = " + layout + ", b_smem = " + layout + ", shape = \"" + shape +
                     "\"} : " + types + "\n  wgmma_commit\n  " + waited + " = wgmma_wait " +
                     results + " {pending = 0} : " + types +
                     "\n"
                     "  %tr = constant {value = 1} : i1\n"
                     "  global_store %out, %tr, %w0 {align = 4, width = 1}";
  return "func @k(%out: ptr<" + c + ">) attributes {shared_0 = tile<8192x" + t +
         ">, stage = \"simt\", subgroup = 32, threads = 128} {\n" + body + "\n}\n";
}

TEST_CASE("ptx wgmma: each operand type's wgmma, fences and groups assemble for sm_90a") {
  struct Case {
    const char* a;
    const char* shape;
    DType in, acc;
    int n, trans;
    const char* text;
  };
  const Case cases[] = {
      {"f16", "m64n64k16", DType::f16, DType::f32, 64, 1,
       "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"},
      {"bf16", "m64n128k16", DType::bf16, DType::f32, 128, 0,
       "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
      {"tf32", "m64n32k8", DType::f32, DType::f32, 32, 0,
       "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32"},
      {"i8", "m64n64k32", DType::i8, DType::i32, 64, 0,
       "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.a);
    Emitted e = emit(wgmma_kernel(c.a, c.shape, c.in, c.acc, c.n, c.trans), profile("cuda-sm_90a"));
    CHECK(e.has(c.text));
    CHECK(e.has("wgmma.fence.sync.aligned;"));
    CHECK(e.has("wgmma.commit_group.sync.aligned;"));
    CHECK(e.has("wgmma.wait_group.sync.aligned 0;"));
    CHECK(e.has("fence.proxy.async.shared::cta;"));
    // The shared arena starts on wgmma's 1024-byte swizzle pattern.
    CHECK(e.has(".align 1024"));
  }
  // f16 with both operands MN-major: the transpose immediates are the last two.
  Emitted t =
      emit(wgmma_kernel("f16", "m64n8k16", DType::f16, DType::f32, 8, 1), profile("cuda-sm_90a"));
  CHECK(t.has(", p, 1, 1, 1, 1;"));
}

TEST_CASE("ptx wgmma: a target without the wgmma capability refuses it, naming the op") {
  auto [kind, message] = error_of([] {
    emit(wgmma_kernel("f16", "m64n8k16", DType::f16, DType::f32, 8, 0), profile("cuda-sm_90"));
  });
  CHECK(kind == ErrorKind::Unsupported);
  CHECK(message.find("'wgmma_fence'") != std::string::npos);
  CHECK(message.find("needs the 'wgmma' capability (sm_90a), which target 'cuda-sm_90' lacks") !=
        std::string::npos);
}

TEST_CASE("ptx wgmma: matmuls lower to wgmma on sm_90a with no spills or serialization") {
  struct Case {
    DType in;
    int bm, bn, bk, warps, stages;
    const char* text;
  };
  const Case cases[] = {
      {DType::f16, 128, 128, 64, 8, 3, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"},
      {DType::f16, 128, 256, 64, 8, 4, "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"},
      {DType::bf16, 128, 128, 64, 4, 4, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
      {DType::f32, 128, 128, 32, 8, 3, "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"},
      // tf32 and i8 are swapped (B N-major): wgmma's M is BLOCK_N, its N BLOCK_M.
      {DType::f32, 256, 128, 32, 8, 4, "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32"},
      {DType::f32, 128, 256, 32, 8, 3, "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"},
      {DType::i8, 128, 128, 128, 8, 3, "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8"},
  };
  for (const Case& c : cases) {
    CAPTURE(ir::dtype_name(c.in));
    CAPTURE(c.bn);
    auto tile = matmul_test::trace_matmul(c.in, c.bm, c.bn, c.bk);
    const tessera::target::Artifact a = tessera::targets::compile(
        *tile, profile("cuda-sm_90a"), {.num_warps = c.warps, .num_stages = c.stages});
    CHECK(a.ptx.find(c.text) != std::string::npos);
    CHECK(a.ptx.find("mma.sync") == std::string::npos);
    // Every loop is a ring of copies: tf32's and i8's N-major B too (read into registers as
    // wgmma's A), so nothing is loaded from global memory into registers. The f16 and bf16
    // operands (row-major, 16-byte strides) are copied by TMA: descriptor-loads rewrote them.
    const bool tma = a.ptx.find("cp.async.bulk.tensor") != std::string::npos;
    CHECK(tma == (c.in == DType::f16 || c.in == DType::bf16));
    CHECK((tma || a.ptx.find("cp.async.cg.shared.global") != std::string::npos));
    CHECK(a.ptx.find("ld.global") == std::string::npos);
    Assembled as = assemble(a.ptx, "sm_90a", "-v");
    if (!as.ran) {
      MESSAGE("SKIP: ptxas not found: PTX not assembled");
      continue;
    }
    INFO("ptxas -v says:\n", as.log);
    CHECK(as.ok);
    CHECK(as.log.find("0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
    CHECK(as.log.find("C7515") == std::string::npos);  // wgmma serialized (accumulators defined)
    CHECK(as.log.find("C7514") == std::string::npos);  // wgmma serialized (accumulators read)
    // sm_80 keeps mma.sync for the same kernel (where its tiles fit sm_80's shared memory).
    if (c.bn > 128) continue;
    const tessera::target::Artifact old = tessera::targets::compile(
        *tile, profile("cuda-sm_80"), {.num_warps = c.warps, .num_stages = c.stages});
    CHECK(old.ptx.find("wgmma") == std::string::npos);
  }
}

TEST_CASE("ptx wgmma: attention's two dots share one ring, q held, p read from registers") {
  using matmul_test::const_arg;
  using matmul_test::i32_arg;
  using matmul_test::ptr_arg;
  tl::ArgSpec scale;
  scale.dtype = DType::f32;
  const std::vector<tl::ArgSpec> specs = {ptr_arg(DType::f16),
                                          ptr_arg(DType::f16),
                                          ptr_arg(DType::f16),
                                          ptr_arg(DType::f16),
                                          scale,
                                          i32_arg(),
                                          const_arg(128),
                                          const_arg(128),
                                          const_arg(64),
                                          const_arg(0)};
  auto tile = tl::trace(
      samples::attention_kernel, "attention",
      {"q", "k", "v", "out", "qk_scale", "seq", "HEAD_DIM", "BLOCK_M", "BLOCK_N", "CAUSAL"}, specs);
  const tessera::target::Artifact a =
      tessera::targets::compile(*tile, profile("cuda-sm_90a"), {.num_warps = 8, .num_stages = 2});
  // q @ k^T reads q and k from shared memory; p @ v reads p (the cast of the first dot's
  // accumulator, already in wgmma's A arrangement) from four registers.
  CHECK(a.ptx.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16") != std::string::npos);
  const size_t pv = a.ptx.find("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16");
  REQUIRE(pv != std::string::npos);
  const std::string line = a.ptx.substr(pv, a.ptx.find('\n', pv) - pv);
  INFO(line);
  CHECK(line.find("}, {%r") != std::string::npos);
  // k and v arrive by cp.async; no layout conversion goes through shared memory (the row
  // statistics broadcast back in registers).
  CHECK(a.ptx.find("cp.async.cg.shared.global") != std::string::npos);
  CHECK(a.ptx.find("st.shared.f32") == std::string::npos);
  Assembled as = assemble(a.ptx, "sm_90a", "-v");
  if (!as.ran) {
    MESSAGE("SKIP: ptxas not found: PTX not assembled");
    return;
  }
  INFO("ptxas -v says:\n", as.log);
  CHECK(as.ok);
  CHECK(as.log.find("0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
  // maxnreg (two programs of 256 threads per multiprocessor): .maxnreg, and ptxas keeps to it.
  const tessera::target::Artifact limited = tessera::targets::compile(
      *tile, profile("cuda-sm_90a"), {.num_warps = 8, .num_stages = 2, .maxnreg = 128});
  CHECK(limited.ptx.find(".maxnreg 128") != std::string::npos);
  CHECK(a.ptx.find(".maxnreg") == std::string::npos);
  Assembled as128 = assemble(limited.ptx, "sm_90a", "-v");
  INFO("ptxas -v says:\n", as128.log);
  CHECK(as128.ok);
  CHECK(as128.log.find("Used 128 registers") != std::string::npos);
}

TEST_CASE("ptx wgmma: swapped tf32 and i8 matmuls (B N-major) match a reference on simt:sm_90a") {
  struct Case {
    DType in;
    int bm, bn, bk, warps, stages, m, n, k;
    bool copies;  // the ring copies both operands (else, rows not 16-byte aligned, it loads them)
  };
  const Case cases[] = {
      {DType::f32, 256, 128, 32, 8, 4, 256, 128, 96, true},  // warpgroups 2 x 1 (N), m64n256k8
      {DType::f32, 128, 256, 32, 8, 3, 128, 256, 64, true},  // 2 x 1, two m64n128k8 per k step
      {DType::f32, 64, 128, 32, 4, 3, 100, 200, 72, false},  // masked rows, columns, K tail
      {DType::i8, 128, 128, 128, 8, 3, 128, 128, 256, true},
      {DType::i8, 64, 64, 64, 8, 2, 64, 128, 192, true},  // warpgroups 1 x 2 (M), m64n32k32
  };
  tessera::Device simt = tessera::Device::open("simt:cuda-sm_90a");
  auto target = *tessera::target::parse_target(simt.info().target);
  auto matmul = TESSERA_KERNEL(matmul_test::matmul_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am,
                               stride_bk, stride_cm, BLOCK_M, BLOCK_N, BLOCK_K, ACC, IEEE);
  for (const Case& c : cases) {
    CAPTURE(ir::dtype_name(c.in));
    CAPTURE(c.bm);
    CAPTURE(c.bn);
    const bool i8 = c.in == DType::i8;
    std::mt19937 rng(static_cast<uint32_t>(c.m * 7 + c.n + c.k));
    std::uniform_real_distribution<float> u(-1, 1);
    const size_t na = size_t(c.m) * c.k, nb = size_t(c.k) * c.n, nc = size_t(c.m) * c.n;
    std::vector<float> fa(na), fb(nb);
    std::vector<int8_t> qa(na), qb(nb);
    for (size_t i = 0; i < na; ++i) fa[i] = u(rng), qa[i] = int8_t(rng() % 256 - 128);
    for (size_t i = 0; i < nb; ++i) fb[i] = u(rng), qb[i] = int8_t(rng() % 256 - 128);
    const DType acc = i8 ? DType::i32 : DType::f32;
    // Launches on simt (checking first that the plan is wgmma with A from registers, B^T, and a
    // ring of copies), returns C.
    auto run = [&](const auto& ha, const auto& hb, auto zero) {
      auto a = simt.upload(ha), b = simt.upload(hb);
      auto out = simt.alloc<decltype(zero)>(nc);
      auto tile =
          matmul.traced(a, b, out, c.m, c.n, c.k, c.k, c.n, c.n, c.bm, c.bn, c.bk, acc, false);
      auto lowered =
          tessera::passes::compile(*tile, target, {c.warps, c.stages}, tessera::passes::Stage::Simt)
              .simt;
      int regs_a = 0, copies = 0, loads = 0;
      ir::walk(lowered->kernel().body, [&](const ir::Op* op) {
        regs_a += op->kind == ir::OpKind::Wgmma && !op->has_attr("a_smem");
        copies += op->kind == ir::OpKind::CpAsync;
        loads += op->kind == ir::OpKind::GlobalLoad;
      });
      CHECK(regs_a > 0);
      CHECK((copies > 0) == c.copies);
      CHECK((loads == 0) == c.copies);
      tessera::Grid grid(tessera::cdiv(c.m, c.bm), tessera::cdiv(c.n, c.bn));
      matmul[{grid, {.num_warps = c.warps, .num_stages = c.stages}}](
          a, b, out, c.m, c.n, c.k, c.k, c.n, c.n, c.bm, c.bn, c.bk, acc, false);
      return out.download();
    };
    int bad = 0;
    if (i8) {
      const std::vector<int32_t> got = run(qa, qb, int32_t{0});
      for (int i = 0; i < c.m; ++i)
        for (int j = 0; j < c.n; ++j) {
          int32_t want = 0;
          for (int k = 0; k < c.k; ++k)
            want += int32_t(qa[size_t(i) * c.k + k]) * qb[size_t(k) * c.n + j];
          want = std::max(want, 0);
          if (got[size_t(i) * c.n + j] != want && ++bad <= 3)
            FAIL_CHECK("c[" << i << ", " << j << "] = " << got[size_t(i) * c.n + j] << ", want "
                            << want);
        }
    } else {
      const std::vector<float> got = run(fa, fb, 0.0f);
      for (int i = 0; i < c.m; ++i)
        for (int j = 0; j < c.n; ++j) {
          double want = 0, scale = 0;
          for (int k = 0; k < c.k; ++k) {
            const double p = double(fa[size_t(i) * c.k + k]) * fb[size_t(k) * c.n + j];
            want += p;
            scale += std::fabs(p);
          }
          want = std::max(want, 0.0);
          // tf32 keeps 10 mantissa bits of each input: a product is off by at most 2^-9.
          const double g = got[size_t(i) * c.n + j];
          if (std::fabs(g - want) > 4e-3 * scale + 1e-6 && ++bad <= 3)
            FAIL_CHECK("c[" << i << ", " << j << "] = " << g << ", want " << want);
        }
    }
    CHECK(bad == 0);
  }
}

}  // namespace
}  // namespace ptx_test

TEST_CASE("ptx wgmma: warp_specialize's roles, setmaxnreg and a named barrier assemble") {
  // Role 0, the first warpgroup, raises its register limit and waits at named barrier 1 with its
  // 128 threads; role 1, the second, lowers its limit and stores its thread index.
  constexpr const char* kRoles = R"tir(
func @roles(%out: ptr<i32>) attributes {maxnreg = 168, stage = "simt", subgroup = 32, threads = 256} {
  %lane = lane_id : i32
  %true = constant {value = 1} : i1
  warp_specialize {roles = [128, 128]} ({
    setmaxnreg {inc = 1, registers = 232}
    barrier {id = 1, threads = 128}
    yield
  }, {
    setmaxnreg {inc = 0, registers = 40}
    %p = ptr_add %out, %lane : ptr<i32>
    global_store %p, %true, %lane {align = 4, width = 1}
    yield
  })
}
)tir";
  const ptx_test::Emitted e = ptx_test::emit(kRoles, ptx_test::profile("cuda-sm_90a"));
  CHECK(e.has("setmaxnreg.inc.sync.aligned.u32 232;"));
  CHECK(e.has("setmaxnreg.dec.sync.aligned.u32 40;"));
  CHECK(e.has(".maxnreg 168"));            // the launch count the pool starts from
  CHECK(e.has("barrier.sync \t1, 128;"));  // LLVM 19 prints a tab after the opcode
  CHECK(e.has("%tid.x"));                  // the roles' branch on the thread index
  CHECK(e.has("st.global.u32"));
  auto [kind, message] =
      ptx_test::error_of([&] { ptx_test::emit(kRoles, ptx_test::profile("cuda-sm_80")); });
  CHECK(kind == tessera::ErrorKind::Unsupported);
  CHECK(message.find("'setmaxnreg' at") != std::string::npos);
}
