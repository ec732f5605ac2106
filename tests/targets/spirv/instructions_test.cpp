/// \file Golden checks on the emitter's instruction selection (unoptimized disassembly): shuffles,
/// vector and packed accesses with their Aligned operands, barriers, loops, math, atomics.
#include "kernels.h"

namespace spirv_test {
namespace {

std::string shuffle_kernel(std::string_view mode, DType d = DType::f32) {
  return value_kernel({d},
                      "  %n = constant {value = 1} : i32\n  %r = shuffle %a0, %n {mode = \"" +
                          std::string(mode) + "\"} : " + name(d),
                      d);
}

TEST_CASE("spirv: shuffle modes select the GroupNonUniform shuffles") {
  CHECK(emit_both(shuffle_kernel("xor")).has("OpGroupNonUniformShuffleXor %float %uint_3"));
  CHECK(emit_both(shuffle_kernel("idx")).has("OpGroupNonUniformShuffle %float %uint_3"));
  Emitted up = emit_both(shuffle_kernel("up"));
  CHECK(up.has("OpGroupNonUniformShuffleUp %float %uint_3"));
  CHECK(up.has("OpCapability GroupNonUniformShuffleRelative"));
  // Lanes below the distance keep their own value: lane < n selects the input.
  CHECK(up.has("OpULessThan %bool"));
  CHECK(up.has("OpSelect %float"));
  Emitted down = emit_both(shuffle_kernel("down"));
  CHECK(down.has("OpGroupNonUniformShuffleDown %float %uint_3"));
  CHECK(down.has("OpISub %uint %uint_8"));  // S - lane, with S the subgroup size (8)
  CHECK(down.has("OpUGreaterThanEqual %bool"));
}

TEST_CASE("spirv: a runtime shift distance shuffles from the computed lane") {
  // The distance may be negative, which ShuffleUp/ShuffleDown cannot express.
  std::string text = value_kernel({DType::i32, DType::f32},
                                  "  %r = shuffle %a1, %a0 {mode = \"down\"} : f32", DType::f32);
  Emitted e = emit_both(text);
  CHECK(!e.has("OpGroupNonUniformShuffleDown"));
  CHECK(e.has("OpGroupNonUniformShuffle %float %uint_3"));
  CHECK(e.has("OpIAdd %uint"));  // lane + n
  CHECK(e.has("OpSelect %uint"));
}

TEST_CASE("spirv: narrow and 64-bit shuffles travel as 32-bit words") {
  CHECK(emit_both(shuffle_kernel("xor", DType::f16)).has("OpGroupNonUniformShuffleXor %uint"));
  CHECK(emit_both(shuffle_kernel("idx", DType::i8)).has("OpGroupNonUniformShuffle %uint"));
  Emitted wide = emit_both(shuffle_kernel("down", DType::i64));
  CHECK(wide.has("OpGroupNonUniformShuffleDown %v2uint"));
  CHECK(emit_both(shuffle_kernel("xor", DType::i1)).has("OpGroupNonUniformShuffleXor %bool"));
}

std::string load_kernel(DType d, int width, int align, bool predicated = false) {
  std::string dt = name(d), results, others, types;
  for (int i = 0; i < width; ++i) {
    std::string k = std::to_string(i);
    results += (i ? ", %v" : "%v") + k;
    others += ", %z";
    types += (i ? ", " : "") + dt;
  }
  std::string body = "  %t = constant {value = 1} : i1\n  %z = constant {value = " + literal(d, 0) +
                     "} : " + dt + "\n";
  body += "  %lane = lane_id : i32\n  %p = ptr_add %src, %lane : ptr<" + dt + ">\n";
  body += "  %m = cmp_lt %lane, %n : i1\n";
  std::string pred = predicated ? "%m" : "%t";
  body += "  " + results + " = global_load %src, " + pred + others +
          " {align = " + std::to_string(align) + ", width = " + std::to_string(width) +
          "} : " + types + "\n";
  body += "  global_store %dst, " + pred + ", " + results + " {align = " + std::to_string(align) +
          ", width = " + std::to_string(width) + "}";
  return kernel("%src: ptr<" + dt + ">, %dst: ptr<" + dt + ">, %n: i32", body);
}

TEST_CASE("spirv: 16-byte aligned f32 x4 accesses are vec4 with Aligned 16") {
  Emitted e = emit_both(load_kernel(DType::f32, 4, 16));
  CHECK(e.has("OpLoad %v4float"));
  CHECK(e.has("Aligned|NonPrivatePointer 16"));
  CHECK(e.has("OpStore"));
  CHECK(e.count("Aligned|NonPrivatePointer 16") == 2);
}

TEST_CASE("spirv: wide accesses split into 16-byte vectors, each with its own alignment") {
  Emitted e = emit_both(load_kernel(DType::f32, 16, 16));
  CHECK(e.count("OpLoad %v4float") == 4);
  CHECK(e.count("Aligned|NonPrivatePointer 16") == 8);
  // Only 8-byte alignment proven: vec4 accesses at 8, 8, 8, 8 (chunk offsets 0, 16, 32, 48).
  Emitted e8 = emit_both(load_kernel(DType::f32, 8, 8));
  CHECK(e8.count("Aligned|NonPrivatePointer 8") == 4);
  CHECK(!e8.has("Aligned|NonPrivatePointer 16"));
}

TEST_CASE("spirv: scalar accesses carry the element alignment") {
  Emitted e = emit_both(load_kernel(DType::f32, 2, 4));
  CHECK(e.count("OpLoad %v2float") == 1);
  CHECK(e.has("Aligned|NonPrivatePointer 4"));
  Emitted h = emit_both(load_kernel(DType::f16, 1, 2));
  CHECK(h.has("OpLoad %half"));
  CHECK(h.has("Aligned|NonPrivatePointer 2"));
  CHECK(h.has("OpCapability StorageBuffer16BitAccess"));
  Emitted d = emit_both(load_kernel(DType::f64, 2, 16));
  CHECK(d.has("OpLoad %v2double"));
}

TEST_CASE("spirv: aligned narrow elements are packed into 32-bit words") {
  Emitted h = emit_both(load_kernel(DType::f16, 8, 16));
  CHECK(h.has("OpLoad %v4uint"));
  CHECK(h.count("OpBitcast %v2half") == 4);
  CHECK(!h.has("OpCapability StorageBuffer16BitAccess"));
  Emitted b = emit_both(load_kernel(DType::i8, 16, 16));
  CHECK(b.has("OpBitcast %v4char"));
  // Two bytes at 2-byte alignment cannot fill a word: byte accesses.
  Emitted s = emit_both(load_kernel(DType::u8, 2, 2));
  CHECK(s.has("OpCapability StorageBuffer8BitAccess"));
  CHECK(s.has("Aligned|NonPrivatePointer 2"));
  CHECK(s.has("Aligned|NonPrivatePointer 1"));
}

TEST_CASE("spirv: predicated accesses branch around the access and merge the others") {
  Emitted e = emit_both(load_kernel(DType::f32, 4, 16, /*predicated=*/true));
  CHECK(e.count("OpSelectionMerge") == 3);  // the grid check, the load, the store
  CHECK(e.count("OpPhi %float") == 4);
}

TEST_CASE("spirv: i1 and bf16 live in memory as u8 and u16") {
  Emitted b = emit_both(load_kernel(DType::i1, 1, 1));
  CHECK(b.has("OpLoad %uchar"));
  CHECK(b.has("OpINotEqual %bool"));
  CHECK(b.has("OpSelect %uchar"));
  Emitted bf = emit_both(load_kernel(DType::bf16, 1, 2));
  CHECK(bf.has("OpLoad %ushort"));
  CHECK(bf.has("OpShiftLeftLogical %uint"));
}

TEST_CASE("spirv: cp_async copies 16 bytes at once, commit and wait have nothing to do") {
  std::string text = kernel("%g: ptr<f32>, %n: i32", R"(  %lane = lane_id : i32
  %c4 = constant {value = 4} : i32
  %i = mul %lane, %c4 : i32
  %m = cmp_lt %lane, %n : i1
  %p = ptr_add %g, %i : ptr<f32>
  cp_async %i, %p, %m {buffer = 0}
  cp_async_commit
  cp_async_wait {pending = 0}
  barrier)",
                            "shared_0 = tile<256xf32>");
  Emitted e = emit_both(text);
  CHECK(e.has("OpLoad %v4float"));
  CHECK(e.has("Aligned|NonPrivatePointer 16"));
  CHECK(e.has("OpTypeArray %v4float %uint_64"));  // the buffer is only accessed 4 wide
  CHECK(e.count("OpPhi %float") == 4);            // zeros where the predicate is false
  CHECK(e.has("OpControlBarrier"));
}

TEST_CASE("spirv: barrier is a workgroup control barrier with acquire-release semantics") {
  Emitted e = emit_both(kernel("", "  barrier"));
  // AcquireRelease | WorkgroupMemory | MakeAvailable | MakeVisible = 0x6108
  CHECK(e.has("OpControlBarrier %uint_2 %uint_2 %uint_24840"));
}

TEST_CASE("spirv: for, while and if are structured") {
  std::string body = R"(  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %sum = for %c0, %n, %c1, %c0 ({
  ^(%i: i32, %acc: i32):
    %odd = and %i, %c1 : i32
    %is_odd = cmp_ne %odd, %c0 : i1
    %next = if %is_odd ({
      %x = add %acc, %i : i32
      yield %x
    }, {
      yield %acc
    }) : i32
    yield %next
  }) : i32
  %fin = while %sum ({
  ^(%w: i32):
    %more = cmp_gt %w, %c1 : i1
    condition %more, %w
  }, {
  ^(%x2: i32):
    %half = shr %x2, %c1 : i32
    yield %half
  }) : i32
  %t = constant {value = 1} : i1
  global_store %out, %t, %fin {align = 4, width = 1})";
  Target t = profile();
  t.loop_limit = 0;  // faults_test.cpp has the loop counting
  Emitted e = emit_both(kernel("%out: ptr<i32>, %n: i32", body), t);
  CHECK(e.count("OpLoopMerge") == 2);
  CHECK(e.count("OpSelectionMerge") == 2);  // the grid check and the if
  CHECK(e.has("OpSLessThan %bool"));        // the for's test with a positive constant step
  CHECK(e.count("OpPhi %int") >= 4);
}

