/// \file Pipeline creation from artifacts (with the limit checks that name the kernel) and the
/// disk-backed pipeline cache.
#include "runtime/vulkan/pipeline.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <vector>

#include "core/support/dump.h"
#include "runtime/cache.h"

namespace tessera::rt::vk {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'T', 'S', 'V', 'K', 'P', 'C', '0', '1'};
constexpr size_t kFileHeader = 24;  // magic, payload size (u64), payload hash (u64)

uint64_t fnv1a(const std::byte* data, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<uint8_t>(data[i])) * 1099511628211ull;
  return h;
}

std::string hex(const uint8_t* bytes, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[bytes[i] >> 4];
    s += digits[bytes[i] & 15];
  }
  return s;
}

std::string cache_path(const PhysicalFacts& facts) {
  const fs::path dir = tessera::cache_dir("vulkan");
  if (dir.empty()) return "";
  char ids[64];
  std::snprintf(ids, sizeof ids, "%04x-%04x-", facts.props.vendorID, facts.props.deviceID);
  char driver[16];
  std::snprintf(driver, sizeof driver, "-%08x", facts.props.driverVersion);
  return (dir / (ids + hex(facts.p11.deviceUUID, VK_UUID_SIZE) + driver + ".pipelines")).string();
}

/// What a path that cannot hold the cache is, for the warning.
const char* describe_mode(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

/// One line on stderr per unusable path and process.
void warn_unusable(const std::string& path, const char* what) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard lock(mutex);
  if (!warned.insert(path).second) return;
  std::fprintf(stderr,
               "tessera: warning: the Vulkan pipeline cache %s is %s; the cache is neither read "
               "nor written (point TESSERA_CACHE_DIR elsewhere)\n",
               path.c_str(), what);
}

/// Whether `path` may hold the cache: missing (it will be made) or a regular file. Anything else
/// there (a directory, a FIFO, a device such as /dev/zero, through a link or not, or a folder on
/// the way that is not a folder) is left alone, with one warning per path and process: reading a
/// FIFO blocks until a writer comes, /dev/zero never ends, and replacing them would destroy what
/// the user put there.
bool usable_path(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISREG(st.st_mode)) return true;
    warn_unusable(path, describe_mode(st.st_mode));
    return false;
  }
  if (errno != ENOTDIR) return true;  // missing: made when saved (other failures: saving fails)
  warn_unusable(path, "below something that is not a directory");
  return false;
}

/// The file's bytes; empty if it cannot be read or is not a regular file. Opened without
/// blocking and checked on the open descriptor, so a FIFO put there after usable_path() cannot
/// hang the device's opening.
std::vector<char> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return {};
  std::vector<char> raw;
  struct stat st{};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buf[1 << 16];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) raw.insert(raw.end(), buf, buf + n);
  } else {
    warn_unusable(path, describe_mode(st.st_mode));
  }
  ::close(fd);
  return raw;
}

/// The cache data in `path` if the file is intact and made by this device and driver.
std::vector<std::byte> read_cache(const std::string& path, const PhysicalFacts& facts) {
  std::vector<char> raw = read_file(path);
  if (raw.size() < kFileHeader) return {};
  std::vector<std::byte> file(raw.size());
  std::memcpy(file.data(), raw.data(), raw.size());
  if (std::memcmp(file.data(), kMagic, 8) != 0) return {};
  uint64_t size, hash;
  std::memcpy(&size, file.data() + 8, 8);
  std::memcpy(&hash, file.data() + 16, 8);
  if (size != file.size() - kFileHeader || fnv1a(file.data() + kFileHeader, size) != hash)
    return {};
  std::vector<std::byte> data(file.begin() + kFileHeader, file.end());
  // Vulkan's own header: length, version, vendor, device, pipelineCacheUUID.
  if (data.size() < 16 + VK_UUID_SIZE) return {};
  uint32_t words[4];
  std::memcpy(words, data.data(), 16);
  if (words[0] < 16 + VK_UUID_SIZE || words[1] != VK_PIPELINE_CACHE_HEADER_VERSION_ONE ||
      words[2] != facts.props.vendorID || words[3] != facts.props.deviceID ||
      std::memcmp(data.data() + 16, facts.props.pipelineCacheUUID, VK_UUID_SIZE) != 0)
    return {};
  return data;
}

uint32_t round4(uint32_t v) {
  return (v + 3) / 4 * 4;
}

}  // namespace

