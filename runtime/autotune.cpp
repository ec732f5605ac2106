/// \file Autotuning: configurations checked against the kernel's parameters, the key, and the
/// in-memory choices per key value (the search and the disk cache: autotune_search.cpp).
#include "runtime/autotune.h"

#include <algorithm>
#include <set>

#include "core/support/error.h"
#include "runtime/cache.h"

namespace tessera {
namespace {

using Kind = KernelArg::Kind;

}  // namespace

int64_t Config::operator[](std::string_view name) const {
  for (const auto& [n, v] : params)
    if (n == name) return v;
  fail(ErrorKind::Argument, "autotune configuration '", label(), "' sets no parameter '", name,
       "'");
}

LaunchOptions Config::launch_options() const {
  LaunchOptions o;
  o.num_warps = num_warps;
  o.num_stages = num_stages;
  o.maxnreg = maxnreg;
  return o;
}

std::string Config::label() const {
  std::string s;
  for (const auto& [n, v] : params) s += n + "=" + std::to_string(v) + " ";
  return s + "num_warps=" + std::to_string(num_warps) +
         " num_stages=" + std::to_string(num_stages) +
         (maxnreg ? " maxnreg=" + std::to_string(maxnreg) : "");
}

const KernelArg& Meta::arg(std::string_view name) const {
  for (size_t i = 0; i < names_.size() && i < args_.size(); ++i)
    if (names_[i] == name) return args_[i];
  std::string list;
  for (size_t i = 0; i < names_.size(); ++i) list += (i ? ", " : "") + names_[i];
  fail(ErrorKind::Argument, "autotune: the kernel has no parameter '", name,
       "' (parameters: ", list, ")");
}

int64_t Meta::operator[](std::string_view name) const {
  const KernelArg& a = arg(name);
  if (a.kind == Kind::Buffer)
    fail(ErrorKind::Argument, "autotune: parameter '", name, "' is ", a.describe(),
         ", not a number");
  return a.kind == Kind::Float ? static_cast<int64_t>(a.f) : a.i;
}

double Meta::number(std::string_view name) const {
  const KernelArg& a = arg(name);
  return a.kind == Kind::Float ? a.f : static_cast<double>((*this)[name]);
}

std::string autotune_cache_dir() {
  return cache_dir("autotune");
}

Autotuner::Autotuner(const KernelBase& kernel, AutotuneOptions options)
    : kernel_(kernel), options_(std::move(options)) {
  const std::vector<std::string>& names = kernel_.param_names();
  const std::string who = "autotune of kernel '" + kernel_.name() + "'";
  auto index_of = [&](const std::string& name, const std::string& where) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return i;
    std::string list;
    for (size_t i = 0; i < names.size(); ++i) list += (i ? ", " : "") + names[i];
    fail(ErrorKind::Argument, who, ": ", where, " names '", name,
         "', which is not a parameter (parameters: ", list, ")");
  };
  if (options_.configs.empty()) fail(ErrorKind::Argument, who, ": no configurations");
  if (!options_.grid) fail(ErrorKind::Argument, who, ": no grid function (.grid)");
  std::set<std::string> first;
  for (size_t c = 0; c < options_.configs.size(); ++c) {
    const Config& cfg = options_.configs[c];
    const std::string where = "configuration " + std::to_string(c) + " (" + cfg.label() + ")";
    std::set<std::string> set;
    for (const auto& [n, v] : cfg.params) {
      index_of(n, where);
      if (!set.insert(n).second)
        fail(ErrorKind::Argument, who, ": ", where, " sets '", n, "' twice");
    }
    if (c == 0) first = set;
    if (set != first)
      fail(ErrorKind::Argument, who, ": ", where, " sets other parameters than configuration 0 (",
           options_.configs[0].label(), "); every configuration must set the same ones");
  }
  for (const std::string& n : first) tuned_.push_back(index_of(n, "configuration 0"));
  std::sort(tuned_.begin(), tuned_.end());
  auto is_tuned = [&](size_t i) { return std::binary_search(tuned_.begin(), tuned_.end(), i); };
  for (const std::string& n : options_.key) {
    size_t i = index_of(n, "the key");
    if (is_tuned(i))
      fail(ErrorKind::Argument, who, ": the key names '", n, "', which the configurations set");
    key_.push_back(i);
  }
  output_.assign(names.size(), options_.outputs.empty());
  for (const std::string& n : options_.outputs) {
    size_t i = index_of(n, ".outputs");
    if (is_tuned(i))
      fail(ErrorKind::Argument, who, ": .outputs names '", n, "', which the configurations set");
    output_[i] = true;
  }
}