TEST_CASE("spirv: a for loop with a runtime step tests its sign") {
  std::string body = R"(  %c0 = constant {value = 0} : i64
  %lb = cast %n : i64
  for %lb, %c0, %s ({
  ^(%i: i64):
    yield
  }))";
  Emitted e = emit_both(kernel("%n: i32, %s: i64", body));
  CHECK(e.has("OpSGreaterThan %bool"));
  CHECK(e.has("OpSLessThan %bool"));
  CHECK(e.has("OpSelect %bool"));
}

TEST_CASE("spirv: math goes through GLSL.std.450") {
  auto math = [](std::string_view op, DType d = DType::f32) {
    return emit_both(value_kernel({d}, "  %r = " + std::string(op) + " %a0 : " + name(d), d));
  };
  CHECK(math("exp").has("Exp %"));
  CHECK(math("exp2").has("Exp2 %"));
  CHECK(math("log").has("Log %"));
  CHECK(math("rsqrt").has("InverseSqrt %"));
  CHECK(math("sqrt", DType::f64).has(" Sqrt %"));
  Emitted erf = math("erf");
  CHECK(erf.has("Exp %"));
  CHECK(erf.count(" Fma ") >= 16);
  Emitted half_exp = math("exp", DType::f16);
  CHECK(half_exp.has("Exp %"));
  CHECK(!half_exp.has("OpExtInst %half"));  // computed in f32
  CHECK(half_exp.has("OpFConvert %half"));
  // sin, cos (f32) and every f64 function but sqrt come from the math library: sin's huge
  // arguments branch to the Payne-Hanek reduction; f64 has no GLSL Exp.
  Emitted sin = math("sin");
  CHECK(sin.has("OpSelectionMerge"));
  CHECK(!sin.has(" Sin %"));
  Emitted exp64 = math("exp", DType::f64);
  CHECK(!exp64.has("Exp %"));
  // (lavapipe's profile rounds f64 by adding 2^52: quirk wide_round_unrounded, quirks_test.cpp)
  CHECK(!exp64.has("RoundEven %"));
  CHECK(math("exp", DType::f32).has("RoundEven %"));
  CHECK(math("log1p", DType::f64).has("OpFDiv %double"));
  Emitted tanh = math("tanh");
  CHECK(tanh.has("Tanh %"));
  CHECK(tanh.has("%float_10"));
}

