/// \file When a GPU warm-up may stop (`tessera bench`'s rows, the autotuner's search). A GPU
/// lowers its clocks while the host works (a case's reference, an application's own pause) and
/// raises them in steps once work resumes (H200 under NVIDIA's Vulkan driver: 600
/// -> 1050 -> 1590 -> 1980 MHz, steps of about 200 ms; an H100 under it, twenty-eighth session:
/// 345 MHz for the first 0.25 s of work, 600 for 0.2 s, then 1980). Two successive 100 ms
/// windows can both fall on one step: a warm-up that stopped there timed a layer norm at 600 MHz
/// (65 us for 52). So the rule compares windows over a span longer than a step.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <span>
#include <vector>

namespace tessera::rt {

/// One warm-up window: when it ended (seconds since the warm-up began) and its time per run.
struct WarmWindow {
  double end_s = 0, per_run_s = 0;
};

struct WarmRule {
  double window_s = 0.1;        ///< the length a window aims at
  double steady_span_s = 0.25;  ///< every window that ended within this span of the last ...
  int steady_windows = 3;       ///< ... and at least this many last windows ...
  double tolerance = 0.02;      ///< ... are within this fraction of the last one's time per run
  double min_s = 0.3;           ///< never stop before this
  double max_s = 3.0;           ///< always stop after this, steady or not
};

/// True when a warm-up whose windows so far are `windows` (in order, at least one) may stop.
inline bool warm_enough(std::span<const WarmWindow> windows, const WarmRule& rule = {}) {
  if (windows.empty()) return false;
  const WarmWindow& last = windows.back();
  if (last.end_s >= rule.max_s) return true;
  if (last.end_s < rule.min_s || static_cast<int>(windows.size()) < rule.steady_windows)
    return false;
  for (size_t i = windows.size(); i-- > 0;) {
    const size_t back = windows.size() - 1 - i;  // 0 for the last window
    if (back >= static_cast<size_t>(rule.steady_windows) &&
        last.end_s - windows[i].end_s > rule.steady_span_s)
      break;
    if (std::fabs(windows[i].per_run_s - last.per_run_s) > rule.tolerance * last.per_run_s)
      return false;
  }
  return true;
}

/// The warm-up itself: `run_batch(n)` does n runs, waits for them and returns the seconds a run
/// took; it is called with windows of about rule.window_s (the first of one run where
/// `per_run_s` is not yet known, i.e. 0) until warm_enough. `on_window(per_run_s, n)` sees each
/// window. Returns the last window's seconds per run.
template <class RunBatch, class OnWindow>
double warm_up(RunBatch&& run_batch, double per_run_s, OnWindow&& on_window,
               const WarmRule& rule = {}) {
  using Clock = std::chrono::steady_clock;
  std::vector<WarmWindow> windows;
  const Clock::time_point start = Clock::now();
  do {
    const int batch =
        per_run_s > 0
            ? static_cast<int>(std::clamp(rule.window_s / std::max(per_run_s, 1e-9), 1.0, 65536.0))
            : 1;
    per_run_s = run_batch(batch);
    windows.push_back({std::chrono::duration<double>(Clock::now() - start).count(), per_run_s});
    on_window(per_run_s, batch);
  } while (!warm_enough(windows, rule));
  return per_run_s;
}

}  // namespace tessera::rt
