/// \file The table `tessera bench` prints (one line per row as it is measured) and the JSON file
/// that bench/peers/peers.py also writes and bench/peers/compare.py merges (schema in
/// docs/performance.md).
#include <cmath>
#include <cstdio>
#include <fstream>

#include "bench/harness.h"

namespace tessera::bench {
namespace {

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string time_text(double us) {
  if (std::isnan(us)) return "-";
  if (us >= 1e4) return format("%.2f ms", us / 1e3);
  return format("%.1f us", us);
}

/// Bandwidth or arithmetic rate at the median.
std::string rate_text(const Row& r) {
  if (std::isnan(r.median_us) || r.median_us <= 0) return "-";
  if (r.flops > 0) {
    double tflops = r.flops / r.median_us / 1e6;
    return tflops >= 1 ? format("%.1f TFLOP/s", tflops) : format("%.3g GFLOP/s", tflops * 1e3);
  }
  if (r.bytes <= 0) return "-";
  double gbps = r.bytes / r.median_us / 1e3;
  return gbps >= 100 ? format("%.2f TB/s", gbps / 1e3) : format("%.3g GB/s", gbps);
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "null";
  if (std::isinf(v)) return v > 0 ? "1e308" : "-1e308";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void write_row(std::ostream& os, const Row& r, const std::string& backend) {
  os << "    {\"workload\": \"" << escape(r.workload) << "\", \"kernel\": \"" << escape(r.kernel)
     << "\", \"dtype\": \"" << escape(r.dtype) << "\", \"shape\": [";
  for (size_t i = 0; i < r.shape.size(); ++i) os << (i ? ", " : "") << r.shape[i];
  os << "], \"kind\": \"" << r.kind << "\", \"impl\": \"tessera\", \"backend\": \"" << backend
     << "\", \"status\": \"" << r.status << "\", \"max_err\": " << number(r.max_err)
     << ", \"tolerance\": " << number(r.tolerance) << ", \"runs\": " << r.runs
     << ", \"median_us\": " << number(r.median_us) << ", \"min_us\": " << number(r.min_us)
     << ", \"run_us\": [";
  for (size_t i = 0; i < r.run_us.size(); ++i) os << (i ? ", " : "") << number(r.run_us[i]);
  os << "]"
     << ", \"value\": " << number(r.value) << ", \"unit\": \"" << escape(r.unit)
     << "\", \"bytes\": " << number(r.bytes) << ", \"flops\": " << number(r.flops)
     << ", \"floor_us\": " << number(r.floor_us) << ", \"floor_basis\": \"" << escape(r.floor_basis)
     << "\", \"config\": \"" << escape(r.config) << "\", \"detail\": \"" << escape(r.detail)
     << "\"}";
}

}  // namespace

void print_header(const Bench& b) {
  const DeviceInfo& info = b.device().info();
  std::printf("tessera bench: %s (%s), %s sizes, seed %llu\n", info.name.c_str(),
              info.description.c_str(), b.small() ? "small" : "full",
              static_cast<unsigned long long>(b.options().seed));
  std::printf(
      "times: median of device-event-timed runs after warm-up, L2 flushed before each; "
      "floor: bytes / this run's copy bandwidth, or flops / --peak\n\n");
  std::printf("%-52s %-6s %9s %11s %11s %5s %14s %11s %7s  %s\n", "workload", "status", "max_err",
              "median", "min", "runs", "rate", "floor", "/floor", "config; detail");
  std::fflush(stdout);
}

void print_row(const Row& r) {
  std::string err = r.kind == "compile" ? "-" : format("%.2g", r.max_err);
  std::string median, min, ratio = "-", floor = time_text(r.floor_us);
  if (r.kind == "kernel") {
    median = time_text(r.median_us);
    min = time_text(r.min_us);
    if (!std::isnan(r.floor_us) && !std::isnan(r.median_us) && r.floor_us > 0)
      ratio = format("%.2fx", r.median_us / r.floor_us);
  } else {
    median = std::isnan(r.value) ? "-" : format("%.2f ", r.value) + r.unit;
    min = "-";
  }
  std::string status = r.status == "pass"   ? "PASS"
                       : r.status == "fail" ? "FAIL"
                       : r.status == "skip" ? "SKIP"
                                            : "ERROR";
  std::string tail = r.config;
  if (!r.detail.empty()) tail += (tail.empty() ? "" : "; ") + r.detail;
  if (r.status == "fail") tail += format(" (tolerance %.2g)", r.tolerance);
  std::printf("%-52s %-6s %9s %11s %11s %5s %14s %11s %7s  %s\n", r.workload.c_str(),
              status.c_str(), err.c_str(), median.c_str(), min.c_str(),
              r.runs ? std::to_string(r.runs).c_str() : "-", rate_text(r).c_str(), floor.c_str(),
              ratio.c_str(), tail.c_str());
  std::fflush(stdout);
}

void write_json(const std::string& path, const Bench& b, uint64_t seed) {
  std::ofstream os(path);
  if (!os) fail(ErrorKind::Runtime, "bench: cannot write '", path, "'");
  const DeviceInfo& info = b.device().info();
  os << "{\n  \"schema\": \"tessera-bench-1\",\n  \"source\": \"tessera\",\n  \"device\": "
        "{\"name\": \""
     << escape(info.name) << "\", \"kind\": \"" << escape(info.kind) << "\", \"description\": \""
     << escape(info.description) << "\"},\n  \"quick\": " << (b.small() ? "true" : "false")
     << ",\n  \"seed\": " << seed << ",\n  \"copy_gbps\": "
     << number(b.copy_bytes_per_s() > 0 ? b.copy_bytes_per_s() / 1e9 : NAN)
     << ",\n  \"results\": [\n";
  const auto& rows = b.rows();
  for (size_t i = 0; i < rows.size(); ++i) {
    write_row(os, rows[i], info.kind);
    os << (i + 1 < rows.size() ? ",\n" : "\n");
  }
  os << "  ]\n}\n";
}

}  // namespace tessera::bench
