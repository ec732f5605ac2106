// \file Which descriptor loads TMA can copy (core/lower/tma.h): the tensor map planned from the
// descriptor's operands and the specialization facts, and each limit that sends a load back to
// the masked-load expansion, with its reason.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "core/ir/parser.h"
#include "core/ir/printer.h"
#include "core/ir/tma.h"
#include "core/lower/lowerer.h"
#include "core/lower/mma_operand.h"
#include "core/lower/plan.h"
#include "core/lower/tma.h"
#include "core/passes/pipeline.h"
#include "core/support/dump.h"
#include "core/target/target.h"
#include "core/interp/simt.h"
#include "core/support/float16.h"
#include "tests/core/interp/helpers.h"

namespace ir = tessera::ir;
namespace lower = tessera::lower;
namespace target = tessera::target;

namespace {

/// A kernel with one desc_load of `block` (e.g. "128x64xf16") from %a with row stride %s (an i32
/// parameter with `stride_facts`) over [%m, %k]; `a_facts` are the base's specialization facts.
std::string kernel(const std::string& a_facts, const std::string& stride_facts,
                   const std::string& block, const std::string& elem = "f16") {
  return "func @k(%a: ptr<" + elem + ">" + a_facts + ", %m: i32, %k: i32, %s: i32" + stride_facts +
         ", %o: i32) {\n" + "  %one = constant {value = 1} : i32\n" +
         "  %0 = desc_load %a, %m, %k, %s, %one, %o, %o : tile<" + block + ">\n}\n";
}

/// plan_tma on the kernel's desc_load; the reason in `why` when there is no plan.
std::optional<ir::TensorMapParam> plan(const std::string& text, std::string* why,
                                       const char* profile = "cuda-sm_90a") {
  static std::unique_ptr<ir::Module> m;  // kept alive for the returned plan's reads
  m = ir::parse(text);
  const ir::Function& fn = m->kernel();
  const ir::Op* load = fn.body->ops.back();
  return lower::plan_tma(fn, *load, *target::profile(profile), why);
}

constexpr const char* kAligned = " {divisibility = 16}";

}  // namespace

TEST_CASE("tma: sm_90 and sm_90a have TMA, sm_80 and the Vulkan profiles do not") {
  CHECK(target::profile("cuda-sm_90a")->has(target::Cap::Tma));
  CHECK(target::profile("cuda-sm_90")->has(target::Cap::Tma));
  CHECK_FALSE(target::profile("cuda-sm_80")->has(target::Cap::Tma));
  CHECK_FALSE(target::profile("vulkan-lavapipe")->has(target::Cap::Tma));
  CHECK_FALSE(target::profile("vulkan-nvidia")->has(target::Cap::Tma));
  CHECK_FALSE(target::profile("host")->has(target::Cap::Tma));
}

TEST_CASE("tma: 64 f16 per row: a tensor map with the 128-byte swizzle that wgmma reads") {
  std::string why;
  auto map = plan(kernel(kAligned, kAligned, "128x64xf16"), &why);
  REQUIRE_MESSAGE(map, why);
  CHECK(map->base_param == 0);
  CHECK(map->dims == std::vector<ir::TensorMapValue>{{1, 0}, {2, 0}});
  CHECK(map->strides == std::vector<ir::TensorMapValue>{{3, 0}, {-1, 1}});
  CHECK(map->box == std::vector<int64_t>{128, 64});
  CHECK(map->swizzle == 128);
  CHECK(map->box_bytes() == 128 * 64 * 2);
  CHECK(map->str() == "tensor_map(%0: f16 [%1 x %2] strides [%3, 1] box [128 x 64] swizzle 128)");
}

