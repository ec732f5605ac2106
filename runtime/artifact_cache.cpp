/// \file The artifact cache's entries (a header, the full key, the serialized artifact), the
/// compiler build's identity, and the launch's compile through the cache.
#include "runtime/artifact_cache.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <type_traits>
#include <vector>

#include "core/ir/printer.h"
#include "core/support/dump.h"
#include "core/support/error.h"
#include "core/target/target.h"
#include "runtime/cache.h"
#include "runtime/hash.h"
#include "runtime/version.h"

namespace tessera::rt {
namespace {

/// Bumped whenever the entry layout or the serialized Artifact changes (3: Artifact::cluster
/// after shared_bytes; 4: Artifact::dependent_launch after it), so that older entries are refused
/// and compiled again, never misread.
constexpr const char* kFormat = "tessera-artifact-4";
constexpr char kMagic[8] = {'T', 'S', 'R', 'A', 'R', 'T', '4', '\n'};
/// magic, key bytes, payload bytes, payload checksum (lo, hi)
constexpr size_t kHeaderBytes = sizeof kMagic + 4 * 8;

// --- The compiler build ------------------------------------------------------------------------

/// The GNU build id (NT_GNU_BUILD_ID) of the loaded object holding `address`, as hex; "" if none.
std::string build_id_of(const void* address) {
  struct Search {
    uintptr_t address;
    std::string id;
  } search{reinterpret_cast<uintptr_t>(address), ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto& s = *static_cast<Search*>(data);
        bool holds = false;
        for (int i = 0; i < info->dlpi_phnum && !holds; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          holds = ph.p_type == PT_LOAD && s.address >= start && s.address < start + ph.p_memsz;
        }
        if (!holds) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
          const char* end = p + ph.p_memsz;
          while (p + sizeof(ElfW(Nhdr)) <= end) {
            ElfW(Nhdr) note;
            std::memcpy(&note, p, sizeof note);
            const char* name = p + sizeof note;
            const char* desc = name + ((note.n_namesz + 3) & ~3u);
            if (desc + note.n_descsz > end) break;
            if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0) {
              for (uint32_t k = 0; k < note.n_descsz; ++k) {
                char hex[3];
                std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(desc[k]));
                s.id += hex;
              }
              return 1;
            }
            p = desc + ((note.n_descsz + 3) & ~3u);
          }
        }
        return 1;  // the object holding the address has no build id
      },
      &search);
  return search.id;
}

