/// \file The pass registry and optimize(): names, the fixed point, dumps, timings, verification.
#include "core/passes/pipeline.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "core/ir/parser.h"
#include "core/ir/printer.h"
#include "core/ir/simt.h"
#include "core/ir/verifier.h"
#include "core/support/dump.h"
#include "core/support/error.h"
#include "core/target/target.h"

namespace tessera::test {
namespace {

using passes::optimize;

/// A GeLU-like kernel whose constant subexpressions, repeats and dead code the pipeline removes.
constexpr const char* kKernel = R"(
func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) {
  %pid = program_id {axis = 0} : i32
  %block = constant {value = 64} : i32
  %base = mul %pid, %block : i32
  %r = arange {end = 64, start = 0} : tile<64xi32>
  %b = splat %base : tile<64xi32>
  %offs = add %b, %r : tile<64xi32>
  %nn = splat %n : tile<64xi32>
  %mask = cmp_lt %offs, %nn : tile<64xi1>
  %px = splat %x : tile<64xptr<f32>>
  %ptrs = ptr_add %px, %offs : tile<64xptr<f32>>
  %v = load %ptrs, %mask : tile<64xf32>
  %half = constant {value = 0.5} : f32
  %two = constant {value = 2.0} : f32
  %quarter = mul %half, %half : f32
  %k1 = mul %quarter, %two : f32
  %ks = splat %k1 : tile<64xf32>
  %zero = constant {value = 0} : tile<64xi32>
  %offs2 = add %offs, %zero : tile<64xi32>
  %py = splat %y : tile<64xptr<f32>>
  %ptrs2 = ptr_add %py, %offs2 : tile<64xptr<f32>>
  %out = mul %v, %ks : tile<64xf32>
  %dead = exp %out : tile<64xf32>
  %mask2 = cmp_lt %offs2, %nn : tile<64xi1>
  store %ptrs2, %out, %mask2
}
)";

TEST_CASE("pipeline: the registry lists fold, cse, dce and canonicalize") {
  std::string names;
  for (const passes::PassInfo& p : passes::all_passes()) {
    names += std::string(p.name) + " ";
    CHECK(static_cast<bool>(p.run));
    CHECK_FALSE(p.summary.empty());
  }
  CHECK(names == "fold cse dce canonicalize ");
  REQUIRE(passes::find_pass("dce") != nullptr);
  CHECK(passes::find_pass("dce")->name == "dce");
  CHECK(passes::find_pass("inline") == nullptr);
}

TEST_CASE("pipeline: optimize reaches a fixed point that every pass leaves alone") {
  auto m = ir::parse(kKernel, "k.tir");
  optimize(*m);
  ir::verify(*m);
  const std::string text = ir::print(*m);
  CHECK(text.find("exp") == std::string::npos);                          // dead
  CHECK(text.find("value = 0.5} : tile<64xf32>") != std::string::npos);  // 0.5 * 0.5 * 2
  CHECK(text.find("cmp_lt") == text.rfind("cmp_lt"));  // x + 0 made the masks equal
  CHECK(text.find("constant {value = 0} : tile") == std::string::npos);
  for (const passes::PassInfo& p : passes::all_passes()) {
    INFO("pass " << std::string(p.name));
    CHECK_FALSE(p.run(*m));
  }
}

TEST_CASE("pipeline: the dump shows the IR after each pass that changed it, with timings") {
  auto m = ir::parse(kKernel, "k.tir");
  std::ostringstream os;
  optimize(*m, {.verify_each = true, .dump = &os, .timings = &os});
  const std::string log = os.str();
  CHECK(log.find("// -----// IR after canonicalize (round 0) //----- //\nfunc @k") !=
        std::string::npos);
  CHECK(log.find("IR after fold (round 0)") != std::string::npos);
  CHECK(log.find("IR after dce (round 0)") != std::string::npos);
  CHECK(log.find("// cse (round 0): ") != std::string::npos);
  CHECK(log.find(" ms") != std::string::npos);
  // The last round changes nothing, so it logs times only.
  const size_t last_ir = log.rfind("IR after");
  const size_t last_round = log.rfind("no change");
  CHECK(last_ir < last_round);
  CHECK(log.substr(last_ir).find("func @k") != std::string::npos);
}