TEST_CASE("tma: the swizzle follows the row's bytes (32 and 64), none for 16") {
  std::string why;
  CHECK(plan(kernel(kAligned, kAligned, "64x32xf16"), &why)->swizzle == 64);
  CHECK(plan(kernel(kAligned, kAligned, "64x16xf16"), &why)->swizzle == 32);
  CHECK(plan(kernel(kAligned, kAligned, "64x8xf16"), &why)->swizzle == 0);
  CHECK(plan(kernel(kAligned, kAligned, "64x32xf32", "f32"), &why)->swizzle == 128);
}

TEST_CASE("tma: a row over 128 bytes is copied as 128-byte boxes, a 1-d block unswizzled") {
  std::string why;
  auto map = plan(kernel(kAligned, kAligned, "64x256xf16"), &why);
  REQUIRE_MESSAGE(map, why);
  CHECK(map->box == std::vector<int64_t>{64, 64});
  CHECK(map->copies == 4);
  CHECK(map->swizzle == 128);
  CHECK(map->str() ==
        "tensor_map(%0: f16 [%1 x %2] strides [%3, 1] box [64 x 64] swizzle 128) x 4 copies");
  const std::string one =
      "func @k(%a: ptr<f32> {divisibility = 16}, %n: i32, %o: i32) {\n"
      "  %one = constant {value = 1} : i32\n"
      "  %0 = desc_load %a, %n, %one, %o : tile<8xf32>\n}\n";
  map = plan(one, &why);
  REQUIRE_MESSAGE(map, why);
  CHECK(map->swizzle == 0);
}

TEST_CASE("tma: what TMA cannot copy falls back, with the reason") {
  std::string why;
  CHECK_FALSE(plan(kernel("", kAligned, "128x64xf16"), &why));
  CHECK(why == "the base is not a kernel parameter known to be 16-byte aligned");
  CHECK_FALSE(plan(kernel(kAligned, "", "128x64xf16"), &why));
  CHECK(why == "strides[0] is not known to be a multiple of 16 bytes");
  CHECK_FALSE(plan(kernel(kAligned, kAligned, "64x96xf16"), &why));
  CHECK(why ==
        "the innermost block is 192 bytes, over 128 and not a multiple of 128 (swizzled "
        "copies)");
  CHECK_FALSE(plan(kernel(kAligned, kAligned, "64x4xf16"), &why));
  CHECK(why == "the innermost block is 8 bytes, not a multiple of 16");
  CHECK_FALSE(plan(kernel(kAligned, kAligned, "512x64xf16"), &why));
  CHECK(why == "block_shape[0] is over TMA's 256 elements");
  CHECK_FALSE(plan(kernel(kAligned, kAligned, "128x64xf16"), &why, "cuda-sm_80"));
  CHECK(why == "the target has no TMA");
}

TEST_CASE("tma: a stride of 8 f16 (16 bytes) is enough, a computed shape is not") {
  std::string why;
  // divisibility 8 of an f16 stride: 16 bytes.
  CHECK(plan(kernel(kAligned, " {divisibility = 8}", "128x64xf16"), &why));
  const std::string computed =
      "func @k(%a: ptr<f16> {divisibility = 16}, %m: i32, %s: i32 {divisibility = 16}) {\n"
      "  %one = constant {value = 1} : i32\n"
      "  %m2 = mul %m, %m : i32\n"
      "  %0 = desc_load %a, %m2, %s, %s, %one, %one, %one : tile<64x64xf16>\n}\n";
  CHECK_FALSE(plan(computed, &why));
  CHECK(why == "shape[0] is neither a kernel parameter nor a constant");
}

TEST_CASE("tma: tensor maps follow the user's parameters, 128 bytes 64-byte aligned") {
  using ir::Type;
  const std::vector<Type> params = {Type::pointer(ir::DType::f16), Type::scalar(ir::DType::i32)};
  const ir::ParamLayout none = ir::param_layout(params, 0);
  CHECK(none.size == ir::param_layout(params).size);
  const ir::ParamLayout two = ir::param_layout(params, 2);
  REQUIRE(two.slots.size() == 4);
  CHECK(two.slots[2].offset == 64);
  CHECK(two.slots[2].size == 128);
  CHECK(two.slots[3].offset == 192);
  CHECK(two.size == 320);
}

