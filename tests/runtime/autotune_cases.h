/// \file The autotuning cases (runtime/autotune.h), shared by the host and Vulkan test binaries,
/// each running them on its devices. The kernel accumulates into its output (y += 2 x), so a
/// search that ran on the user's buffers would show in the result; no check depends on which
/// configuration wins unless a prune leaves one.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/tessera.h"
#include "tests/support/capture.h"
#include "tests/support/env.h"
#include "tests/support/temp_cache.h"
#include "tests/support/errors.h"

namespace autotune_cases {

namespace tl = tessera::tl;
namespace fs = std::filesystem;
using tessera::Config;
using tessera::ErrorKind;

/// y[i] += 2 x[i]: reads its output, so every run changes it.
inline void accumulate_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(y + offs, tl::load(y + offs, mask) + 2.0f * tl::load(x + offs, mask), mask);
}

/// The kernel, made once per process (an Autotuner refers to it).
inline const auto& accumulate() {
  static const auto k = TESSERA_KERNEL(accumulate_kernel, x, y, n, BLOCK);
  return k;
}

/// A fresh TESSERA_CACHE_DIR for one test, removed afterwards (caching on).
class TempCache : public tessera::test::TempCache {
 public:
  TempCache() : tessera::test::TempCache("autotune") {}
  /// The autotune entries written so far.
  std::vector<fs::path> entries() const { return files("autotune"); }
};

/// The options of the cases: BLOCK 16/32/64 with a few num_warps, key n, output y.
inline tessera::AutotuneOptions options(std::vector<Config> configs = {}) {
  if (configs.empty())
    configs = {{{{"BLOCK", 16}}, 1, 1}, {{{"BLOCK", 32}}, 1, 2}, {{{"BLOCK", 64}}, 2, 3}};
  return {
      .configs = std::move(configs),
      .key = {"n"},
      .grid =
          [](const tessera::Meta& m) { return tessera::Grid(tessera::cdiv(m["n"], m["BLOCK"])); },
      .outputs = {"y"},
      .warmup_runs = 1,
      .timed_runs = 2};
}

/// Inputs: x[i] = i / 8, y[i] = 1 - i / 16 (exact in f32, as are y + 2x and y + 4x).
struct Inputs {
  std::vector<float> x, y;
  tessera::Buffer<float> dx, dy;
  Inputs(const tessera::Device& dev, size_t n) : x(n), y(n) {
    for (size_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i) / 8;
      y[i] = 1 - static_cast<float>(i) / 16;
    }
    dx = dev.upload(x);
    dy = dev.upload(y);
  }
  /// y + times * 2 x over the first n elements, y beyond.
  std::vector<float> expected(int times, size_t n) const {
    std::vector<float> out = y;
    for (size_t i = 0; i < n; ++i)
      for (int t = 0; t < times; ++t) out[i] += 2.0f * x[i];
    return out;
  }
};

/// The winner is one of the configurations and the user's output holds one launch's result
/// (the search's runs went to scratch copies); the same key reuses the choice.
inline void chosen_and_uncorrupted(const tessera::Device& dev) {
  TempCache cache;
  const auto tuned = tessera::autotune(accumulate(), options());
  Inputs in(dev, 200);
  tuned(in.dx, in.dy, int32_t{200});
  CHECK(in.dy.download() == in.expected(1, 200));
  CHECK(tuned.search_count() == 1);
  const tessera::AutotuneReport r = tuned.last_report();
  CHECK_FALSE(r.from_disk);
  REQUIRE(r.candidates.size() == 3);
  CHECK(r.chosen < 3);
  for (const tessera::AutotuneCandidate& c : r.candidates) {
    CHECK(c.discarded == "");
    CHECK(c.median_ms >= 0);
    CHECK(c.timed_runs == 2);  // counts given: exactly those, on every device
  }
  // The same key: no new search; all arguments given (BLOCK replaced by the choice) also works.
  tuned(in.dx, in.dy, int32_t{200}, 4096);
  CHECK(in.dy.download() == in.expected(2, 200));
  CHECK(tuned.search_count() == 1);
}

