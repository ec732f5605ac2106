// \file The warpgroup matrix ops in the SIMT interpreter against core/ir/wgmma.h's definitions,
// restated here: operands placed in shared memory by the layout formula (K-major and MN-major,
// swizzles of 32, 64 and 128 bytes, a start inside a row), the accumulator fragment, exact
// products with one f32 rounding per addition, TF32 inputs read without their low 13 bits, i8
// into i32; and the faults: a divergent warpgroup, operands that differ across it, a write to
// memory an unfinished wgmma reads, a read of shared memory written without fence_async_shared.
#include <algorithm>
#include <bit>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/support/float16.h"
#include "tests/core/interp_simt/helpers.h"

using namespace simt_test;
using tessera::ErrorKind;
using tessera::ir::DType;

namespace {

/// One operand's place in shared memory, as wgmma.h defines it.
struct Layout {
  int swizzle;  ///< S bytes
  bool mn_major;
  int lbo, sbo;  ///< bytes
};

/// The byte of element (r, k) of an operand starting at byte `start`.
int64_t byte_of(const Layout& l, int64_t start, int r, int k, int e) {
  const int t = l.swizzle / e;
  int64_t x = l.mn_major
                  ? start + (r / t) * l.lbo + (k / 8) * l.sbo + (k % 8) * l.swizzle + (r % t) * e
                  : start + (r / 8) * l.sbo + (r % 8) * l.swizzle + k * e;
  return x ^ (((x >> 7) & (l.swizzle / 16 - 1)) << 4);
}

struct Case {
  const char* a;
  DType in, acc;
  int n, k;  ///< instruction N and K
  Layout la, lb;
  int k0;  ///< the instruction's first K element in the stored tile (a start inside a row)
};

std::string name(DType t) {
  return std::string(tessera::ir::dtype_name(t));
}

/// 128 threads copy `count` elements of the image into shared memory, fence, and one wgmma
/// reads A at element a_start and B at b_start; each thread stores its N / 2 results. `after`
/// goes between the wgmma and its commit, `after_wait` after its wait.
std::string wgmma_kernel(const Case& c, int count, int a_start, int b_start, bool fence = true,
                         const std::string& after = "", const std::string& a_index = "%as",
                         const std::string& after_wait = "") {
  const std::string acc = name(c.acc), in = name(c.in);
  const int n = c.n / 2;
  std::string zeros, types, results, waited;
  for (int i = 0; i < n; ++i) {
    zeros += std::string(i ? ", " : "") + "%z";
    types += std::string(i ? ", " : "") + acc;
    results += std::string(i ? ", " : "") + "%d" + std::to_string(i);
    waited += std::string(i ? ", " : "") + "%w" + std::to_string(i);
  }
  auto smem = [](const Layout& l) {
    return "[0, " + std::to_string(l.swizzle) + ", " + std::to_string(l.lbo) + ", " +
           std::to_string(l.sbo) + ", " + std::to_string(l.mn_major ? 1 : 0) + "]";
  };
  std::string body = "  %count = constant {value = " + std::to_string(count) +
                     "} : i32\n"
                     "  %c128 = constant {value = 128} : i32\n"
                     "  %zi = constant {value = 0} : " +
                     in +
                     "\n"
                     "  for %tid, %count, %c128 ({\n  ^(%i: i32):\n"
                     "    %p = ptr_add %img, %i : ptr<" +
                     in +
                     ">\n"
                     "    %v = global_load %p, %true, %zi {align = " +
                     std::to_string(tessera::ir::dtype_bytes(c.in)) + ", width = 1} : " + in +
                     "\n"
                     "    shared_store %i, %v {buffer = 0, width = 1}\n"
                     "    yield\n  })\n";
  body += std::string(fence ? "  fence_async_shared\n" : "") + "  barrier\n";
  body += "  %z = constant {value = 0} : " + acc + "\n";
  body += "  %as = constant {value = " + std::to_string(a_start) + "} : i32\n";
  body += "  %bs = constant {value = " + std::to_string(b_start) + "} : i32\n";
  body += "  wgmma_fence\n  " + results + " = wgmma " + a_index + ", %bs, " + zeros + " {a = \"" +
          c.a + "\", a_smem = " + smem(c.la) + ", b_smem = " + smem(c.lb) + ", shape = \"m64n" +
          std::to_string(c.n) + "k" + std::to_string(c.k) + "\"} : " + types + "\n";
  body += after + "  wgmma_commit\n  " + waited + " = wgmma_wait " + results +
          " {pending = 0} : " + types + "\n" + after_wait;
  body +=
      "  %nn = constant {value = " + std::to_string(n) + "} : i32\n  %ob = mul %tid, %nn : i32\n";
  for (int i = 0; i < n; ++i) {
    const std::string s = std::to_string(i);
    body += "  %oi" + s + " = constant {value = " + s + "} : i32\n  %oj" + s + " = add %ob, %oi" +
            s + " : i32\n  %op" + s + " = ptr_add %out, %oj" + s + " : ptr<" + acc + ">\n" +
            "  global_store %op" + s + ", %true, %w" + s + " {align = 4, width = 1}\n";
  }
  return kernel("func @k(%img: ptr<" + in + ">, %out: ptr<" + acc +
                    ">, %s: i32) attributes {shared_0 = tile<" + std::to_string(count) + "x" + in +
                    ">, stage = \"simt\", subgroup = 32, threads = 128} {",
                body);
}

/// A value for an operand element: small exact values, TF32 inputs with bits below 10 mantissa
/// bits (which wgmma ignores), i8 anywhere in range.
double draw(DType in, std::mt19937& rng) {
  if (in == DType::i8) return static_cast<double>(static_cast<int>(rng() % 256) - 128);
  const double v = (static_cast<int>(rng() % 64) - 32) / 8.0;
  if (in != DType::f32) return v;
  return static_cast<float>(v + (rng() % 4096) / 4096.0 *
                                    std::ldexp(1.0, -10 + (v == 0 ? 0 : std::ilogb(v))));
}

/// The value as wgmma multiplies it: TF32 drops the low 13 bits (toward zero).
double as_read(DType in, double v) {
  if (in != DType::f32) return v;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(static_cast<float>(v)) & 0xFFFFE000u);
}