TEST_CASE("spirv: integer division keeps the interpreter's answers for 0 and -1 divisors") {
  Emitted div =
      emit_both(value_kernel({DType::i32, DType::i32}, "  %r = div %a0, %a1 : i32", DType::i32));
  CHECK(div.has("OpSDiv %int"));
  CHECK(div.has("OpIEqual %bool"));  // the divisor tests
  CHECK(div.has("OpSNegate %int"));  // x / -1
  // The remainder is a - (a / c) * c: no OpSRem, which NVIDIA's driver computes unsigned.
  Emitted rem =
      emit_both(value_kernel({DType::i32, DType::i32}, "  %r = rem %a0, %a1 : i32", DType::i32));
  CHECK(!rem.has("OpSRem"));
  CHECK(rem.has("OpIMul %int"));
  CHECK(rem.has("OpISub %int"));
  // A constant divisor other than 0 and -1 needs no guard.
  Emitted known = emit_both(value_kernel(
      {DType::u16}, "  %c = constant {value = 7} : u16\n  %r = div %a0, %c : u16", DType::u16));
  CHECK(known.has("OpUDiv %ushort"));
  CHECK(!known.has("OpIEqual"));
  // Float remainders are exact (an integer loop over the significands), not OpFRem.
  Emitted frem =
      emit_both(value_kernel({DType::f32, DType::f32}, "  %r = rem %a0, %a1 : f32", DType::f32));
  CHECK(!frem.has("OpFRem"));
  CHECK(frem.has("OpUMod %ulong"));
  CHECK(frem.has("OpLoopMerge"));
}

