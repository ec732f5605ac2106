/// \file Validation, disassembly and optimization with SPIRV-Tools (linked statically, vulkan1.3
/// target environment), and the disassembly of the SPV_KHR_cooperative_matrix instructions that
/// SPIRV-Tools 2023.1 does not know.
// spv::HasResultAndType (spirv.hpp's utility code) tells which words are result ids.
#define SPV_ENABLE_UTILITY_CODE
#include "targets/spirv/spirv.h"

#include <algorithm>
#include <functional>
#include <map>

#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include "core/support/error.h"
#include "targets/spirv/coopmat2_nv.h"
#include "targets/spirv/coopmat_khr.h"

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

// --- SPV_KHR_cooperative_matrix -----------------------------------------------------------------

constexpr uint32_t kNop = 1u << 16 | spv::OpNop;

/// The instructions of SPV_NV_cooperative_matrix2 and SPV_NV_tensor_addressing that the builder
/// emits, with their names; nullptr for any other opcode.
const char* nv_op_name(spv::Op opcode) {
  static const std::map<spv::Op, const char*> kNames = {
      {nv::kOpCooperativeMatrixLoadTensor, "OpCooperativeMatrixLoadTensorNV"},
      {nv::kOpCooperativeMatrixStoreTensor, "OpCooperativeMatrixStoreTensorNV"},
      {nv::kOpTypeTensorLayout, "OpTypeTensorLayoutNV"},
      {nv::kOpTypeTensorView, "OpTypeTensorViewNV"},
      {nv::kOpCreateTensorLayout, "OpCreateTensorLayoutNV"},
      {nv::kOpTensorLayoutSetDimension, "OpTensorLayoutSetDimensionNV"},
      {nv::kOpTensorLayoutSetStride, "OpTensorLayoutSetStrideNV"},
      {nv::kOpTensorLayoutSlice, "OpTensorLayoutSliceNV"},
      {nv::kOpTensorLayoutSetClampValue, "OpTensorLayoutSetClampValueNV"},
      {nv::kOpCreateTensorView, "OpCreateTensorViewNV"},
      {nv::kOpTensorViewSetDimension, "OpTensorViewSetDimensionNV"},
      {nv::kOpTensorViewSetStride, "OpTensorViewSetStrideNV"},
      {nv::kOpTensorViewSetClip, "OpTensorViewSetClipNV"}};
  auto it = kNames.find(opcode);
  return it == kNames.end() ? nullptr : it->second;
}

bool is_nv_capability(spv::Capability c) {
  return c == nv::kCapabilityTensorAddressing ||
         c == nv::kCapabilityCooperativeMatrixTensorAddressing;
}

/// An instruction SPIRV-Tools 2023.1 cannot read: SPV_KHR_cooperative_matrix's, and
/// SPV_KHR_bfloat16's capabilities and float type (OpTypeFloat with an encoding operand).
bool unknown_to_tools(const uint32_t* inst) {
  const auto opcode = static_cast<spv::Op>(inst[0] & 0xffff);
  const auto capability = static_cast<spv::Capability>(inst[1]);
  return (opcode >= khr::kOpTypeCooperativeMatrix && opcode <= khr::kOpCooperativeMatrixMulAdd) ||
         nv_op_name(opcode) ||
         (opcode == spv::OpCapability &&
          (capability == khr::kCapabilityCooperativeMatrix || is_nv_capability(capability) ||
           capability == khr::kCapabilityBFloat16Type ||
           capability == khr::kCapabilityBFloat16CooperativeMatrix)) ||
         (opcode == spv::OpTypeFloat && (inst[0] >> 16) == 4);
}

/// The names of a mask's bits ("A|B"), from `bits`: {bit, name} pairs.
std::string mask_text(uint32_t mask, std::initializer_list<std::pair<uint32_t, const char*>> bits) {
  std::string out;
  for (auto [bit, name] : bits)
    if (mask & bit) out += (out.empty() ? "" : "|") + std::string(name);
  return out;
}

/// A memory operand mask and its alignment literal ("Aligned|NonPrivatePointer 2", "None"),
/// from word `at`; `at` moves past them.
std::string memory_text(const uint32_t* inst, uint32_t count, uint32_t* at) {
  if (*at >= count) return "";
  const uint32_t mask = inst[(*at)++];
  std::string text = mask_text(mask, {{0x1, "Volatile"},
                                      {0x2, "Aligned"},
                                      {0x4, "Nontemporal"},
                                      {0x8, "MakePointerAvailable"},
                                      {0x10, "MakePointerVisible"},
                                      {0x20, "NonPrivatePointer"}});
  if (mask == 0) text = "None";
  if ((mask & 0x2) && *at < count) text += " " + std::to_string(inst[(*at)++]);
  return text;
}

