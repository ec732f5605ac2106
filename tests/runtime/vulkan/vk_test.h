/// \file What the Vulkan backend's tests share: the environment they run in (validation on,
/// a private pipeline-cache directory), the device or the reason to SKIP, hand-written GLSL
/// kernels compiled by glslc into artifacts, and parameter blocks laid out like core/ir/abi.h.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/target/artifact.h"
#include "runtime/tessera.h"
#include "runtime/vulkan/device.h"

namespace vktest {

/// Sets TESSERA_VULKAN_VALIDATION=1 and a private TESSERA_CACHE_DIR (before any device is used),
/// then opens vulkan:0; nullopt when there is no Vulkan device (see skip_reason()).
std::optional<tessera::Device> device();
/// Why there is no Vulkan device (the registry's "vulkan unavailable: ..." line).
std::string skip_reason();
/// Prints "SKIP: <reason>" visibly (doctest MESSAGE and stderr).
void report_skip(const std::string& reason);

tessera::rt::vk::VulkanDevice& impl(const tessera::Device& dev);

/// A doctest check that no validation message was recorded, then clears them.
void expect_no_validation_messages(tessera::rt::vk::VulkanDevice& dev);

/// GLSL compute source -> SPIR-V (glslc from PATH, Vulkan 1.3), with the entry point renamed to
/// `entry`; nullopt with `error` set when glslc is missing or the source does not compile.
std::optional<std::vector<uint32_t>> compile_glsl(const std::string& source,
                                                  const std::string& entry, std::string* error);

/// A packed parameter block as core/ir/abi.h lays it out (each scalar at an offset aligned to its
/// size, pointers as 64-bit addresses), plus the hidden logical-grid words when asked.
class ParamBlock {
 public:
  ParamBlock& ptr(const tessera::BufferBase& b) { return put<uint64_t>(b.address()); }
  ParamBlock& i32(int32_t v) { return put(v); }
  ParamBlock& u32(uint32_t v) { return put(v); }
  ParamBlock& u64(uint64_t v) { return put(v); }
  ParamBlock& f32(float v) { return put(v); }
  /// The user parameters' layout (before any grid words).
  tessera::ir::ParamLayout layout() const;
  /// Reserves the three grid words; returns their offset.
  uint32_t grid_words();
  const std::vector<std::byte>& bytes() const { return bytes_; }
  /// The user parameters only, as KernelBase::pack would produce them.
  std::vector<std::byte> user_bytes() const;
  uint32_t total_bytes() const { return (static_cast<uint32_t>(bytes_.size()) + 7) / 8 * 8; }

 private:
  template <class T>
  ParamBlock& put(T v) {
    size_t at = (bytes_.size() + sizeof(T) - 1) / sizeof(T) * sizeof(T);
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &v, sizeof(T));
    slots_.push_back({static_cast<uint32_t>(at), static_cast<uint32_t>(sizeof(T))});
    return *this;
  }
  std::vector<std::byte> bytes_;
  std::vector<tessera::ir::ParamSlot> slots_;
  size_t user_end_ = 0;
  bool grid_ = false;
};

/// An artifact for a GLSL kernel on `dev`: SPIR-V, the block's layout, `threads` per workgroup and
/// the device's subgroup size. Fails the test (REQUIRE) when glslc cannot compile it.
tessera::target::Artifact make_artifact(tessera::rt::vk::VulkanDevice& dev, const std::string& glsl,
                                        const std::string& name, ParamBlock& block,
                                        uint32_t threads, bool with_grid = true);

/// Launches `kernel` on the device's default stream with `block` (user parameters; the backend
/// writes the grid words) and keeps `buffers` alive for the launch.
void launch(tessera::rt::vk::VulkanDevice& dev,
            const std::shared_ptr<const tessera::rt::CompiledKernel>& kernel, tessera::Grid grid,
            const ParamBlock& block, const std::vector<tessera::BufferBase>& buffers,
            const tessera::Stream* stream = nullptr);

/// GLSL prelude of the test kernels: buffer references and the program id rebuilt from the
/// linear workgroup index and the logical grid (so folded grids work).
extern const char* const kPrelude;

}  // namespace vktest

/// Opens vulkan:0 as `dev` (a tessera::Device) or reports a SKIP and returns from the test.
#define VKTEST_DEVICE(dev)                          \
  auto dev##_maybe = ::vktest::device();            \
  if (!dev##_maybe) {                               \
    ::vktest::report_skip(::vktest::skip_reason()); \
    return;                                         \
  }                                                 \
  ::tessera::Device dev = *dev##_maybe