PipelineCache::PipelineCache(std::shared_ptr<Context> ctx)
    : ctx_(std::move(ctx)), path_(cache_path(ctx_->facts())) {
  usable_ = !path_.empty() && usable_path(path_);
  std::vector<std::byte> data =
      usable_ ? read_cache(path_, ctx_->facts()) : std::vector<std::byte>();
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = data.size();
  info.pInitialData = data.empty() ? nullptr : data.data();
  VkPipelineCache cache = VK_NULL_HANDLE;
  VkResult r = ctx_->fns().vkCreatePipelineCache(ctx_->device(), &info, nullptr, &cache);
  if (r != VK_SUCCESS && !data.empty()) {  // the driver refused the data: start empty
    data.clear();
    info.initialDataSize = 0;
    info.pInitialData = nullptr;
    r = ctx_->fns().vkCreatePipelineCache(ctx_->device(), &info, nullptr, &cache);
  }
  ctx_->check(r, "vkCreatePipelineCache");
  loaded_bytes_ = data.size();
  cache_ = UniquePipelineCache(ctx_.get(), cache);
}

PipelineCache::~PipelineCache() {
  save();
}

void PipelineCache::save() const {
  if (!usable_ || ctx_->lost() || !usable_path(path_)) return;
  size_t size = 0;
  if (ctx_->fns().vkGetPipelineCacheData(ctx_->device(), cache_.get(), &size, nullptr) !=
      VK_SUCCESS)
    return;
  std::vector<std::byte> data(kFileHeader + size);
  if (ctx_->fns().vkGetPipelineCacheData(ctx_->device(), cache_.get(), &size,
                                         data.data() + kFileHeader) != VK_SUCCESS)
    return;
  data.resize(kFileHeader + size);
  uint64_t size64 = size, hash = fnv1a(data.data() + kFileHeader, size);
  std::memcpy(data.data(), kMagic, 8);
  std::memcpy(data.data() + 8, &size64, 8);
  std::memcpy(data.data() + 16, &hash, 8);

  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  fs::create_directories(fs::path(path_).parent_path(), ec);
  std::string tmp = path_ + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out.write(reinterpret_cast<const char*>(data.data()),
              static_cast<std::streamsize>(data.size()));
    if (!out.flush()) {
      out.close();
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, path_, ec);
  if (ec) fs::remove(tmp, ec);
}