template <class S>
void put(std::vector<S>& image, DType in, int64_t byte, double v) {
  const int64_t i = byte / static_cast<int64_t>(sizeof(S));
  if constexpr (std::is_same_v<S, uint16_t>)
    image[static_cast<size_t>(i)] =
        in == DType::f16 ? tessera::f16_from_double(v) : tessera::bf16_from_double(v);
  else
    image[static_cast<size_t>(i)] = static_cast<S>(v);
}

/// One case: A (64 x Kt) and B (N x Kt) stored by their layouts (A from byte 0, B from byte
/// b_base), the instruction reading K columns from k0; D against the reference, value by value.
template <class S, class C>
void check(const Case& c, uint32_t seed) {
  CAPTURE(seed);
  std::mt19937 rng(seed);
  const int e = tessera::ir::dtype_bytes(c.in);
  const int kt = c.k0 + c.k;                      // the stored tiles' K extent
  auto extent = [&](const Layout& l, int rows) {  // bytes up to the last element's end
    int64_t end = 0;
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < kt; ++k) end = std::max(end, byte_of(l, 0, r, k, e) + e);
    return static_cast<int>(end);
  };
  const int a_bytes = extent(c.la, 64), b_bytes = extent(c.lb, c.n);
  const int b_base = (a_bytes + 1023) / 1024 * 1024;
  const int count = ((b_base + b_bytes + 1023) / 1024 * 1024) / e;
  std::vector<S> image(static_cast<size_t>(count));
  std::vector<double> a(64 * static_cast<size_t>(kt)), b(static_cast<size_t>(c.n) * kt);
  // The layouts' start is the element (0, 0) of each stored tile; the instruction starts at k0.
  for (int r = 0; r < 64; ++r)
    for (int k = 0; k < kt; ++k)
      put(image, c.in, byte_of(c.la, 0, r, k, e), a[r * kt + k] = draw(c.in, rng));
  for (int r = 0; r < c.n; ++r)
    for (int k = 0; k < kt; ++k)
      put(image, c.in, byte_of(c.lb, b_base, r, k, e), b[r * kt + k] = draw(c.in, rng));
  // The instruction's start: element (0, k0), unswizzled (rows at multiples of 8).
  auto start = [&](const Layout& l, int base) {
    return (base + (l.mn_major ? c.k0 * l.swizzle : c.k0 * e)) / e;
  };
  SimtKernel kern(wgmma_kernel(c, count, start(c.la, 0), start(c.lb, b_base)));
  std::vector<C> out(128 * static_cast<size_t>(c.n / 2));
  HostMemory mem;
  kern.run(mem, Grid{}, mem.add(image), mem.add(out), int32_t{32});
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < c.n / 2; ++i) {
      // The fragment: warp w's 16 rows; lane / 4 and 8 more; column pairs by lane % 4.
      const int w = t / 32, l = t % 32;
      const int row = 16 * w + l / 4 + 8 * (i / 2 % 2), col = 8 * (i / 4) + 2 * (l % 4) + i % 2;
      CAPTURE(t);
      CAPTURE(i);
      const C got = out[static_cast<size_t>(t * (c.n / 2) + i)];
      if (c.in == DType::i8) {
        uint32_t want = 0;
        for (int k = c.k0; k < kt; ++k)
          want += static_cast<uint32_t>(static_cast<int>(a[row * kt + k]) *
                                        static_cast<int>(b[col * kt + k]));
        CHECK(static_cast<int32_t>(got) == static_cast<int32_t>(want));
        continue;
      }
      float want = 0;
      for (int k = c.k0; k < kt; ++k)
        want = static_cast<float>(static_cast<double>(want) +
                                  as_read(c.in, a[row * kt + k]) * as_read(c.in, b[col * kt + k]));
      CHECK(static_cast<float>(got) == want);
    }
}