/// One SPV_NV_cooperative_matrix2 / SPV_NV_tensor_addressing instruction or capability, as
/// SPIRV-Tools would print it (without the indentation): its ids named by `name`, the tensor
/// loads' and stores' masks by their bits.
std::string nv_text(const uint32_t* inst, const std::function<std::string(uint32_t)>& name,
                    std::string* result) {
  const auto opcode = static_cast<spv::Op>(inst[0] & 0xffff);
  const uint32_t count = inst[0] >> 16;
  if (opcode == spv::OpCapability)
    return inst[1] == nv::kCapabilityTensorAddressing
               ? "OpCapability TensorAddressingNV"
               : "OpCapability CooperativeMatrixTensorAddressingNV";
  std::string text = nv_op_name(opcode);
  const bool is_type = opcode == nv::kOpTypeTensorLayout || opcode == nv::kOpTypeTensorView;
  const bool is_store = opcode == nv::kOpCooperativeMatrixStoreTensor;
  uint32_t at = 1;
  if (is_type) {
    *result = name(inst[at++]);
  } else if (!is_store) {
    const std::string type = name(inst[at++]);
    *result = name(inst[at++]);
    text += " " + type;
  }
  const bool tensor = is_store || opcode == nv::kOpCooperativeMatrixLoadTensor;
  const uint32_t ids_end = tensor ? at + 3 : count;
  for (; at < ids_end && at < count; ++at) text += " " + name(inst[at]);
  if (!tensor) return text;
  text += " " + memory_text(inst, count, &at);
  if (at < count) {
    const uint32_t mask = inst[at++];
    text += mask == 0 ? " None"
                      : " " + mask_text(mask, {{nv::kTensorAddressingView, "TensorView"},
                                               {nv::kTensorAddressingDecodeFunc, "DecodeFunc"}});
  }
  for (; at < count; ++at) text += " " + name(inst[at]);
  return text;
}

/// One KHR instruction as SPIRV-Tools would print it (indented to column 15), its ids named by
/// `name`. Memory operands other than a mask of known bits are not expected (the emitter gives
/// only NonPrivatePointer) and printed as numbers.
std::string khr_line(const uint32_t* inst, const std::function<std::string(uint32_t)>& name) {
  const auto opcode = static_cast<spv::Op>(inst[0] & 0xffff);
  const uint32_t count = inst[0] >> 16;
  std::string result, text;
  auto ids = [&](uint32_t from, uint32_t to) {
    for (uint32_t i = from; i < to && i < count; ++i) text += " " + name(inst[i]);
  };
  auto rest = [&](uint32_t from, std::string mask) {
    if (from >= count) return;
    text += " " + (mask.empty() ? std::to_string(inst[from]) : mask);
    for (uint32_t i = from + 1; i < count; ++i) text += " " + std::to_string(inst[i]);
  };
  auto memory = [&](uint32_t at) {
    rest(at, at < count ? mask_text(inst[at], {{0x1, "Volatile"},
                                               {0x2, "Aligned"},
                                               {0x4, "Nontemporal"},
                                               {0x8, "MakePointerAvailable"},
                                               {0x10, "MakePointerVisible"},
                                               {0x20, "NonPrivatePointer"}})
                        : "");
  };
  if (nv_op_name(opcode) ||
      (opcode == spv::OpCapability && is_nv_capability(static_cast<spv::Capability>(inst[1])))) {
    text = nv_text(inst, name, &result);
  } else if (opcode == spv::OpCapability) {
    const auto c = static_cast<spv::Capability>(inst[1]);
    text = c == khr::kCapabilityCooperativeMatrix ? "OpCapability CooperativeMatrixKHR"
           : c == khr::kCapabilityBFloat16Type    ? "OpCapability BFloat16TypeKHR"
                                                  : "OpCapability BFloat16CooperativeMatrixKHR";
  } else if (opcode == spv::OpTypeFloat) {
    result = name(inst[1]);
    text = "OpTypeFloat " + std::to_string(inst[2]) +
           (inst[3] == khr::kFPEncodingBFloat16 ? " BFloat16KHR" : " " + std::to_string(inst[3]));
  } else if (opcode == khr::kOpTypeCooperativeMatrix) {
    result = name(inst[1]);
    text = "OpTypeCooperativeMatrixKHR";
    ids(2, 7);
  } else if (opcode == khr::kOpCooperativeMatrixStore) {
    text = "OpCooperativeMatrixStoreKHR";
    ids(1, 5);
    memory(5);
  } else {
    result = name(inst[2]);
    const bool load = opcode == khr::kOpCooperativeMatrixLoad;
    text = load ? "OpCooperativeMatrixLoadKHR" : "OpCooperativeMatrixMulAddKHR";
    ids(1, 2);
    ids(3, 6);
    if (load) memory(6);
    if (!load)
      rest(6, count > 6 ? mask_text(inst[6],
                                    {{khr::kMatrixASigned, "MatrixASignedComponentsKHR"},
                                     {khr::kMatrixBSigned, "MatrixBSignedComponentsKHR"},
                                     {khr::kMatrixCSigned, "MatrixCSignedComponentsKHR"},
                                     {khr::kMatrixResultSigned, "MatrixResultSignedComponentsKHR"}})
                        : "");
  }
  const std::string lead = result.empty() ? "" : result + " = ";
  return std::string(lead.size() < 15 ? 15 - lead.size() : 0, ' ') + lead + text;
}