TEST_CASE("tma: the swizzle TMA writes is the one wgmma's operand tiles are read in") {
  // A tile of rows x cols stored as wgmma reads it (column blocks of `swizzle` bytes) equals
  // one TMA box of rows x (swizzle / elem) per column block, block b at b * rows * swizzle bytes.
  for (int elem : {1, 2, 4})
    for (int swizzle : {32, 64, 128})
      for (int64_t rows : {8, 64, 128}) {
        const int64_t block = swizzle / elem, cols = 2 * block;
        const lower::detail::SmemTile t =
            lower::detail::SmemTile::wgmma(0, 0, rows, cols, elem, swizzle);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; c += 16 / elem) {
            const int64_t box = c / block * rows * swizzle;
            const int64_t tma = box + ir::tma_swizzle((r * block + c % block) * elem, swizzle);
            CAPTURE(elem);
            CAPTURE(swizzle);
            CAPTURE(r);
            CAPTURE(c);
            REQUIRE(t.offset(r, c) * elem == tma);
          }
      }
}

TEST_CASE("tma: the report names each descriptor load's tensor map or its reason, and the dots") {
  const std::string text =
      "func @mm(%a: ptr<f16> {divisibility = 16}, %b: ptr<f16> {divisibility = 16}, %M: i32,\n"
      "         %N: i32 {divisibility = 16}, %K: i32) {\n"
      "  %one = constant {value = 1} : i32\n"
      "  %zero = constant {value = 0} : i32\n"
      "  %st = constant {value = 64} : i32\n"
      "  %acc0 = constant {value = 0.0} : tile<64x64xf32>\n"
      "  %r = for %zero, %K, %st, %acc0 ({\n"
      "  ^(%k: i32, %acc: tile<64x64xf32>):\n"
      "    %x = desc_load %a, %M, %K, %K, %one, %zero, %k : tile<64x64xf16>\n"
      "    %y = desc_load %b, %K, %N, %N, %one, %k, %zero : tile<64x64xf16>\n"
      "    %d = dot %x, %y, %acc : tile<64x64xf32>\n"
      "    yield %d\n"
      "  }) : tile<64x64xf32>\n"
      "}\n";
  auto m = ir::parse(text);
  const std::string report = lower::tma_report(m->kernel(), *target::profile("cuda-sm_90a"));
  CHECK(report.find(": masked loads (strides[0] is not known to be a multiple of 16 bytes) "
                    "feeding a loop's dot\n") != std::string::npos);
  CHECK(report.find(": tensor_map(%1: f16 [%4 x %3] strides [%3, 1] box [64 x 64] swizzle 128) "
                    "feeding a loop's dot\n") != std::string::npos);
  CHECK(lower::tma_report(m->kernel(), *target::profile("cuda-sm_80")).empty());
}