// K-major: rows of S bytes (holding all K of the stored tile), 8-row groups `sbo` = 8 S apart.
// MN-major: blocks of S / E rows (along M or N) `lbo` apart, each K row S bytes, 8 K rows `sbo` = 8
// S apart.
Layout k_major(int s) {
  return {s, false, 0, 8 * s};
}
Layout mn_major(int s, int kt) {
  return {s, true, kt * s, 8 * s};
}

}  // namespace

TEST_CASE("simt wgmma: f16 and bf16, K-major and MN-major, swizzles of 32, 64 and 128 bytes") {
  // f16: k16 is 32 bytes of a row; a 128-byte row holds 4 k steps (start at the 3rd).
  check<uint16_t, float>({"f16", DType::f16, DType::f32, 64, 16, k_major(128), k_major(128), 48},
                         1);
  check<uint16_t, float>({"f16", DType::f16, DType::f32, 32, 16, k_major(64), k_major(32), 0}, 2);
  check<uint16_t, float>(
      {"f16", DType::f16, DType::f32, 128, 16, k_major(128), mn_major(128, 32), 16}, 3);
  check<uint16_t, float>(
      {"bf16", DType::bf16, DType::f32, 64, 16, mn_major(128, 16), mn_major(64, 16), 0}, 4);
  check<uint16_t, float>(
      {"bf16", DType::bf16, DType::f32, 16, 16, mn_major(32, 32), k_major(64), 16}, 5);
}

TEST_CASE("simt wgmma: tf32 inputs drop their low 13 bits, i8 accumulates in i32") {
  check<float, float>({"tf32", DType::f32, DType::f32, 64, 8, k_major(128), k_major(128), 24}, 6);
  check<float, float>({"tf32", DType::f32, DType::f32, 8, 8, k_major(32), k_major(64), 0}, 7);
  check<int8_t, int32_t>({"i8", DType::i8, DType::i32, 64, 32, k_major(128), k_major(128), 96}, 8);
  check<int8_t, int32_t>({"i8", DType::i8, DType::i32, 48, 32, k_major(64), k_major(32), 0}, 9);
}

namespace {

const Case kF16 = {"f16", DType::f16, DType::f32, 8, 16, k_major(32), k_major(32), 0};

/// Runs kF16 with the given changes to the kernel; the error it raises ("" if none).
std::string fault(bool fence, const std::string& after, const std::string& a_index = "%as",
                  const std::string& after_wait = "") {
  SimtKernel k(wgmma_kernel(kF16, 2048, 0, 1024, fence, after, a_index, after_wait));
  std::vector<uint16_t> image(2048, 0);
  std::vector<float> out(128 * 4);
  HostMemory mem;
  return error_of([&] { k.run(mem, Grid{}, mem.add(image), mem.add(out), int32_t{32}); });
}

}  // namespace

TEST_CASE("simt wgmma: the correct kernel runs, each hazard is a device fault") {
  CHECK(fault(true, "") == "");
  CHECK(fault(false, "").find("wgmma reads shared memory not fenced for it") != std::string::npos);
  const std::string overwrite =
      "  %h = constant {value = 1.0} : f16\n  shared_store %c0, %h {buffer = 0, width = 1}\n";
  std::string race = fault(true, overwrite);
  CHECK(race.find("shared-memory race") != std::string::npos);
  CHECK(race.find("writes shared_0[0] while the wgmma") != std::string::npos);
  CHECK(fault(true, "", "%tid").find("wgmma with operands that differ across its warpgroup") !=
        std::string::npos);
  // After the wait retires the wgmma, its reads count as the warpgroup's (thread 0's) until the
  // next barrier: another thread's write before one races with them, as on a GPU, where the
  // wait orders only the waiting warp. (A barrier between the wgmma and its wait, so that only
  // the wait's record of the reads can catch it.)
  const std::string by_thread_5 =
      "  %c5 = constant {value = 5} : i32\n  %is5 = cmp_eq %tid, %c5 : i1\n  if %is5 ({\n"
      "    %h = constant {value = 1.0} : f16\n"
      "    shared_store %c0, %h {buffer = 0, width = 1}\n    yield\n  }, {\n    yield\n  })\n";
  race = fault(true, "  barrier\n", "%as", by_thread_5);
  CHECK(race.find("thread 5 writes shared_0[0] read by thread 0 at") != std::string::npos);
  CHECK(race.find("with no barrier between") != std::string::npos);
  CHECK(fault(true, "  barrier\n", "%as", "  barrier\n" + by_thread_5) == "");
  // (setmaxnreg's checks: roles_test.cpp, with the register pool.)
}
