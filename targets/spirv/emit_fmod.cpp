/// \file The float remainder `rem` exactly (C's fmod), which OpFRem is not: Vulkan lets it be
/// x - y * trunc(x / y), which is wrong for large quotients (lavapipe returns inf). The
/// significands are reduced modulo |y| with integer arithmetic, a few exponent bits at a time.
#include <limits>

#include "targets/spirv/emitter.h"

namespace tessera::spirv::impl {

namespace {

/// A structured loop `while (d != 0) { k = min(d, step); r = (r << k) % m; d -= k; }` on u64.
Value reduce_significand(Emitter& e, Value r, Value d, Value m, uint64_t step) {
  Builder& b = e.b;
  uint32_t u64 = b.t_uint(64);
  uint32_t entry = b.current_label(), header = b.new_label(), body = b.new_label(),
           latch = b.new_label(), merge = b.new_label();
  b.branch(header);
  b.begin_block(header);
  PhiRef rem = b.phi(u64), left = b.phi(u64);
  b.add_incoming(rem, r, entry);
  b.add_incoming(left, d, entry);
  Value more = b.compare(spv::OpINotEqual, left.value, b.c_int(u64, 0));
  e.count_inner_pass();
  b.loop_merge(merge, latch);
  b.branch_cond(more, body, merge);
  b.begin_block(body);
  Value k = b.select(b.compare(spv::OpULessThan, left.value, b.c_int(u64, step)), left.value,
                     b.c_int(u64, step));
  Value next = b.binary(spv::OpUMod, b.binary(spv::OpShiftLeftLogical, rem.value, k), m);
  Value next_left = b.binary(spv::OpISub, left.value, k);
  b.branch(latch);
  b.begin_block(latch);
  b.add_incoming(rem, next, latch);
  b.add_incoming(left, next_left, latch);
  b.branch(header);
  b.begin_block(merge);
  e.merge_inner_count();
  return rem.value;
}

}  // namespace

/// fmod of two f32 or f64 values: NaN for a NaN operand, an infinite x or a zero y; x when
/// |x| < |y| or y is infinite; else the exact remainder with x's sign.
Value Emitter::fmod(Value x, Value y) {
  uint32_t w = b.width(x.type);
  uint32_t mant_bits = w == 32 ? 23 : 52, bias = w == 32 ? 127 : 1023;
  uint32_t uint = b.t_uint(w), u64 = b.t_uint(64), i32 = b.t_int(32, true);
  uint64_t sign_mask = uint64_t{1} << (w - 1), mant_mask = (uint64_t{1} << mant_bits) - 1;
  Value ux = b.bitcast(uint, x), uy = b.bitcast(uint, y);
  Value ax = b.binary(spv::OpBitwiseAnd, ux, b.c_int(uint, sign_mask - 1));
  Value ay = b.binary(spv::OpBitwiseAnd, uy, b.c_int(uint, sign_mask - 1));
  auto is = [&](spv::Op opcode, Value v) { return b.op(opcode, b.t_bool(), {v}); };
  auto any = [&](Value a, Value c) { return b.binary(spv::OpLogicalOr, a, c); };
  Value invalid = any(any(is(spv::OpIsNan, x), is(spv::OpIsNan, y)),
                      any(is(spv::OpIsInf, x), b.compare(spv::OpIEqual, ay, b.c_int(uint, 0))));
  Value keep_x = any(is(spv::OpIsInf, y), b.compare(spv::OpULessThan, ax, ay));
  Value regular = b.unary(spv::OpLogicalNot, any(invalid, keep_x));
  // value = m * 2^(e - bias - mant_bits) with e >= 1 (subnormals: no hidden bit, e = 1).
  auto split = [&](Value a, Value* m, Value* e) {
    Value biased = b.binary(spv::OpShiftRightLogical, a, b.c_int(uint, mant_bits));
    Value normal = b.compare(spv::OpINotEqual, biased, b.c_int(uint, 0));
    Value hidden = b.select(normal, b.c_int(uint, mant_mask + 1), b.c_int(uint, 0));
    *m = b.binary(spv::OpBitwiseOr, b.binary(spv::OpBitwiseAnd, a, b.c_int(uint, mant_mask)),
                  hidden);
    *e = b.select(normal, biased, b.c_int(uint, 1));
    if (w == 32) *m = b.convert(spv::OpUConvert, u64, *m);
    if (w == 32) *e = b.convert(spv::OpUConvert, u64, *e);
  };
  Value mx, ex, my, ey;
  split(ax, &mx, &ex);
  split(ay, &my, &ey);
  my = b.select(regular, my, b.c_int(u64, 1));
  Value d = b.select(regular, b.binary(spv::OpISub, ex, ey), b.c_int(u64, 0));
  // r << k stays below 2^64: r < my < 2^(mant_bits + 1).
  Value r = reduce_significand(*this, b.binary(spv::OpUMod, mx, my), d, my, 63 - (mant_bits + 1));
  Value scale = b.binary(spv::OpISub, b.bitcast(i32, b.convert(spv::OpUConvert, b.t_uint(32), ey)),
                         b.c_int(i32, bias + mant_bits));
  Value magnitude =
      b.ext(GLSLstd450Ldexp, x.type, {b.convert(spv::OpConvertUToF, x.type, r), scale});
  Value sign = b.binary(spv::OpBitwiseAnd, ux, b.c_int(uint, sign_mask));
  Value result = b.bitcast(x.type, b.binary(spv::OpBitwiseOr, b.bitcast(uint, magnitude), sign));
  Value nan = b.c_float(x.type, std::numeric_limits<double>::quiet_NaN());
  return b.select(invalid, nan, b.select(keep_x, x, result));
}

}  // namespace tessera::spirv::impl