std::vector<KernelArg> Autotuner::with_config(std::span<const KernelArg> args,
                                              const Config& c) const {
  const std::vector<std::string>& names = kernel_.param_names();
  const size_t n = names.size();
  if (args.size() != n && args.size() != n - tuned_.size()) {
    std::string list;
    for (size_t i = 0; i < n; ++i)
      if (!std::binary_search(tuned_.begin(), tuned_.end(), i))
        list += (list.empty() ? "" : ", ") + names[i];
    fail(ErrorKind::Argument, "autotuned kernel '", kernel_.name(), "' takes ", n - tuned_.size(),
         " arguments (", list, ") or all ", n, " with the tuned ones, got ", args.size());
  }
  std::vector<KernelArg> full;
  full.reserve(n);
  size_t next = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::binary_search(tuned_.begin(), tuned_.end(), i)) {
      full.push_back(KernelArg::from(c[names[i]]));
      if (args.size() == n) ++next;
    } else {
      full.push_back(args[next++]);
    }
  }
  return full;
}

std::string Autotuner::key_of(std::span<const KernelArg> full) const {
  const std::vector<std::string>& names = kernel_.param_names();
  std::string key;
  auto value = [](const KernelArg& a) -> std::string {
    switch (a.kind) {
      case Kind::Buffer:
        return std::string(ir::dtype_name(a.dtype));
      case Kind::Float:
        return std::to_string(a.f);
      case Kind::DType:
        return std::string(ir::dtype_name(static_cast<ir::DType>(a.i)));
      case Kind::UInt:
        return std::to_string(static_cast<uint64_t>(a.i));
      default:
        return std::to_string(a.i);
    }
  };
  for (size_t i : key_) key += (key.empty() ? "" : " ") + names[i] + "=" + value(full[i]);
  for (size_t i = 0; i < full.size(); ++i)
    if (full[i].kind == Kind::Buffer)
      key += (key.empty() ? "" : " ") + names[i] + ":" + value(full[i]);
  return key;
}

void Autotuner::launch(std::span<const KernelArg> args) const {
  const Config& c = options_.configs[tune(args)];
  std::vector<KernelArg> full = with_config(args, c);
  Grid grid = options_.grid(Meta(kernel_.param_names(), full));
  kernel_.launch(LaunchConfig(grid, c.launch_options()), full);
}

size_t Autotuner::tune(std::span<const KernelArg> args) const {
  const std::string key = key_of(with_config(args, options_.configs[0]));
  // In memory, choices are per device too (the disk key has the device's description).
  std::string memory_key = key;
  for (const KernelArg& a : args)
    if (a.kind == Kind::Buffer && a.buffer.valid()) {
      memory_key += " @" + std::to_string(reinterpret_cast<uintptr_t>(a.buffer.device()));
      break;
    }
  {
    std::lock_guard lock(mutex_);
    if (auto it = chosen_.find(memory_key); it != chosen_.end()) return it->second;
  }
  std::lock_guard searching(search_mutex_);
  {
    std::lock_guard lock(mutex_);
    if (auto it = chosen_.find(memory_key); it != chosen_.end()) return it->second;
  }
  AutotuneReport report;
  report.key = key;
  const size_t chosen = search(args, report);
  std::lock_guard lock(mutex_);
  chosen_[memory_key] = chosen;
  last_ = std::move(report);
  return chosen;
}

size_t Autotuner::search_count() const {
  std::lock_guard lock(mutex_);
  return searches_;
}

AutotuneReport Autotuner::last_report() const {
  std::lock_guard lock(mutex_);
  return last_;
}

}  // namespace tessera
