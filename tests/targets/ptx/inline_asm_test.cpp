/// \file tl::inline_asm_elementwise from the kernel language to PTX: the traced IR (broadcast
/// arguments, several results, pack), the lowering (one asm per `pack` elements of a thread),
/// purity (pure calls merged and dropped, impure ones kept), the PTX (the asm text between
/// LLVM's inline-asm markers, f16 pairs packed into 32-bit registers) assembled by ptxas for
/// sm_80 and sm_90a, and the refusal of every other target (SPIR-V here; the interpreters in
/// tests/runtime/host/inline_asm_test.cpp). Values: the conformance catalogue's inline_asm/*
/// cases on cuda:0.
#include <doctest/doctest.h>

#include "core/ir/printer.h"
#include "core/lang/tl.h"
#include "core/lang/trace.h"
#include "core/passes/pipeline.h"
#include "helpers.h"
#include "targets/compile.h"

namespace ptx_test {
namespace {

namespace ir = tessera::ir;
namespace tl = tessera::tl;
using ir::DType;

int g_line = 0;  // the line of the inline asm call in asm_add

/// out = x + y (i32) through `add.s32`, y broadcast from a scalar when SCALAR.
void asm_add(tl::ptr<int32_t> x, tl::ptr<int32_t> y, tl::ptr<int32_t> out, tl::i32 n, int SCALAR) {
  auto offs = tl::program_id(0) * 256 + tl::arange(0, 256);
  auto m = offs < n;
  auto a = tl::load(x + offs, m);
  tl::tensor b = SCALAR ? tl::load(y) : tl::load(y + offs, m);
  const char* text = "add.s32 $0, $1, $2; // asm-add";
  g_line = __LINE__ + 1;
  auto r = tl::inline_asm_elementwise(text, "=r,r,r", {a, b}, tl::int32);
  tl::store(out + offs, r, m);
}

/// f16 sums two at a time: `add.f16x2` on 32-bit registers holding two halves (pack = 2).
void asm_f16x2(tl::ptr<tessera::half> x, tl::ptr<tessera::half> out, tl::i32 n) {
  auto offs = tl::program_id(0) * 512 + tl::arange(0, 512);
  auto m = offs < n;
  auto a = tl::load(x + offs, m);
  auto r = tl::inline_asm_elementwise("add.f16x2 $0, $1, $2; // asm-f16x2", "=r,r,r", {a, a},
                                      tl::float16, true, 2);
  tl::store(out + offs, r, m);
}

/// Bytes reversed within each 32-bit register (pack = 4 over i8, a 2-D tile) and a rotate by a
/// funnel shift: the conformance catalogue's inline_asm/prmt_i8_pack4 and shf_rotate kernels.
void asm_bytes(tl::ptr<int8_t> x, tl::ptr<int8_t> out, tl::ptr<uint32_t> w) {
  auto offs = tl::arange(0, 16)[{tl::_, tl::None}] * 32 + tl::arange(0, 32)[{tl::None, tl::_}];
  auto r = tl::inline_asm_elementwise("prmt.b32 $0, $1, $1, 0x0123; // asm-prmt", "=r,r",
                                      {tl::load(x + offs)}, tl::int8, true, 4);
  tl::store(out + offs, r);
  auto v = tl::load(w + tl::arange(0, 128));
  tl::store(w + tl::arange(0, 128), tl::inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $1, $2;",
                                                               "=r,r,r", {v, v}, tl::uint32));
}

/// Two results of different dtypes from one asm; an impure call whose result is unused; a pure
/// call written twice and one never used.
void asm_effects(tl::ptr<int32_t> x, tl::ptr<int32_t> out, tl::ptr<float> fout, tl::i32 n) {
  auto offs = tl::program_id(0) * 128 + tl::arange(0, 128);
  auto m = offs < n;
  auto a = tl::load(x + offs, m);
  auto rs = tl::inline_asm_elementwise("mov.b32 $0, $2;\n\tcvt.rn.f32.s32 $1, $2;", "=r,=f,r", {a},
                                       {tl::int32, tl::float32});
  (void)tl::inline_asm_elementwise("membar.gl;", "=r,r", {a}, tl::int32, false);
  auto p = tl::inline_asm_elementwise("shl.b32 $0, $1, 1;", "=r,r", {a}, tl::int32);
  auto q = tl::inline_asm_elementwise("shl.b32 $0, $1, 1;", "=r,r", {a}, tl::int32);
  (void)tl::inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", {a}, tl::int32);
  tl::store(out + offs, rs[0] + p + q, m);
  tl::store(fout + offs, rs[1], m);
}

template <class... P>
std::unique_ptr<ir::Module> trace(void (*fn)(P...), std::vector<tl::ArgSpec> specs) {
  std::vector<std::string> names;
  for (size_t i = 0; i < specs.size(); ++i) names.push_back("p" + std::to_string(i));
  return tl::trace(fn, "k", names, specs);
}

tl::ArgSpec ptr(DType t) {
  return {t};
}
tl::ArgSpec constant(int64_t v) {
  tl::ArgSpec s;
  s.value.i = v;
  return s;
}

std::unique_ptr<ir::Module> add_kernel(int scalar) {
  return trace(asm_add, {ptr(DType::i32), ptr(DType::i32), ptr(DType::i32), ptr(DType::i32),
                         constant(scalar)});
}

/// The ops of `kind` in the kernel.
std::vector<const ir::Op*> ops_of(const ir::Module& m, std::initializer_list<ir::OpKind> kinds) {
  std::vector<const ir::Op*> out;
  ir::walk(m.kernel().body, [&](const ir::Op* op) {
    for (ir::OpKind k : kinds)
      if (op->kind == k) out.push_back(op);
  });
  return out;
}

/// The SIMT IR of `traced` for `target` (4 warps: 128 threads).
std::unique_ptr<ir::Module> simt_of(const ir::Module& traced, std::string_view target) {
  return std::move(
      tessera::passes::compile(traced, profile(target), {}, tessera::passes::Stage::Simt).simt);
}

/// PTX of `traced` for `arch` ("cuda-sm_90a"), assembled by ptxas when it is installed.
std::string ptx_of(const ir::Module& traced, std::string_view target) {
  const Target t = profile(target);
  const std::string ptx = tessera::targets::compile(traced, t, {}).ptx;
  const std::string arch = "sm_" + std::to_string(t.sm) + (t.sm_arch_specific ? "a" : "");
  Assembled a = assemble(ptx, arch);
  if (!a.ran) {
    MESSAGE(
        "SKIP: ptxas not found (no CUDA toolkit in /usr/local/cuda or $CUDA_HOME): PTX not "
        "assembled");
  } else {
    INFO("ptxas -arch=", arch, " says:\n", a.log, "\nPTX:\n", ptx);
    CHECK(a.ok);
  }
  return ptx;
}

int count(const std::string& text, std::string_view needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("inline asm: traced as one inline_asm op over the broadcast arguments") {
  auto m = add_kernel(1);
  auto calls = ops_of(*m, {ir::OpKind::InlineAsm, ir::OpKind::InlineAsmImpure});
  REQUIRE(calls.size() == 1);
  const ir::Op* call = calls[0];
  CHECK(call->kind == ir::OpKind::InlineAsm);
  CHECK(call->loc.line == g_line);
  // The scalar y was splat to the tile's shape.
  CHECK(call->operand(1)->def->kind == ir::OpKind::Splat);
  const std::string text = ir::print(*m);
  INFO(text);
  CHECK(text.find("= inline_asm %") != std::string::npos);
  CHECK(text.find(
            "{asm = \"add.s32 $0, $1, $2; // asm-add\", constraints = \"=r,r,r\"} : tile<256xi32> "
            "loc(") != std::string::npos);
  // pack and several results
  auto h = trace(asm_f16x2, {ptr(DType::f16), ptr(DType::f16), ptr(DType::i32)});
  CHECK(ir::print(*h).find("constraints = \"=r,r,r\", pack = 2} : tile<512xf16>") !=
        std::string::npos);
  auto e = trace(asm_effects, {ptr(DType::i32), ptr(DType::i32), ptr(DType::f32), ptr(DType::i32)});
  const std::string et = ir::print(*e);
  CHECK(et.find("constraints = \"=r,=f,r\"} : tile<128xi32>, tile<128xf32>") != std::string::npos);
  CHECK(et.find("= inline_asm_impure %") != std::string::npos);
}

TEST_CASE("inline asm: the lowering makes one call per pack elements of a thread") {
  // 256 elements over 128 threads: 2 per thread, one call each.
  auto simt = simt_of(*add_kernel(0), "cuda-sm_90a");
  auto calls = ops_of(*simt, {ir::OpKind::InlineAsm});
  CHECK(calls.size() == 2);
  for (const ir::Op* c : calls) {
    CHECK(c->operands.size() == 2);
    CHECK(c->results.size() == 1);
  }
  // pack = 2 over 512 f16: 4 elements per thread, 2 calls of 2 consecutive elements.
  auto h = simt_of(*trace(asm_f16x2, {ptr(DType::f16), ptr(DType::f16), ptr(DType::i32)}),
                   "cuda-sm_90a");
  auto pairs = ops_of(*h, {ir::OpKind::InlineAsm});
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0]->operands.size() == 4);  // a's two elements, then a's two again
  CHECK(pairs[0]->results.size() == 2);
  CHECK(pairs[0]->int_attr("pack") == 2);
}

