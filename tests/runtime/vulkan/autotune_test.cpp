/// \file Autotuning on vulkan:0 (tests/runtime/autotune_cases.h): lavapipe in CI, so the timed
/// runs are CPU runs; no check depends on which configuration wins.
#include <doctest/doctest.h>

#include "../autotune_cases.h"
#include "vk_test.h"

namespace ac = autotune_cases;

TEST_CASE("vulkan autotune: the choice is a configuration, the output holds one launch's result") {
  VKTEST_DEVICE(dev);
  ac::chosen_and_uncorrupted(dev);
  ac::default_outputs_and_aliasing(dev);
  ac::default_run_counts(dev);
}

TEST_CASE("vulkan autotune: the disk entry is reused, a damaged one searched again") {
  VKTEST_DEVICE(dev);
  ac::disk_entry_reused_and_damage_searched(dev);
}

TEST_CASE("vulkan autotune: pruned and failing configurations, and all failing") {
  VKTEST_DEVICE(dev);
  ac::pruned_and_failing_discarded(dev);
  ac::all_failing_lists_reasons(dev);
}

TEST_CASE("vulkan autotune: more threads than the device allows is discarded as unsupported") {
  VKTEST_DEVICE(dev);
  ac::TempCache cache;
  // 32 warps are 1024 threads; lavapipe and most Vulkan drivers allow fewer per workgroup.
  const auto tuned = tessera::autotune(
      ac::accumulate(), ac::options({{{{"BLOCK", 1024}}, 32, 1}, {{{"BLOCK", 64}}, 2, 1}}));
  ac::Inputs in(dev, 100);
  tuned(in.dx, in.dy, int32_t{100});
  CHECK(in.dy.download() == in.expected(1, 100));
  const tessera::AutotuneReport r = tuned.last_report();
  REQUIRE(r.candidates.size() == 2);
  if (r.candidates[0].discarded.empty()) {
    MESSAGE("SKIP: ", dev.info().description, " runs 1024 threads per workgroup");
  } else {
    CHECK(r.candidates[0].discarded.find("threads") != std::string::npos);
    CHECK(r.chosen == 1);
  }
}
