/// \file The typed SPIR-V builder: deduplicated types and constants, capabilities collected from
/// what the module uses, the section order, and what validate() reports for a broken module.
#include <doctest/doctest.h>

#include "targets/spirv/builder.h"
#include "targets/spirv/spirv.h"

namespace {

using tessera::spirv::Builder;
using tessera::spirv::Value;

/// A compute entry point around `body`, which may use the builder's current block.
template <class Body>
std::vector<uint32_t> module_with(Body body) {
  Builder b;
  uint32_t fn = b.begin_function("main");
  body(b);
  b.ret();
  b.end_function();
  b.entry_point(spv::ExecutionModelGLCompute, fn, "main", {});
  b.execution_mode(fn, spv::ExecutionModeLocalSize, {1, 1, 1});
  return b.assemble();
}

TEST_CASE("spirv builder: types and constants are deduplicated") {
  Builder b;
  CHECK(b.t_int(32, true) == b.t_int(32, true));
  CHECK(b.t_int(32, true) != b.t_int(32, false));
  uint32_t f = b.t_float(32);
  CHECK(b.t_vector(f, 4) == b.t_vector(f, 4));
  CHECK(b.t_pointer(spv::StorageClassPhysicalStorageBuffer, f) ==
        b.t_pointer(spv::StorageClassPhysicalStorageBuffer, f));
  CHECK(b.c_float(f, 1.5).id == b.c_float(f, 1.5).id);
  CHECK(b.c_float(f, 1.5).id != b.c_float(f, 2.5).id);
  CHECK(b.c_u32(7).id == b.c_int(b.t_uint(32), 7).id);
  CHECK(b.c_bool(true).id != b.c_bool(false).id);
  // Bit-exact float constants keep NaN payloads; they share the table with rounded ones.
  CHECK(b.c_float_bits(f, 0x7fc00001u).id != b.c_float_bits(f, 0x7fc00000u).id);
  CHECK(b.c_float_bits(f, 0x3fc00000u).id == b.c_float(f, 1.5).id);
  // Structs are not merged: each carries its own layout decorations.
  CHECK(b.t_struct({f}) != b.t_struct({f}));
  CHECK(b.info(b.t_vector(f, 3)).count == 3);
  CHECK(b.byte_size(b.t_vector(b.t_float(16), 4)) == 8);
}

TEST_CASE("spirv builder: capabilities follow the types and instructions used") {
  Builder b;
  CHECK(b.has_capability(spv::CapabilityShader));
  CHECK(b.has_capability(spv::CapabilityVulkanMemoryModel));
  CHECK(!b.has_capability(spv::CapabilityFloat16));
  b.t_float(16);
  CHECK(b.has_capability(spv::CapabilityFloat16));
  b.t_pointer(spv::StorageClassPhysicalStorageBuffer, b.t_uint(8));
  CHECK(b.has_capability(spv::CapabilityInt8));
  CHECK(b.has_capability(spv::CapabilityStorageBuffer8BitAccess));
  CHECK(!b.has_capability(spv::CapabilityVulkanMemoryModelDeviceScope));
  b.scope(spv::ScopeDevice);
  CHECK(b.has_capability(spv::CapabilityVulkanMemoryModelDeviceScope));
}

TEST_CASE("spirv builder: a cooperative-matrix type brings its capability and extension") {
  namespace khr = tessera::spirv::khr;
  Builder b;
  uint32_t h = b.t_float(16);
  CHECK(!b.has_capability(khr::kCapabilityCooperativeMatrix));
  uint32_t a = b.t_coopmat(h, 16, 16, khr::MatrixUse::A);
  CHECK(b.has_capability(khr::kCapabilityCooperativeMatrix));
  CHECK(a == b.t_coopmat(h, 16, 16, khr::MatrixUse::A));
  CHECK(a != b.t_coopmat(h, 16, 16, khr::MatrixUse::B));
  CHECK(a != b.t_coopmat(h, 16, 8, khr::MatrixUse::A));
  CHECK(b.info(a).kind == tessera::spirv::TypeKind::CooperativeMatrix);
  CHECK(b.info(a).element == h);
  // A fill of a constant is a one-part constant composite, deduplicated like other constants.
  Value one = b.c_float(h, 1.0);
  CHECK(b.c_composite(a, {one}).id == b.c_composite(a, {one}).id);
  std::vector<uint32_t> words = b.assemble();
  std::string extension(reinterpret_cast<const char*>(&words[0]), words.size() * 4);
  CHECK(extension.find("SPV_KHR_cooperative_matrix") != std::string::npos);
}

TEST_CASE("spirv builder: narrow literals are sign- or zero-extended") {
  std::vector<uint32_t> words = module_with([](Builder& b) {
    b.c_int(b.t_int(16, true), 0xffff);
    b.c_int(b.t_uint(16), 0xffff);
    b.c_int(b.t_int(8, true), 0x80);
    b.c_int(b.t_uint(64), 0x123456789abcdefull);
  });
  CHECK(tessera::spirv::validate(words) == "");
  std::string text = tessera::spirv::disassemble(words);
  CHECK(text.find("OpConstant %short -1") != std::string::npos);
  CHECK(text.find("OpConstant %ushort 65535") != std::string::npos);
  CHECK(text.find("OpConstant %char -128") != std::string::npos);
  CHECK(text.find("OpConstant %ulong 81985529216486895") != std::string::npos);
}

TEST_CASE("spirv builder: a module with loads and phis validates, sections are in order") {
  std::vector<uint32_t> words = module_with([](Builder& b) {
    uint32_t u64 = b.t_uint(64), f = b.t_float(32);
    Value address = b.c_int(u64, 256);
    Value pointer = b.convert(spv::OpConvertUToPtr,
                              b.t_pointer(spv::StorageClassPhysicalStorageBuffer, f), address);
    uint32_t entry = b.current_label(), then = b.new_label(), merge = b.new_label();
    b.selection_merge(merge);
    b.branch_cond(b.c_bool(true), then, merge);
    b.begin_block(then);
    Value v = b.load(f, pointer, 4, true);
    b.branch(merge);
    b.begin_block(merge);
    auto phi = b.phi(f);
    b.add_incoming(phi, v, then);
    b.add_incoming(phi, b.c_float(f, 0), entry);
    b.store(pointer, b.ext(GLSLstd450Exp, f, {phi.value}), 4, true);
  });
  CHECK(tessera::spirv::validate(words) == "");
  std::string text = tessera::spirv::disassemble(words);
  size_t caps = text.find("OpCapability"), import = text.find("OpExtInstImport"),
         model = text.find("OpMemoryModel"), entry = text.find("OpEntryPoint"),
         types = text.find("OpTypeVoid"), fn = text.find("OpFunction ");
  CHECK(caps < import);
  CHECK(import < model);
  CHECK(model < entry);
  CHECK(entry < types);
  CHECK(types < fn);
  CHECK(text.find("Aligned|NonPrivatePointer 4") != std::string::npos);
}

TEST_CASE("spirv validate: reports the rule and the offending instruction") {
  // A PhysicalStorageBuffer access without Aligned breaks a Vulkan rule.
  std::vector<uint32_t> words = module_with([](Builder& b) {
    uint32_t f = b.t_float(32);
    Value pointer =
        b.convert(spv::OpConvertUToPtr, b.t_pointer(spv::StorageClassPhysicalStorageBuffer, f),
                  b.c_int(b.t_uint(64), 64));
    b.load(f, pointer, 0, false);
  });
  std::string error = tessera::spirv::validate(words);
  CHECK(error.find("Aligned") != std::string::npos);
  CHECK(error.find("OpLoad %float") != std::string::npos);
}

}  // namespace
