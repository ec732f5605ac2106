/// \file A fast 128-bit content hash for the disk caches' file names and checksums: eight bytes
/// per step in two lanes, so hashing the PTX of a large kernel costs microseconds at a launch.
/// Not cryptographic: an entry's full key is stored and compared, the hash only names the file
/// and detects damage.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace tessera::rt {

struct Hash128 {
  uint64_t lo = 0, hi = 0;
  bool operator==(const Hash128&) const = default;
  /// 32 lowercase hex digits.
  std::string hex() const {
    char out[33];
    std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(hi),
                  static_cast<unsigned long long>(lo));
    return out;
  }
};

namespace detail {
constexpr uint64_t rotl(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}
/// MurmurHash3's 64-bit finalizer: every input bit reaches every output bit.
constexpr uint64_t fmix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}
}  // namespace detail

/// The hash of `bytes` (the same on every little-endian machine; the caches hold binaries for
/// the machine that wrote them).
inline Hash128 hash128(std::string_view bytes, uint64_t seed = 0) {
  using detail::rotl;
  constexpr uint64_t k1 = 0x87c37b91114253d5ull, k2 = 0x4cf5ad432745937full;
  uint64_t a = seed ^ 0x9e3779b97f4a7c15ull, b = seed ^ 0xc2b2ae3d27d4eb4full;
  const char* p = bytes.data();
  size_t n = bytes.size();
  for (; n >= 16; p += 16, n -= 16) {
    uint64_t x, y;
    std::memcpy(&x, p, 8);
    std::memcpy(&y, p + 8, 8);
    a = rotl(a ^ (rotl(x * k1, 31) * k2), 27) * 5 + 0x52dce729;
    b = rotl(b ^ (rotl(y * k2, 33) * k1), 31) * 5 + 0x38495ab5;
  }
  uint64_t x = 0, y = 0;
  if (n > 0) std::memcpy(&x, p, n < 8 ? n : 8);  // p may be null for an empty view
  if (n > 8) std::memcpy(&y, p + 8, n - 8);
  a ^= rotl(x * k1, 31) * k2;
  b ^= rotl(y * k2, 33) * k1;
  a ^= bytes.size();
  b ^= bytes.size();
  a += b;
  b += a;
  a = detail::fmix(a);
  b = detail::fmix(b);
  a += b;
  b += a;
  return {a, b};
}

}  // namespace tessera::rt
