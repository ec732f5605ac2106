/// \file Autotuning (Triton's `@triton.autotune`): a kernel with a list of configurations (values
/// of its compile-time parameters plus num_warps and num_stages), a key (the arguments whose
/// values select a tuning) and a grid; the first launch of each key value times every
/// configuration the device can run and launches the fastest, later launches reuse the choice.
///
///   static const auto matmul = TESSERA_KERNEL(matmul_kernel, a, b, c, M, N, K, BLOCK_M, BLOCK_N);
///   static const auto mm = tessera::autotune(matmul, {
///       .configs = {{{{"BLOCK_M", 128}, {"BLOCK_N", 128}}, 8, 3},
///                   {{{"BLOCK_M", 64}, {"BLOCK_N", 64}}, 4, 3}},
///       .key = {"M", "N", "K"},
///       .grid = [](const tessera::Meta& m) {
///         return tessera::Grid(tessera::cdiv(m["M"], m["BLOCK_M"]),
///                              tessera::cdiv(m["N"], m["BLOCK_N"]));
///       },
///       .outputs = {"c"}});
///   mm(a, b, c, M, N, K);   // the tuned parameters are left out, as in Triton
///
/// A search compiles the candidates on a thread pool, then runs each on scratch copies of the
/// outputs (restored from the user's buffers before every run, after an L2 flush), timed with
/// device events (warm-up runs, then the median of the timed runs); the user's buffers are
/// written once, by the winner, so they hold exactly what one untuned launch gives. The choice is
/// stored on disk ($TESSERA_CACHE_DIR/autotune, keyed by the device and its target description,
/// the kernel's traced tile IR, the configurations, the key values and the compiler build), so the
/// next process skips the search. TESSERA_AUTOTUNE_LOG=1 prints each candidate's time or the
/// reason it was discarded, and the choice.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernel.h"

namespace tessera {

/// One candidate of a search (Triton's `triton.Config`): values of named compile-time
/// parameters, and the launch options num_warps and num_stages.
struct Config {
  /// Compile-time parameter values by name, in the order written: {{"BLOCK_M", 128}, ...}.
  std::vector<std::pair<std::string, int64_t>> params;
  int num_warps = 4;   ///< LaunchOptions::num_warps of the launch
  int num_stages = 3;  ///< LaunchOptions::num_stages of the launch
  int maxnreg = 0;     ///< LaunchOptions::maxnreg of the launch (0: no limit)
  /// The value of `name`; ErrorKind::Argument naming the configuration when it sets none.
  int64_t operator[](std::string_view name) const;
  /// "BLOCK_M=128 BLOCK_N=128 num_warps=8 num_stages=3" (and " maxnreg=128" when set): how logs,
  /// errors and the cache name it.
  std::string label() const;
  /// The launch options these values give (num_warps, num_stages, maxnreg; the rest default).
  LaunchOptions launch_options() const;
};

/// The arguments of one launch by parameter name, with a configuration's values filled in
/// (Triton's `META`): what the grid and prune functions see.
class Meta {
 public:
  /// `args` of a kernel whose parameters are `names` (both outlive the Meta).
  Meta(const std::vector<std::string>& names, std::span<const KernelArg> args)
      : names_(names), args_(args) {}
  /// The integer value of parameter `name` (a scalar or compile-time argument; a float is
  /// truncated); ErrorKind::Argument for a buffer or an unknown name, listing the parameters.
  int64_t operator[](std::string_view name) const;
  /// The value of parameter `name` as a double (a float argument keeps its fraction).
  double number(std::string_view name) const;
  /// The argument of parameter `name` (a buffer's size and dtype, for instance).
  const KernelArg& arg(std::string_view name) const;

