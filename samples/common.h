/// \file What every sample shares: `--device NAME` and `--small`, seeded random inputs, the error
/// measure, a timed launch, and the one-line verdict `PASS <sample> device=<name> shape=<...> ...`.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tessera.h"

namespace samples {

/// Set by `--small`: the CPU-sized problem on any device (for compute-sanitizer runs).
inline bool& small_problem() {
  static bool small = false;
  return small;
}

/// Opens the device named by `--device NAME`, or the best one; notes `--small`.
inline tessera::Device device_from_args(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--small") small_problem() = true;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--device" && i + 1 < argc) return tessera::Device::open(argv[i + 1]);
    if (a.starts_with("--device=")) return tessera::Device::open(a.substr(9));
  }
  return tessera::Device::best();
}

/// Is this device a GPU (sizes may be large), or an interpreter or CPU driver (keep them small)?
/// `--small` answers no for every device.
inline bool is_gpu(const tessera::Device& d) {
  return !d.info().is_cpu && !small_problem();
}

/// Uniform random floats in [lo, hi), from a fixed seed so runs are repeatable.
inline std::vector<float> random_floats(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

/// The largest |out - ref| / max(1, |ref|): relative for large values, absolute near zero.
inline double max_rel_err(const std::vector<float>& out, const std::vector<double>& ref) {
  double worst = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    double e = std::fabs(static_cast<double>(out[i]) - ref[i]) / std::max(1.0, std::fabs(ref[i]));
    if (std::isnan(e)) return INFINITY;
    worst = std::max(worst, e);
  }
  return worst;
}

/// Runs `launch` once to warm up (trace and compile), then times one more run with device events.
inline double time_ms(const tessera::Device& dev, const std::function<void()>& launch) {
  launch();
  dev.synchronize();
  tessera::Stream s = dev.default_stream();
  tessera::Event start = dev.create_event(), stop = dev.create_event();
  start.record(s);
  launch();
  stop.record(s);
  s.synchronize();
  return stop.elapsed_since(start);
}

/// Prints the verdict line and returns the process exit code.
inline int report(const char* sample, const tessera::Device& dev, const std::string& shape,
                  double err, double tolerance, double ms) {
  bool pass = err <= tolerance;
  std::printf("%s %s device=%s shape=%s max_rel_err=%.3g time_ms=%.3f\n", pass ? "PASS" : "FAIL",
              sample, dev.name().c_str(), shape.c_str(), err, ms);
  if (!pass) std::printf("  (tolerance %.3g)\n", tolerance);
  return pass ? 0 : 1;
}

/// Runs a sample's main body, turning a tessera::Error into a FAIL line and exit code 1.
inline int run(const char* sample, int argc, char** argv,
               const std::function<int(const tessera::Device&)>& body) {
  try {
    tessera::Device dev = device_from_args(argc, argv);
    return body(dev);
  } catch (const tessera::Error& e) {
    std::printf("FAIL %s: %s: %s\n", sample, std::string(tessera::to_string(e.kind())).c_str(),
                e.what());
    return 1;
  }
}

}  // namespace samples