namespace {

/// The K loop of a matmul reading A [M x K] and B [K x N] by descriptors, both strides known
/// to be multiples of 16 bytes (what TMA can copy into the wgmma ring), storing C by descriptor.
constexpr const char* kDescMatmul =
    "func @mm(%a: ptr<f16> {divisibility = 16}, %b: ptr<f16> {divisibility = 16}, %M: i32,\n"
    "         %N: i32 {divisibility = 16}, %K: i32 {divisibility = 16},\n"
    "         %c: ptr<f32> {divisibility = 16}) {\n"
    "  %one = constant {value = 1} : i32\n"
    "  %zero = constant {value = 0} : i32\n"
    "  %st = constant {value = 64} : i32\n"
    "  %acc0 = constant {value = 0.0} : tile<128x128xf32>\n"
    "  %r = for %zero, %K, %st, %acc0 ({\n"
    "  ^(%k: i32, %acc: tile<128x128xf32>):\n"
    "    %x = desc_load %a, %M, %K, %K, %one, %zero, %k : tile<128x64xf16>\n"
    "    %y = desc_load %b, %K, %N, %N, %one, %k, %zero : tile<64x128xf16>\n"
    "    %d = dot %x, %y, %acc : tile<128x128xf32>\n"
    "    yield %d\n"
    "  }) : tile<128x128xf32>\n"
    "  desc_store %c, %M, %N, %N, %one, %zero, %zero, %r\n"
    "}\n";

/// The plan of kDescMatmul's loop on `t` with its desc_loads kept (as the pipeline keeps them
/// on a target with TMA).
std::string desc_loop_plan(const target::Target& t) {
  auto m = ir::parse(kDescMatmul);
  const tessera::CompileOptions options{.num_warps = 4, .num_stages = 3};
  lower::LoweringPlan plan(m->kernel(), t, options);
  std::string out;
  ir::walk(plan.function().body, [&](const ir::Op* op) {
    if (op->kind == ir::OpKind::For) out = plan.str();
  });
  return out;
}

/// Runs kDescMatmul compiled to SIMT (`c`) on the SIMT interpreter, one program, for A [M x K]
/// and B [K x N] of small multiples of 1/2 (exact in f32), C poisoned with -1; the number of
/// elements of C that differ from the exact product.
int wrong_products(const tessera::passes::Compiled& c, int M, int N, int K) {
  std::vector<tessera::half> a(static_cast<size_t>(M * K)), b(static_cast<size_t>(K * N));
  for (size_t i = 0; i < a.size(); ++i) a[i] = tessera::half(static_cast<float>(i % 7) - 3.0f);
  for (size_t i = 0; i < b.size(); ++i) b[i] = tessera::half(static_cast<float>(i % 5) * 0.5f);
  std::vector<float> out(static_cast<size_t>(M * N), -1.0f);
  interp_test::HostMemory mem;
  const ir::Function& fn = c.simt->kernel();
  tessera::interp::run_simt(fn,
                            interp_test::pack(fn, mem.add(a), mem.add(b), int32_t{M}, int32_t{N},
                                              int32_t{K}, mem.add(out)),
                            tessera::interp::Grid{}, mem);
  int wrong = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k)
        want += static_cast<double>(a[static_cast<size_t>(i * K + k)]) *
                static_cast<double>(b[static_cast<size_t>(k * N + j)]);
      wrong += out[static_cast<size_t>(i * N + j)] != static_cast<float>(want);
    }
  return wrong;
}

}  // namespace

TEST_CASE("tma: the wgmma ring plans the descriptor loads as TMA copies on sm_90a only") {
  const std::string p = desc_loop_plan(*target::profile("cuda-sm_90a"));
  CAPTURE(p);
  CHECK(p.find("cp_async_ring, 3 stages") != std::string::npos);
  CHECK(p.find("a %7: by TMA, tensor_map(%0: f16 [%2 x %4] strides [%4, 1] box [128 x 64] "
               "swizzle 128), ") != std::string::npos);
  // B's 128 f16 rows: two 128-byte boxes per row, wgmma's column blocks.
  CHECK(p.find("b %8: by TMA, tensor_map(%1: f16 [%4 x %3] strides [%3, 1] box [64 x 64] "
               "swizzle 128) x 2 copies, ") != std::string::npos);
  // Without TMA the planner does not take a descriptor load (the pipeline expands them first).
  const std::string q = desc_loop_plan(*target::profile("cuda-sm_80"));
  CAPTURE(q);
  CHECK(q.find("by TMA") == std::string::npos);
}