namespace {

/// Throws when the artifact cannot run on the device, naming the kernel, the need and the limit.
void check_artifact(const Context& ctx, const target::Artifact& a) {
  const VkPhysicalDeviceLimits& l = ctx.limits();
  const PhysicalFacts& facts = ctx.facts();
  std::string on = ctx.name() + " (" + facts.device_name() + ")";
  if (!a.isa.starts_with("spirv"))
    fail(ErrorKind::Unsupported, "kernel ", a.kernel, ": a '", a.isa, "' artifact cannot run on ",
         on);
  if (a.spirv.empty() || a.spirv[0] != 0x07230203u)
    fail(ErrorKind::Argument, "kernel ", a.kernel,
         ": the SPIR-V binary is empty or lacks the magic number");
  if (a.shared_bytes > facts.shared_bytes_limit())
    fail(ErrorKind::Unsupported, "kernel ", a.kernel, " needs ", a.shared_bytes,
         " bytes of shared memory; ", on, " has ", facts.shared_bytes_limit(),
         facts.coopmat2_enabled()
             ? " (maxComputeSharedMemorySize less VK_NV_cooperative_matrix2's reservation)"
             : " (maxComputeSharedMemorySize)");
  uint32_t max_threads = std::min(l.maxComputeWorkGroupInvocations, l.maxComputeWorkGroupSize[0]);
  if (a.threads == 0 || a.threads > max_threads)
    fail(ErrorKind::Unsupported, "kernel ", a.kernel, " has ", a.threads,
         " threads per workgroup; ", on, " allows 1..", max_threads);
  if (a.subgroup != 0) {
    bool pow2 = (a.subgroup & (a.subgroup - 1)) == 0;
    if (!pow2 || a.subgroup < facts.p13.minSubgroupSize || a.subgroup > facts.p13.maxSubgroupSize ||
        !(facts.p13.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT))
      fail(ErrorKind::Unsupported, "kernel ", a.kernel, " was compiled for subgroup size ",
           a.subgroup, "; ", on, " supports ", facts.p13.minSubgroupSize, "..",
           facts.p13.maxSubgroupSize);
    if (a.threads % a.subgroup != 0 ||
        a.threads / a.subgroup > facts.p13.maxComputeWorkgroupSubgroups)
      fail(ErrorKind::Unsupported, "kernel ", a.kernel, ": ", a.threads,
           " threads are not a whole number of subgroups of ", a.subgroup, " (at most ",
           facts.p13.maxComputeWorkgroupSubgroups, ") on ", on);
  }
  TESSERA_CHECK(a.params.size <= a.param_bytes, "kernel ", a.kernel, ": parameter block of ",
                a.param_bytes, " bytes is smaller than its parameters (", a.params.size, ")");
  TESSERA_CHECK(
      a.grid_offset < 0 || (a.grid_offset % 4 == 0 && a.grid_offset + 12 <= a.param_bytes),
      "kernel ", a.kernel, ": grid words at ", a.grid_offset, " outside the ", a.param_bytes,
      "-byte parameter block");
  uint32_t push = a.params_by_address ? 8 : round4(a.param_bytes);
  if (push > l.maxPushConstantsSize)
    fail(ErrorKind::Unsupported, "kernel ", a.kernel, " has a ", a.param_bytes,
         "-byte parameter block; push constants hold ", l.maxPushConstantsSize, " bytes on ", on,
         " (the compiler must pass the block by address)");
}

/// TESSERA_DUMP=vkstats prints the driver's statistics of each pipeline it compiles (registers,
/// spills, instruction counts: whatever the driver reports through
/// VK_KHR_pipeline_executable_properties); vkisa adds the driver's text representations (its
/// intermediate or machine code). The pipeline must be created with the flags this returns.
VkPipelineCreateFlags capture_flags(const Context& ctx) {
  if (!ctx.fns().vkGetPipelineExecutablePropertiesKHR) return 0;
  VkPipelineCreateFlags flags = 0;
  if (dump_enabled("vkstats") || dump_enabled("vkisa"))
    flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  if (dump_enabled("vkisa")) flags |= VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR;
  return flags;
}

std::string statistic_value(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
      return s.value.b32 ? "true" : "false";
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
      return std::to_string(s.value.i64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
      return std::to_string(s.value.u64);
    default:
      return std::to_string(s.value.f64);
  }
}

void report_executables(const Context& ctx, VkPipeline pipeline, const std::string& kernel,
                        VkPipelineCreateFlags flags) {
  const DeviceFns& f = ctx.fns();
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = pipeline;
  uint32_t count = 0;
  if (f.vkGetPipelineExecutablePropertiesKHR(ctx.device(), &info, &count, nullptr) != VK_SUCCESS)
    return;
  std::vector<VkPipelineExecutablePropertiesKHR> execs(
      count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  f.vkGetPipelineExecutablePropertiesKHR(ctx.device(), &info, &count, execs.data());
  for (uint32_t i = 0; i < count; ++i) {
    std::fprintf(stderr, "// vkstats %s on %s, executable %u (%s): subgroup %u\n", kernel.c_str(),
                 ctx.name().c_str(), i, execs[i].name, execs[i].subgroupSize);
    VkPipelineExecutableInfoKHR exec{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    exec.pipeline = pipeline;
    exec.executableIndex = i;
    uint32_t n = 0;
    f.vkGetPipelineExecutableStatisticsKHR(ctx.device(), &exec, &n, nullptr);
    std::vector<VkPipelineExecutableStatisticKHR> stats(
        n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    f.vkGetPipelineExecutableStatisticsKHR(ctx.device(), &exec, &n, stats.data());
    for (const auto& s : stats)
      std::fprintf(stderr, "//   %s = %s\n", s.name, statistic_value(s).c_str());
    if (!(flags & VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR)) continue;
    f.vkGetPipelineExecutableInternalRepresentationsKHR(ctx.device(), &exec, &n, nullptr);
    std::vector<VkPipelineExecutableInternalRepresentationKHR> reps(
        n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR});
    f.vkGetPipelineExecutableInternalRepresentationsKHR(ctx.device(), &exec, &n, reps.data());
    std::vector<std::vector<char>> text(n);
    for (uint32_t r = 0; r < n; ++r) {  // second call: the sizes are known, fill the text
      if (!reps[r].isText) continue;
      text[r].resize(reps[r].dataSize + 1);
      reps[r].pData = text[r].data();
    }
    f.vkGetPipelineExecutableInternalRepresentationsKHR(ctx.device(), &exec, &n, reps.data());
    for (uint32_t r = 0; r < n; ++r)
      if (reps[r].isText && reps[r].pData)
        std::fprintf(stderr, "// vkisa %s: %s\n%s\n", kernel.c_str(), reps[r].name, text[r].data());
  }
}

}  // namespace

VulkanKernel::VulkanKernel(std::shared_ptr<Context> ctx, VkPipelineCache cache,
                           const target::Artifact& a)
    : ctx_(std::move(ctx)) {
  name = a.kernel;
  params = a.params;
  threads_per_program = a.threads;
  shared_bytes = static_cast<uint32_t>(a.shared_bytes);
  param_bytes_ = a.param_bytes;
  grid_offset_ = a.grid_offset;
  params_by_address_ = a.params_by_address;
  fault_offset_ = a.fault_offset;
  faults_ = a.faults;
  print_offset_ = a.print_offset;
  prints_ = a.prints;
  push_bytes_ = a.params_by_address ? 8 : round4(a.param_bytes);
  ctx_->check_alive();
  check_artifact(*ctx_, a);

  const DeviceFns& f = ctx_->fns();
  const bool times = dump_enabled("loads");
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  Clock::time_point t0 = Clock::now();
  VkShaderModuleCreateInfo module{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module.codeSize = a.spirv.size() * sizeof(uint32_t);
  module.pCode = a.spirv.data();
  VkShaderModule shader = VK_NULL_HANDLE;
  ctx_->check(f.vkCreateShaderModule(ctx_->device(), &module, nullptr, &shader),
              "vkCreateShaderModule", a.kernel);
  module_ = UniqueShaderModule(ctx_.get(), shader);
  const double t_module = ms_since(t0);

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes_};
  VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout.pushConstantRangeCount = push_bytes_ ? 1 : 0;
  layout.pPushConstantRanges = &range;
  VkPipelineLayout pl = VK_NULL_HANDLE;
  ctx_->check(f.vkCreatePipelineLayout(ctx_->device(), &layout, nullptr, &pl),
              "vkCreatePipelineLayout", a.kernel);
  layout_ = UniquePipelineLayout(ctx_.get(), pl);

  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  subgroup.requiredSubgroupSize = a.subgroup;
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = shader;
  info.stage.pName = a.kernel.c_str();
  if (a.subgroup != 0) {  // the size the code was lowered for, with every subgroup full
    info.stage.pNext = &subgroup;
    info.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  info.layout = pl;
  info.flags = capture_flags(*ctx_);
  // TESSERA_DUMP=loads: the driver's own account of the creation (Vulkan 1.3's feedback).
  VkPipelineCreationFeedback whole{}, stage{};
  VkPipelineCreationFeedbackCreateInfo feedback{
      VK_STRUCTURE_TYPE_PIPELINE_CREATION_FEEDBACK_CREATE_INFO};
  feedback.pPipelineCreationFeedback = &whole;
  feedback.pipelineStageCreationFeedbackCount = 1;
  feedback.pPipelineStageCreationFeedbacks = &stage;
  if (times) info.pNext = &feedback;
  t0 = Clock::now();
  VkPipeline pipeline = VK_NULL_HANDLE;
  ctx_->check(f.vkCreateComputePipelines(ctx_->device(), cache, 1, &info, nullptr, &pipeline),
              "vkCreateComputePipelines", a.kernel);
  pipeline_ = UniquePipeline(ctx_.get(), pipeline);
  if (times) {
    const bool valid = whole.flags & VK_PIPELINE_CREATION_FEEDBACK_VALID_BIT;
    const bool hit = whole.flags & VK_PIPELINE_CREATION_FEEDBACK_APPLICATION_PIPELINE_CACHE_HIT_BIT;
    std::fprintf(stderr,
                 "// loads vulkan %s on %s: shader module %.3f ms, pipeline %.3f ms (%s%.3f ms by "
                 "the driver's feedback)\n",
                 a.kernel.c_str(), ctx_->name().c_str(), t_module, ms_since(t0),
                 !valid ? "no feedback, "
                 : hit  ? "pipeline cache hit, "
                        : "compiled, ",
                 valid ? static_cast<double>(whole.duration) / 1e6 : 0.0);
  }
  if (info.flags) report_executables(*ctx_, pipeline, a.kernel, info.flags);
}

void VulkanKernel::release() {
  pipeline_.reset();
  layout_.reset();
  module_.reset();
  ctx_.reset();
}

}  // namespace tessera::rt::vk
