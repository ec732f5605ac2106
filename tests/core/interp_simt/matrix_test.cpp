// \file The matrix ops in the SIMT interpreter against their definitions, written here from PTX's
// fragment tables rather than from core/ir/simt.cpp: mma for every (shape, a) pair on two warps
// (exact products, TF32 rounding with ties away, one f32 rounding per addition, i32 wrapping),
// ldmatrix (x1, x2, x4, .trans, 1-, 2- and 4-byte elements) at arbitrary row addresses, the
// cp_async family (landing at the wait, zero fill, groups), and the faults: divergent lanes, a
// misaligned row address, a race on an in-flight copy.
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

struct Coord {
  int row, col;
};

/// PTX ISA, "Matrix Fragments for mma.m16n8k16 / m16n8k8 / m16n8k32": value i of `lane`.
Coord ptx_a(const std::string& a, int lane, int i) {
  const int g = lane >> 2, t = lane & 3;
  if (a == "tf32") return {(i == 0 || i == 2) ? g : g + 8, i < 2 ? t : t + 4};
  if (a == "i8")
    return {(i < 4 || (i >= 8 && i < 12)) ? g : g + 8, 4 * t + (i & 3) + (i >= 8 ? 16 : 0)};
  return {(i < 2 || (i >= 4 && i < 6)) ? g : g + 8, 2 * t + (i & 1) + (i >= 4 ? 8 : 0)};
}
Coord ptx_b(const std::string& a, int lane, int i) {
  const int g = lane >> 2, t = lane & 3;
  if (a == "tf32") return {i == 0 ? t : t + 4, g};
  if (a == "i8") return {4 * t + (i & 3) + (i >= 4 ? 16 : 0), g};
  return {2 * t + (i & 1) + (i >= 2 ? 8 : 0), g};
}
Coord ptx_c(int lane, int i) {
  return {(lane >> 2) + (i >= 2 ? 8 : 0), 2 * (lane & 3) + (i & 1)};
}

/// cvt.rna.tf32.f32 on finite values: keep 10 mantissa bits, round half away from zero.
float rna_tf32(float x) {
  const uint32_t bits = (std::bit_cast<uint32_t>(x) + 0x1000u) & 0xFFFFE000u;
  return std::bit_cast<float>(bits);
}

struct MmaCase {
  std::string shape, a;
  DType in, acc;
  int k, na, nb;
};
const MmaCase kCases[] = {
    {"m16n8k16", "f16", DType::f16, DType::f32, 16, 8, 4},
    {"m16n8k16", "bf16", DType::bf16, DType::f32, 16, 8, 4},
    {"m16n8k8", "tf32", DType::f32, DType::f32, 8, 4, 2},
    {"m16n8k32", "i8", DType::i8, DType::i32, 32, 16, 8},
};

