/// \file fp8 (f8e4m3, f8e5m2): every code decoded to f32, f16 and bf16; f32, f16 and bf16
/// rounded to fp8 at ties, subnormals, the largest values and beyond (saturating, NaN kept); a
/// round trip that never stores fp8; e4m3 <-> e5m2. References: core/support/float8.h, itself
/// tested against the formats' definitions (tests/core/support/float8_test.cpp). Devices
/// without fp8 (SPIR-V, CUDA before sm_89) SKIP. The fp8 dots are in dot.cpp.
#include <algorithm>
#include <cmath>

#include "core/support/float8.h"
#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

void fp8_cast_kernel(tl::pointer x, tl::pointer out, tl::i32 n, tl::DType TO, tl::DType VIA,
                     int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m);
  if (VIA != a.dtype()) a = a.to(VIA);  // a round trip through fp8 in registers
  tl::store(out + offs, a.to(TO), m);
}

double decode(DType t, uint8_t code) {
  return t == DType::f8e4m3 ? f8e4m3_to_double(code) : f8e5m2_to_double(code);
}

/// Runs `in -> (via) -> to` on the device and checks it bit for bit against `want`.
void run(Context& ctx, const HostArray& in, DType via, const HostArray& want, const char* what) {
  auto k = TESSERA_KERNEL(fp8_cast_kernel, x, out, n, TO, VIA, BLOCK);
  const int n = static_cast<int>(in.size());
  DevArray din = ctx.upload(in), o = ctx.poisoned(want.dtype(), in.size());
  k[{cdiv(n, 128)}](din.buf, o.buf, n, want.dtype(), via, 128);
  ctx.check_exact(std::string(what) + " " + dname(in.dtype()) + " -> " + dname(want.dtype()),
                  ctx.download(o), want);
}

/// Values that probe `t`'s rounding: each value, each midpoint between neighbours (ties) and
/// next to it, the largest finite value and beyond, infinities, NaN, signed zeros, random.
HostArray probes(Context& ctx, DType src, DType t) {
  std::vector<double> v;
  std::vector<double> finite;
  for (int c = 0; c < 128; ++c)
    if (std::isfinite(decode(t, static_cast<uint8_t>(c)))) finite.push_back(decode(t, c));
  std::sort(finite.begin(), finite.end());
  for (size_t i = 0; i + 1 < finite.size(); ++i) {
    const double mid = (finite[i] + finite[i + 1]) / 2;
    for (double x : {finite[i], mid, mid * (1 + 0x1p-9), mid * (1 - 0x1p-9)}) {
      v.push_back(x);
      v.push_back(-x);
    }
  }
  const double max = finite.back();
  for (double x : {max * 1.03, max * 1.0625, max * 1.2, max * 4, 1e30, double(INFINITY)}) {
    v.push_back(x);
    v.push_back(-x);
  }
  v.push_back(NAN);
  v.push_back(-0.0);
  HostArray r = ctx.random_full(DType::f32, 256, 18);
  for (size_t i = 0; i < r.size(); ++i) v.push_back(r.f(i));
  HostArray a(src, v.size());
  for (size_t i = 0; i < v.size(); ++i) a.set_f(i, v[i]);  // rounded to `src` first
  return a;
}

void decode_case(Context& ctx, DType t) {
  HostArray in(t, 256);
  for (int c = 0; c < 256; ++c) in.set_bits(c, static_cast<uint64_t>(c));
  for (DType to : {DType::f32, DType::f16, DType::bf16}) {
    HostArray want(to, 256);
    for (int c = 0; c < 256; ++c) want.set_f(c, decode(t, static_cast<uint8_t>(c)));
    run(ctx, in, t, want, "every code");
  }
  // e4m3 <-> e5m2: every code of one rounded into the other.
  const DType other = t == DType::f8e4m3 ? DType::f8e5m2 : DType::f8e4m3;
  HostArray want(other, 256);
  for (int c = 0; c < 256; ++c) want.set_f(c, decode(t, static_cast<uint8_t>(c)));
  run(ctx, in, t, want, "every code");
}

void encode_case(Context& ctx, DType t) {
  for (DType src : {DType::f32, DType::f16, DType::bf16}) {
    const HostArray in = probes(ctx, src, t);
    HostArray want(t, in.size()), back(src, in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      want.set_f(i, in.f(i));  // HostArray rounds as cvt.rn.satfinite does
      back.set_f(i, want.f(i));
    }
    run(ctx, in, src, want, "rounding");
    run(ctx, in, t, back, "round trip in registers");
  }
}

}  // namespace

void register_fp8(std::vector<Case>& out) {
  for (DType t : {DType::f8e4m3, DType::f8e5m2}) {
    const std::vector<Need> needs = needs_of({t, DType::f16, DType::bf16});
    out.push_back(
        {"fp8/decode_" + dname(t), needs, "", [t](Context& ctx) { decode_case(ctx, t); }});
    out.push_back(
        {"fp8/encode_" + dname(t), needs, "", [t](Context& ctx) { encode_case(ctx, t); }});
  }
}

}  // namespace tessera::conformance
