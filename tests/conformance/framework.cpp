/// \file The conformance suite's host arrays, device arrays, random inputs and checks.
#include "tests/conformance/framework.h"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <sstream>

#include <unistd.h>

#include "core/support/error.h"
#include "core/support/float16.h"

namespace tessera::conformance {

const std::vector<DType> kAllDTypes = {DType::i1,   DType::i8,  DType::i16, DType::i32, DType::i64,
                                       DType::u8,   DType::u16, DType::u32, DType::u64, DType::f16,
                                       DType::bf16, DType::f32, DType::f64};
const std::vector<DType> kNumericDTypes = {DType::i8,  DType::i16,  DType::i32, DType::i64,
                                           DType::u8,  DType::u16,  DType::u32, DType::u64,
                                           DType::f16, DType::bf16, DType::f32, DType::f64};
const std::vector<DType> kIntDTypes = {DType::i8, DType::i16, DType::i32, DType::i64,
                                       DType::u8, DType::u16, DType::u32, DType::u64};
const std::vector<DType> kFloatDTypes = {DType::f16, DType::bf16, DType::f32, DType::f64};

std::string dname(DType t) {
  return std::string(ir::dtype_name(t));
}

std::string Tol::str() const {
  if (exact()) return "exact";
  std::ostringstream os;
  os << ulps << " ulp";
  if (rel)
    os << " or |err| <= " << abs << " + " << rel << " * scale";
  else if (abs)
    os << " or |err| <= " << abs;
  return os.str();
}

// --- needs ----------------------------------------------------------------------------------

std::string_view need_name(Need n) {
  switch (n) {
    case Need::Int8:
      return "int8";
    case Need::Int16:
      return "int16";
    case Need::Int64:
      return "int64";
    case Need::Fp16:
      return "fp16";
    case Need::Bf16:
      return "bf16";
    case Need::Fp64:
      return "fp64";
    case Need::FloatAtomicAdd:
      return "float atomic add";
    case Need::Int64Atomics:
      return "int64 atomics";
    case Need::Print:
      return "print";
    case Need::Assert:
      return "device assert";
    case Need::FusedFma:
      return "fused fma";
    case Need::Fp8:
      return "fp8 (f8e4m3, f8e5m2)";
    case Need::Ptx:
      return "inline PTX assembly (tl::inline_asm_elementwise runs on CUDA devices only)";
  }
  return "?";
}

std::vector<Need> needs_of(DType t) {
  switch (t) {
    case DType::i8:
    case DType::u8:
      return {Need::Int8};
    case DType::i16:
    case DType::u16:
      return {Need::Int16};
    case DType::i64:
    case DType::u64:
      return {Need::Int64};
    case DType::f16:
      return {Need::Fp16};
    case DType::bf16:
      return {Need::Bf16};
    case DType::f64:
      return {Need::Fp64};
    case DType::f8e4m3:
    case DType::f8e5m2:
      return {Need::Fp8};
    default:
      return {};
  }
}

std::vector<Need> needs_of(std::initializer_list<DType> ts) {
  std::vector<Need> out;
  for (DType t : ts)
    for (Need n : needs_of(t))
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

bool DeviceFacts::has(Need n) const {
  using target::Cap;
  switch (n) {
    case Need::Int8:
      return target.supports_dtype(DType::i8);
    case Need::Int16:
      return target.supports_dtype(DType::i16);
    case Need::Int64:
      return target.supports_dtype(DType::i64);
    case Need::Fp16:
      return target.supports_dtype(DType::f16);
    case Need::Bf16:
      return target.supports_dtype(DType::bf16);
    case Need::Fp64:
      return target.supports_dtype(DType::f64);
    case Need::FloatAtomicAdd:
      return target.has(Cap::FloatAtomicAdd);
    case Need::Int64Atomics:
      return target.has(Cap::Int64Atomics);
    case Need::Print:
      return true;  // Vulkan: through the print buffer (runtime/vulkan/print.cpp)
    case Need::Assert:
      return true;  // Vulkan: through the fault channel (targets/spirv/spirv.h)
    case Need::FusedFma:
      return target.has(Cap::FusedFma);
    case Need::Fp8:
      return target.supports_dtype(DType::f8e4m3);
    case Need::Ptx:
      return target.isa == "ptx";
  }
  return false;
}

// --- host arrays -------------------------------------------------------------------------------

HostArray::HostArray(DType t, size_t n) : dtype_(t), n_(n), bytes_(n * ir::dtype_bytes(t)) {}

uint64_t HostArray::bits(size_t i) const {
  uint64_t b = 0;
  const size_t w = ir::dtype_bytes(dtype_);
  std::memcpy(&b, bytes_.data() + i * w, w);
  return b;
}

void HostArray::set_bits(size_t i, uint64_t b) {
  const size_t w = ir::dtype_bytes(dtype_);
  std::memcpy(bytes_.data() + i * w, &b, w);
}

int64_t HostArray::i(size_t idx) const {
  const uint64_t b = bits(idx);
  const int w = ir::dtype_bits(dtype_);
  if (!ir::is_signed_int(dtype_) || w == 64 || w == 1) return static_cast<int64_t>(b);
  const uint64_t sign = uint64_t{1} << (w - 1);
  return static_cast<int64_t>((b ^ sign) - sign);
}

uint64_t HostArray::u(size_t idx) const {
  return bits(idx);
}

double HostArray::f(size_t idx) const {
  const uint64_t b = bits(idx);
  switch (dtype_) {
    case DType::f16:
      return f16_to_double(static_cast<uint16_t>(b));
    case DType::bf16:
      return bf16_to_double(static_cast<uint16_t>(b));
    case DType::f32:
      return std::bit_cast<float>(static_cast<uint32_t>(b));
    case DType::f64:
      return std::bit_cast<double>(b);
    case DType::f8e4m3:
      return f8e4m3_to_double(static_cast<uint8_t>(b));
    case DType::f8e5m2:
      return f8e5m2_to_double(static_cast<uint8_t>(b));
    case DType::u64:
      return static_cast<double>(b);
    default:
      return static_cast<double>(i(idx));
  }
}

void HostArray::set_int(size_t idx, int64_t v) {
  if (ir::is_float(dtype_)) return set_f(idx, static_cast<double>(v));
  if (dtype_ == DType::i1) return set_bits(idx, static_cast<uint64_t>(v) & 1);
  set_bits(idx, static_cast<uint64_t>(v));  // set_bits keeps the low bytes: wraps
}

void HostArray::set_f(size_t idx, double v) {
  switch (dtype_) {
    case DType::f16:
      return set_bits(idx, f16_from_double(v));
    case DType::bf16:
      return set_bits(idx, bf16_from_double(v));
    case DType::f32:
      return set_bits(idx, std::bit_cast<uint32_t>(static_cast<float>(v)));
    case DType::f64:
      return set_bits(idx, std::bit_cast<uint64_t>(v));
    case DType::f8e4m3:
      return set_bits(idx, f8e4m3_from_double(v));
    case DType::f8e5m2:
      return set_bits(idx, f8e5m2_from_double(v));
    case DType::u64:  // values >= 2^63 do not fit an int64
      if (v >= 0x1p63)
        return set_bits(idx, static_cast<uint64_t>(v - 0x1p63) | (uint64_t{1} << 63));
      return set_int(idx, static_cast<int64_t>(v));
    default:
      return set_int(idx, static_cast<int64_t>(v));
  }
}

double round_to(DType t, double v) {
  switch (t) {
    case DType::f16:
      return f16_to_double(f16_from_double(v));
    case DType::bf16:
      return bf16_to_double(bf16_from_double(v));
    case DType::f32:
      return static_cast<float>(v);
    case DType::f8e4m3:
      return f8e4m3_to_double(f8e4m3_from_double(v));
    case DType::f8e5m2:
      return f8e5m2_to_double(f8e5m2_from_double(v));
    default:
      return v;
  }
}

namespace {

/// A float's position on the number line as an integer (adjacent floats differ by one).
int64_t ordinal(DType t, double v) {
  uint64_t b = 0, sign = 0;
  switch (t) {
    case DType::f16:
      b = f16_from_double(v), sign = 0x8000;
      break;
    case DType::bf16:
      b = bf16_from_double(v), sign = 0x8000;
      break;
    case DType::f32:
      b = std::bit_cast<uint32_t>(static_cast<float>(v)), sign = 0x80000000u;
      break;
    case DType::f8e4m3:
      b = f8e4m3_from_double(v), sign = 0x80;
      break;
    case DType::f8e5m2:
      b = f8e5m2_from_double(v), sign = 0x80;
      break;
    default:
      b = std::bit_cast<uint64_t>(v), sign = uint64_t{1} << 63;
      break;
  }
  const int64_t mag = static_cast<int64_t>(b & (sign - 1));
  return (b & sign) ? -mag : mag;
}

std::string show(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

int64_t ulp_distance(DType t, double a, double b) {
  const int64_t d = ordinal(t, a) - ordinal(t, b);
  return d < 0 ? -d : d;
}

// --- context ----------------------------------------------------------------------------------

Context::Context(Device device, const DeviceFacts& facts, uint64_t seed, bool quick)
    : dev_(std::move(device)), facts_(facts), rng_(seed), quick_(quick) {}

int64_t Context::uniform_int(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
}

double Context::uniform(double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng_);
}

HostArray Context::random(DType t, size_t n, double lo, double hi) {
  HostArray a(t, n);
  if (ir::is_float(t)) {
    for (size_t i = 0; i < n; ++i) a.set_f(i, uniform(lo, hi));
    return a;
  }
  double tmin = 0, tmax = 1;
  if (t != DType::i1) {
    const int w = ir::dtype_bits(t);
    tmin = ir::is_signed_int(t) ? -std::ldexp(1.0, w - 1) : 0;
    tmax = std::ldexp(1.0, ir::is_signed_int(t) ? w - 1 : w) - 1;
  }
  const double l = std::max(lo, tmin), h = std::min(hi, tmax);
  for (size_t i = 0; i < n; ++i) {
    if (t == DType::u64 && h > 9.2e18) {
      a.set_bits(i, rng_());
      continue;
    }
    a.set_int(i, uniform_int(static_cast<int64_t>(l), static_cast<int64_t>(std::min(h, 9.2e18))));
  }
  return a;
}

HostArray Context::random_full(DType t, size_t n, int exp_range) {
  HostArray a(t, n);
  for (size_t i = 0; i < n; ++i) {
    if (!ir::is_float(t)) {
      a.set_int(i, static_cast<int64_t>(rng_()));
      continue;
    }
    const double m = uniform(1.0, 2.0) * (rng_() & 1 ? -1 : 1);
    a.set_f(i, std::ldexp(m, static_cast<int>(uniform_int(-exp_range, exp_range))));
  }
  return a;
}

DevArray Context::upload(const HostArray& h) {
  DevArray d{BufferBase::allocate(dev_.impl(), std::max<size_t>(h.bytes(), 1), h.dtype()),
             h.dtype(), h.size()};
  if (h.bytes()) d.buf.upload_bytes(h.data(), h.bytes(), 0, nullptr);
  return d;
}

uint64_t Context::poison_bits(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
      return 0x7fc1;
    case DType::f32:
      return 0x7fc00001u;
    case DType::f64:
      return 0x7ff8000000000001ull;
    case DType::f8e4m3:
    case DType::f8e5m2:
      return 0x7F;  // a NaN in both
    default:
      return 0xABABABABABABABABull;
  }
}

DevArray Context::poisoned(DType t, size_t n) {
  HostArray h(t, n);
  for (size_t i = 0; i < n; ++i) h.set_bits(i, poison_bits(t));
  return upload(h);
}

HostArray Context::download(const DevArray& d) {
  HostArray h(d.dtype, d.n);
  if (h.bytes()) d.buf.download_bytes(h.data(), h.bytes(), 0, nullptr);
  return h;
}

void Context::fail(const std::string& message) {
  if (failure_.empty()) failure_ = message;
}

void Context::expect(bool ok, const std::string& message) {
  ++checks_;
  if (!ok) fail(message);
}

void Context::check_exact(const std::string& what, const HostArray& got, const HostArray& want) {
  ++checks_;
  if (got.dtype() != want.dtype() || got.size() != want.size())
    return fail(what + ": got " + std::to_string(got.size()) + " x " + dname(got.dtype()) +
                ", want " + std::to_string(want.size()) + " x " + dname(want.dtype()));
  const bool fl = ir::is_float(got.dtype());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool same =
        got.bits(i) == want.bits(i) || (fl && std::isnan(got.f(i)) && std::isnan(want.f(i)));
    if (!same && bad++ == 0) first = i;
  }
  if (!bad) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "[%zu]: got %s (0x%" PRIx64 "), want %s (0x%" PRIx64 ")", first,
                show(got.f(first)).c_str(), got.bits(first), show(want.f(first)).c_str(),
                want.bits(first));
  fail(what + buf + (bad > 1 ? " and " + std::to_string(bad - 1) + " more elements differ" : ""));
}

