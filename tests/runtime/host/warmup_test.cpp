/// \file The GPU warm-up's stopping rule (runtime/warmup.h) on window sequences: a steady GPU, the
/// H100's clock steps under NVIDIA's Vulkan driver (device run 3 of the twenty-eighth session,
/// where the rule of two successive windows stopped on the 600 MHz step), the limits.
#include "runtime/warmup.h"

#include <doctest/doctest.h>

#include <vector>

namespace tessera::rt {
namespace {

/// The step at which a warm-up of `per_run_us` (one window of 0.1 s each) first may stop, or -1.
int stop_after(const std::vector<double>& per_run_us, const WarmRule& rule = {}) {
  std::vector<WarmWindow> windows;
  for (size_t i = 0; i < per_run_us.size(); ++i) {
    windows.push_back({0.1 * double(i + 1), per_run_us[i] * 1e-6});
    if (warm_enough(windows, rule)) return static_cast<int>(i + 1);
  }
  return -1;
}

TEST_CASE("warm-up: a steady GPU stops at the minimum time, after three windows that agree") {
  CHECK(stop_after({160, 160, 160, 160}) == 3);       // 0.3 s
  CHECK(stop_after({160, 161.5, 160.5, 160}) == 3);   // within 2 %
  CHECK(stop_after({200, 160, 160, 160, 160}) == 4);  // the first window was slow
  CHECK(stop_after({160, 160}) == -1);                // 0.2 s: too soon
}

TEST_CASE("warm-up: the H100's clock steps under Vulkan do not stop it") {
  // Run 3: 345 MHz (476.8, 454.1 us a run), 600 MHz (318.2, 317.6), then 1980 MHz (~160). The
  // rule of two successive windows stopped after the fourth window and timed at 600 MHz.
  const std::vector<double> trace = {476.8, 454.1, 318.2, 317.6, 160.4, 159.9, 160.2, 160.1};
  CHECK(stop_after(trace) == 7);
  // A plateau of three windows is taken for steady: the span (0.25 s) is what a step must exceed.
  CHECK(stop_after({476.8, 318.2, 317.6, 318.0, 160.4}) == 4);
}

TEST_CASE("warm-up: windows longer than the span still stop on the last three") {
  std::vector<WarmWindow> windows = {{0.4, 1e-3}, {0.8, 1e-3}};
  CHECK_FALSE(warm_enough(windows));
  windows.push_back({1.2, 1.01e-3});
  CHECK(warm_enough(windows));
  windows.push_back({1.6, 1.2e-3});  // the last one differs
  CHECK_FALSE(warm_enough(windows));
}

TEST_CASE("warm-up: the maximum time ends an unsteady warm-up, and nothing ends an empty one") {
  std::vector<WarmWindow> windows;
  CHECK_FALSE(warm_enough(windows));
  for (int i = 1; i <= 29; ++i) windows.push_back({0.1 * i, (i % 2 ? 100 : 120) * 1e-6});
  CHECK_FALSE(warm_enough(windows));
  windows.push_back({3.0, 100e-6});
  CHECK(warm_enough(windows));
}

}  // namespace
}  // namespace tessera::rt
