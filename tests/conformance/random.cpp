/// \file tl::umulhi on i32/u32/i64/u64, and Triton's random numbers: tl::philox against the
/// published Philox known-answer vectors and a C++ Philox 4x32 / 4x64 written from the
/// definition, tl::randint/randint4x (i32 and i64 offsets, kernel-argument and literal seeds,
/// other round counts), tl::rand/rand4x bit for bit and tl::randn/randn4x within the math
/// tolerance of the Box-Muller steps.
#include <array>
#include <cmath>
#include <cstring>

#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

// --- references -------------------------------------------------------------------------------

uint64_t mulhi(uint64_t a, uint64_t b, int bits) {
  if (bits == 32) return ((a & 0xFFFFFFFFu) * (b & 0xFFFFFFFFu)) >> 32;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
}

/// Philox 4xW (W = 32 or 64) with `rounds` rounds, as Random123 and Triton define it.
std::array<uint64_t, 4> philox_ref(std::array<uint64_t, 4> c, uint64_t k0, uint64_t k1, int bits,
                                   int rounds) {
  const bool w64 = bits == 64;
  const uint64_t mask = w64 ? ~uint64_t{0} : 0xFFFFFFFFu;
  const uint64_t ma = w64 ? 0xD2E7470EE14C6C93u : 0xD2511F53u;
  const uint64_t mb = w64 ? 0xCA5A826395121157u : 0xCD9E8D57u;
  const uint64_t wa = w64 ? 0x9E3779B97F4A7C15u : 0x9E3779B9u;
  const uint64_t wb = w64 ? 0xBB67AE8584CAA73Bu : 0xBB67AE85u;
  for (int r = 0; r < rounds; ++r) {
    const uint64_t hi_b = mulhi(mb, c[2], bits), lo_b = (mb * c[2]) & mask;
    const uint64_t hi_a = mulhi(ma, c[0], bits), lo_a = (ma * c[0]) & mask;
    c = {hi_b ^ c[1] ^ k0, lo_b, hi_a ^ c[3] ^ k1, lo_a};
    k0 = (k0 + wa) & mask;
    k1 = (k1 + wb) & mask;
  }
  return c;
}

/// Triton's randint4x words for a seed and an offset (as i64 bits).
std::array<uint64_t, 4> randint4x_ref(uint64_t seed, int64_t offset, bool wide_offset, int rounds) {
  const uint64_t lo = static_cast<uint64_t>(offset) & 0xFFFFFFFFu;
  const uint64_t hi = wide_offset ? (static_cast<uint64_t>(offset >> 32) & 0xFFFFFFFFu) : 0;
  return philox_ref({lo, hi, 0, 0}, seed & 0xFFFFFFFFu, seed >> 32, 32, rounds);
}

float uniform_ref(uint32_t w) {
  int32_t x;
  std::memcpy(&x, &w, 4);
  if (x < 0) x = -x - 1;
  return static_cast<float>(x) * 4.6566127342e-10f;
}

/// Box-Muller in double from the f32 uniforms the kernel computes exactly.
std::array<double, 2> normal_ref(float u1, float u2) {
  const double a = std::fmax(static_cast<double>(1.0e-7f), u1);
  const double th = static_cast<double>(static_cast<float>(6.283185307179586) * u2);
  const double r = std::sqrt(-2.0 * std::log(a));
  return {r * std::cos(th), r * std::sin(th)};
}

// --- kernels ----------------------------------------------------------------------------------

void umulhi_kernel(tl::pointer x, tl::pointer y, tl::pointer out, tl::i32 n, tl::DType EXPECT,
                   int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto r = tl::umulhi(tl::load(x + offs, m), tl::load(y + offs, m));
  expect_dtype(r, EXPECT, "umulhi dtype");
  tl::store(out + offs, r, m);
}