 private:
  const std::vector<std::string>& names_;
  std::span<const KernelArg> args_;
};

/// What `tessera::autotune` takes, written with designated initializers.
struct AutotuneOptions {
  /// The candidates. Every one sets the same compile-time parameters (the tuned ones).
  std::vector<Config> configs;
  /// Parameters whose values select a tuning: one search per distinct value of the key (buffer
  /// parameters contribute their dtype). The dtype of every buffer argument is always part of it.
  std::vector<std::string> key;
  /// The grid of a launch, from the arguments with the configuration filled in. Required.
  std::function<Grid(const Meta&)> grid;
  /// Optional pruning before anything is compiled: the reason to drop `config` for these
  /// arguments, or "" to keep it (Triton's early_config_prune filters a list instead; a reason
  /// per configuration is what the log and the all-failed error show).
  std::function<std::string(const Config& config, const Meta& args)> prune;
  /// The buffer parameters the kernel writes (Triton's restore_value): the search runs on
  /// scratch copies of them, restored from the user's buffers before every run. Empty: every
  /// buffer argument is treated as written (safe, at the cost of copying the inputs too).
  std::vector<std::string> outputs;
  /// Untimed runs of each candidate before its timed runs; 0: 3 on a GPU, 1 on a CPU device.
  int warmup_runs = 0;
  /// Timed runs of each candidate (their median is its time); 0: 10 on a GPU, 3 on a CPU device.
  int timed_runs = 0;
  /// Where warmup_runs (timed_runs) is left 0 on a GPU, the runs continue until they have taken
  /// at least this many milliseconds (Triton's do_bench: 25 and 100): a GPU keeps its highest
  /// clocks for a short burst only, and a configuration that draws more power slows down more
  /// when it runs on, as every run of the application does. Ignored on CPU devices.
  double min_warmup_ms = 25;
  double min_timed_ms = 100;
};

/// One candidate of a search, as the log and AutotuneReport show it.
struct AutotuneCandidate {
  Config config;          ///< the configuration
  double median_ms = -1;  ///< its time (the median of the timed runs); -1 when discarded
  std::string discarded;  ///< why it was not timed (pruned, unsupported, failed), or ""
  int timed_runs = 0;     ///< how many timed runs the median is of
};

/// The outcome of the tuning of one key value.
struct AutotuneReport {
  std::string key;                            ///< "M=72 N=80 K=96 a:f16 b:f16 c:f16"
  std::vector<AutotuneCandidate> candidates;  ///< every configuration, in order (empty: from disk)
  size_t chosen = 0;                          ///< index of the winner in AutotuneOptions::configs
  bool from_disk = false;                     ///< read from the disk cache, no search ran
  std::string cache_path;                     ///< the disk entry ("" without a disk cache)
};

/// A kernel with autotuning: `autotune(kernel, {...})` makes one, `tuned(args...)` launches it.
/// Thread-safe: concurrent first launches of one key value run one search, the others wait.
class Autotuner {
 public:
  /// Tunes `kernel`, which must outlive the Autotuner (a static or a member beside it: a Kernel
  /// is neither copyable nor movable, as it owns its caches). Checks the options: an unknown
  /// parameter name, configurations that set different parameters, no grid or no configuration
  /// is an ErrorKind::Argument error.
  Autotuner(const KernelBase& kernel, AutotuneOptions options);

  /// Launches on the device's default stream with the configuration chosen for these
  /// arguments' key (searching first when the key is new). `args` are the kernel's arguments
  /// without the tuned parameters (as in Triton), or all of them (the tuned ones are then
  /// replaced by the configuration's values).
  template <class... Args>
  void operator()(const Args&... args) const {
    std::array<KernelArg, sizeof...(Args)> erased{KernelArg::from(args)...};
    launch(std::span<const KernelArg>(erased.data(), erased.size()));
  }
  /// The configuration these arguments select (searching when the key is new, launching
  /// nothing on the user's buffers), as Triton's best_config.
  template <class... Args>
  Config best_config(const Args&... args) const {
    std::array<KernelArg, sizeof...(Args)> erased{KernelArg::from(args)...};
    return options_.configs[tune(std::span<const KernelArg>(erased.data(), erased.size()))];
  }

  /// Type-erased launch (what operator() calls).
  void launch(std::span<const KernelArg> args) const;
  /// Type-erased tuning: the index of the chosen configuration.
  size_t tune(std::span<const KernelArg> args) const;
  /// Searches run by this Autotuner so far (a key found in memory or on disk runs none).
  size_t search_count() const;
  /// The report of the latest key value tuned (in a search or from the disk cache).
  AutotuneReport last_report() const;
  /// The options, as given.
  const AutotuneOptions& options() const { return options_; }

 private:
  /// The full argument list for configuration `c`, from the user's arguments.
  std::vector<KernelArg> with_config(std::span<const KernelArg> args, const Config& c) const;
  /// The in-memory key of `full` (arguments with the tuned values of the first configuration).
  std::string key_of(std::span<const KernelArg> full) const;
  /// The search for one key; fills `report`.
  size_t search(std::span<const KernelArg> args, AutotuneReport& report) const;

  const KernelBase& kernel_;
  AutotuneOptions options_;
  std::vector<size_t> tuned_;  ///< parameter indices the configurations set, ascending
  std::vector<size_t> key_;    ///< parameter indices of the key
  std::vector<bool> output_;   ///< per parameter: written (a scratch copy in searches)
  mutable std::mutex mutex_;
  mutable std::mutex search_mutex_;  ///< one search at a time per Autotuner
  mutable std::unordered_map<std::string, size_t> chosen_;
  mutable size_t searches_ = 0;
  mutable AutotuneReport last_;
};

/// `kernel` with autotuning (the file's example). `kernel` must outlive the result.
inline Autotuner autotune(const KernelBase& kernel, AutotuneOptions options) {
  return Autotuner(kernel, std::move(options));
}
/// A temporary kernel would be destroyed before the first launch: declare it first.
Autotuner autotune(const KernelBase&& kernel, AutotuneOptions options) = delete;

/// The folder of the autotuning cache (cache_dir("autotune"); "" without a disk cache).
std::string autotune_cache_dir();

}  // namespace tessera
