/// \file Atomics: native `atom` with the op's semantics and scope, compare-and-swap loops for what
/// PTX lacks (float min/max, 8- and 16-bit integers, bf16 add before sm_90), masks, and CAS.
#include "helpers.h"

namespace ptx_test {
namespace {

std::string rmw(std::string_view op, std::string_view dtype, std::string_view extra = "",
                bool masked = false) {
  std::string one = std::string(dtype).starts_with("f") || dtype == "bf16" ? "1.0" : "1";
  std::string body = "  %v = constant {value = " + one + "} : " + std::string(dtype) + "\n";
  if (masked)
    body +=
        "  %pid = program_id {axis = 0} : i32\n  %z = constant {value = 0} : i32\n  %m = cmp_eq "
        "%pid, %z : i1\n";
  body += "  %old = atomic_rmw %p, %v" + std::string(masked ? ", %m" : "") + " {op = \"" +
          std::string(op) + "\"" + (extra.empty() ? "" : ", " + std::string(extra)) +
          "} : " + std::string(dtype) +
          "\n"
          "  %t = constant {value = 1} : i1\n"
          "  global_store %q, %t, %old {align = 8, width = 1}";
  return kernel("%p: ptr<" + std::string(dtype) + ">, %q: ptr<" + std::string(dtype) + ">", body);
}

TEST_CASE("ptx: atomics carry the op's semantics and scope (acq_rel, gpu by default)") {
  CHECK(emit_both(rmw("add", "i32")).has("atom.acq_rel.gpu.global.add.u32"));
  CHECK(emit_both(rmw("add", "u64", "sem = \"relaxed\", scope = \"cta\""))
            .has("atom.relaxed.cta.global.add.u64"));
  CHECK(emit_both(rmw("xchg", "f32", "sem = \"acquire\", scope = \"sys\""))
            .has("atom.acquire.sys.global.exch.b32"));
  CHECK(emit_both(rmw("and", "i64", "sem = \"release\"")).has("atom.release.gpu.global.and.b64"));
  CHECK(emit_both(rmw("or", "u32")).has("atom.acq_rel.gpu.global.or.b32"));
  CHECK(emit_both(rmw("xor", "i32")).has("atom.acq_rel.gpu.global.xor.b32"));
  CHECK(emit_both(rmw("max", "i32")).has("atom.acq_rel.gpu.global.max.s32"));
  CHECK(emit_both(rmw("min", "u64")).has("atom.acq_rel.gpu.global.min.u64"));
  CHECK(emit_both(rmw("max", "i64")).has("atom.acq_rel.gpu.global.max.s64"));
}

TEST_CASE("ptx: float add is native: f32, f64, f16 (noftz), bf16 on sm_90") {
  CHECK(emit_both(rmw("add", "f32")).has("atom.acq_rel.gpu.global.add.f32"));
  CHECK(emit_both(rmw("add", "f64")).has("atom.acq_rel.gpu.global.add.f64"));
  CHECK(emit_both(rmw("add", "f16")).has("atom.acq_rel.gpu.global.add.noftz.f16"));
  CHECK(emit(rmw("add", "bf16"), profile("cuda-sm_90"))
            .has("atom.acq_rel.gpu.global.add.noftz.bf16"));
  Emitted sm80 = emit(rmw("add", "bf16"), profile("cuda-sm_80"));
  CHECK(sm80.has("atom.acq_rel.gpu.global.cas.b16"));
  CHECK(!sm80.has("add.noftz.bf16"));
}

TEST_CASE("ptx: float max/min and narrow integers run a compare-and-swap loop") {
  Emitted fmax = emit_both(rmw("max", "f32"));
  CHECK(fmax.has("atom.acq_rel.gpu.global.cas.b32"));
  CHECK(fmax.has("max.f32"));
  CHECK(emit_both(rmw("min", "f64")).has("atom.acq_rel.gpu.global.cas.b64"));
  CHECK(emit_both(rmw("max", "f16")).has("atom.acq_rel.gpu.global.cas.b16"));
  CHECK(emit_both(rmw("add", "i16")).has("atom.acq_rel.gpu.global.cas.b16"));
  Emitted byte = emit_both(rmw("add", "u8"));  // the aligned word that holds the byte
  CHECK(byte.has("atom.acq_rel.gpu.global.cas.b32"));
  CHECK(byte.has("and.b64"));
  CHECK(emit_both(rmw("xchg", "i8")).has("atom.acq_rel.gpu.global.cas.b32"));
  CHECK(emit_both(rmw("or", "i1")).has("atom.acq_rel.gpu.global.cas.b32"));
}

TEST_CASE("ptx: a masked atomic branches around the access") {
  Emitted e = emit_both(rmw("add", "i32", "", /*masked=*/true));
  CHECK(e.has("atom.acq_rel.gpu.global.add.u32"));
  CHECK(e.has("bra"));
}

TEST_CASE("ptx: compare-and-swap of each width") {
  for (const char* t : {"i32", "f32", "u64", "f64", "i16", "f16", "bf16", "i8", "u8"}) {
    CAPTURE(t);
    bool flt = std::string_view(t).starts_with("f") || std::string_view(t) == "bf16";
    std::string v = flt ? "1.0" : "1";
    std::string body = "  %c = constant {value = " + v + "} : " + t +
                       "\n"
                       "  %old = atomic_cas %p, %c, %c {sem = \"relaxed\", scope = \"gpu\"} : " +
                       t +
                       "\n"
                       "  %tr = constant {value = 1} : i1\n"
                       "  global_store %p, %tr, %old {align = 8, width = 1}";
    Emitted e = emit_both(kernel(std::string("%p: ptr<") + t + ">", body));
    int bits = std::string_view(t).ends_with("64")   ? 64
               : std::string_view(t).ends_with("16") ? 16
                                                     : 32;
    if (std::string_view(t).ends_with("8")) bits = 32;  // bytes swap their word
    CHECK(e.has("atom.relaxed.gpu.global.cas.b" + std::to_string(bits)));
  }
}

}  // namespace
}  // namespace ptx_test