void Context::check_ints(const std::string& what, const HostArray& got,
                         const std::vector<int64_t>& ref) {
  HostArray want(got.dtype(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) want.set_int(i, ref[i]);
  check_exact(what, got, want);
}

void Context::check_close(const std::string& what, const HostArray& got,
                          const std::vector<double>& ref, const Tol& tol,
                          const std::vector<double>* scale) {
  ++checks_;
  if (got.size() != ref.size())
    return fail(what + ": got " + std::to_string(got.size()) + " elements, want " +
                std::to_string(ref.size()));
  const DType t = got.dtype();
  size_t bad = 0;
  std::string first;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got.f(i), r = ref[i], rr = round_to(t, r);
    bool ok;
    double err = 0;
    int64_t ulps = 0;
    if (std::isnan(g) || std::isnan(r)) {
      ok = std::isnan(g) && std::isnan(r);
    } else if (std::isinf(g) || std::isinf(rr)) {
      ok = g == rr || (std::isfinite(g) && std::fabs(g - r) <= tol.abs + tol.rel * std::fabs(r));
    } else {
      err = std::fabs(g - r);
      ulps = ulp_distance(t, g, rr);
      const double s = scale ? (*scale)[i] : std::fabs(r);
      ok = ulps <= tol.ulps || err <= tol.abs + tol.rel * s;
      max_error_ = std::max(max_error_, err / std::max(s, tol::min_normal(t)));
    }
    if (ok || bad++) continue;
    char buf[200];
    std::snprintf(buf, sizeof buf, "[%zu]: got %s, want %s (err %.3g = %" PRId64 " ulp; tol %s)", i,
                  show(g).c_str(), show(r).c_str(), err, ulps, tol.str().c_str());
    first = buf;
  }
  if (bad)
    fail(what + first + (bad > 1 ? " and " + std::to_string(bad - 1) + " more elements" : ""));
}

