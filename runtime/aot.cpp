/// \file Kernels compiled ahead of time: the embedded entries' encoding, the choice of the entry
/// that serves a launch, and its load (an artifact through the device's backend, tile IR through
/// the interpreter's compile).
#include "runtime/aot.h"

#include <algorithm>
#include <cstring>

#include "core/ir/parser.h"
#include "core/support/error.h"
#include "core/target/target.h"
#include "runtime/artifact_cache.h"
#include "runtime/hash.h"

namespace tessera {
namespace aot {
namespace {

/// 2: CompileOptions::cluster joined the integers (entries of layout 1 are refused, not misread);
/// 3: the artifacts hold Artifact::dependent_launch (runtime/artifact_cache.cpp's format 4).
constexpr char kMagic[8] = {'T', 'S', 'R', 'A', 'O', 'T', '3', '\n'};
constexpr uint64_t kSeed = 0x616f742d656e7472ull;

void put_u64(std::string& out, uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), 8);
}
void put_str(std::string& out, std::string_view s) {
  put_u64(out, s.size());
  out.append(s);
}

/// Reads what encode_entry wrote; a read past the end fails the reader.
struct Reader {
  std::string_view in;
  size_t at = 0;
  bool ok = true;
  uint64_t u64() {
    uint64_t v = 0;
    if (!ok || in.size() - at < 8) return ok = false, 0;
    std::memcpy(&v, in.data() + at, 8);
    at += 8;
    return v;
  }
  std::string str() {
    const uint64_t n = u64();
    if (!ok || in.size() - at < n) return ok = false, "";
    std::string s(in.substr(at, n));
    at += n;
    return s;
  }
};

/// The options as an entry holds them: each integer option (kOptionFields' order) as a u64, then
/// one word of flags, bit i for the i-th flag (inverted where the row says so).
void put_options(std::string& out, const CompileOptions& o) {
  uint64_t flags = 0;
  int bit = 0;
  for (const OptionField& f : kOptionFields) {
    if (f.integer) {
      put_u64(out, static_cast<uint64_t>(option_value(o, f)));
      continue;
    }
    const bool on = option_value(o, f) != 0;
    flags |= uint64_t{on != f.stored_inverted} << bit++;
  }
  put_u64(out, flags);
}

void read_options(Reader& r, CompileOptions& o) {
  for (const OptionField& f : kOptionFields)
    if (f.integer) set_option(o, f, static_cast<int64_t>(r.u64()));
  const uint64_t flags = r.u64();
  int bit = 0;
  for (const OptionField& f : kOptionFields)
    if (f.flag) set_option(o, f, ((flags >> bit++) & 1) != f.stored_inverted);
}

}  // namespace

std::string encode_entry(const Decoded& e) {
  std::string body;
  put_str(body, e.target);
  put_u64(body, e.is_ir);
  put_options(body, e.options);
  put_u64(body, e.specs.size());
  for (const tl::ArgSpec& s : e.specs) {
    put_u64(body, static_cast<uint64_t>(s.dtype));
    put_u64(body, s.divisible_by_16 | (uint64_t{s.equal_to_one} << 1));
    put_u64(body, static_cast<uint64_t>(s.value.kind));
    put_u64(body, static_cast<uint64_t>(s.value.i));
    uint64_t f;
    std::memcpy(&f, &s.value.f, 8);
    put_u64(body, f);
  }
  put_str(body, e.payload);
  const rt::Hash128 sum = rt::hash128(body, kSeed);
  std::string out(kMagic, sizeof kMagic);
  put_u64(out, body.size());
  put_u64(out, sum.lo);
  put_u64(out, sum.hi);
  return out + body;
}