/// Two warps: each lane loads its A, B and C values at the element indices the tables give
/// (ai[tid * na + i], ...), runs one mma and stores D value i at di[tid * 4 + i].
std::string mma_kernel(const MmaCase& c) {
  const std::string in(tessera::ir::dtype_name(c.in)), acc(tessera::ir::dtype_name(c.acc));
  std::string body;
  std::vector<std::string> operands;
  auto load = [&](const std::string& name, const std::string& table, const std::string& src,
                  const std::string& type, int count, int i) {
    const std::string n = name + std::to_string(i);
    body += "  %" + n + "k = constant {value = " + std::to_string(i) + "} : i32\n";
    body += "  %" + n + "b = mul %tid, %" + name + "n : i32\n";
    body += "  %" + n + "j = add %" + n + "b, %" + n + "k : i32\n";
    body += "  %" + n + "p = ptr_add %" + table + ", %" + n + "j : ptr<i32>\n";
    body += "  %" + n + "x = global_load %" + n + "p, %true, %c0 {align = 4, width = 1} : i32\n";
    body += "  %" + n + "q = ptr_add %" + src + ", %" + n + "x : ptr<" + type + ">\n";
    body += "  %" + n + " = global_load %" + n + "q, %true, %zero" + type + " {align = " +
            std::to_string(tessera::ir::dtype_bytes(tessera::ir::parse_dtype(type).value())) +
            ", width = 1} : " + type + "\n";
    operands.push_back("%" + n);
    (void)count;
  };
  body += "  %zero" + in + " = constant {value = 0} : " + in + "\n";
  if (acc != in) body += "  %zero" + acc + " = constant {value = 0} : " + acc + "\n";
  body += "  %van = constant {value = " + std::to_string(c.na) + "} : i32\n";
  body += "  %vbn = constant {value = " + std::to_string(c.nb) + "} : i32\n";
  body += "  %vcn = constant {value = 4} : i32\n";
  for (int i = 0; i < c.na; ++i) load("va", "ai", "a", in, c.na, i);
  for (int i = 0; i < c.nb; ++i) load("vb", "bi", "b", in, c.nb, i);
  for (int i = 0; i < 4; ++i) load("vc", "ci", "c", acc, 4, i);
  std::string list;
  for (const std::string& o : operands) list += (list.empty() ? "" : ", ") + o;
  body += "  %d0, %d1, %d2, %d3 = mma " + list + " {a = \"" + c.a + "\", shape = \"" + c.shape +
          "\"} : " + acc + ", " + acc + ", " + acc + ", " + acc + "\n";
  for (int i = 0; i < 4; ++i) {
    const std::string n = "o" + std::to_string(i);
    body += "  %" + n + "k = constant {value = " + std::to_string(i) + "} : i32\n";
    body += "  %" + n + "b = mul %tid, %vcn : i32\n";
    body += "  %" + n + "j = add %" + n + "b, %" + n + "k : i32\n";
    body += "  %" + n + "p = ptr_add %di, %" + n + "j : ptr<i32>\n";
    body += "  %" + n + "x = global_load %" + n + "p, %true, %c0 {align = 4, width = 1} : i32\n";
    body += "  %" + n + "q = ptr_add %d, %" + n + "x : ptr<" + acc + ">\n";
    body +=
        "  global_store %" + n + "q, %true, %d" + std::to_string(i) + " {align = 4, width = 1}\n";
  }
  return kernel("func @mma(%a: ptr<" + in + ">, %b: ptr<" + in + ">, %c: ptr<" + acc +
                    ">, %d: ptr<" + acc +
                    ">, %ai: ptr<i32>, %bi: ptr<i32>, %ci: ptr<i32>, %di: ptr<i32>, %s: i32) "
                    "attributes {stage = \"simt\", threads = 64, subgroup = 32} {",
                body);
}

/// One element of an input in the dtype's storage, from a double that it represents exactly.
template <class S>
S encode(DType t, double v) {
  if (t == DType::f16) return static_cast<S>(tessera::f16_from_double(v));
  if (t == DType::bf16) return static_cast<S>(tessera::bf16_from_double(v));
  return static_cast<S>(v);
}

