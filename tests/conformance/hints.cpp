/// \file Cache modifiers and eviction policies on tl::load and tl::store (Triton's
/// cache_modifier and eviction_policy): hints only, so every spelling must give the plain
/// access's values on every device, masked tails included.
#include <string>

#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

const char* const kLoadCache[] = {"", "ca", "cg", ".cs", "cv"};
const char* const kStoreCache[] = {"", "wb", ".cg", "cs", "wt"};
const char* const kEviction[] = {"", "evict_normal", "evict_first", "evict_last"};

void hint_kernel(tl::pointer x, tl::pointer out, tl::i32 n, int LOAD, int STORE, int EVICT,
                 int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto v = tl::load(x + offs, m, 0.0f, {.cache = kLoadCache[LOAD], .eviction = kEviction[EVICT]});
  tl::store(out + offs, v * 2.0f, m,
            {.cache = kStoreCache[STORE], .eviction = kEviction[(EVICT + 1) % 4]});
}

void hint_case(Context& ctx) {
  auto k = TESSERA_KERNEL(hint_kernel, x, out, n, LOAD, STORE, EVICT, BLOCK);
  const int n = 200;  // not a multiple of the block
  HostArray x = ctx.random(DType::f32, n + 56, -8, 8);
  DevArray dx = ctx.upload(x);
  for (int c = 0; c < 5; ++c) {
    for (int e = 0; e < 4; ++e) {
      DevArray o = ctx.poisoned(DType::f32, n + 56);
      k[{cdiv(n, 64)}](dx.buf, o.buf, n, c, (c + e) % 5, e, 64);
      HostArray got = ctx.download(o), want(DType::f32, n), head(DType::f32, n);
      for (int i = 0; i < n; ++i) {
        want.set_f(i, x.f(i) * 2);
        head.set_bits(i, got.bits(i));
      }
      const std::string what = std::string("load cache '") + kLoadCache[c] + "', store cache '" +
                               kStoreCache[(c + e) % 5] + "', eviction '" + kEviction[e] + "'";
      ctx.check_exact(what, head, want);
      ctx.check_untouched(what + " (masked tail)", got, n, n + 56);
    }
  }
}

/// A volatile load (PTX ld.volatile, SPIR-V Volatile) with its hints reads the plain values.
void volatile_kernel(tl::pointer x, tl::pointer out, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto v = tl::load(x + offs, m, 0.0f, {.cache = "cg", .is_volatile = true});
  tl::store(out + offs, v + 1.0f, m);
}

void volatile_case(Context& ctx) {
  auto k = TESSERA_KERNEL(volatile_kernel, x, out, n, BLOCK);
  const int n = 200;  // not a multiple of the block
  HostArray x = ctx.random(DType::f32, n + 56, -8, 8);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, n + 56);
  k[{cdiv(n, 64)}](dx.buf, o.buf, n, 64);
  HostArray got = ctx.download(o), want(DType::f32, n), head(DType::f32, n);
  for (int i = 0; i < n; ++i) {
    want.set_f(i, static_cast<float>(x.f(i)) + 1.0f);
    head.set_bits(i, got.bits(i));
  }
  ctx.check_exact("volatile load", head, want);
  ctx.check_untouched("volatile load (masked tail)", got, n, n + 56);
}

}  // namespace

void register_hints(std::vector<Case>& out) {
  out.push_back({"memory/cache_and_eviction_hints", {}, "", hint_case});
  out.push_back({"memory/volatile_load", {}, "", volatile_case});
}

}  // namespace tessera::conformance