TEST_CASE("inline asm: pure calls are merged and dropped, impure ones kept") {
  auto e = trace(asm_effects, {ptr(DType::i32), ptr(DType::i32), ptr(DType::f32), ptr(DType::i32)});
  auto simt = simt_of(*e, "cuda-sm_90a");
  int shl1 = 0, shl3 = 0, membar = 0, pair = 0;
  for (const ir::Op* c : ops_of(*simt, {ir::OpKind::InlineAsm, ir::OpKind::InlineAsmImpure})) {
    const std::string& text = c->str_attr("asm");
    shl1 += text == "shl.b32 $0, $1, 1;";
    shl3 += text == "shl.b32 $0, $1, 3;";
    membar += text == "membar.gl;" && c->kind == ir::OpKind::InlineAsmImpure;
    pair += c->results.size() == 2;
  }
  CHECK(shl1 == 1);    // two identical pure calls: one (one element per thread)
  CHECK(shl3 == 0);    // unused and pure: gone
  CHECK(membar == 1);  // unused but impure: kept
  CHECK(pair == 1);
  const std::string ptx = ptx_of(*e, "cuda-sm_90a");
  CHECK(ptx.find("membar.gl;") != std::string::npos);
  CHECK(ptx.find("cvt.rn.f32.s32") != std::string::npos);
  CHECK(ptx.find("$0") == std::string::npos);  // LLVM substituted every operand
  CHECK(count(ptx, "mov.b32 %r") >= 1);
}