/// Runs one case on random inputs and compares with the reference, value by value.
template <class S, class C>
void check_mma(const MmaCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const int K = c.k;
  std::vector<S> a(2 * 16 * K), b(2 * K * 8);
  std::vector<double> av(a.size()), bv(b.size());
  std::vector<C> cm(2 * 128), d(2 * 128);
  auto draw = [&](bool tf32) -> double {
    if (c.in == DType::i8) return static_cast<double>(static_cast<int>(rng() % 256) - 128);
    double v = (static_cast<int>(rng() % 64) - 32) / 8.0;
    if (!tf32) return v;
    // Bits below TF32's mantissa; every 5th value a tie (half an ulp) that rounds away.
    const float f = static_cast<float>(v + (rng() % 5 == 0 ? 0.5 : (rng() % 4096) / 4096.0) *
                                               std::ldexp(1.0, -10 + (v == 0 ? 0 : std::ilogb(v))));
    return f;
  };
  const bool tf32 = c.a == "tf32";
  for (size_t i = 0; i < a.size(); ++i) a[i] = encode<S>(c.in, av[i] = draw(tf32));
  for (size_t i = 0; i < b.size(); ++i) b[i] = encode<S>(c.in, bv[i] = draw(tf32));
  for (size_t i = 0; i < cm.size(); ++i)
    cm[i] = static_cast<C>(c.in == DType::i8 ? static_cast<int>(rng())
                                             : (static_cast<int>(rng() % 200) - 100) / 4.0);
  std::vector<int32_t> ai(64 * c.na), bi(64 * c.nb), ci(64 * 4), di(64 * 4);
  for (int t = 0; t < 64; ++t) {
    const int w = t / 32, lane = t % 32;
    for (int i = 0; i < c.na; ++i) {
      Coord x = ptx_a(c.a, lane, i);
      ai[t * c.na + i] = w * 16 * K + x.row * K + x.col;
    }
    for (int i = 0; i < c.nb; ++i) {
      Coord x = ptx_b(c.a, lane, i);
      bi[t * c.nb + i] = w * K * 8 + x.row * 8 + x.col;
    }
    for (int i = 0; i < 4; ++i) {
      Coord x = ptx_c(lane, i);
      ci[t * 4 + i] = di[t * 4 + i] = w * 128 + x.row * 8 + x.col;
    }
  }
  SimtKernel k(mma_kernel(c));
  HostMemory mem;
  k.run(mem, Grid{}, mem.add(a), mem.add(b), mem.add(cm), mem.add(d), mem.add(ai), mem.add(bi),
        mem.add(ci), mem.add(di), int32_t{32});
  for (int w = 0; w < 2; ++w)
    for (int r = 0; r < 16; ++r)
      for (int col = 0; col < 8; ++col) {
        const size_t o = static_cast<size_t>(w * 128 + r * 8 + col);
        CAPTURE(w);
        CAPTURE(r);
        CAPTURE(col);
        if (c.in == DType::i8) {
          uint32_t want = static_cast<uint32_t>(cm[o]);
          for (int kk = 0; kk < K; ++kk)
            want += static_cast<uint32_t>(static_cast<int>(av[w * 16 * K + r * K + kk]) *
                                          static_cast<int>(bv[w * K * 8 + kk * 8 + col]));
          CHECK(static_cast<int32_t>(d[o]) == static_cast<int32_t>(want));
          continue;
        }
        // k increasing, one f32 rounding per addition (each double sum here is exact).
        float want = static_cast<float>(cm[o]);
        for (int kk = 0; kk < K; ++kk) {
          double x = av[w * 16 * K + r * K + kk], y = bv[w * K * 8 + kk * 8 + col];
          if (tf32) x = rna_tf32(static_cast<float>(x)), y = rna_tf32(static_cast<float>(y));
          want = static_cast<float>(static_cast<double>(want) + x * y);
        }
        CHECK(static_cast<float>(d[o]) == want);
      }
}

}  // namespace

