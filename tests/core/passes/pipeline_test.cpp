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
  CHECK(names ==
        "verify descriptors optimize rem-version contract bounds verify plan to-simt "
        "simt-optimize verify ");
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