void philox_kernel(tl::scalar seed, tl::pointer c0, tl::pointer c1, tl::pointer c2, tl::pointer c3,
                   tl::pointer out, tl::i32 n, int ROUNDS, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto [r0, r1, r2, r3] = tl::philox(seed, tl::load(c0 + offs, m), tl::load(c1 + offs, m),
                                     tl::load(c2 + offs, m), tl::load(c3 + offs, m), ROUNDS);
  tl::store(out + offs * 4, r0, m);
  tl::store(out + offs * 4 + 1, r1, m);
  tl::store(out + offs * 4 + 2, r2, m);
  tl::store(out + offs * 4 + 3, r3, m);
}

enum class Fn { Randint, Randint4x, Rand, Rand4x, Randn, Randn4x };
const char* fn_name(Fn f) {
  constexpr const char* kNames[] = {"randint", "randint4x", "rand", "rand4x", "randn", "randn4x"};
  return kNames[static_cast<int>(f)];
}
int words(Fn f) {
  return f == Fn::Randint || f == Fn::Rand || f == Fn::Randn ? 1 : 4;
}

/// Offsets are base + i (an i32 or i64 tile); SEED < 0 takes the seed argument, else the literal.
void random_kernel(tl::scalar seed, tl::scalar base, tl::pointer out, tl::i32 n, Fn FN,
                   int64_t SEED, int ROUNDS, int BLOCK) {
  auto i = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = i < n;
  auto offs = base + i;
  tl::Operand s = SEED < 0 ? tl::Operand(seed) : tl::Operand(SEED);
  std::array<tl::tensor, 4> r;
  switch (FN) {
    case Fn::Randint:
      r[0] = tl::randint(s, offs, ROUNDS);
      break;
    case Fn::Randint4x:
      r = tl::randint4x(s, offs, ROUNDS);
      break;
    case Fn::Rand:
      r[0] = tl::rand(s, offs, ROUNDS);
      break;
    case Fn::Rand4x:
      r = tl::rand4x(s, offs, ROUNDS);
      break;
    case Fn::Randn:
      r[0] = tl::randn(s, offs, ROUNDS);
      break;
    case Fn::Randn4x:
      r = tl::randn4x(s, offs, ROUNDS);
      break;
  }
  const int w = words(FN);
  for (int k = 0; k < w; ++k) {
    expect_dtype(r[k], FN == Fn::Randint || FN == Fn::Randint4x ? DType::u32 : DType::f32,
                 "random dtype");
    tl::store(out + i * w + k, r[k], m);
  }
}

// --- cases ------------------------------------------------------------------------------------

void umulhi_case(Context& ctx, DType t) {
  auto k = TESSERA_KERNEL(umulhi_kernel, x, y, out, n, EXPECT, BLOCK);
  const int n = 157;  // not a multiple of the block
  HostArray a = ctx.random_full(t, n), b = ctx.random_full(t, n);
  const int bits = ir::dtype_bits(t);
  const uint64_t top = bits == 64 ? ~uint64_t{0} : 0xFFFFFFFFu;
  const uint64_t edges[] = {0, 1, top, top - 1, top >> 1, (top >> 1) + 1};
  for (int i = 0; i < 36; ++i) {  // every pair of the edge values
    a.set_bits(i, edges[i / 6]);
    b.set_bits(i, edges[i % 6]);
  }
  DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(t, n);
  k[{cdiv(n, 64)}](da.buf, db.buf, o.buf, n, t, 64);
  HostArray want(t, n);
  for (int i = 0; i < n; ++i) want.set_bits(i, mulhi(a.bits(i), b.bits(i), bits));
  ctx.check_exact("umulhi " + dname(t), ctx.download(o), want);
}