TEST_CASE("simt mma: PTX's fragments, exact products, TF32 inputs, one rounding per addition") {
  for (uint32_t seed : {1u, 2u}) {
    CAPTURE(seed);
    check_mma<uint16_t, float>(kCases[0], seed);
    check_mma<uint16_t, float>(kCases[1], seed);
    check_mma<float, float>(kCases[2], seed);
    check_mma<int8_t, int32_t>(kCases[3], seed);
  }
  // The tie rule the TF32 inputs rely on: halfway rounds away from zero.
  CHECK(rna_tf32(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);
  CHECK(rna_tf32(-(1.0f + 0x1p-11f)) == -(1.0f + 0x1p-10f));
}

TEST_CASE("simt mma: the fragment helpers of core/ir/simt.h are PTX's tables") {
  for (const tessera::ir::MmaShape& s : tessera::ir::mma_shapes())
    for (int lane = 0; lane < 32; ++lane) {
      CAPTURE(s.a);
      CAPTURE(lane);
      for (int i = 0; i < s.a_count(); ++i) {
        tessera::ir::MatrixCoord x = tessera::ir::mma_a_coord(s, lane, i);
        Coord want = ptx_a(std::string(s.a), lane, i);
        CHECK(x.row == want.row);
        CHECK(x.col == want.col);
      }
      for (int i = 0; i < s.b_count(); ++i) {
        tessera::ir::MatrixCoord x = tessera::ir::mma_b_coord(s, lane, i);
        Coord want = ptx_b(std::string(s.a), lane, i);
        CHECK(x.row == want.row);
        CHECK(x.col == want.col);
      }
      for (int i = 0; i < 4; ++i) {
        CHECK(tessera::ir::mma_c_coord(lane, i).row == ptx_c(lane, i).row);
        CHECK(tessera::ir::mma_c_coord(lane, i).col == ptx_c(lane, i).col);
      }
    }
}

namespace {

// Fills shared_0 (N elements of T, 32 per step) from %src, then out[tid * R + j] = result j of
// one ldmatrix whose row address (element index) is rows[tid].
const std::string kLdMatrix = kernel(
    R"(func @ldm(%src: ptr<{T}>, %rows: ptr<i32>, %out: ptr<{T}>, %s: i32, %steps: i32) attributes {shared_0 = tile<{N}x{T}>, stage = "simt", subgroup = 32, threads = 32} {)",
    R"(
  %c32 = constant {value = 32} : i32
  %zero = constant {value = 0} : {T}
  for %c0, %steps, %c1 ({
  ^(%i: i32):
    %base = mul %i, %c32 : i32
    %e = add %base, %tid : i32
    %ps = ptr_add %src, %e : ptr<{T}>
    %v = global_load %ps, %true, %zero {align = {E}, width = 1} : {T}
    shared_store %e, %v {buffer = 0, width = 1}
    yield
  })
  barrier
  %pr = ptr_add %rows, %tid : ptr<i32>
  %row = global_load %pr, %true, %c0 {align = 4, width = 1} : i32
  {RESULTS} = ldmatrix %row {buffer = 0, count = {COUNT}{TRANS}} : {TYPES}
  %cr = constant {value = {R}} : i32
  %ob = mul %tid, %cr : i32
{STORES})");

template <class T>
void check_ldmatrix(DType dtype, int count, bool trans, uint32_t seed) {
  const int E = tessera::ir::dtype_bytes(dtype), per = 4 / E, row_elems = 16 / E;
  const int n = 64 * row_elems;  // 64 rows of 16 bytes
  const int results = count * per;
  std::string names, types, stores;
  for (int j = 0; j < results; ++j) {
    names += (j ? ", %r" : "%r") + std::to_string(j);
    types += std::string(j ? ", " : "") + std::string(tessera::ir::dtype_name(dtype));
    stores +=
        "  %k" + std::to_string(j) + " = constant {value = " + std::to_string(j) + "} : i32\n";
    stores += "  %o" + std::to_string(j) + " = add %ob, %k" + std::to_string(j) + " : i32\n";
    stores +=
        "  %p" + std::to_string(j) + " = ptr_add %out, %o" + std::to_string(j) + " : ptr<{T}>\n";
    stores += "  global_store %p" + std::to_string(j) + ", %true, %r" + std::to_string(j) +
              " {align = {E}, width = 1}\n";
  }
  const std::string tname(tessera::ir::dtype_name(dtype));
  std::string text = subst(kLdMatrix, {{"RESULTS", names}, {"TYPES", types}, {"STORES", stores}});
  text = subst(text, {{"T", tname},
                      {"N", std::to_string(n)},
                      {"E", std::to_string(E)},
                      {"COUNT", std::to_string(count)},
                      {"TRANS", trans ? ", trans = 1" : ""},
                      {"R", std::to_string(results)}});
  SimtKernel k(text);
  std::vector<T> src(static_cast<size_t>(n)), out(static_cast<size_t>(32 * results));
  for (int i = 0; i < n; ++i) {
    if constexpr (sizeof(T) == 2)
      src[static_cast<size_t>(i)] = tessera::f16_from_double(i);
    else
      src[static_cast<size_t>(i)] = static_cast<T>(i);
  }
  // Each addressing lane names a distinct row slot, in a shuffled order.
  std::vector<int32_t> slots(64);
  for (int i = 0; i < 64; ++i) slots[static_cast<size_t>(i)] = i * row_elems;
  std::shuffle(slots.begin(), slots.end(), std::mt19937(seed));
  std::vector<int32_t> rows(slots.begin(), slots.begin() + 32);
  HostMemory mem;
  k.run(mem, Grid{}, mem.add(src), mem.add(rows), mem.add(out), int32_t{32}, int32_t{n / 32});
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < results; ++j) {
      const int q = j / per, w = j % per;
      // PTX ldmatrix: lane l holds row l / 4, 32-bit word l % 4 of each matrix; .trans holds
      // column l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1.
      const int elem = trans ? rows[static_cast<size_t>(q * 8 + 2 * (lane % 4) + w)] + lane / 4
                             : rows[static_cast<size_t>(q * 8 + lane / 4)] + (lane % 4) * per + w;
      CAPTURE(lane);
      CAPTURE(j);
      CHECK(out[static_cast<size_t>(lane * results + j)] == src[static_cast<size_t>(elem)]);
    }
}

}  // namespace

