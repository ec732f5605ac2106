/// \file Triton's cache and eviction hints in PTX: a global_load's or global_store's `cache`
/// operator and `eviction` priority become ld/st qualifiers (in 32-bit words, vectors kept), both
/// together an L2 cache policy; volatile loads keep ld.volatile; every form assembles for sm_80,
/// sm_90 and sm_90a.
#include "helpers.h"

namespace ptx_test {
namespace {

/// A kernel that copies `width` elements of `dtype` from %src to %dst under a mask, the load
/// with `load_hints` and the store with `store_hints` (attribute text, may be empty).
std::string hinted_copy(std::string_view dtype, int width, std::string_view load_hints,
                        std::string_view store_hints) {
  const int bytes = width * (dtype == "f64" ? 8 : dtype == "f16" ? 2 : dtype == "i8" ? 1 : 4);
  std::string names, others, types;
  for (int i = 0; i < width; ++i) {
    names += (i ? ", %v" : "%v") + std::to_string(i);
    others += ", %o";
    types += std::string(i ? ", " : "") + std::string(dtype);
  }
  const std::string access =
      "align = " + std::to_string(bytes) + ", width = " + std::to_string(width);
  auto attrs = [&](std::string_view hints) {
    return "{" + access + (hints.empty() ? "" : ", " + std::string(hints)) + "}";
  };
  std::string body = "  %o = constant {value = 0} : " + std::string(dtype) +
                     "\n  %pid = program_id {axis = 0} : i32\n  %m = cmp_lt %pid, %n : i1\n  " +
                     names + " = global_load %src, %m" + others + " " + attrs(load_hints) + " : " +
                     types + "\n  global_store %dst, %m, " + names + " " + attrs(store_hints);
  return kernel(
      "%src: ptr<" + std::string(dtype) + ">, %dst: ptr<" + std::string(dtype) + ">, %n: i32",
      body);
}

/// PTX for sm_90 after assembling it for sm_80, sm_90 and sm_90a.
Emitted emit_all(const std::string& text) {
  emit(text, profile("cuda-sm_90a"));
  return emit_both(text);
}

TEST_CASE("ptx: load cache operators ca, cg, cs, cv become ld.global.<op>, vectors kept") {
  for (std::string op : {"ca", "cg", "cs", "cv"}) {
    CAPTURE(op);
    Emitted e = emit_all(hinted_copy("f32", 4, "cache = \"" + op + "\"", ""));
    CHECK(e.has("ld.global." + op + ".v4.b32"));
    CHECK(e.has("st.global.v4.f32"));  // the store has no hint
  }
  // Triton spells them with a dot
  CHECK(emit_all(hinted_copy("f32", 1, "cache = \".cg\"", "")).has("ld.global.cg.b32"));
}

TEST_CASE("ptx: store cache operators wb, cg, cs, wt become st.global.<op>") {
  for (std::string op : {"wb", "cg", "cs", "wt"}) {
    CAPTURE(op);
    Emitted e = emit_all(hinted_copy("f32", 2, "", "cache = \"" + op + "\""));
    INFO(e.ptx);
    CHECK(e.has("st.global." + op + ".v2.b32"));
    CHECK(!e.has("st.global.v2"));
  }
}

TEST_CASE("ptx: eviction priorities are L1::evict_first / L1::evict_last, evict_normal adds none") {
  Emitted e =
      emit_all(hinted_copy("f32", 4, "eviction = \"evict_last\"", "eviction = \"evict_first\""));
  CHECK(e.has("ld.global.L1::evict_last.v4.b32"));
  CHECK(e.has("st.global.L1::evict_first.v4.b32"));
  Emitted normal = emit_all(hinted_copy("f32", 4, "eviction = \"evict_normal\"", ""));
  CHECK(normal.has("ld.global.v4.f32"));
  CHECK(!normal.has("evict"));
}

TEST_CASE("ptx: a cache operator with an eviction priority takes an L2 cache policy") {
  Emitted e = emit_all(hinted_copy("f32", 4, "cache = \"cg\", eviction = \"evict_first\"",
                                   "cache = \"cs\", eviction = \"evict_last\""));
  CHECK(e.has("createpolicy.fractional.L2::evict_first.b64"));
  CHECK(e.has("ld.global.cg.L2::cache_hint.v4.b32"));
  CHECK(e.has("createpolicy.fractional.L2::evict_last.b64"));
  CHECK(e.has("st.global.cs.L2::cache_hint.v4.b32"));
}

TEST_CASE("ptx: hinted accesses of every width: bytes, halves, words, f64 pairs") {
  CHECK(emit_all(hinted_copy("i8", 1, "cache = \"cg\"", "cache = \"cs\"")).has("ld.global.cg.b8"));
  Emitted h = emit_all(hinted_copy("f16", 1, "cache = \"cg\"", "cache = \"cs\""));
  CHECK(h.has("ld.global.cg.b16"));
  CHECK(h.has("st.global.cs.b16"));
  Emitted d = emit_all(hinted_copy("f64", 2, "cache = \"cv\"", "cache = \"wt\""));
  CHECK(d.has("ld.global.cv.v4.b32"));
  CHECK(d.has("st.global.wt.v4.b32"));
  Emitted w = emit_all(hinted_copy("f16", 8, "cache = \"ca\"", "cache = \"wb\""));
  CHECK(w.has("ld.global.ca.v4.b32"));
  CHECK(w.has("st.global.wb.v4.b32"));
}

TEST_CASE("ptx: a volatile load ignores its hints and stays ld.volatile") {
  Emitted e = emit_all(hinted_copy("i32", 1, "cache = \"cg\", volatile = 1", ""));
  CHECK(e.has("ld.volatile.global.u32"));
  CHECK(!e.has("ld.global.cg"));
}

}  // namespace
}  // namespace ptx_test
