/// \file `tessera bench`'s driver: options, the case list in its fixed order (compile times while
/// the caches are cold, the copy ceiling before the workloads it is the floor of, launch overhead
/// last), a private cache folder, the summary and the JSON file.
#include "bench/bench.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>

#include "bench/harness.h"
#include "core/support/filter.h"

namespace tessera::bench {
namespace {

int usage() {
  std::fprintf(stderr,
               "usage: tessera bench [--device NAME] [--filter PATTERN] [--json FILE] [--quick]\n"
               "                     [--full] [--list] [--seed S] [--seconds-per-case S]\n"
               "                     [--peak tf32=T,fp16=T,bf16=T,int8=T]\n"
               "  --quick   small sizes (the default on CPU devices; --full overrides)\n"
               "  --filter  case names: '*' and '?' wildcards, else a substring; comma-separated\n"
               "  --peak    TFLOP/s (int8: TOP/s) per matmul input type, for the compute floor\n");
  return 2;
}

void split_into(const std::string& s, std::vector<std::string>& out) {
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, ',');)
    if (!part.empty()) out.push_back(part);
}

bool parse_peaks(const std::string& text, Options& o) {
  std::vector<std::string> parts;
  split_into(text, parts);
  for (const std::string& p : parts) {
    size_t eq = p.find('=');
    if (eq == std::string::npos) return false;
    o.peak_tflops[p.substr(0, eq)] = std::stod(p.substr(eq + 1));
  }
  return true;
}

bool parse_options(const std::vector<std::string>& args, Options& o) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--device" && has_value)
      o.device = args[++i];
    else if (a == "--filter" && has_value)
      split_into(args[++i], o.filters);
    else if (a == "--json" && has_value)
      o.json = args[++i];
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--full")
      o.full = true;
    else if (a == "--list")
      o.list = true;
    else if (a == "--seed" && has_value)
      o.seed = std::stoull(args[++i], nullptr, 0), o.seed_given = true;
    else if (a == "--peak" && has_value) {
      if (!parse_peaks(args[++i], o)) return false;
    } else if (a == "--seconds-per-case" && has_value)
      o.seconds_per_case = std::stod(args[++i]);
    else
      return false;
  }
  return true;
}

bool selected(const std::string& name, const std::vector<std::string>& filters) {
  if (filters.empty()) return true;
  for (const std::string& f : filters) {
    if (matches_filter(name, f)) return true;
  }
  return false;
}

std::string& private_cache_dir() {
  static std::string dir;
  return dir;
}

void remove_private_cache() {
  std::error_code ec;
  if (!private_cache_dir().empty()) std::filesystem::remove_all(private_cache_dir(), ec);
}

/// A fresh on-disk cache for this run, so "cold" compiles are cold, and the drivers' own
/// compile caches off unless the caller set them (CUDA's JIT cache, NVIDIA's and Mesa's shader
/// caches). Must run before any device is opened: the folder is removed at exit, after the
/// devices (opened later, so destroyed earlier) have written their caches into it.
void use_private_cache() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tessera-bench-XXXXXX").string();
  if (!mkdtemp(pattern.data())) return;
  private_cache_dir() = pattern;
  std::atexit(remove_private_cache);
  setenv("TESSERA_CACHE_DIR", pattern.c_str(), 1);
  setenv("CUDA_CACHE_DISABLE", "1", 0);
  setenv("__GL_SHADER_DISK_CACHE", "0", 0);
  setenv("MESA_SHADER_CACHE_DISABLE", "true", 0);
}

std::vector<Case> all_cases(bool small) {
  std::vector<Case> cases;
  add_compile_cases(cases, small);
  add_copy_cases(cases, small);
  add_elementwise_cases(cases, small);
  add_row_cases(cases, small);
  add_matmul_cases(cases, small);
  add_matmul_int8_cases(cases, small);
  add_matmul_fp8_cases(cases, small);
  add_attention_cases(cases, small);
  add_launch_cases(cases, small);
  return cases;
}

/// The selected cases; the copy joins whenever a kernel case runs (it is their floor).
std::vector<Case> selected_cases(bool small, const std::vector<std::string>& filters) {
  std::vector<Case> all = all_cases(small), out;
  bool kernel_selected = false;
  for (const Case& c : all)
    if (selected(c.name, filters) && c.name.rfind("compile", 0) != 0 &&
        c.name.rfind("launch", 0) != 0)
      kernel_selected = true;
  for (const Case& c : all)
    if (selected(c.name, filters) || (kernel_selected && c.name.rfind("copy", 0) == 0))
      out.push_back(c);
  return out;
}

void run_case(Bench& b, const Case& c) {
  try {
    c.run(b);
  } catch (const std::exception& e) {
    Row r;
    r.workload = c.name;
    const auto* te = dynamic_cast<const Error*>(&e);
    r.status = te && te->kind() == ErrorKind::Unsupported ? "skip" : "error";
    r.detail = te ? std::string(to_string(te->kind())) + ": " + e.what() : e.what();
    b.add(r);
  }
}

int summarize(const Bench& b, double seconds) {
  int counts[4] = {0, 0, 0, 0};  // pass, fail, skip, error
  for (const Row& r : b.rows())
    ++counts[r.status == "pass" ? 0 : r.status == "fail" ? 1 : r.status == "skip" ? 2 : 3];
  std::printf("\n");
  if (b.copy_bytes_per_s() > 0)
    std::printf("copy bandwidth (the memory floor's basis): %.3g GB/s\n",
                b.copy_bytes_per_s() / 1e9);
  std::printf("%d passed, %d failed, %d skipped, %d errors in %.1f s\n", counts[0], counts[1],
              counts[2], counts[3], seconds);
  return counts[1] + counts[3] ? 1 : 0;
}

}  // namespace

int bench_main(const std::vector<std::string>& args) {
  if (args.size() == 3 && args[0] == "--first-launch-child")
    return first_launch_child(args[1], args[2]);
  Options o;
  if (!parse_options(args, o)) return usage();
  if (!o.seed_given) o.seed = std::random_device{}();
  if (!o.list) use_private_cache();
  auto t0 = std::chrono::steady_clock::now();
  Device dev = o.device.empty() ? Device::best() : Device::open(o.device);
  const bool small = o.quick || (dev.info().is_cpu && !o.full);
  std::vector<Case> cases = selected_cases(small, o.filters);
  if (o.list) {
    for (const Case& c : cases) std::printf("%s\n", c.name.c_str());
    return 0;
  }
  Bench b(dev, o);
  print_header(b);
  for (const Case& c : cases) {
    run_case(b, c);
    if (!o.json.empty())
      write_json(o.json, b, o.seed);  // after each case: a killed run keeps its rows
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return summarize(b, seconds);
}

}  // namespace tessera::bench