TEST_CASE("tma: the ring's stages fit in shared memory with their mbarriers") {
  // The least shared memory for which the ring plans 3 stages (found by bisection; the plan is
  // monotonic in the limit): the kernel lowered there fits it, mbarriers included, with that
  // plan. (When the planner counted the tiles alone, the kernel needed 24 bytes more: the
  // lowering refused it, and the plan made again with room beside the rings left the descriptor
  // loads to reach the lowering unexpanded, an internal error; now such a plan expands them.)
  target::Target t = *target::profile("cuda-sm_90a");
  auto three = [&](int64_t limit) {
    t.max_shared_bytes = limit;
    return desc_loop_plan(t).find("cp_async_ring, 3 stages") != std::string::npos;
  };
  int64_t lo = 3 * 32768 - 1, hi = 232448;  // three stages of two 16 KiB tiles at least
  REQUIRE(!three(lo));
  REQUIRE(three(hi));
  while (hi - lo > 1) (three((lo + hi) / 2) ? hi : lo) = (lo + hi) / 2;
  t.max_shared_bytes = hi;
  auto m = ir::parse(kDescMatmul);
  const tessera::CompileOptions options{.num_warps = 4, .num_stages = 3};
  tessera::passes::Compiled c;
  CHECK_NOTHROW(c = tessera::passes::compile(*m, t, options, tessera::passes::Stage::Simt));
  REQUIRE(c.plan);
  CHECK(c.plan->str().find("cp_async_ring, 3 stages") != std::string::npos);
  REQUIRE(c.simt);
  CHECK(ir::print(*c.simt).find("mbarrier_init ") != std::string::npos);
}

TEST_CASE("tma: on sm_90a the ring copies both loads by TMA, on sm_80 they are expanded") {
  auto m = ir::parse(kDescMatmul);
  std::ostringstream dump;
  tessera::Dumps dumps = tessera::Dumps::parse("layouts", "test");
  dumps.redirect(dump);
  const tessera::CompileOptions options{.num_warps = 4, .num_stages = 3};
  tessera::passes::Compiled c = tessera::passes::compile(
      *m, *target::profile("cuda-sm_90a"), options, tessera::passes::Stage::Simt, dumps);
  const std::string d = dump.str();
  CAPTURE(d);
  CHECK(d.find("// re-planned") == std::string::npos);
  REQUIRE(c.plan);
  CHECK(c.plan->str().find("by TMA") != std::string::npos);
  REQUIRE(c.simt);
  const std::string simt = ir::print(*c.simt);
  // Two maps; A one box per stage, B two (its 128-column rows); three mbarriers, each
  // initialized and invalidated once, armed where copies are issued, waited on every iteration.
  CHECK(simt.find("tensor_map_1 = ") != std::string::npos);
  CHECK(simt.find("tensor_map_2 = ") == std::string::npos);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = simt.find(what); at != std::string::npos; at = simt.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count("mbarrier_init ") == 3);
  CHECK(count("mbarrier_inval ") == 3);
  CHECK(count("mbarrier_wait ") == 1);
  CHECK(count("mbarrier_arrive_tx ") == 3);  // the prologue's two stages, the loop's one
  CHECK(count("tma_load ") == 9);            // 3 boxes where copies are issued
  CHECK(count("cp_async ") == 0);
  // Without TMA every descriptor load is expanded before the one plan.
  std::ostringstream dump80;
  dumps.redirect(dump80);
  auto m80 = ir::parse(kDescMatmul);
  tessera::passes::Compiled c80 = tessera::passes::compile(
      *m80, *target::profile("cuda-sm_80"), options, tessera::passes::Stage::Simt, dumps);
  CHECK(dump80.str().find("by TMA") == std::string::npos);
  CHECK(ir::print(*c80.simt).find("tma_load") == std::string::npos);
}

