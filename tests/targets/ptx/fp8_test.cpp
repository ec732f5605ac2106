/// \file fp8 on the PTX target: casts through cvt (e4m3x2 / e5m2x2; PTX 8.0 has them for sm_90
/// only) assemble for sm_90 and sm_90a, loads, stores and constants of fp8 are bytes, sm_80 and
/// sm_89 refuse fp8 conversions naming the dtype and the target, and fp8 matmuls lower to
/// wgmma ... .f32.e4m3.e4m3 on sm_90a.
#include "helpers.h"
#include "targets/compile.h"
#include "tests/core/lower/matmul_kernel.h"

namespace ptx_test {
namespace {

namespace ir = tessera::ir;
using ir::DType;

/// Loads `from`, casts to `to`, stores (one element per thread).
std::string fp8_cast_kernel(std::string_view from, std::string_view to) {
  const std::string f(from), t(to);
  const std::string body = "  %tr = constant {value = 1} : i1\n  %z = constant {value = 0} : " + f +
                           "\n  %a = global_load %p, %tr, %z {align = 8, width = 1} : " + f +
                           "\n  %c = cast %a : " + t +
                           "\n  global_store %q, %tr, %c {align = 8, width = 1}";
  return kernel("%p: ptr<" + f + ">, %q: ptr<" + t + ">", body);
}

const char* const kOthers[] = {"f16", "bf16", "f32", "f64", "i8", "i32", "u64", "i1"};

}  // namespace

TEST_CASE("ptx fp8: casts to and from fp8 assemble for sm_90 and sm_90a through cvt") {
  for (const char* f8 : {"f8e4m3", "f8e5m2"}) {
    const std::string name(f8);
    const std::string kind = name == "f8e4m3" ? "e4m3x2" : "e5m2x2";
    CAPTURE(f8);
    for (const char* other : kOthers) {
      CAPTURE(other);
      for (const char* arch : {"cuda-sm_90", "cuda-sm_90a"}) {
        Emitted from = emit(fp8_cast_kernel(f8, other), profile(arch));
        CHECK(from.has("cvt.rn.f16x2." + kind));
        if (std::string(other) == "i1") continue;  // i1 -> fp8: 0 or 1, still through cvt
        Emitted to = emit(fp8_cast_kernel(other, f8), profile(arch));
        CHECK(to.has("cvt.rn.satfinite." + kind + ".f32"));
      }
    }
    // Wider sources are rounded to odd in f32 first, so the one rounding to fp8 is correct.
    CHECK(emit(fp8_cast_kernel("f64", f8), profile("cuda-sm_90a")).has("cvt.rz.f32.f64"));
    // e4m3 <-> e5m2: decoded exactly, rounded once.
    emit(fp8_cast_kernel(f8, name == "f8e4m3" ? "f8e5m2" : "f8e4m3"), profile("cuda-sm_90a"));
  }
}

TEST_CASE("ptx fp8: a constant is its encoding, loads and stores are bytes") {
  const std::string body =
      "  %tr = constant {value = 1} : i1\n  %c = constant {value = 448.0} : f8e4m3\n"
      "  %z = constant {value = 0} : f8e4m3\n"
      "  %a = global_load %p, %tr, %z {align = 8, width = 1} : f8e4m3\n"
      "  %b = where %tr, %a, %c : f8e4m3\n"
      "  global_store %q, %tr, %b {align = 8, width = 1}";
  Emitted e = emit(kernel("%p: ptr<f8e4m3>, %q: ptr<f8e4m3>", body),
                   profile("cuda-sm_80"));  // no conversion
  CHECK(e.has("ld.global"));
  CHECK(e.has("st.global"));
  CHECK(!e.has("cvt."));  // moved as bytes: no conversion, so sm_80 takes it
}

TEST_CASE("ptx fp8: sm_80 and sm_89 refuse an fp8 conversion, naming the dtype and the target") {
  auto [kind, message] =
      error_of([] { emit(fp8_cast_kernel("f32", "f8e4m3"), profile("cuda-sm_80")); });
  CHECK(kind == ErrorKind::Unsupported);
  CHECK(message.find("dtype f8e4m3 on cuda-sm_80") != std::string::npos);
  CHECK(message.find("need sm_90") != std::string::npos);
  auto [kind2, message2] =
      error_of([] { emit(fp8_cast_kernel("f8e5m2", "f16"), profile("cuda-sm_89")); });
  CHECK(kind2 == ErrorKind::Unsupported);
  CHECK(message2.find("dtype f8e5m2 on cuda-sm_89") != std::string::npos);
}

TEST_CASE("ptx fp8: matmuls lower to wgmma e4m3/e5m2 on sm_90a, K-major, with no spills") {
  struct Case {
    DType in;
    int bm, bn, bk, warps, stages;
    const char* text;
  };
  const Case cases[] = {
      {DType::f8e4m3, 128, 128, 128, 8, 3, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
      {DType::f8e5m2, 128, 128, 64, 8, 3, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2"},
      {DType::f8e4m3, 64, 64, 64, 4, 3, "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3"},
  };
  for (const Case& c : cases) {
    CAPTURE(ir::dtype_name(c.in));
    CAPTURE(c.bn);
    auto tile = matmul_test::trace_matmul(c.in, c.bm, c.bn, c.bk);
    const tessera::target::Artifact a = tessera::targets::compile(
        *tile, profile("cuda-sm_90a"), {.num_warps = c.warps, .num_stages = c.stages});
    CHECK(a.ptx.find(c.text) != std::string::npos);
    // A's K-major tile is copied into the ring; B (N-major) goes through registers, as int8's.
    CHECK(a.ptx.find("cp.async.cg.shared.global") != std::string::npos);
    Assembled as = assemble(a.ptx, "sm_90a", "-v");
    if (!as.ran) {
      MESSAGE("SKIP: ptxas not found: PTX not assembled");
      continue;
    }
    INFO("ptxas -v says:\n", as.log);
    CHECK(as.ok);
    CHECK(as.log.find("0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
    CHECK(as.log.find("C7515") == std::string::npos);
    CHECK(as.log.find("C7514") == std::string::npos);
  }
  // sm_90 (no "a") has fp8 conversions but no wgmma: FMAs in f32 after converting.
  auto tile = matmul_test::trace_matmul(DType::f8e4m3, 64, 64, 64);
  const tessera::target::Artifact plain =
      tessera::targets::compile(*tile, profile("cuda-sm_90"), {.num_warps = 4, .num_stages = 2});
  CHECK(plain.ptx.find("wgmma") == std::string::npos);
  CHECK(plain.ptx.find("cvt.rn.f16x2.e4m3x2") != std::string::npos);
}

}  // namespace ptx_test