/// The size and modification time of the file holding `address` (builds without a build id).
std::string file_stamp_of(const void* address) {
  Dl_info info{};
  struct stat st{};
  if (!dladdr(address, &info) || !info.dli_fname || ::stat(info.dli_fname, &st) != 0)
    return "unknown-build";
  return "file:" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

// --- Serialization -----------------------------------------------------------------------------

class Writer {
 public:
  template <class T>
    requires std::is_arithmetic_v<T>
  void num(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(std::string_view s) {
    num<uint64_t>(s.size());
    out_.append(s);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

/// Reads what Writer wrote; any read past the end, or a count larger than what is left, makes
/// the reader fail (and every later read return zero).
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <class T>
    requires std::is_arithmetic_v<T>
  T num() {
    T v{};
    if (!ok_ || in_.size() - at_ < sizeof v) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string str() {
    const uint64_t n = num<uint64_t>();
    if (!ok_ || in_.size() - at_ < n) {
      ok_ = false;
      return "";
    }
    std::string s(in_.substr(at_, n));
    at_ += n;
    return s;
  }
  /// A count of items of at least `min_bytes` each (so a damaged count cannot allocate much).
  uint64_t count(size_t min_bytes) {
    const uint64_t n = num<uint64_t>();
    if (ok_ && n > (in_.size() - at_) / min_bytes) ok_ = false;
    return ok_ ? n : 0;
  }
  void require(bool condition) { ok_ = ok_ && condition; }
  bool done() const { return ok_ && at_ == in_.size(); }

 private:
  std::string_view in_;
  size_t at_ = 0;
  bool ok_ = true;
};

Hash128 checksum(std::string_view payload) {
  return hash128(payload, 0x7465737365726121ull);
}

/// Warns once per folder and process that the cache cannot be written there.
void warn_unwritable(const std::string& dir, const std::string& why) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard lock(mutex);
  if (!warned.insert(dir).second) return;
  std::fprintf(stderr,
               "tessera: warning: the artifact cache %s cannot be written (%s); kernels are "
               "compiled without it\n",
               dir.c_str(), why.c_str());
}

}  // namespace

const std::string& compiler_identity() {
  static const std::string id = [] {
    const void* here = reinterpret_cast<const void*>(&compiler_identity);
    std::string build = build_id_of(here);
    return std::string(version()) + " " + (build.empty() ? file_stamp_of(here) : build);
  }();
  return id;
}

std::string artifact_key(const ir::Module& traced, std::string_view target,
                         const CompileOptions& options) {
  std::string key = kFormat;
  key += "\ncompiler ";
  key += compiler_identity();
  key += "\ntarget ";
  key += target;
  key += "\noptions " + describe(options, OptionsText::Every) + "\n";
  key += ir::print(traced);
  return key;
}

std::string serialize_artifact(const target::Artifact& a) {
  Writer w;
  w.str(a.kernel);
  w.str(a.symbol);
  w.str(a.isa);
  w.num<uint64_t>(a.spirv.size());
  for (uint32_t word : a.spirv) w.num(word);
  w.str(a.ptx);
  w.str(a.target);
  w.num<uint64_t>(a.params.slots.size());
  for (const ir::ParamSlot& s : a.params.slots) {
    w.num(s.offset);
    w.num(s.size);
  }
  w.num(a.params.size);
  w.num(a.param_bytes);
  w.num(a.grid_offset);
  w.num<uint8_t>(a.params_by_address);
  w.num(a.fault_offset);
  w.num<uint64_t>(a.faults.size());
  for (const std::string& f : a.faults) w.str(f);
  w.num(a.print_offset);
  w.num<uint64_t>(a.prints.size());
  for (const target::Artifact::PrintSite& p : a.prints) {
    w.str(p.prefix);
    w.num(static_cast<uint8_t>(p.dtype));
    w.num<uint8_t>(p.is_ptr);
    w.num<uint8_t>(p.hex);
    w.num(p.rank);
    w.num(p.statement);
  }
  w.num(a.threads);
  w.num(a.subgroup);
  w.num(a.shared_bytes);
  w.num(a.cluster);
  w.num<uint8_t>(a.dependent_launch);
  w.num<uint64_t>(a.tensor_maps.size());
  for (const ir::TensorMapParam& m : a.tensor_maps) {
    w.num(m.base_param);
    w.num(static_cast<uint8_t>(m.dtype));
    w.num<uint64_t>(m.dims.size());
    for (const std::vector<ir::TensorMapValue>* values : {&m.dims, &m.strides})
      for (const ir::TensorMapValue& v : *values) {
        w.num(v.param);
        w.num(v.constant);
      }
    for (int64_t b : m.box) w.num(b);
    w.num(m.swizzle);
    w.num(m.copies);
  }
  w.num<uint64_t>(a.param_names.size());
  for (const std::string& n : a.param_names) w.str(n);
  return w.take();
}

std::optional<target::Artifact> deserialize_artifact(std::string_view bytes) {
  Reader r(bytes);
  target::Artifact a;
  a.kernel = r.str();
  a.symbol = r.str();
  a.isa = r.str();
  a.spirv.resize(r.count(4));
  for (uint32_t& word : a.spirv) word = r.num<uint32_t>();
  a.ptx = r.str();
  a.target = r.str();
  a.params.slots.resize(r.count(8));
  for (ir::ParamSlot& s : a.params.slots) {
    s.offset = r.num<uint32_t>();
    s.size = r.num<uint32_t>();
  }
  a.params.size = r.num<uint32_t>();
  a.param_bytes = r.num<uint32_t>();
  a.grid_offset = r.num<int64_t>();
  a.params_by_address = r.num<uint8_t>() != 0;
  a.fault_offset = r.num<int64_t>();
  a.faults.resize(r.count(8));
  for (std::string& f : a.faults) f = r.str();
  a.print_offset = r.num<int64_t>();
  a.prints.resize(r.count(8 + 3 + 8));
  for (target::Artifact::PrintSite& p : a.prints) {
    p.prefix = r.str();
    const uint8_t dtype = r.num<uint8_t>();
    r.require(dtype < ir::kNumDTypes);
    p.dtype = static_cast<ir::DType>(dtype);
    p.is_ptr = r.num<uint8_t>() != 0;
    p.hex = r.num<uint8_t>() != 0;
    p.rank = r.num<int>();
    p.statement = r.num<uint32_t>();
  }
  a.threads = r.num<uint32_t>();
  a.subgroup = r.num<uint32_t>();
  a.shared_bytes = r.num<uint64_t>();
  a.cluster = r.num<uint32_t>();
  r.require(a.cluster == 1 || a.cluster == 2 || a.cluster == 4 || a.cluster == 8);
  a.dependent_launch = r.num<uint8_t>() != 0;
  a.tensor_maps.resize(r.count(4 + 1 + 8 + 4 + 4));
  for (ir::TensorMapParam& m : a.tensor_maps) {
    m.base_param = r.num<int>();
    const uint8_t dtype = r.num<uint8_t>();
    r.require(dtype < ir::kNumDTypes);
    m.dtype = static_cast<ir::DType>(dtype);
    const uint64_t rank = r.num<uint64_t>();
    r.require(rank <= 5);
    if (rank > 5) break;
    m.dims.resize(rank);
    m.strides.resize(rank);
    m.box.resize(rank);
    for (std::vector<ir::TensorMapValue>* values : {&m.dims, &m.strides})
      for (ir::TensorMapValue& v : *values) {
        v.param = r.num<int>();
        v.constant = r.num<int64_t>();
      }
    for (int64_t& b : m.box) b = r.num<int64_t>();
    m.swizzle = r.num<int>();
    m.copies = r.num<int>();
  }
  a.param_names.resize(r.count(8));
  for (std::string& n : a.param_names) n = r.str();
  if (!r.done()) return std::nullopt;
  return a;
}

std::string artifact_cache_dir() {
  return cache_dir("artifacts");
}

std::string artifact_path(const std::string& key) {
  const std::string dir = artifact_cache_dir();
  if (dir.empty()) return "";
  return (std::filesystem::path(dir) / (hash128(key).hex() + ".artifact")).string();
}

std::optional<target::Artifact> artifact_read(const std::string& key) {
  const std::string path = artifact_path(key);
  if (path.empty()) return std::nullopt;
  std::optional<std::string> file = read_cache_file(path);
  if (!file || file->size() < kHeaderBytes || std::memcmp(file->data(), kMagic, sizeof kMagic) != 0)
    return std::nullopt;
  uint64_t key_bytes = 0, payload_bytes = 0;
  Hash128 sum;
  const char* h = file->data() + sizeof kMagic;
  std::memcpy(&key_bytes, h, 8);
  std::memcpy(&payload_bytes, h + 8, 8);
  std::memcpy(&sum.lo, h + 16, 8);
  std::memcpy(&sum.hi, h + 24, 8);
  // Exactly the header, the key and the payload: a truncated or extended file is refused.
  const std::string_view rest = std::string_view(*file).substr(kHeaderBytes);
  if (key_bytes != key.size() || rest.size() < key_bytes ||
      rest.size() - key_bytes != payload_bytes)
    return std::nullopt;
  if (rest.substr(0, key_bytes) != key) return std::nullopt;  // another kernel with this hash
  const std::string_view payload = rest.substr(key_bytes);
  if (checksum(payload) != sum) return std::nullopt;
  return deserialize_artifact(payload);
}

void artifact_write(const std::string& key, const target::Artifact& artifact) {
  const std::string path = artifact_path(key);
  if (path.empty()) return;
  const std::string payload = serialize_artifact(artifact);
  const Hash128 sum = checksum(payload);
  std::string file(kMagic, sizeof kMagic);
  for (uint64_t v : {uint64_t{key.size()}, uint64_t{payload.size()}, sum.lo, sum.hi})
    file.append(reinterpret_cast<const char*>(&v), 8);
  file += key;
  file += payload;
  std::string error;
  if (!write_cache_file(path, file, &error)) warn_unwritable(artifact_cache_dir(), error);
}

void artifact_remove(const std::string& key) {
  const std::string path = artifact_path(key);
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

namespace {

std::vector<ArtifactBackend>& backends() {
  static std::vector<ArtifactBackend> list;
  return list;
}

}  // namespace

bool register_artifact_backend(const ArtifactBackend& backend) {
  backends().push_back(backend);  // static initializers run one at a time
  return true;
}

const ArtifactBackend* artifact_backend_of(const DeviceImpl& device) {
  const ArtifactBackend* backend = nullptr;
  for (const ArtifactBackend& b : backends())
    if (b.owns(device)) backend = &b;
  return backend;
}

std::shared_ptr<const CompiledKernel> load_artifact(const ArtifactBackend& backend,
                                                    DeviceImpl& device,
                                                    const target::Artifact& artifact) {
  if (!artifact.tensor_maps.empty() && !backend.encodes_tensor_maps)
    fail(ErrorKind::Unsupported, "kernel '", artifact.kernel, "' reads ",
         artifact.tensor_maps.size(),
         " TMA tensor map(s), which only CUDA devices encode at launch; ", device.info().name, " (",
         device.info().description, ") cannot launch it");
  return backend.load(device, artifact);
}

namespace {
JitCompiler& jit_compiler() {
  static JitCompiler compiler = nullptr;
  return compiler;
}
}  // namespace

bool register_jit_compiler(JitCompiler compiler) {
  jit_compiler() = compiler;
  return true;
}

bool has_jit_compiler() {
  return jit_compiler() != nullptr;
}

target::Artifact jit_compile(const ir::Module& traced, const target::Target& target,
                             const CompileOptions& options) {
  if (!jit_compiler())
    fail(ErrorKind::Unsupported, "kernel '", traced.kernel().name, "' cannot be compiled for ",
         target.name,
         ": this program is linked with libtessera_runtime (Tessera::runtime), which "
         "holds no compiler; build the kernel ahead of time (tessera_add_kernels) or link "
         "libtessera (Tessera::tessera)");
  return jit_compiler()(traced, target, options);
}

std::shared_ptr<const CompiledKernel> compile_cached(DeviceImpl& device, const ir::Module& traced,
                                                     const CompileOptions& options) {
  const ArtifactBackend* backend = artifact_backend_of(device);
  // The interpreters run IR, not an artifact: they compile as they always have.
  if (!backend) return device.compile(traced, options);
  const std::string& target_text = device.info().target;
  std::optional<target::Target> target = target::parse_target(target_text);
  // A target text that does not describe the device whole cannot key an entry.
  if (!target || target->str() != target_text) return device.compile(traced, options);
  const std::string key = artifact_key(traced, target_text, options);
  // A dump of the compile's stages needs the compile: only `loads` (the driver's part) keeps
  // the cache.
  if (!Dumps::from_env().has_other_than("loads")) {
    if (std::optional<target::Artifact> cached = artifact_read(key)) {
      try {
        return load_artifact(*backend, device, *cached);
      } catch (const Error& e) {
        // A lost device or a full memory is no fault of the entry.
        if (e.kind() == ErrorKind::DeviceFault || e.kind() == ErrorKind::OutOfMemory) throw;
        artifact_remove(key);  // refused by the device: compile it again below
      }
    }
  }
  target::Artifact artifact = jit_compile(traced, *target, options);
  std::shared_ptr<const CompiledKernel> kernel = load_artifact(*backend, device, artifact);
  artifact_write(key, artifact);
  return kernel;
}

}  // namespace tessera::rt