TEST_CASE(
    "simt ldmatrix: x1, x2, x4 and .trans at arbitrary row addresses, 1-, 2-, 4-byte elements") {
  for (uint32_t seed : {3u, 4u}) {
    for (int count : {1, 2, 4}) {
      CAPTURE(count);
      check_ldmatrix<uint16_t>(DType::f16, count, false, seed);
      check_ldmatrix<uint16_t>(DType::f16, count, true, seed);
      check_ldmatrix<float>(DType::f32, count, false, seed);
      check_ldmatrix<int8_t>(DType::i8, count, false, seed);
    }
  }
}

namespace {

// Thread t copies src[4t .. 4t+4) into shared_0[4t ..] with cp_async (predicate %pred), then
// {SYNC}; out[4t + j] = shared_0[4 (t ^ 1) + j]: its neighbour's copy.
const std::string kCopy = kernel(
    R"(func @copy(%src: ptr<f32>, %out: ptr<f32>, %s: i32, %pred: i1) attributes {shared_0 = tile<128xf32>, stage = "simt", subgroup = 32, threads = 32} {)",
    R"(
  %c4 = constant {value = 4} : i32
  %e = mul %tid, %c4 : i32
  %ps = ptr_add %src, %e : ptr<f32>
  cp_async %e, %ps, %pred {buffer = 0} loc("copy.cpp":10:1)
{SYNC}
  %other = xor %tid, %c1 : i32
  %oe = mul %other, %c4 : i32
  %v0, %v1, %v2, %v3 = shared_load %oe {buffer = 0, width = 4} : f32, f32, f32, f32 loc("copy.cpp":20:1)
  %po = ptr_add %out, %e : ptr<f32>
  global_store %po, %true, %v0, %v1, %v2, %v3 {align = 16, width = 4}
)");

std::vector<float> run_copy(const std::string& sync, bool pred) {
  SimtKernel k(subst(kCopy, {{"SYNC", sync}}));
  std::vector<float> src(128), out(128, -1);
  for (int i = 0; i < 128; ++i) src[static_cast<size_t>(i)] = static_cast<float>(i) + 0.5f;
  HostMemory mem;
  k.run(mem, Grid{}, mem.add(src), mem.add(out), int32_t{32}, pred);
  return out;
}

float poison() {
  return std::bit_cast<float>(0xCDCDCDCDu);
}

}  // namespace

TEST_CASE("simt cp_async: copies land at the wait that retires their group") {
  std::vector<float> out =
      run_copy("  cp_async_commit\n  cp_async_wait {pending = 0}\n  barrier", true);
  for (int t = 0; t < 32; ++t)
    for (int j = 0; j < 4; ++j)
      CHECK(out[static_cast<size_t>(4 * t + j)] == static_cast<float>(4 * (t ^ 1) + j) + 0.5f);
  // A false predicate reads nothing and writes zeros.
  out = run_copy("  cp_async_commit\n  cp_async_wait {pending = 0}\n  barrier", false);
  for (float v : out) CHECK(v == 0.0f);
  // Without a wait, or with the group still allowed to be pending, nothing has landed: the
  // shared memory keeps its poison.
  for (const char* sync : {"  cp_async_commit\n  barrier",
                           "  cp_async_commit\n  cp_async_wait {pending = 1}\n  barrier",
                           "  cp_async_wait {pending = 0}\n  barrier"}) {
    CAPTURE(sync);
    out = run_copy(sync, true);
    for (float v : out) CHECK(std::bit_cast<uint32_t>(v) == std::bit_cast<uint32_t>(poison()));
  }
}