TEST_CASE("inline asm: PTX holds the asm text with registers, assembled for sm_80 and sm_90a") {
  for (const char* target : {"cuda-sm_80", "cuda-sm_90a"}) {
    CAPTURE(std::string(target));
    const std::string ptx = ptx_of(*add_kernel(0), target);
    CHECK(count(ptx, "; // asm-add") == 2);  // two elements per thread, one call each
    CHECK(ptx.find("add.s32 %r") != std::string::npos);
    const std::string h =
        ptx_of(*trace(asm_f16x2, {ptr(DType::f16), ptr(DType::f16), ptr(DType::i32)}), target);
    CHECK(count(h, "; // asm-f16x2") == 2);              // four halves per thread, two per call
    CHECK(h.find("add.f16x2 %r") != std::string::npos);  // 32-bit registers
  }
}

TEST_CASE("inline asm: pack = 4 packs four i8 of a 2-D tile per register, shf assembles") {
  auto m = trace(asm_bytes, {ptr(DType::i8), ptr(DType::i8), ptr(DType::u32)});
  // 512 i8 over 128 threads: 4 per thread, one call of 4 consecutive elements.
  auto simt = simt_of(*m, "cuda-sm_90a");
  auto calls = ops_of(*simt, {ir::OpKind::InlineAsm});
  REQUIRE(calls.size() == 2);  // the prmt and the shf
  CHECK(calls[0]->operands.size() == 4);
  CHECK(calls[0]->results.size() == 4);
  for (const char* target : {"cuda-sm_80", "cuda-sm_90a"}) {
    CAPTURE(std::string(target));
    const std::string ptx = ptx_of(*m, target);
    CHECK(count(ptx, "; // asm-prmt") == 1);
    CHECK(ptx.find("shf.l.wrap.b32 %r") != std::string::npos);
  }
}

TEST_CASE("inline asm: SPIR-V targets refuse it at compile time, naming op, target and line") {
  auto m = add_kernel(0);
  for (const char* target : {"vulkan-lavapipe", "vulkan-nvidia"}) {
    CAPTURE(std::string(target));
    auto [kind, message] = error_of([&] { tessera::targets::compile(*m, profile(target), {}); });
    INFO(message);
    CHECK(kind == ErrorKind::Unsupported);
    CHECK(message.find("PTX inline assembly (tl::inline_asm_elementwise)") != std::string::npos);
    CHECK(message.find("on target '" + std::string(target) + "'") != std::string::npos);
    CHECK(message.find(std::string(__FILE__) + ":" + std::to_string(g_line) + ": 'inline_asm'") !=
          std::string::npos);
  }
}

}  // namespace ptx_test