TEST_CASE("pipeline: verify_each checks the module after a pass that changed it") {
  // A tile kernel parameter is invalid; fold changes the module, so the verifier runs.
  constexpr const char* kBad = R"(
func @bad(%t: tile<4xi32>) {
  %a = constant {value = 1} : i32
  %b = add %a, %a : i32
  print %b, %t
}
)";
  auto m = ir::parse(kBad, "bad.tir");
  CHECK_THROWS_AS(optimize(*m, {.verify_each = true}), tessera::Error);
  auto again = ir::parse(kBad, "bad.tir");
  CHECK_NOTHROW(optimize(*again));
}

TEST_CASE("pipeline: acc += dot(a, b) becomes one accumulating dot") {
  constexpr const char* kMatmul = R"(
func @mm(%a: ptr<f16>, %c: ptr<f32>, %n: i32) {
  %pa = splat %a : tile<16x16xptr<f16>>
  %pc = splat %c : tile<16x16xptr<f32>>
  %lb = constant {value = 0} : i32
  %st = constant {value = 1} : i32
  %init = constant {value = 0.0} : tile<16x16xf32>
  %acc = for %lb, %n, %st, %init ({
  ^(%i: i32, %sum: tile<16x16xf32>):
    %x = load %pa : tile<16x16xf16>
    %z = constant {value = 0.0} : tile<16x16xf32>
    %d = dot %x, %x, %z : tile<16x16xf32>
    %next = add %sum, %d : tile<16x16xf32>
    yield %next
  }) : tile<16x16xf32>
  store %pc, %acc
}
)";
  auto m = ir::parse(kMatmul, "mm.tir");
  optimize(*m, {.verify_each = true});
  const std::string text = ir::print(*m);
  CHECK(text.find("dot %8, %8, %7 : tile<16x16xf32>") != std::string::npos);
  CHECK(text.find(" add ") == std::string::npos);
}

TEST_CASE("pipeline: the compile steps run in the documented order") {
  std::string names;
  for (const passes::StepInfo& s : passes::all_steps()) names += std::string(s.name) + " ";
  CHECK(
      names ==
      "verify descriptors optimize single-trip rem-version grouped-launch contract bounds descriptor-loads "
      "verify plan to-simt simt-optimize verify ");
}

