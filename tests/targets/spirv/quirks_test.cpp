/// \file The driver workarounds (target::Quirk): each one's instructions are emitted when the
/// target has the quirk and not otherwise.
#include "kernels.h"

namespace spirv_test {
namespace {

using tessera::target::Quirk;

Target with_quirk(Quirk q, bool on) {
  Target t = profile();
  for (Quirk other : {Quirk::NarrowNegateUnwrapped, Quirk::SpecialConstantFolding,
                      Quirk::NarrowFloatUnrounded, Quirk::WideCompareFolding})
    t.set(other, false);
  t.set(q, on);
  return t;
}

TEST_CASE("spirv: narrow_negate_unwrapped negates 8/16-bit integers in 32 bits and wraps them") {
  struct Row {
    DType dtype;
    const char* narrow;  // the SPIR-V type's friendly name
    const char* extract;
  };
  const Row rows[] = {{DType::i8, "%char", "OpBitFieldSExtract %int"},
                      {DType::i16, "%short", "OpBitFieldSExtract %int"},
                      {DType::u8, "%uchar", "OpBitFieldUExtract %uint"},
                      {DType::u16, "%ushort", "OpBitFieldUExtract %uint"}};
  for (const Row& r : rows) {
    CAPTURE(name(r.dtype));
    const std::string text = value_kernel({r.dtype}, "  %r = neg %a0 : " + name(r.dtype), r.dtype);
    Emitted plain = emit_both(text, with_quirk(Quirk::NarrowNegateUnwrapped, false));
    CHECK(plain.has(std::string("OpSNegate ") + r.narrow));
    CHECK(!plain.has("OpBitField"));
    Emitted wrapped = emit_both(text, with_quirk(Quirk::NarrowNegateUnwrapped, true));
    CHECK(!wrapped.has("OpSNegate"));
    CHECK(wrapped.has(r.extract));
    CHECK(wrapped.has("OpISub"));
    // |MIN| is MIN: abs negates the same way.
    if (tessera::ir::is_signed_int(r.dtype)) {
      const std::string abs = value_kernel({r.dtype}, "  %r = abs %a0 : " + name(r.dtype), r.dtype);
      CHECK(emit_both(abs, with_quirk(Quirk::NarrowNegateUnwrapped, true)).has(r.extract));
      CHECK(!emit_both(abs, with_quirk(Quirk::NarrowNegateUnwrapped, false)).has("OpBitField"));
    }
  }
  // 32-bit integers keep OpSNegate either way.
  const std::string wide = value_kernel({DType::i32}, "  %r = neg %a0 : i32", DType::i32);
  Emitted e = emit_both(wide, with_quirk(Quirk::NarrowNegateUnwrapped, true));
  CHECK(e.has("OpSNegate %int"));
  CHECK(!e.has("OpBitField"));
}

/// Does the disassembly hold the constant 1.5 (f32 and f64 "_1_5", f16 "0x1_8p_0")?
bool has_one_and_half(const Emitted& e) {
  return e.has("_1_5 ") || e.has("_0x1_8p_0 ");
}

std::string const_kernel(DType d, const std::string& value, const std::string& op) {
  return value_kernel({d},
                      "  %c = constant {value = " + value + "} : " + name(d) + "\n  %r = " + op +
                          " %a0, %c : " + name(d),
                      d);
}

TEST_CASE("spirv: special_constant_folding hides +-0, inf and NaN operands behind a select") {
  struct Row {
    DType dtype;
    const char* value;
    const char* op;
  };
  const Row rows[] = {{DType::f32, "0.0", "mul"},  {DType::f16, "0.0", "div"},
                      {DType::f64, "-0.0", "add"}, {DType::f32, "inf", "sub"},
                      {DType::bf16, "nan", "mul"}, {DType::f16, "-inf", "min"}};
  for (const Row& r : rows) {
    CAPTURE(std::string(r.value));
    CAPTURE(std::string(r.op));
    const std::string text = const_kernel(r.dtype, r.value, r.op);
    Emitted plain = emit_both(text, with_quirk(Quirk::SpecialConstantFolding, false));
    Emitted hidden = emit_both(text, with_quirk(Quirk::SpecialConstantFolding, true));
    // The select against 1.5 on num_programs(0) == 0, which never holds.
    CHECK(!has_one_and_half(plain));
    CHECK(has_one_and_half(hidden));
    CHECK(hidden.count("OpSelect") == plain.count("OpSelect") + 1);
    CHECK(hidden.count("OpIEqual %bool") == plain.count("OpIEqual %bool") + 1);
  }
  // Ordinary constants stay constants.
  for (const char* value : {"2.0", "-1.5", "1.0e-30"}) {
    CAPTURE(std::string(value));
    const std::string text = const_kernel(DType::f32, value, "mul");
    Emitted e = emit_both(text, with_quirk(Quirk::SpecialConstantFolding, true));
    CHECK(e.count("OpSelect") ==
          emit(text, with_quirk(Quirk::SpecialConstantFolding, false)).count("OpSelect"));
  }
  // fma's operands too.
  const std::string fma = value_kernel(
      {DType::f32, DType::f32},
      "  %c = constant {value = 0.0} : f32\n  %r = fma %a0, %c, %a1 : f32", DType::f32);
  CHECK(emit_both(fma, with_quirk(Quirk::SpecialConstantFolding, true)).has("_1_5 "));
  CHECK(!emit_both(fma, with_quirk(Quirk::SpecialConstantFolding, false)).has("_1_5 "));
}

TEST_CASE("spirv: narrow_float_unrounded keeps each f16 rounding from the driver's folding") {
  // A cast to f16 and an f16 sqrt (computed in f32, then rounded).
  for (const std::string& body : {std::string("  %r = cast %a0 : f16"),
                                  std::string("  %h = cast %a0 : f16\n  %r = sqrt %h : f16")}) {
    CAPTURE(body);
    const std::string text = value_kernel({DType::f32}, body, DType::f16);
    Emitted pinned = emit_both(text, with_quirk(Quirk::NarrowFloatUnrounded, true));
    CHECK(pinned.has("OpBitwiseOr %ushort"));
    CHECK(pinned.has("OpBitcast %half"));
    Emitted plain = emit_both(text, with_quirk(Quirk::NarrowFloatUnrounded, false));
    CHECK(!plain.has("OpBitwiseOr %ushort"));
  }
}

TEST_CASE("spirv: wide_compare_folding hides the constant of a signed 64-bit ordering compare") {
  // `x.to(int64) CMP 3`, the compare cast to i32 to be stored.
  auto compare = [](DType narrow, DType wide, const std::string& cmp) {
    return value_kernel({narrow},
                        "  %w = cast %a0 : " + name(wide) + "\n  %c = constant {value = 3} : " +
                            name(wide) + "\n  %b = " + cmp + " %w, %c : i1\n  %r = cast %b : i32",
                        DType::i32);
  };
  const std::pair<const char*, const char*> signed_ops[] = {
      {"cmp_lt", "OpSLessThan %bool"},
      {"cmp_le", "OpSLessThanEqual %bool"},
      {"cmp_gt", "OpSGreaterThan %bool"},
      {"cmp_ge", "OpSGreaterThanEqual %bool"}};
  for (auto [cmp, instruction] : signed_ops) {
    CAPTURE(std::string(cmp));
    const std::string text = compare(DType::i32, DType::i64, cmp);
    Emitted plain = emit_both(text, with_quirk(Quirk::WideCompareFolding, false));
    Emitted hidden = emit_both(text, with_quirk(Quirk::WideCompareFolding, true));
    for (const Emitted* e : {&plain, &hidden}) {
      CHECK(e->has("OpSConvert %long"));
      CHECK(e->has(instruction));
    }
    // The constant 3 reaches the compare through a select on num_programs(0) == 0 (never true)
    // against ~3 = -4.
    CHECK(!plain.has("OpSelect %long"));
    CHECK(!plain.has("%long_n4 "));
    CHECK(hidden.count("OpSelect %long") == 1);
    CHECK(hidden.has("%long_n4 "));
    CHECK(hidden.count("OpIEqual %bool") == plain.count("OpIEqual %bool") + 1);
  }
  // Equality, unsigned and 32-bit compares keep their constant operand as it is.
  for (const std::string& text :
       {compare(DType::i32, DType::i64, "cmp_eq"), compare(DType::i32, DType::i64, "cmp_ne"),
        compare(DType::u32, DType::u64, "cmp_lt"), compare(DType::i16, DType::i32, "cmp_lt")}) {
    CAPTURE(text);
    Emitted e = emit_both(text, with_quirk(Quirk::WideCompareFolding, true));
    CHECK(e.count("OpSelect") ==
          emit(text, with_quirk(Quirk::WideCompareFolding, false)).count("OpSelect"));
  }
}

TEST_CASE("spirv: wide_round_unrounded rounds f64 by adding 2^52, not by RoundEven") {
  // f64 sin's Cody-Waite quadrant is rint(x 2/pi); f32's keeps RoundEven (its bound is right).
  const std::string f64 = value_kernel({DType::f64}, "  %r = sin %a0 : f64", DType::f64);
  const std::string f32 = value_kernel({DType::f32}, "  %r = sin %a0 : f32", DType::f32);
  Emitted plain = emit_both(f64, with_quirk(Quirk::WideRoundUnrounded, false));
  Emitted added = emit_both(f64, with_quirk(Quirk::WideRoundUnrounded, true));
  CHECK(plain.has("RoundEven"));
  CHECK(!added.has("RoundEven"));
  CHECK(added.count("OpFAdd %double") == plain.count("OpFAdd %double") + 1);  // x + 2^52
  CHECK(emit_both(f32, with_quirk(Quirk::WideRoundUnrounded, true)).has("RoundEven"));
}

TEST_CASE("target: quirks print and parse, and the driver profiles carry theirs") {
  Target lavapipe = profile("vulkan-lavapipe"), nvidia = profile("vulkan-nvidia");
  CHECK(lavapipe.has(Quirk::SpecialConstantFolding));
  CHECK(!lavapipe.has(Quirk::NarrowNegateUnwrapped));
  CHECK(nvidia.has(Quirk::NarrowNegateUnwrapped));
  CHECK(!nvidia.has(Quirk::SpecialConstantFolding));
  CHECK(lavapipe.has(Quirk::WideCompareFolding));
  CHECK(!nvidia.has(Quirk::WideCompareFolding));
  CHECK(lavapipe.has(Quirk::WideRoundUnrounded));
  CHECK(!nvidia.has(Quirk::WideRoundUnrounded));
  CHECK(lavapipe.str().find(
            ", quirks=special_constant_folding+wide_compare_folding+wide_round_unrounded}") !=
        std::string::npos);
  CHECK(nvidia.has(Quirk::NarrowFloatUnrounded));
  CHECK(nvidia.str().find(", quirks=narrow_negate_unwrapped+narrow_float_unrounded") !=
        std::string::npos);
  // ptxas has the negation bug too.
  CHECK(profile("cuda-sm_90").str().find("quirks=narrow_negate_unwrapped}") != std::string::npos);
  for (const Target& t : {lavapipe, nvidia}) {
    auto back = tessera::target::parse_target(t.str());
    REQUIRE(back);
    CHECK(back->quirks == t.quirks);
    CHECK(*back == t);
  }
  std::string error;
  CHECK(!tessera::target::parse_target("x{isa=spirv1.6, quirks=no_such_bug}", &error));
  CHECK(error == "unknown quirk 'no_such_bug'");
}

}  // namespace
}  // namespace spirv_test