std::optional<Decoded> decode_entry(std::string_view bytes) {
  if (bytes.size() < sizeof kMagic + 24 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return std::nullopt;
  Reader head{bytes.substr(sizeof kMagic)};
  const uint64_t size = head.u64();
  rt::Hash128 sum;
  sum.lo = head.u64();
  sum.hi = head.u64();
  const std::string_view body = bytes.substr(sizeof kMagic + 24);
  if (body.size() != size || rt::hash128(body, kSeed) != sum) return std::nullopt;
  Reader r{body};
  Decoded e;
  e.target = r.str();
  e.is_ir = r.u64() != 0;
  read_options(r, e.options);
  const uint64_t n = r.u64();
  if (!r.ok || n > body.size() / 40) return std::nullopt;
  e.specs.resize(n);
  for (tl::ArgSpec& s : e.specs) {
    const uint64_t dtype = r.u64();
    if (dtype >= ir::kNumDTypes) return std::nullopt;
    s.dtype = static_cast<ir::DType>(dtype);
    const uint64_t facts = r.u64();
    s.divisible_by_16 = facts & 1;
    s.equal_to_one = (facts >> 1) & 1;
    const uint64_t kind = r.u64();
    if (kind > static_cast<uint64_t>(tl::ConstValue::Kind::DType)) return std::nullopt;
    s.value.kind = static_cast<tl::ConstValue::Kind>(kind);
    s.value.i = static_cast<int64_t>(r.u64());
    const uint64_t f = r.u64();
    std::memcpy(&s.value.f, &f, 8);
  }
  e.payload = r.str();
  if (!r.ok || r.at != body.size()) return std::nullopt;
  return e;
}

bool target_runs_on(const target::Target& built, const target::Target& device) {
  if (built.isa != device.isa) return false;
  if (built.isa == "ptx") {
    if (built.sm > device.sm) return false;
    if (built.sm_arch_specific && built.sm != device.sm) return false;
  }
  const auto optional = decltype(built.caps){1} << static_cast<int>(target::Cap::DependentLaunch);
  if ((built.caps & ~device.caps & ~optional) != 0) return false;
  if ((device.quirks & ~built.quirks) != 0) return false;
  if (built.subgroup_size != device.subgroup_size || built.loop_limit != device.loop_limit)
    return false;
  if (built.push_constant_bytes > device.push_constant_bytes) return false;
  for (const target::MatrixShape& m : built.matrix_shapes)
    if (std::find(device.matrix_shapes.begin(), device.matrix_shapes.end(), m) ==
        device.matrix_shapes.end())
      return false;
  for (const target::WorkgroupShape& m : built.workgroup_shapes)
    if (std::find(device.workgroup_shapes.begin(), device.workgroup_shapes.end(), m) ==
        device.workgroup_shapes.end())
      return false;
  return true;
}

}  // namespace aot

namespace {

/// Whether an entry built for `built` serves a launch whose arguments have `actual`: the same
/// dtypes and constants, and every fact the entry assumed holds for the launch.
bool spec_applies(std::span<const tl::ArgSpec> built, std::span<const tl::ArgSpec> actual,
                  const std::vector<tl::ParamDesc>& params) {
  if (built.size() != actual.size()) return false;
  for (size_t i = 0; i < built.size(); ++i) {
    const tl::ArgSpec& b = built[i];
    const tl::ArgSpec& a = actual[i];
    if (params[i].cls == tl::ParamClass::Constexpr) {
      if (!(b.value == a.value)) return false;
      continue;
    }
    if (b.dtype != a.dtype) return false;
    if (b.divisible_by_16 && !a.divisible_by_16) return false;
    if (b.equal_to_one && !a.equal_to_one) return false;
  }
  return true;
}

/// How many facts an entry assumed (a more specialized entry is preferred).
int facts_of(std::span<const tl::ArgSpec> specs) {
  int n = 0;
  for (const tl::ArgSpec& s : specs) n += s.divisible_by_16 + s.equal_to_one;
  return n;
}

/// Whether the artifact's workgroup and shared memory fit the device's limits.
bool fits(const target::Artifact& artifact, const target::Target& device) {
  return static_cast<int64_t>(artifact.threads) <= device.max_threads &&
         static_cast<int64_t>(artifact.shared_bytes) <= device.max_shared_bytes;
}

std::string dtype_text(ir::DType t) {
  return std::string(ir::dtype_name(t));
}

/// A launch's (or an entry's) specialization in the notation tessera_add_kernels takes.
std::string spec_text(const std::vector<std::string>& names,
                      const std::vector<tl::ParamDesc>& params, std::span<const tl::ArgSpec> specs,
                      const CompileOptions& options) {
  std::string out;
  for (size_t i = 0; i < specs.size() && i < params.size(); ++i) {
    const tl::ArgSpec& s = specs[i];
    out += (out.empty() ? "" : " ") + names[i] + "=";
    if (params[i].cls == tl::ParamClass::Constexpr) {
      switch (s.value.kind) {
        case tl::ConstValue::Kind::Int:
          out += std::to_string(s.value.i);
          break;
        case tl::ConstValue::Kind::Bool:
          out += s.value.i ? "true" : "false";
          break;
        case tl::ConstValue::Kind::DType:
          out += dtype_text(static_cast<ir::DType>(s.value.i));
          break;
        case tl::ConstValue::Kind::Float: {
          char text[32];
          std::snprintf(text, sizeof text, "%.17g", s.value.f);
          out += text;
          break;
        }
      }
      continue;
    }
    out += dtype_text(s.dtype);
    if (params[i].cls == tl::ParamClass::Pointer) {
      if (!s.divisible_by_16) out += ":unaligned";
    } else {
      if (s.divisible_by_16) out += ":div16";
      if (s.equal_to_one) out += ":one";
    }
  }
  out += " " + describe(options, OptionsText::Short);
  return out;
}

}  // namespace