TEST_CASE("simt cp_async: groups complete oldest first") {
  // Two groups into two halves of the buffer; waiting with one pending lands only the first.
  const std::string text = kernel(
      R"(func @groups(%src: ptr<f32>, %out: ptr<f32>, %s: i32) attributes {shared_0 = tile<256xf32>, stage = "simt", subgroup = 32, threads = 32} {)",
      R"(
  %c4 = constant {value = 4} : i32
  %c128 = constant {value = 128} : i32
  %e = mul %tid, %c4 : i32
  %e2 = add %e, %c128 : i32
  %ps = ptr_add %src, %e : ptr<f32>
  %ps2 = ptr_add %src, %e2 : ptr<f32>
  cp_async %e, %ps, %true {buffer = 0}
  cp_async_commit
  cp_async %e2, %ps2, %true {buffer = 0}
  cp_async_commit
  cp_async_wait {pending = 1}
  %a0, %a1, %a2, %a3 = shared_load %e {buffer = 0, width = 4} : f32, f32, f32, f32
  %b0, %b1, %b2, %b3 = shared_load %e2 {buffer = 0, width = 4} : f32, f32, f32, f32
  %po = ptr_add %out, %e : ptr<f32>
  global_store %po, %true, %a0, %a1, %a2, %a3 {align = 16, width = 4}
  %po2 = ptr_add %out, %e2 : ptr<f32>
  global_store %po2, %true, %b0, %b1, %b2, %b3 {align = 16, width = 4}
)");
  SimtKernel k(text);
  std::vector<float> src(256), out(256, -1);
  for (int i = 0; i < 256; ++i) src[static_cast<size_t>(i)] = static_cast<float>(i);
  HostMemory mem;
  k.run(mem, Grid{}, mem.add(src), mem.add(out), int32_t{32});
  for (int i = 0; i < 128; ++i) CHECK(out[static_cast<size_t>(i)] == static_cast<float>(i));
  for (int i = 128; i < 256; ++i)
    CHECK(std::bit_cast<uint32_t>(out[static_cast<size_t>(i)]) ==
          std::bit_cast<uint32_t>(poison()));
}

TEST_CASE("simt matrix ops: faults") {
  // Reading another thread's in-flight copy before a barrier is a race (even after the wait).
  std::string msg =
      error_of([] { run_copy("  cp_async_commit\n  cp_async_wait {pending = 0}", true); },
               ErrorKind::DeviceFault);
  CHECK(msg.find("shared-memory race in kernel 'copy' at copy.cpp:20: thread ") == 0);
  CHECK(msg.find("reads shared_0[") != std::string::npos);
  CHECK(msg.find("written by thread") != std::string::npos);
  CHECK(msg.find("at copy.cpp:10 with no barrier between") != std::string::npos);
  // An mma that only part of a warp runs.
  const std::string divergent =
      kernel(R"(func @half(%s: i32) attributes {stage = "simt", subgroup = 32, threads = 64} {)",
             R"(
  %c16 = constant {value = 16} : i32
  %low = cmp_lt %lane, %c16 : i1
  %f = constant {value = 1.0} : f32
  if %low ({
    %d0, %d1, %d2, %d3 = mma %f, %f, %f, %f, %f, %f, %f, %f, %f, %f {a = "tf32", shape = "m16n8k8"} : f32, f32, f32, f32 loc("half.cpp":5:3)
    yield
  }, {
    yield
  })
)");
  msg = error_of([&] { SimtKernel(divergent).run(HostMemory{}, Grid{}, int32_t{32}); },
                 ErrorKind::DeviceFault);
  CHECK(msg ==
        "mma in divergent control flow in kernel 'half' at half.cpp:5, program (0, 0, 0): "
        "16 of 32 lanes of subgroup 0 execute it (lane 16 does not)");
  // A row address that is not 16-byte aligned names the lane that gave it.
  const std::string misaligned = kernel(
      R"(func @mis(%s: i32) attributes {shared_0 = tile<256xf16>, stage = "simt", subgroup = 32, threads = 32} {)",
      R"(
  %c8 = constant {value = 8} : i32
  %row = mul %lane, %c8 : i32
  %c5 = constant {value = 5} : i32
  %is5 = cmp_eq %lane, %c5 : i1
  %bad = add %row, %c1 : i32
  %addr = where %is5, %bad, %row : i32
  %r0, %r1 = ldmatrix %addr {buffer = 0, count = 1} : f16, f16 loc("mis.cpp":7:3)
)");
  msg = error_of([&] { SimtKernel(misaligned).run(HostMemory{}, Grid{}, int32_t{32}); },
                 ErrorKind::DeviceFault);
  CHECK(msg ==
        "misaligned shared load in kernel 'mis' at mis.cpp:7, program (0, 0, 0), thread 5: "
        "index 41 of shared_0 is not a multiple of width 8");
}