TEST_CASE("spirv: f32 division is defined for divisors beyond 2^126") {
  Emitted e =
      emit_both(value_kernel({DType::f32, DType::f32}, "  %r = div %a0, %a1 : f32", DType::f32));
  CHECK(e.has("OpFDiv %float"));
  CHECK(e.has("OpFOrdGreaterThan %bool"));  // |divisor| > 2^126
  CHECK(e.has("%float_0_25"));
}

TEST_CASE("spirv: constants take the interpreter's value of their attribute") {
  // Integer attributes of float constants round once: 16777217 is 16777216 in f32, 65520 is inf
  // in f16; i1 keeps bit 0.
  Emitted e = emit_both(
      kernel("%o1: ptr<f32>, %o2: ptr<f16>, %o3: ptr<i1>", R"(  %t = constant {value = 1} : i1
  %a = constant {value = 16777217} : f32
  %b = constant {value = 65520} : f16
  global_store %o1, %t, %a {align = 4, width = 1}
  global_store %o2, %t, %b {align = 2, width = 1}
  global_store %o3, %t, %t {align = 1, width = 1})"));
  CHECK(e.has("OpConstant %float 16777216"));
  CHECK(e.has("OpConstant %half 0x1p+16"));  // the disassembler's spelling of f16 inf
  CHECK(e.has("OpConstantTrue %bool"));
}

TEST_CASE("spirv: exp and exp2 reduce their argument before GLSL Exp") {
  Emitted e = emit_both(value_kernel({DType::f32}, "  %r = exp %a0 : f32", DType::f32));
  CHECK(e.has("RoundEven %"));
  CHECK(e.has("Ldexp %"));
  CHECK(e.has("OpIsNan %bool"));
}

TEST_CASE("spirv: float adds and multiplies are not contracted") {
  Emitted e = emit_both(value_kernel(
      {DType::f32, DType::f32}, "  %p = mul %a0, %a1 : f32\n  %r = add %p, %a1 : f32", DType::f32));
  CHECK(e.count("NoContraction") == 2);
  CHECK(emit_both(value_kernel({DType::f32, DType::f32, DType::f32},
                               "  %r = fma %a0, %a1, %a2 : f32", DType::f32))
            .has("Fma %"));
}

}  // namespace
}  // namespace spirv_test

namespace spirv_test {
namespace {

/// A masked global_load of one i32 with the hint attributes `hints`, stored back with
/// `store_hints`.
std::string hinted_load(std::string_view hints, std::string_view store_hints = "") {
  return kernel("%p: ptr<i32>, %n: i32",
                "  %z = constant {value = 0} : i32\n  %pid = program_id {axis = 0} : i32\n"
                "  %m = cmp_lt %pid, %n : i1\n  %v = global_load %p, %m, %z {align = 4, width = 1" +
                    std::string(hints) +
                    "} : i32\n  global_store %p, %m, %v {align = 4, width = 1" +
                    std::string(store_hints) + "}");
}

TEST_CASE("spirv: a volatile load is Volatile, streaming cache hints are Nontemporal") {
  Emitted v = emit_both(hinted_load(", volatile = 1"));
  CHECK(v.has("Volatile"));
  CHECK(!v.has("Nontemporal"));
  // "cg", "cs" (Triton's ".cs" too) and evict_first: the load's operands only.
  for (const char* hint : {", cache = \"cg\"", ", cache = \".cs\"", ", eviction = \"evict_first\"",
                           ", cache = \"cg\", eviction = \"evict_last\""}) {
    CAPTURE(hint);
    Emitted h = emit_both(hinted_load(hint));
    CHECK(h.count("Nontemporal") == 1);
    CHECK(!h.has("Volatile"));
    CHECK(h.has("Aligned"));
  }
  // The hints without a SPIR-V form are dropped.
  CHECK(!emit_both(hinted_load(", cache = \"ca\", eviction = \"evict_last\"")).has("Nontemporal"));
  CHECK(!emit_both(hinted_load(", cache = \"cv\"", ", cache = \"wt\"")).has("Nontemporal"));
  // A streamed store; a store's "cg" (L2 is where stores go anyway) stays dropped.
  CHECK(emit_both(hinted_load("", ", cache = \"cs\"")).count("Nontemporal") == 1);
  CHECK(emit_both(hinted_load("", ", eviction = \"evict_first\"")).count("Nontemporal") == 1);
  CHECK(!emit_both(hinted_load("", ", cache = \"cg\"")).has("Nontemporal"));
}

}  // namespace
}  // namespace spirv_test