/// Run counts left to the default: 3 timed runs on a CPU device; on a GPU at least 10, and as
/// many more as fill AutotuneOptions::min_timed_ms (a GPU's short bursts run at clocks that it
/// does not keep).
inline void default_run_counts(const tessera::Device& dev) {
  TempCache cache;
  tessera::AutotuneOptions o = options();
  o.warmup_runs = 0;
  o.timed_runs = 0;
  const auto tuned = tessera::autotune(accumulate(), o);
  Inputs in(dev, 200);
  tuned(in.dx, in.dy, int32_t{200});
  CHECK(in.dy.download() == in.expected(1, 200));
  const tessera::AutotuneReport r = tuned.last_report();
  REQUIRE(r.candidates.size() == 3);
  for (const tessera::AutotuneCandidate& c : r.candidates) {
    if (dev.info().is_cpu)
      CHECK(c.timed_runs == 3);
    else
      CHECK(c.timed_runs >= 10);
    CHECK(c.timed_runs <= 1000);
  }
}

/// Every buffer is treated as written when .outputs is empty; an output passed twice (as x and
/// y: y += 2 y) gets one scratch copy, so the kernel reads what it writes, as untuned.
inline void default_outputs_and_aliasing(const tessera::Device& dev) {
  TempCache cache;
  tessera::AutotuneOptions o = options();
  o.outputs.clear();
  const auto tuned = tessera::autotune(accumulate(), o);
  Inputs in(dev, 100);
  tuned(in.dy, in.dy, int32_t{100});
  std::vector<float> want = in.y;
  for (size_t i = 0; i < 100; ++i) want[i] = 3 * in.y[i];
  CHECK(in.dy.download() == want);
  CHECK(in.dx.download() == in.x);
}

/// A fresh Autotuner finds the choice on disk (no search); a damaged entry is searched again
/// and rewritten.
inline void disk_entry_reused_and_damage_searched(const tessera::Device& dev) {
  TempCache cache;
  Inputs in(dev, 150);
  size_t first = 0;
  {
    const auto tuned = tessera::autotune(accumulate(), options());
    tuned.best_config(in.dx, in.dy, int32_t{150});
    first = tuned.last_report().chosen;
    CHECK(tuned.search_count() == 1);
  }
  REQUIRE(cache.entries().size() == 1);
  {
    const auto tuned = tessera::autotune(accumulate(), options());
    tuned(in.dx, in.dy, int32_t{150});
    CHECK(tuned.search_count() == 0);
    CHECK(tuned.last_report().from_disk);
    CHECK(tuned.last_report().chosen == first);
    CHECK(in.dy.download() == in.expected(1, 150));
  }
  // Another configuration list is another entry.
  {
    std::vector<Config> configs = options().configs;
    configs.pop_back();
    const auto tuned = tessera::autotune(accumulate(), options(configs));
    tuned.best_config(in.dx, in.dy, int32_t{150});
    CHECK(tuned.search_count() == 1);
    CHECK(cache.entries().size() == 2);
  }
  // Damage every entry: one byte of the choice changed, then a truncated file.
  for (const char* damage : {"flip", "truncate"}) {
    for (const fs::path& p : cache.entries()) {
      std::string bytes;
      {
        std::ifstream f(p, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(f), {});
      }
      REQUIRE(bytes.size() > 10);
      if (std::string(damage) == "flip")
        bytes[bytes.size() - 3] ^= 1;
      else
        bytes.resize(bytes.size() / 2);
      std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
    }
    const auto tuned = tessera::autotune(accumulate(), options());
    tuned.best_config(in.dx, in.dy, int32_t{150});
    CHECK_MESSAGE(tuned.search_count() == 1, damage);
    const auto again = tessera::autotune(accumulate(), options());
    again.best_config(in.dx, in.dy, int32_t{150});
    CHECK_MESSAGE(again.search_count() == 0, damage);  // the search rewrote the entry
  }
}