TEST_CASE("tma: the TMA ring's kernel computes the matmul on the SIMT interpreter") {
  // K = 64: one iteration (the prologue's second copy not issued); 192: as many as stages; 320:
  // each mbarrier used twice (parities 0 then 1). M = 100: rows past M read as zero by TMA.
  for (const auto& [rows, depth] : {std::pair{128, 64}, {128, 192}, {100, 320}}) {
    const int M = rows, N = 128, K = depth;
    CAPTURE(M);
    CAPTURE(K);
    auto m = ir::parse(kDescMatmul);
    const tessera::CompileOptions options{.num_warps = 4, .num_stages = 3};
    tessera::passes::Compiled c = tessera::passes::compile(*m, *target::profile("cuda-sm_90a"),
                                                           options, tessera::passes::Stage::Simt);
    REQUIRE(c.simt);
    REQUIRE(ir::print(*c.simt).find("tma_load") != std::string::npos);
    CHECK(wrong_products(c, M, N, K) == 0);
  }
}

TEST_CASE("tma: a desc_store TMA can write, with the reasons it stays masked stores") {
  auto store = [](const std::string& block, const std::string& facts = " {divisibility = 16}",
                  const std::string& inner = " {divisibility = 8}") {
    return "func @k(%a: ptr<f16>" + facts + ", %m: i32, %k: i32" + inner +
           ", %s: i32 {divisibility = 16}, " + "%o: i32) {\n  %one = constant {value = 1} : i32\n" +
           "  %v = constant {value = 1.0} : tile<" + block + "xf16>\n" +
           "  desc_store %a, %m, %k, %s, %one, %o, %o, %v\n}\n";
  };
  auto plan_store = [](const std::string& text, std::string* why) {
    static std::unique_ptr<ir::Module> m;
    m = ir::parse(text);
    return lower::plan_tma_store(m->kernel(), *m->kernel().body->ops.back(),
                                 *target::profile("cuda-sm_90a"), why);
  };
  std::string why;
  auto map = plan_store(store("64x128"), &why);
  REQUIRE_MESSAGE(map, why);
  CHECK(map->str() ==
        "tensor_map(%0: f16 [%1 x %2] strides [%3, 1] box [64 x 64] swizzle 128) x 2 copies");
  CHECK_FALSE(plan_store(store("4x128"), &why));
  CHECK(why == "a block row over 128 bytes needs a multiple of 8 rows, not 4");
  CHECK(plan_store(store("4x64"), &why));  // one box per row: any number of rows
  CHECK_FALSE(plan_store(store("64x64", ""), &why));
  CHECK(why == "the base is not a kernel parameter known to be 16-byte aligned");
  const std::string line =
      "func @k(%a: ptr<f32> {divisibility = 16}, %n: i32, %o: i32) {\n"
      "  %one = constant {value = 1} : i32\n"
      "  %v = constant {value = 1.0} : tile<64xf32>\n"
      "  desc_store %a, %n, %one, %o, %v\n}\n";
  CHECK_FALSE(plan_store(line, &why));
  CHECK(why == "TMA stores are planned for rank-2 blocks, not rank 1");
  const std::string bits =
      "func @k(%a: ptr<i1> {divisibility = 16}, %n: i32 {divisibility = 16}, %o: i32) {\n"
      "  %one = constant {value = 1} : i32\n"
      "  %v = constant {value = 1} : tile<16x16xi1>\n"
      "  desc_store %a, %n, %n, %n, %one, %o, %o, %v\n}\n";
  CHECK_FALSE(plan_store(bits, &why));
  CHECK(why == "i1 blocks are stored as masked stores (shared memory holds no i1)");
  // TMA stores whole 16-byte chunks: an innermost extent not known to be a multiple of 16 bytes
  // (8 f16) would be overwritten up to the next chunk.
  CHECK_FALSE(plan_store(store("64x64", " {divisibility = 16}", " {divisibility = 4}"), &why));
  CHECK(why ==
        "shape[1] is not known to be a multiple of 16 bytes (TMA stores whole 16-byte chunks)");
  CHECK_FALSE(plan_store(store("64x64", " {divisibility = 16}", ""), &why));
}