/// Runs tl::philox on `count` counter sets with one seed; returns the words, 4 per set.
HostArray run_philox(Context& ctx, DType t, uint64_t seed,
                     const std::vector<std::array<uint64_t, 4>>& c, int rounds) {
  auto k = TESSERA_KERNEL(philox_kernel, seed, c0, c1, c2, c3, out, n, ROUNDS, BLOCK);
  const int n = static_cast<int>(c.size());
  std::array<HostArray, 4> hc;
  std::array<DevArray, 4> dc;
  for (int j = 0; j < 4; ++j) {
    hc[j] = HostArray(t, n);
    for (int i = 0; i < n; ++i) hc[j].set_bits(i, c[i][j]);
    dc[j] = ctx.upload(hc[j]);
  }
  const DType u = ir::dtype_bits(t) == 64 ? DType::u64 : DType::u32;
  DevArray o = ctx.poisoned(u, 4 * n);
  k[{cdiv(n, 32)}](seed, dc[0].buf, dc[1].buf, dc[2].buf, dc[3].buf, o.buf, n, rounds, 32);
  return ctx.download(o);
}

void philox_kat_case(Context& ctx) {
  // Random123's kat_vectors: counter, key (k0, k1), then the output words.
  struct Kat {
    int bits;
    std::array<uint64_t, 4> ctr;
    uint64_t k0, k1;
    std::array<uint64_t, 4> out;
  };
  const Kat kats[] = {
      {32, {0, 0, 0, 0}, 0, 0, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {32,
       {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       0xffffffff,
       0xffffffff,
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {32,
       {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       0xa4093822,
       0x299f31d0,
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& kat : kats) {
    // The reference itself first, then the device: the seed packs the key as Triton splits it.
    std::array<uint64_t, 4> ref = philox_ref(kat.ctr, kat.k0, kat.k1, kat.bits, 10);
    ctx.expect(ref == kat.out, "the C++ Philox reference misses a known-answer vector");
    const uint64_t seed = kat.bits == 32 ? (kat.k1 << 32) | kat.k0 : kat.k0;
    HostArray got = run_philox(ctx, DType::u32, seed, {kat.ctr}, 10);
    std::vector<int64_t> want(kat.out.begin(), kat.out.end());
    ctx.check_ints("philox4x32-10 known answer", got, want);
  }
}

void philox_case(Context& ctx, DType t, int rounds) {
  const int n = 77;
  const int bits = ir::dtype_bits(t);
  const uint64_t seed = ctx.rng()();
  std::vector<std::array<uint64_t, 4>> c(n);
  for (auto& w : c)
    for (uint64_t& x : w) x = bits == 64 ? ctx.rng()() : ctx.rng()() & 0xFFFFFFFFu;
  c[0] = {0, 0, 0, 0};
  HostArray got = run_philox(ctx, t, seed, c, rounds);
  std::vector<int64_t> want;
  for (const auto& w : c) {
    const uint64_t k0 = bits == 64 ? seed : seed & 0xFFFFFFFFu;
    const uint64_t k1 = bits == 64 ? 0 : seed >> 32;
    for (uint64_t x : philox_ref(w, k0, k1, bits, rounds)) want.push_back(static_cast<int64_t>(x));
  }
  ctx.check_ints("philox " + dname(t) + " rounds=" + std::to_string(rounds), got, want);
}

struct RandomRun {
  DType offset_dtype;
  int64_t base;  ///< the first offset
  int64_t seed;  ///< the seed's value (an i64 argument, or a literal when `literal`)
  bool literal;
  int rounds;
};

void random_case(Context& ctx, Fn fn, const RandomRun& run) {
  auto k = TESSERA_KERNEL(random_kernel, seed, base, out, n, FN, SEED, ROUNDS, BLOCK);
  const int n = 203;
  const int w = words(fn);
  const bool ints = fn == Fn::Randint || fn == Fn::Randint4x;
  DevArray o = ctx.poisoned(ints ? DType::u32 : DType::f32, static_cast<size_t>(w) * n);
  const int64_t seed_arg = run.literal ? 0 : run.seed;
  const int64_t seed_const = run.literal ? run.seed : -1;
  if (run.offset_dtype == DType::i64)
    k[{cdiv(n, 64)}](seed_arg, run.base, o.buf, n, fn, seed_const, run.rounds, 64);
  else
    k[{cdiv(n, 64)}](seed_arg, static_cast<int32_t>(run.base), o.buf, n, fn, seed_const, run.rounds,
                     64);
  HostArray got = ctx.download(o);
  const std::string what = std::string(fn_name(fn)) + " offsets " + dname(run.offset_dtype) +
                           " from " + std::to_string(run.base) + " seed " +
                           std::to_string(run.seed) + (run.literal ? " (literal)" : "") +
                           " rounds=" + std::to_string(run.rounds);
  std::vector<int64_t> want_ints;
  HostArray want_f(DType::f32, static_cast<size_t>(w) * n);
  std::vector<double> ref, scale;
  for (int i = 0; i < n; ++i) {
    const int64_t off = run.offset_dtype == DType::i64
                            ? run.base + i
                            : static_cast<int64_t>(static_cast<int32_t>(run.base + i));
    std::array<uint64_t, 4> r = randint4x_ref(static_cast<uint64_t>(run.seed), off,
                                              run.offset_dtype == DType::i64, run.rounds);
    std::array<float, 4> u;
    for (int j = 0; j < 4; ++j) u[j] = uniform_ref(static_cast<uint32_t>(r[j]));
    for (int j = 0; j < w; ++j) {
      want_ints.push_back(static_cast<int64_t>(r[j]));
      want_f.set_f(static_cast<size_t>(i) * w + j, u[j]);
    }
    if (fn == Fn::Randn || fn == Fn::Randn4x) {
      for (int p = 0; p < w; p += 2) {
        std::array<double, 2> z = normal_ref(u[p], u[p + 1]);
        for (int q = 0; q < 2 && p + q < w; ++q) {
          ref.push_back(z[q]);
          // log u1 near u1 = 1 is accurate to 2^-21 absolute, which sqrt magnifies.
          scale.push_back(std::fabs(z[q]) + (u[p] > 0.99f ? 200.0 : 1.0));
        }
      }
    }
  }
  if (ints) return ctx.check_ints(what, got, want_ints);
  if (fn == Fn::Rand || fn == Fn::Rand4x) return ctx.check_exact(what, got, want_f);
  ctx.check_close(what, got, ref, Tol{0, 1e-5, 0}, &scale);
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({std::move(name), std::move(needs), "", std::move(body)});
}

}  // namespace

void register_random(std::vector<Case>& out) {
  for (DType t : {DType::i32, DType::u32, DType::i64, DType::u64})
    add(out, "umulhi/" + dname(t), needs_of({DType::i64}),
        [t](Context& ctx) { umulhi_case(ctx, t); });
  // The 32-bit forms compute the high half through a 64-bit product.
  const std::vector<Need> needs = needs_of({DType::i64});
  add(out, "random/philox/known_answers", needs, philox_kat_case);
  add(out, "random/philox/u32", needs, [](Context& ctx) {
    philox_case(ctx, DType::u32, 10);
    philox_case(ctx, DType::i32, 7);
  });
  add(out, "random/philox/u64", needs, [](Context& ctx) { philox_case(ctx, DType::u64, 10); });
  for (Fn fn : {Fn::Randint, Fn::Randint4x, Fn::Rand, Fn::Rand4x, Fn::Randn, Fn::Randn4x}) {
    add(out, std::string("random/") + fn_name(fn), needs, [fn](Context& ctx) {
      random_case(ctx, fn, {DType::i32, 0, 42, false, 10});
      random_case(ctx, fn, {DType::i32, -100, -7, false, 10});  // negative seed: high key ~0
      random_case(ctx, fn, {DType::i64, (int64_t{5} << 32) - 50, 123456789012345, false, 10});
      random_case(ctx, fn, {DType::i32, 1000, 2024, true, 6});
    });
  }
}

}  // namespace tessera::conformance
