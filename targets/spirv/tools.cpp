/// \file Validation, disassembly and optimization with SPIRV-Tools (linked statically, vulkan1.3
/// target environment).
#include "targets/spirv/spirv.h"

#include <algorithm>

#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include "core/support/error.h"

namespace tessera::spirv {
namespace {

constexpr spv_target_env kEnv = SPV_ENV_VULKAN_1_3;

/// Collects SPIRV-Tools' messages (errors and warnings) with the word index they point at.
struct Messages {
  std::string text;
  size_t index = 0;  ///< the first message's instruction number (1-based), 0 if none

  spvtools::MessageConsumer consumer() {
    return [this](spv_message_level_t level, const char*, const spv_position_t& position,
                  const char* message) {
      if (level > SPV_MSG_WARNING) return;
      if (!text.empty()) text += "\n";
      text += message;
      if (!index) index = position.index;
    };
  }
};

/// The disassembly of instruction number `ordinal` (1-based, as the validator counts; 0: none).
std::string instruction_at(const std::vector<uint32_t>& words, size_t ordinal) {
  std::string text;
  spvtools::SpirvTools tools(kEnv);
  if (ordinal == 0 || !tools.Disassemble(words, &text,
                                         SPV_BINARY_TO_TEXT_OPTION_NO_HEADER |
                                             SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES))
    return "";
  size_t line_start = 0;
  for (size_t i = 1; i < ordinal; ++i) {
    size_t end = text.find('\n', line_start);
    if (end == std::string::npos) return "";
    line_start = end + 1;
  }
  std::string line = text.substr(line_start, text.find('\n', line_start) - line_start);
  return line.substr(std::min(line.find_first_not_of(' '), line.size()));
}

}  // namespace

std::string validate(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(kEnv);
  Messages messages;
  tools.SetMessageConsumer(messages.consumer());
  spvtools::ValidatorOptions options;
  if (tools.Validate(words.data(), words.size(), options)) return "";
  std::string out = messages.text.empty() ? "invalid module" : messages.text;
  // The validator usually quotes the instruction; name it when it does not.
  std::string line = instruction_at(words, messages.index);
  if (!line.empty() && out.find(line) == std::string::npos) out += "\n  at: " + line;
  return out;
}

std::string disassemble(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(kEnv);
  Messages messages;
  tools.SetMessageConsumer(messages.consumer());
  std::string text;
  if (!tools.Disassemble(
          words, &text,
          SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT))
    fail(ErrorKind::User, "cannot disassemble SPIR-V: ", messages.text);
  return text;
}

std::vector<uint32_t> optimize(const std::vector<uint32_t>& words, std::string_view kernel) {
  spvtools::Optimizer optimizer(kEnv);
  Messages messages;
  optimizer.SetMessageConsumer(messages.consumer());
  optimizer.RegisterPerformancePasses();
  spvtools::OptimizerOptions options;
  options.set_run_validator(false);  // emit() validates before and after
  std::vector<uint32_t> out;
  TESSERA_CHECK(optimizer.Run(words.data(), words.size(), &out, options),
                "spirv-opt failed on kernel '", kernel, "': ", messages.text);
  return out;
}

}  // namespace tessera::spirv
