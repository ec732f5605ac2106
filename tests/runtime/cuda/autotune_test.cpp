/// \file Autotuning on cuda:0 (tests/runtime/autotune_cases.h); a SKIP without a CUDA device.
#include <doctest/doctest.h>

#include "../autotune_cases.h"
#include "helpers.h"

namespace ac = autotune_cases;
using cuda_test::Device;
using cuda_test::device_or_skip;

TEST_CASE("cuda autotune: the choice is a configuration, the output holds one launch's result") {
  CUDA_DEVICE_OR_SKIP(dev);
  ac::chosen_and_uncorrupted(dev);
  ac::default_outputs_and_aliasing(dev);
  ac::default_run_counts(dev);
}

TEST_CASE("cuda autotune: the disk entry is reused, a damaged one searched again") {
  CUDA_DEVICE_OR_SKIP(dev);
  ac::disk_entry_reused_and_damage_searched(dev);
}

TEST_CASE("cuda autotune: pruned and failing configurations, and all failing") {
  CUDA_DEVICE_OR_SKIP(dev);
  ac::pruned_and_failing_discarded(dev);
  ac::all_failing_lists_reasons(dev);
}