namespace {

/// kDescMatmul compiled to SIMT with `options` on `profile`, and its SIMT text.
std::pair<tessera::passes::Compiled, std::string> desc_matmul_simt(
    const tessera::CompileOptions& options, const char* profile = "cuda-sm_90a") {
  static std::unique_ptr<ir::Module> m;  // the plan reads it
  m = ir::parse(kDescMatmul);
  tessera::passes::Compiled c = tessera::passes::compile(*m, *target::profile(profile), options,
                                                         tessera::passes::Stage::Simt);
  REQUIRE(c.simt);
  std::string text = ir::print(*c.simt);
  return {std::move(c), std::move(text)};
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("tma: with tma_store the matmul's desc_store is stored by TMA, on sm_90a only") {
  const tessera::CompileOptions on{.num_warps = 4, .num_stages = 3, .tma_store = true};
  auto [c, simt] = desc_matmul_simt(on);
  CAPTURE(simt);
  // C's 128 f32 per row: four 128-byte boxes, one bulk group, waited for before the barrier.
  CHECK(c.plan->str().find(": tma_store tensor_map(%5: f32 [%2 x %3] strides [%3, 1] box "
                           "[128 x 32] swizzle 128) x 4 copies") != std::string::npos);
  CHECK(occurrences(simt, "tma_store %") == 4);
  CHECK(occurrences(simt, "tma_store_commit") == 1);
  CHECK(occurrences(simt, "tma_store_wait {pending = 0}") == 1);
  CHECK(occurrences(simt, "global_store") == 0);
  // Off (the default), or without TMA: masked stores.
  const tessera::CompileOptions off{.num_warps = 4, .num_stages = 3};
  CHECK(occurrences(desc_matmul_simt(off).second, "tma_store") == 0);
  CHECK(occurrences(desc_matmul_simt(on, "cuda-sm_80").second, "tma_store") == 0);
}

TEST_CASE("tma: the TMA store epilogue's kernel computes the matmul on the SIMT interpreter") {
  // M = 100 and N = 112: the rows and columns past them are not written (they would land in
  // the next rows of C, or past its end: the interpreter's bounds checks).
  for (const auto& [rows, cols] : {std::pair{128, 128}, {100, 112}}) {
    const int M = rows, N = cols, K = 192;
    CAPTURE(M);
    CAPTURE(N);
    const tessera::CompileOptions on{.num_warps = 4, .num_stages = 3, .tma_store = true};
    auto [c, simt] = desc_matmul_simt(on);
    REQUIRE(simt.find("tma_store %") != std::string::npos);
    CHECK(wrong_products(c, M, N, K) == 0);
  }
}

namespace {

/// kDescMatmul with its loop asking for warp specialization (tl::RangeOptions::warp_specialize).
std::string ws_matmul() {
  std::string text = kDescMatmul;
  const std::string loop = "%r = for %zero, %K, %st, %acc0 ({";
  text.replace(text.find(loop), loop.size(),
               "%r = for %zero, %K, %st, %acc0 {warp_specialize = 1} ({");
  return text;
}

}  // namespace

TEST_CASE("tma: a warp-specialized loop: a producer warpgroup copies, the kernel's warps compute") {
  for (const int warps : {4, 8}) {
    CAPTURE(warps);
    auto m = ir::parse(ws_matmul());
    const tessera::CompileOptions options{.num_warps = warps, .num_stages = 3};
    tessera::passes::Compiled c = tessera::passes::compile(*m, *target::profile("cuda-sm_90a"),
                                                           options, tessera::passes::Stage::Simt);
    REQUIRE(c.plan);
    const std::string p = c.plan->str();
    CAPTURE(p);
    CHECK(p.find("warp_specialized, 3 stages") != std::string::npos);
    REQUIRE(c.simt);
    const std::string simt = ir::print(*c.simt);
    const int consumers = 32 * warps;
    CHECK(simt.find("threads = " + std::to_string(consumers + 128)) != std::string::npos);
    CHECK(simt.find("warp_specialize {roles = [" + std::to_string(consumers) + ", 128]}") !=
          std::string::npos);
    // Every thread starts with an equal share of the 64 Ki registers (ptxas allocates exactly
    // maxnreg); the consumers take what the producer frees (the SIMT runs below check the pool).
    CHECK(simt.find("maxnreg = " + std::to_string(warps == 4 ? 248 : 168)) != std::string::npos);
    CHECK(simt.find("setmaxnreg {inc = 0, registers = 40}") != std::string::npos);
    CHECK(simt.find("setmaxnreg {inc = 1, registers = " + std::to_string(warps == 4 ? 256 : 232) +
                    "}") != std::string::npos);
    // The consumers' barriers are theirs alone.
    CHECK(simt.find("barrier {id = 1, threads = " + std::to_string(consumers) + "}") !=
          std::string::npos);
    // K = 64: one iteration; 192: each stage once; 320: the stages reused (empty phases).
    for (const auto& [rows, depth] : {std::pair{128, 64}, {128, 192}, {100, 320}}) {
      CAPTURE(rows);
      CAPTURE(depth);
      CHECK(wrong_products(c, rows, 128, depth) == 0);
    }
  }
}

TEST_CASE(
    "tma: the register split of a warp-specialized kernel gives the consumers what the producer frees") {
  using tessera::lower::detail::register_split;
  auto check = [](int consumers, int maxnreg, int64_t launch, int64_t raise) {
    CAPTURE(consumers);
    CAPTURE(maxnreg);
    const tessera::lower::detail::RegisterSplit s = register_split(consumers, 128, maxnreg);
    CHECK(s.launch == launch);
    CHECK(s.producer == 40);
    CHECK(s.consumers == raise);
    // What the consumers take is at most what the producer gives up.
    CHECK(consumers * (s.consumers - s.launch) <= 128 * (s.launch - s.producer));
  };
  check(128, 0, 248, 256);  // 256 threads: 256 x 248 fits the 64 Ki; 256 is setmaxnreg's most
  check(256, 0, 168, 232);
  check(384, 0, 128, 152);
  check(256, 128, 128, 168);  // the launch option's maxnreg, when smaller
  check(256, 130, 128, 168);  // ... in steps of 8
  check(256, 24, 40, 40);     // ... but not below the producer's 40
}

TEST_CASE("tma: warp specialization asked where it cannot be: the ring as without it") {
  // sm_80: no TMA (the loads are expanded), no wgmma.
  auto m80 = ir::parse(ws_matmul());
  const tessera::CompileOptions options{.num_warps = 4, .num_stages = 3};
  tessera::passes::Compiled c80 = tessera::passes::compile(*m80, *target::profile("cuda-sm_80"),
                                                           options, tessera::passes::Stage::Simt);
  REQUIRE(c80.simt);
  CHECK(ir::print(*c80.simt).find("warp_specialize") == std::string::npos);
  // The loop's bound read from memory: the producer could not compute it by itself.
  std::string text = ws_matmul();
  const std::string bound = "%r = for %zero, %K,";
  text.replace(text.find(bound), bound.size(), "%r = for %zero, %Kl,");
  const std::string acc = "  %acc0 = constant";
  text.replace(text.find(acc), 0, "  %Kl = load %kp : i32\n");
  const std::string last = "%c: ptr<f32> {divisibility = 16})";
  text.replace(text.find(last), last.size(), "%c: ptr<f32> {divisibility = 16}, %kp: ptr<i32>)");
  auto m = ir::parse(text);
  tessera::passes::Compiled c = tessera::passes::compile(*m, *target::profile("cuda-sm_90a"),
                                                         options, tessera::passes::Stage::Simt);
  REQUIRE(c.plan);
  CHECK(c.plan->str().find("cp_async_ring, 3 stages") != std::string::npos);
  REQUIRE(c.simt);
  CHECK(ir::print(*c.simt).find("warp_specialize") == std::string::npos);
}