/// The seed's matmul walk over pointer tiles, with the facts TMA needs
/// (tests/golden/descriptor_loads/ring_tma_sm90a.tir).
constexpr const char* kSeedMatmul = R"(
func @seed(%a: ptr<f16> {divisibility = 16}, %b: ptr<f16> {divisibility = 16}, %M: i32, %N: i32, %K: i32, %sa: i32 {divisibility = 16}, %sb: i32 {divisibility = 16}, %off: i32, %c: ptr<f32> {divisibility = 16}) {
  %pm = program_id {axis = 0} : i32
  %pn = program_id {axis = 1} : i32
  %c64 = constant {value = 64} : i32
  %m0 = mul %pm, %c64 : i32
  %n0 = mul %pn, %c64 : i32
  %r64 = arange {start = 0, end = 64} : tile<64xi32>
  %m0s = splat %m0 : tile<64xi32>
  %rows = add %m0s, %r64 : tile<64xi32>
  %n0s = splat %n0 : tile<64xi32>
  %cols = add %n0s, %r64 : tile<64xi32>
  %rk = arange {start = 0, end = 32} : tile<32xi32>
  %r2 = expand_dims %rows {axis = 1} : tile<64x1xi32>
  %k2 = expand_dims %rk {axis = 0} : tile<1x32xi32>
  %sas = splat %sa : tile<64x1xi32>
  %ro = mul %r2, %sas : tile<64x1xi32>
  %ab = splat %a : tile<64x1xptr<f16>>
  %ap1 = ptr_add %ab, %ro : tile<64x1xptr<f16>>
  %ap2 = broadcast %ap1 : tile<64x32xptr<f16>>
  %kb = broadcast %k2 : tile<64x32xi32>
  %ap = ptr_add %ap2, %kb : tile<64x32xptr<f16>>
  %k3 = expand_dims %rk {axis = 1} : tile<32x1xi32>
  %sbs = splat %sb : tile<32x1xi32>
  %ko3 = mul %k3, %sbs : tile<32x1xi32>
  %n2 = expand_dims %cols {axis = 0} : tile<1x64xi32>
  %bb = splat %b : tile<32x1xptr<f16>>
  %bp1 = ptr_add %bb, %ko3 : tile<32x1xptr<f16>>
  %bp2 = broadcast %bp1 : tile<32x64xptr<f16>>
  %nb = broadcast %n2 : tile<32x64xi32>
  %bp = ptr_add %bp2, %nb : tile<32x64xptr<f16>>
  %lb = constant {value = 0} : i32
  %st = constant {value = 32} : i32
  %acc0 = constant {value = 0.0} : tile<64x64xf32>
  %ra, %rb, %rc = for %lb, %K, %st, %ap, %bp, %acc0 ({
  ^(%k: i32, %p: tile<64x32xptr<f16>>, %q: tile<32x64xptr<f16>>, %acc: tile<64x64xf32>):
    %ks = splat %k : tile<1x32xi32>
    %kk = add %k2, %ks : tile<1x32xi32>
    %Ks = splat %K : tile<1x32xi32>
    %mk = cmp_lt %kk, %Ks : tile<1x32xi1>
    %Ms = splat %M : tile<64x1xi32>
    %mm = cmp_lt %r2, %Ms : tile<64x1xi1>
    %mmb = broadcast %mm : tile<64x32xi1>
    %mkb = broadcast %mk : tile<64x32xi1>
    %ma = and %mmb, %mkb : tile<64x32xi1>
    %za = constant {value = 0.0} : tile<64x32xf16>
    %x = load %p, %ma, %za : tile<64x32xf16>
    %ks3 = splat %k : tile<32x1xi32>
    %kk3 = add %k3, %ks3 : tile<32x1xi32>
    %Ks3 = splat %K : tile<32x1xi32>
    %mk3 = cmp_lt %kk3, %Ks3 : tile<32x1xi1>
    %Ns = splat %N : tile<1x64xi32>
    %mn = cmp_lt %n2, %Ns : tile<1x64xi1>
    %mk3b = broadcast %mk3 : tile<32x64xi1>
    %mnb = broadcast %mn : tile<32x64xi1>
    %mb = and %mk3b, %mnb : tile<32x64xi1>
    %zb = constant {value = 0.0} : tile<32x64xf16>
    %y = load %q, %mb, %zb : tile<32x64xf16>
    %d = dot %x, %y, %acc : tile<64x64xf32>
    %inca = constant {value = 32} : tile<64x32xi32>
    %p2 = ptr_add %p, %inca : tile<64x32xptr<f16>>
    %skb = mul %sb, %st : i32
    %incb = splat %skb : tile<32x64xi32>
    %q2 = ptr_add %q, %incb : tile<32x64xptr<f16>>
    yield %p2, %q2, %d
  }) : tile<64x32xptr<f16>>, tile<32x64xptr<f16>>, tile<64x64xf32>
  %c64t = constant {value = 64} : tile<64x1xi32>
  %co = mul %r2, %c64t : tile<64x1xi32>
  %cob = broadcast %co : tile<64x64xi32>
  %cnb = broadcast %n2 : tile<64x64xi32>
  %coff = add %cob, %cnb : tile<64x64xi32>
  %cs = splat %c : tile<64x64xptr<f32>>
  %cp = ptr_add %cs, %coff : tile<64x64xptr<f32>>
  store %cp, %rc
}
)";

