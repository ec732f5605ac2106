// \file The Vulkan tests' shared helpers: environment, device or SKIP, glslc, parameter blocks.
#include "vk_test.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

namespace vktest {
namespace {

namespace fs = std::filesystem;
using tessera::rt::vk::VulkanDevice;

void set_environment() {
  static std::once_flag once;
  std::call_once(once, [] {
    setenv("TESSERA_VULKAN_VALIDATION", "1", 1);
    // A private pipeline cache, so tests neither read nor write the user's.
    std::string dir = std::string(TESSERA_BINARY_DIR) + "/tests/vulkan-cache";
    setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
  });
}

/// Renames the OpEntryPoint of a SPIR-V module (glslc keeps GLSL's "main").
void rename_entry_point(std::vector<uint32_t>& words, const std::string& name) {
  for (size_t i = 5; i < words.size();) {
    uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    if (count == 0) break;
    if (opcode != 15) {  // OpEntryPoint: model, function id, name, interface ids...
      i += count;
      continue;
    }
    size_t name_at = i + 3, name_words = 0;
    while (true) {
      uint32_t w = words[name_at + name_words++];
      if ((w >> 24) == 0 || ((w >> 16) & 0xff) == 0 || ((w >> 8) & 0xff) == 0 || (w & 0xff) == 0)
        break;
    }
    std::vector<uint32_t> literal((name.size() + 4) / 4, 0);
    std::memcpy(literal.data(), name.data(), name.size());
    std::vector<uint32_t> rest(words.begin() + name_at + name_words, words.begin() + i + count);
    std::vector<uint32_t> inst{0, words[i + 1], words[i + 2]};
    inst.insert(inst.end(), literal.begin(), literal.end());
    inst.insert(inst.end(), rest.begin(), rest.end());
    inst[0] = (static_cast<uint32_t>(inst.size()) << 16) | 15;
    words.erase(words.begin() + i, words.begin() + i + count);
    words.insert(words.begin() + i, inst.begin(), inst.end());
    return;
  }
}

}  // namespace

const char* const kPrelude = R"(#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Uints { uint v[]; };
// The program id from the linear workgroup index and the logical grid (the dispatch may be folded).
uint linear_program() {
  return gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
}
uvec3 program_id(uvec3 grid) {
  uint l = linear_program();
  return uvec3(l % grid.x, (l / grid.x) % grid.y, l / (grid.x * grid.y));
}
bool past_the_end(uvec3 grid) { return linear_program() >= grid.x * grid.y * grid.z; }
)";

std::optional<tessera::Device> device() {
  set_environment();
  for (const auto& info : tessera::Device::enumerate().devices)
    if (info.kind == "vulkan") return tessera::Device::open(info.name);
  return std::nullopt;
}

std::string skip_reason() {
  set_environment();
  for (const std::string& u : tessera::Device::enumerate().unavailable)
    if (u.starts_with("vulkan")) return u;
  return "no Vulkan device";
}

void report_skip(const std::string& reason) {
  MESSAGE("SKIP: " << reason);
  std::cerr << "SKIP: " << reason << "\n";
}

VulkanDevice& impl(const tessera::Device& dev) {
  auto* vk = dynamic_cast<VulkanDevice*>(dev.impl().get());
  REQUIRE(vk != nullptr);
  return *vk;
}

void expect_no_validation_messages(VulkanDevice& dev) {
  CHECK(dev.validation_enabled());
  std::vector<std::string> messages = dev.validation_messages();
  for (const std::string& m : messages) MESSAGE("validation: " << m);
  CHECK(messages.empty());
  dev.clear_validation_messages();
}

std::optional<std::vector<uint32_t>> compile_glsl(const std::string& source,
                                                  const std::string& entry, std::string* error) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, std::vector<uint32_t>> cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find({source, entry}); it != cache.end()) return it->second;

  fs::path dir = fs::temp_directory_path() / ("tessera-vk-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path src = dir / (entry + ".comp"), spv = dir / (entry + ".spv"),
           log = dir / (entry + ".log");
  std::ofstream(src) << source;
  std::string cmd = "glslc --target-env=vulkan1.3 -O -o '" + spv.string() + "' '" + src.string() +
                    "' > '" + log.string() + "' 2>&1";
  int status = std::system(cmd.c_str());
  std::ifstream in(spv, std::ios::binary);
  if (status != 0 || !in) {
    std::stringstream text;
    text << std::ifstream(log).rdbuf();
    *error = "glslc failed (" + std::to_string(status) + "): " + text.str();
    fs::remove_all(dir);
    return std::nullopt;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove_all(dir);
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  rename_entry_point(words, entry);
  cache[{source, entry}] = words;
  return words;
}

tessera::ir::ParamLayout ParamBlock::layout() const {
  tessera::ir::ParamLayout l;
  l.slots = slots_;
  size_t end = grid_ ? user_end_ : bytes_.size();
  l.size = static_cast<uint32_t>((end + 7) / 8 * 8);
  return l;
}

uint32_t ParamBlock::grid_words() {
  if (!grid_) {
    user_end_ = bytes_.size();
    grid_ = true;
    bytes_.resize(layout().size + 12);
  }
  return layout().size;
}

std::vector<std::byte> ParamBlock::user_bytes() const {
  std::vector<std::byte> out(bytes_.begin(), bytes_.begin() + (grid_ ? user_end_ : bytes_.size()));
  out.resize(layout().size);
  return out;
}

tessera::target::Artifact make_artifact(VulkanDevice& dev, const std::string& glsl,
                                        const std::string& name, ParamBlock& block,
                                        uint32_t threads, bool with_grid) {
  std::string error;
  auto words = compile_glsl(glsl, name, &error);
  INFO(error);
  REQUIRE(words.has_value());
  tessera::target::Artifact a;
  a.kernel = name;
  a.isa = "spirv";
  a.spirv = *words;
  a.target = dev.target().str();
  a.grid_offset = with_grid ? static_cast<int64_t>(block.grid_words()) : int64_t{-1};
  a.params = block.layout();
  a.param_bytes = block.total_bytes();
  a.threads = threads;
  a.subgroup = static_cast<uint32_t>(dev.target().subgroup_size);
  return a;
}

void launch(VulkanDevice& dev, const std::shared_ptr<const tessera::rt::CompiledKernel>& kernel,
            tessera::Grid grid, const ParamBlock& block,
            const std::vector<tessera::BufferBase>& buffers, const tessera::Stream* stream) {
  std::vector<std::shared_ptr<tessera::rt::Allocation>> keep;
  for (const auto& b : buffers) keep.push_back(b.allocation());
  auto s = stream ? stream->impl() : dev.default_stream();
  s->launch(kernel, grid, block.user_bytes(), std::move(keep));
}

}  // namespace vktest