/// A pruned configuration and one that cannot compile are discarded with their reasons; a
/// prune that leaves one configuration forces the choice.
inline void pruned_and_failing_discarded(const tessera::Device& dev) {
  TempCache cache;
  tessera::AutotuneOptions o = options({{{{"BLOCK", 16}}, 1, 1},
                                        {{{"BLOCK", 48}}, 1, 1},  // arange of 48: not a power of 2
                                        {{{"BLOCK", 32}}, 1, 1},
                                        {{{"BLOCK", 64}}, 2, 1}});
  o.prune = [](const Config& c, const tessera::Meta& m) -> std::string {
    return c["BLOCK"] >= m["n"] / 2 ? "BLOCK is over half of n" : "";
  };
  const auto tuned = tessera::autotune(accumulate(), o);
  Inputs in(dev, 100);
  tuned(in.dx, in.dy, int32_t{100});
  CHECK(in.dy.download() == in.expected(1, 100));
  const tessera::AutotuneReport r = tuned.last_report();
  REQUIRE(r.candidates.size() == 4);
  CHECK(r.candidates[0].discarded == "");
  CHECK(r.candidates[1].discarded.find("power of two") != std::string::npos);
  CHECK(r.candidates[1].median_ms == -1);
  CHECK(r.candidates[2].discarded == "");
  CHECK(r.candidates[3].discarded == "pruned: BLOCK is over half of n");
  CHECK((r.chosen == 0 || r.chosen == 2));
  // n = 40 prunes every BLOCK but 16: the forced choice.
  CHECK(tuned.best_config(in.dx, in.dy, int32_t{40}).label() ==
        "BLOCK=16 num_warps=1 num_stages=1");
  CHECK(tuned.search_count() == 2);  // a different key value searched again
  CHECK(tuned.last_report().chosen == 0);
}

/// Every configuration failing is an error that lists each one with its reason; the user's
/// buffer is untouched.
inline void all_failing_lists_reasons(const tessera::Device& dev) {
  TempCache cache;
  const auto tuned =
      tessera::autotune(accumulate(), options({{{{"BLOCK", 48}}, 1, 1}, {{{"BLOCK", 24}}, 2, 1}}));
  Inputs in(dev, 64);
  const std::string msg =
      tessera::test::error_of([&] { tuned(in.dx, in.dy, int32_t{64}); }, ErrorKind::User);
  CHECK(msg.find("autotuning kernel 'accumulate_kernel'") != std::string::npos);
  CHECK(msg.find("no configuration can run") != std::string::npos);
  CHECK(msg.find("BLOCK=48 num_warps=1 num_stages=1: ") != std::string::npos);
  CHECK(msg.find("BLOCK=24 num_warps=2 num_stages=1: ") != std::string::npos);
  CHECK(msg.find("power of two") != std::string::npos);  // the reason: arange of 48 or 24
  // A configuration's maxnreg is its launch's: out of range, an Argument error (the only kind).
  const auto limited = tessera::autotune(accumulate(), options({{{{"BLOCK", 16}}, 1, 1, 8}}));
  const std::string m2 =
      tessera::test::error_of([&] { limited(in.dx, in.dy, int32_t{64}); }, ErrorKind::Argument);
  CHECK(m2.find("BLOCK=16 num_warps=1 num_stages=1 maxnreg=8: ") != std::string::npos);
  CHECK(m2.find("maxnreg must be 0 (no limit) or in 16..255, got 8") != std::string::npos);
  CHECK(in.dy.download() == in.y);
  CHECK(cache.entries().empty());
}

/// TESSERA_AUTOTUNE_LOG=1 prints each candidate and the choice; a disk hit says so.
inline void log_lines(const tessera::Device& dev) {
  TempCache cache;
  tessera::test::ScopedEnv log("TESSERA_AUTOTUNE_LOG", "1");
  Inputs in(dev, 64);
  const std::string out = tessera::test::capture(2, [&] {
    const auto tuned = tessera::autotune(accumulate(), options());
    tuned(in.dx, in.dy, int32_t{64});
  });
  CHECK(out.find("searching 3 configurations") != std::string::npos);
  CHECK(out.find("BLOCK=16 num_warps=1 num_stages=1: ") != std::string::npos);
  CHECK(out.find(" ms (median of 2)") != std::string::npos);
  CHECK(out.find(": chose BLOCK=") != std::string::npos);
  const std::string again = tessera::test::capture(2, [&] {
    const auto tuned = tessera::autotune(accumulate(), options());
    tuned(in.dx, in.dy, int32_t{64});
  });
  CHECK(again.find("(from ") != std::string::npos);
  CHECK(again.find("searching") == std::string::npos);
}

}  // namespace autotune_cases
