/// \file The measuring harness of `tessera bench`: options, result rows, the device context
/// (copy ceiling, L2 flush, timed runs with device events), seeded inputs and error measures.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/tessera.h"

namespace tessera::bench {

struct Options {
  std::string device;                ///< empty: Device::best()
  std::vector<std::string> filters;  ///< case-name patterns (`*`, `?`, or a substring)
  std::string json;                  ///< write the rows here
  bool quick = false;                ///< small sizes (forced on CPU devices unless `full`)
  bool full = false;                 ///< full sizes even on a CPU device
  bool list = false;                 ///< print the case names and stop
  uint64_t seed = 0;
  bool seed_given = false;
  std::map<std::string, double> peak_tflops;  ///< "tf32" / "fp16" / "bf16" / "int8" -> T(FL)OP/s
  double seconds_per_case = 10;  ///< timing budget of one case (at least 20 runs anyway)
};

/// One line of the table and one object of the JSON file.
struct Row {
  std::string workload;       ///< "softmax fp32 16384x1024", the key peers and compare use
  std::string kernel, dtype;  ///< "softmax", "fp32"
  std::vector<int64_t> shape;
  std::string kind = "kernel";  ///< "kernel", "compile" or "launch"
  std::string status = "pass";  ///< "pass", "fail", "skip" or "error"
  double max_err = 0, tolerance = 0;
  int runs = 0;
  double median_us = NAN, min_us = NAN;
  std::vector<double> run_us;  ///< every timed run, in order (the JSON keeps them: bimodal times)
  double bytes = 0, flops = 0;
  double floor_us = NAN;
  std::string floor_basis;  ///< "bytes / copy 4.07 TB/s", "flops / peak 989 TFLOP/s"
  double value = NAN;       ///< compile and launch rows: the figure, in `unit`
  std::string unit;         ///< "us", "ms", "us/launch"
  std::string config, detail;
};

/// Times of one measured launch sequence.
struct Timing {
  std::vector<double> us;  ///< one per run, device events
  double median_us = NAN, min_us = NAN;
  std::string note;  ///< why fewer than the usual runs, when so
};

/// Runs `fn(begin, end)` over [0, n) in chunks on the host's cores, at least `grain` indices
/// per thread.
void parallel_for(size_t n, const std::function<void(size_t, size_t)>& fn,
                  size_t grain = size_t{1} << 15);

/// max over i of err(i), computed in parallel; err returns NaN for a bad element (reported as
/// infinity, so NaN never passes).
double parallel_max(size_t n, const std::function<double(size_t)>& err);

/// |out - ref| / max(1, |ref|): relative for large values, absolute near zero (as the samples).
inline double rel_err(double out, double ref) {
  double e = std::fabs(out - ref) / std::max(1.0, std::fabs(ref));
  return std::isnan(e) ? INFINITY : e;
}

/// Uniform values in [lo, hi) from (seed, index), converted to T (float, half, bfloat16): the
/// same whatever the number of threads.
template <class T>
std::vector<T> random_values(size_t n, float lo, float hi, uint64_t seed);

/// "fp32", "fp16", "bf16" for a buffer dtype.
std::string dtype_label(ir::DType t);

/// The programs a persistent row launches at one per multiprocessor: the device's multiprocessor
/// count, or 132 (an H100's or H200's) where the device does not say.
int64_t multiprocessors_or_132(const Device& dev);

/// The device under test and what every case shares.
class Bench {
 public:
  Bench(Device device, const Options& options);

  const Device& device() const { return dev_; }
  const Options& options() const { return options_; }
  /// Problem sizes: the small ones (quick, or a CPU device), else the GPU ones.
  bool small() const { return small_; }
  bool is_gpu() const { return !dev_.info().is_cpu; }
  /// A fresh seed for one case's inputs (from the run's seed and the case name).
  uint64_t seed_for(const std::string& name) const;

  /// Times `launch` (which must write `out`): warm-up (on a GPU until the time per run is steady,
  /// 0.3-3 s: clocks ramp up after the host's reference computation), then at least
  /// 20 runs (fewer only when one run exceeds the case's budget / 20, noted), each preceded by an
  /// L2 flush that poisons `out`, each bracketed by device events.
  Timing time(const std::function<void()>& launch, const BufferBase& out);
  /// Launches the flush alone (poisons `out` before a checked run).
  void poison(const BufferBase& out);
  /// Finishes a checked row (max_err and tolerance set): its status, then, if it passed, its
  /// timing and floor (`peak_key` names the peak for flops: "tf32", "fp16", "bf16", "int8").
  Row measure(Row row, const std::function<void()>& launch, const BufferBase& out,
              const std::string& peak_key = "");

  /// Bytes per second of the copy kernel measured in this run (0 until measured).
  double copy_bytes_per_s() const { return copy_bps_; }
  void set_copy_bytes_per_s(double bps) { copy_bps_ = bps; }
  /// Fills the row's floor: bytes over the copy bandwidth, or flops over a given peak.
  void set_floor(Row& row, const std::string& peak_key) const;

  /// Adds a row: printed at once, kept for the JSON file.
  void add(Row row);
  const std::vector<Row>& rows() const { return rows_; }

 private:
  Device dev_;
  Options options_;
  bool small_;
  double copy_bps_ = 0;
  Buffer<float> scratch_;
  std::vector<Row> rows_;
};

/// One row from the rows of several configurations of one workload: a failed one if any (a
/// wrong result is a bug whatever the speed), else the fastest; `detail` lists every config.
Row best_of(const std::vector<Row>& tried);

/// Runs `fn`; a tessera::Error becomes `base` with status "skip" (ErrorKind::Unsupported: the
/// device lacks a feature) or "error", and the message as its detail.
Row guarded(const Row& base, const std::function<Row()>& fn);

/// Cases: a name (matched by --filter) and what runs it.
struct Case {
  std::string name;
  std::function<void(Bench&)> run;
};

/// Each file's cases, for the sizes `small` selects.
void add_copy_cases(std::vector<Case>& cases, bool small);
void add_elementwise_cases(std::vector<Case>& cases, bool small);
void add_row_cases(std::vector<Case>& cases, bool small);
void add_matmul_cases(std::vector<Case>& cases, bool small);
void add_matmul_int8_cases(std::vector<Case>& cases, bool small);
void add_matmul_fp8_cases(std::vector<Case>& cases, bool small);
void add_attention_cases(std::vector<Case>& cases, bool small);
void add_compile_cases(std::vector<Case>& cases, bool small);
/// `tessera bench --first-launch-child DEVICE PROBE`, run by the compile cases in a child process
/// that inherits their cache folder: opens the device, makes the probe's buffers, then times the
/// probe's first launch (through its synchronize) and prints "first_launch_ms <ms>".
int first_launch_child(const std::string& device, const std::string& probe);
void add_launch_cases(std::vector<Case>& cases, bool small);

/// The table's header and one line per row; the JSON file.
void print_header(const Bench& b);
void print_row(const Row& r);
void write_json(const std::string& path, const Bench& b, uint64_t seed);

/// "16384x1024".
std::string shape_label(const std::vector<int64_t>& shape);

}  // namespace tessera::bench
