/// \file SPIRV-Tools behind the SPIR-V target's small interface (internal): spirv.h declares
/// validate() and disassemble(); the optimizer is only run by emit().
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace tessera::spirv::impl {

/// spirv-opt's performance passes for Vulkan 1.3; an optimizer failure is an internal error.
std::vector<uint32_t> optimize(const std::vector<uint32_t>& words, std::string_view kernel);

}  // namespace tessera::spirv::impl