AotKernel::AotKernel(std::string name, std::string_view param_names,
                     std::vector<tl::ParamDesc> params, std::span<const aot::Entry> entries,
                     const KernelBase* fallback)
    : KernelBase(std::move(name), split_param_names(param_names), std::move(params)),
      entries_(entries),
      fallback_(fallback) {}

std::vector<std::string> AotKernel::built() const {
  std::vector<std::string> out;
  for (const aot::Entry& e : entries_) out.push_back(std::string(e.target) + ": " + e.label);
  return out;
}

std::unique_ptr<ir::Module> AotKernel::trace(const std::vector<tl::ArgSpec>& specs) const {
  if (fallback_) return fallback_->trace(specs);
  fail(ErrorKind::Unsupported, "kernel '", name(),
       "' was compiled ahead of time: its tile IR is not in this program (build it with "
       "JIT_FALLBACK to trace it here)");
}

const std::vector<aot::Decoded>& AotKernel::decoded() const {
  std::lock_guard lock(decode_mutex_);
  if (decoded_ok_) return decoded_;
  std::vector<aot::Decoded> out;
  for (const aot::Entry& e : entries_) {
    std::optional<aot::Decoded> d =
        aot::decode_entry(std::string_view(reinterpret_cast<const char*>(e.bytes), e.size));
    if (!d || d->specs.size() != params().size())
      fail(ErrorKind::Runtime, "kernel '", name(), "': the embedded artifact for ", e.target, " (",
           e.label,
           ") is damaged (its checksum or layout does not match); rebuild the "
           "program");
    out.push_back(std::move(*d));
  }
  decoded_ = std::move(out);
  decoded_ok_ = true;
  return decoded_;
}

std::shared_ptr<const rt::CompiledKernel> AotKernel::compile_for(
    rt::DeviceImpl& device, const std::vector<tl::ArgSpec>& specs,
    const LaunchOptions& options) const {
  const std::vector<aot::Decoded>& entries = decoded();
  const rt::ArtifactBackend* backend = rt::artifact_backend_of(device);
  std::optional<target::Target> device_target = target::parse_target(device.info().target);
  const aot::Decoded* best = nullptr;
  std::optional<target::Artifact> best_artifact;
  int best_score = -1;
  for (const aot::Decoded& e : entries) {
    if (!spec_applies(e.specs, specs, params())) continue;
    int score = facts_of(e.specs) * 1000;
    std::optional<target::Artifact> artifact;
    if (e.is_ir) {
      if (backend) continue;  // tile IR runs on the interpreters only
    } else {
      if (!backend || !device_target || !(e.options == options)) continue;
      std::optional<target::Target> built = target::parse_target(e.target);
      if (!built || !aot::target_runs_on(*built, *device_target)) continue;
      artifact = rt::deserialize_artifact(e.payload);
      if (!artifact)
        fail(ErrorKind::Runtime, "kernel '", name(), "': the embedded artifact for ", e.target,
             " does not decode; rebuild the program");
      if (!fits(*artifact, *device_target)) continue;
      score += built->sm + (e.target == device.info().target ? 500 : 0);
    }
    if (score > best_score) best = &e, best_artifact = std::move(artifact), best_score = score;
  }
  if (best && best->is_ir) {
    std::unique_ptr<ir::Module> module = ir::parse(best->payload, name() + " (ahead of time)");
    return device.compile(*module, options);
  }
  if (best) return rt::load_artifact(*backend, device, *best_artifact);
  if (fallback_) return fallback_->compile_for(device, specs, options);
  // What was built, one line per specialization with its targets, in the order given.
  std::vector<std::pair<std::string, std::string>> lines;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const std::string spec =
        spec_text(param_names(), params(), entries[i].specs, entries[i].options);
    auto line = std::find_if(lines.begin(), lines.end(), [&](auto& l) { return l.first == spec; });
    if (line == lines.end()) line = lines.insert(lines.end(), {spec, ""});
    line->second += (line->second.empty() ? "" : ", ") + std::string(entries_[i].target);
  }
  std::string list;
  for (const auto& [spec, targets] : lines) list += "\n  " + spec + "  for " + targets;
  fail(ErrorKind::Unsupported, "kernel '", name(),
       "' was not built ahead of time for this launch on ", device.info().name, " (",
       device.info().description, "): ", spec_text(param_names(), params(), specs, options),
       "; built:", list.empty() ? std::string(" nothing") : list);
}

}  // namespace tessera