void Context::check_untouched(const std::string& what, const HostArray& got, size_t from,
                              size_t to) {
  ++checks_;
  const int w = ir::dtype_bytes(got.dtype());
  const uint64_t poison =
      poison_bits(got.dtype()) & (w == 8 ? ~uint64_t{0} : (uint64_t{1} << 8 * w) - 1);
  for (size_t i = from; i < to && i < got.size(); ++i)
    if (got.bits(i) != poison)
      return fail(what + "[" + std::to_string(i) + "] was written (masked off), now " +
                  show(got.f(i)));
}

std::string capture_stdout(const std::function<void()>& f) {
  std::fflush(stdout);
  std::cout.flush();
  std::FILE* tmp = std::tmpfile();
  if (!tmp) fail(ErrorKind::Runtime, "capture_stdout: tmpfile failed");
  const int saved = ::dup(1);
  ::dup2(::fileno(tmp), 1);
  struct Restore {
    int saved;
    ~Restore() {
      std::cout.flush();
      std::fflush(stdout);
      ::dup2(saved, 1);
      ::close(saved);
    }
  };
  {
    Restore restore{saved};
    f();
  }
  std::string out;
  std::rewind(tmp);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, tmp)) > 0;) out.append(buf, n);
  std::fclose(tmp);
  return out;
}

void expect_dtype(const tl::tensor& t, DType want, const std::string& what) {
  if (t.dtype() != want)
    fail(ErrorKind::User, what, ": the result has dtype ", ir::dtype_name(t.dtype()), ", expected ",
         ir::dtype_name(want));
}

}  // namespace tessera::conformance