TEST_CASE("pipeline: descriptor-loads keeps its rewrite only where the ring copies it by TMA") {
  auto m = ir::parse(kSeedMatmul, "seed.tir");
  const target::Target hopper = *target::profile("cuda-sm_90a");
  auto count = [](const ir::Module& mod, std::string_view what) {
    const std::string text = ir::print(mod);
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  // Three stages: both loads are descriptor loads copied by TMA.
  passes::Compiled ring =
      passes::compile(*m, hopper, {.num_stages = 3}, passes::Stage::Simt, Dumps());
  CHECK(count(*ring.tile, "desc_load") == 2);
  CHECK(count(*ring.tile, "= load ") == 0);
  CHECK(ring.plan->str().find("by TMA") != std::string::npos);
  // One stage: no ring takes them, so the kernel is planned as written (pointer loads).
  passes::Compiled plain =
      passes::compile(*m, hopper, {.num_stages = 1}, passes::Stage::Simt, Dumps());
  CHECK(count(*plain.tile, "desc_load") == 0);
  CHECK(count(*plain.tile, "= load ") == 2);
  CHECK(plain.before_descriptor_loads == nullptr);
  // The tile stage alone keeps the rewrite; sm_80 and debug mode never make it.
  CHECK(count(*passes::compile(*m, hopper, {}, passes::Stage::Tile, Dumps()).tile, "desc_load") ==
        2);
  const target::Target ampere = *target::profile("cuda-sm_80");
  CHECK(count(*passes::compile(*m, ampere, {}, passes::Stage::Tile, Dumps()).tile, "desc_load") ==
        0);
  CHECK(count(*passes::compile(*m, hopper, {.debug = true}, passes::Stage::Tile, Dumps()).tile,
              "desc_load") == 0);
}

TEST_CASE("pipeline: compile stops at the tile stage or runs on to SIMT IR") {
  auto m = ir::parse(kKernel, "k.tir");
  const target::Target t = *target::profile("vulkan-nvidia");
  passes::Compiled tile = passes::compile(*m, t, {}, passes::Stage::Tile, Dumps());
  REQUIRE(tile.tile);
  CHECK(!tile.simt);
  CHECK(ir::print(*tile.tile).find("exp") == std::string::npos);  // optimized
  passes::Compiled simt = passes::compile(*m, t, {.num_warps = 2}, passes::Stage::Simt, Dumps());
  REQUIRE(simt.simt);
  CHECK(ir::is_simt(simt.simt->kernel()));
  CHECK(ir::simt_threads(simt.simt->kernel()) == 64);
  REQUIRE(simt.plan);
  CHECK(simt.plan->str().find("%10 = load : tile<64xf32>  [64] ") != std::string::npos);
}

TEST_CASE("pipeline: TESSERA_DUMP words print steps, passes, times, layouts and SIMT IR") {
  auto m = ir::parse(kKernel, "k.tir");
  const target::Target t = *target::profile("cuda-sm_80");
  std::ostringstream os;
  Dumps d = Dumps::parse("ir,passes,times,layouts,simt,noloc", "test");
  d.redirect(os);
  passes::compile(*m, t, {}, passes::Stage::Simt, d);
  const std::string log = os.str();
  CHECK(log.find("// tile IR of 'k' as traced\nfunc @k") != std::string::npos);
  CHECK(log.find("// tile IR of 'k' optimized") != std::string::npos);
  CHECK(log.find("// -----// IR after canonicalize (round 0) //----- //") != std::string::npos);
  CHECK(log.find("// -----// IR after to-simt //----- //") != std::string::npos);
  CHECK(log.find("// step plan: ") != std::string::npos);
  CHECK(log.find("// dce (round 0): ") != std::string::npos);
  CHECK(log.find("// plans of 'k' for cuda-sm_80, num_warps = 4, num_stages = 3") !=
        std::string::npos);
  CHECK(log.find("// SIMT IR for cuda-sm_80\nfunc @k") != std::string::npos);
  CHECK(log.find("loc(") == std::string::npos);  // noloc
  std::ostringstream quiet;
  Dumps none;
  none.redirect(quiet);
  passes::compile(*m, t, {}, passes::Stage::Simt, none);
  CHECK(quiet.str().empty());
}

TEST_CASE("pipeline: an unknown TESSERA_DUMP word is an error that lists the valid ones") {
  try {
    Dumps::parse("ir,layout", "TESSERA_DUMP");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Argument);
    CHECK(std::string(e.what()).find(
              "TESSERA_DUMP: unknown word 'layout' (valid: ir, passes, times, layouts") !=
          std::string::npos);
  }
  CHECK(Dumps::parse("ir,,ptx", "x").has("ptx"));
  CHECK_FALSE(Dumps::parse("ir", "x").has("ptx"));
}

TEST_CASE("pipeline: a tile over 4096 elements per thread is Unsupported when lowered to threads") {
  const char* text = R"(
func @k(%out: ptr<i32>) {
  %r = arange {end = 1048576, start = 0} : tile<1048576xi32>
  %o = splat %out : tile<1048576xptr<i32>>
  %p = ptr_add %o, %r : tile<1048576xptr<i32>>
  store %p, %r
}
)";
  auto m = ir::parse(text);
  const target::Target t = *target::profile("vulkan-lavapipe");
  try {
    passes::compile(*m, t, {.num_warps = 4}, passes::Stage::Simt, Dumps{});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Unsupported);
    CHECK_MESSAGE(
        std::string(e.what()).find("'arange' makes a tile of tile<1048576xi32>, at least "
                                   "8192 elements per thread with num_warps = 4, over the "
                                   "limit of 4096 per thread") != std::string::npos,
        e.what());
  }
  // Over twice the warps it is at the limit, and lowers.
  CHECK(passes::compile(*m, t, {.num_warps = 8}, passes::Stage::Simt, Dumps{}).simt);
}

}  // namespace
}  // namespace tessera::test