/// SPIRV-Tools disassembles the module with each instruction it cannot read replaced by an OpNop
/// (one line per instruction either way); those lines are then printed here, with the names
/// SPIRV-Tools gave the ids on the lines that define them (an id a KHR instruction defines: its
/// OpName, else its number, as SPIRV-Tools prints it where it is used).
std::string disassemble_coopmat(const std::vector<uint32_t>& words, uint32_t options) {
  std::vector<uint32_t> patched(words.begin(), words.begin() + 5);
  std::vector<size_t> starts;
  for (size_t at = 5; at < words.size(); at += words[at] >> 16) {
    TESSERA_CHECK((words[at] >> 16) != 0 && at + (words[at] >> 16) <= words.size(),
                  "malformed SPIR-V at word ", at);
    starts.push_back(at);
    if (unknown_to_tools(&words[at]))
      patched.push_back(kNop);
    else
      patched.insert(patched.end(), words.begin() + at, words.begin() + at + (words[at] >> 16));
  }
  std::string text;
  if (!spvtools::SpirvTools(kEnv).Disassemble(patched, &text, options))
    fail(ErrorKind::User, "cannot disassemble SPIR-V");
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = std::min(text.find('\n', pos), text.size());
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  size_t header = 0;
  while (header < lines.size() && lines[header].starts_with(";")) ++header;
  TESSERA_CHECK(lines.size() == header + starts.size(), "SPIR-V disassembly: ", lines.size(),
                " lines for ", starts.size(), " instructions");
  std::map<uint32_t, std::string> names;
  for (size_t k = 0; k < starts.size(); ++k) {
    const uint32_t* inst = &words[starts[k]];
    const auto opcode = static_cast<spv::Op>(inst[0] & 0xffff);
    // OpName precedes every definition: the defining line's name replaces it where there is one.
    if (opcode == spv::OpName)
      names.emplace(inst[1], "%" + std::string(reinterpret_cast<const char*>(&inst[2])));
    if (unknown_to_tools(inst)) continue;
    bool has_result = false, has_type = false;
    spv::HasResultAndType(opcode, &has_result, &has_type);
    const std::string& line = lines[header + k];
    const size_t eq = line.find(" = ");
    if (!has_result || eq == std::string::npos) continue;
    names[inst[has_type ? 2 : 1]] =
        line.substr(line.find_first_not_of(' '), eq - line.find_first_not_of(' '));
  }
  auto name = [&](uint32_t id) {
    auto it = names.find(id);
    return it != names.end() ? it->second : "%" + std::to_string(id);
  };
  std::string out = "; " + std::string(kCooperativeMatrixNote) + "\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    const bool khr = i >= header && unknown_to_tools(&words[starts[i - header]]);
    out += (khr ? khr_line(&words[starts[i - header]], name) : lines[i]) + "\n";
  }
  return out;
}

}  // namespace

bool uses_cooperative_matrix(const std::vector<uint32_t>& words) {
  for (size_t at = 5; at + 1 < words.size() && words[at] >> 16; at += words[at] >> 16) {
    if ((words[at] & 0xffff) != spv::OpCapability) return false;  // capabilities come first
    if (words[at + 1] == khr::kCapabilityCooperativeMatrix ||
        is_nv_capability(static_cast<spv::Capability>(words[at + 1])))
      return true;
  }
  return false;
}

std::string validate(const std::vector<uint32_t>& words) {
  if (uses_cooperative_matrix(words)) return std::string(kCooperativeMatrixNote);
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
  const uint32_t options =
      SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT;
  if (uses_cooperative_matrix(words)) return disassemble_coopmat(words, options);
  spvtools::SpirvTools tools(kEnv);
  Messages messages;
  tools.SetMessageConsumer(messages.consumer());
  std::string text;
  if (!tools.Disassemble(words, &text, options))
    fail(ErrorKind::User, "cannot disassemble SPIR-V: ", messages.text);
  return text;
}

std::vector<uint32_t> optimize(const std::vector<uint32_t>& words, std::string_view kernel) {
  TESSERA_CHECK(!uses_cooperative_matrix(words), "spirv-opt cannot optimize kernel '", kernel,
                "': ", kCooperativeMatrixNote);
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
