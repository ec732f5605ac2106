/// \file Workgroup-scope matrices and coopmat_load_tensor emitted as VK_NV_cooperative_matrix2
/// (targets/spirv/emit_coopmat.cpp): the instructions and their operands read from the module's
/// words (SPIRV-Tools 2023.1 knows none of these opcodes, so nothing validates them here), and
/// the refusals on targets without the capability or the shape.
#include <map>

#include <spirv/unified1/spirv.hpp>

#include "helpers.h"
#include "targets/spirv/coopmat2_nv.h"
#include "targets/spirv/coopmat_khr.h"

namespace spirv_test {
namespace {

namespace nv = tessera::spirv::nv;
namespace khr = tessera::spirv::khr;

/// A workgroup's 64x64 f32 accumulator of an f16 A (the fast path, no clamping) times B (the edge
/// path, zero outside), stored to shared memory: the lowering's shape for a CoopMat2 dot.
std::string tensor_kernel() {
  const std::string acc = "wgmat_acc<64x64xf32>";
  return kernel("%pa: ptr<f16>, %pb: ptr<f16>, %m: i32, %n: i32, %k: i32",
                R"(  %zero = constant {value = 0.0} : f32
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %acc0 = coopmat_fill %zero : )" +
                    acc + R"(
  %a = coopmat_load_tensor %pa, %m, %k, %k, %c1, %c0, %c0 : wgmat_a<64x32xf16>
  %b = coopmat_load_tensor %pb, %k, %n, %n, %c1, %c0, %c0 {clamp_zero = 1} : wgmat_b<32x64xf16>
  %d = coopmat_mul_add %a, %b, %acc0 : )" +
                    acc + R"(
  coopmat_store %c0, %d {buffer = 0, stride = 64})",
                "shared_0 = tile<4096xf32>", 128, 32);
}

/// The instructions of a module, and what defines each id.
struct Words {
  std::vector<std::vector<uint32_t>> insts;
  std::map<uint32_t, std::vector<uint32_t>> def;
  explicit Words(const std::vector<uint32_t>& words) {
    for (size_t at = 5; at < words.size(); at += words[at] >> 16) {
      REQUIRE((words[at] >> 16) > 0);
      insts.emplace_back(words.begin() + at, words.begin() + at + (words[at] >> 16));
    }
    for (const auto& i : insts) {
      const auto op = static_cast<uint32_t>(i[0] & 0xffff);
      // Types and layout types define their first operand; the rest (with a result type) the
      // second.
      const bool is_type = (op >= spv::OpTypeVoid && op <= spv::OpTypeForwardPointer) ||
                           op == static_cast<uint32_t>(khr::kOpTypeCooperativeMatrix) ||
                           op == static_cast<uint32_t>(nv::kOpTypeTensorLayout);
      if (is_type && i.size() > 1)
        def[i[1]] = i;
      else if (i.size() > 2)
        def[i[2]] = i;
    }
  }
  std::vector<std::vector<uint32_t>> all(spv::Op opcode) const {
    std::vector<std::vector<uint32_t>> out;
    for (const auto& i : insts)
      if ((i[0] & 0xffff) == static_cast<uint32_t>(opcode)) out.push_back(i);
    return out;
  }
  uint32_t opcode_of(uint32_t id) const { return def.at(id)[0] & 0xffff; }
  uint32_t constant(uint32_t id) const {
    REQUIRE(opcode_of(id) == spv::OpConstant);
    return def.at(id)[3];
  }
  bool declares(spv::Capability cap) const {
    for (const auto& i : all(spv::OpCapability))
      if (i[1] == static_cast<uint32_t>(cap)) return true;
    return false;
  }
};

Artifact emit_on(const std::string& text, const char* target) {
  auto module = parse(text);
  return tessera::spirv::emit(module->kernel(), profile(target));
}

}  // namespace

TEST_CASE("spirv coopmat2: tensor loads from PSB pointers through sliced 2-D tensor layouts") {
  const Artifact art = emit_on(tensor_kernel(), "vulkan-nvidia-coopmat2");
  Words w(art.spirv);
  CHECK(w.declares(nv::kCapabilityTensorAddressing));
  CHECK(w.declares(nv::kCapabilityCooperativeMatrixTensorAddressing));
  auto loads = w.all(nv::kOpCooperativeMatrixLoadTensor);
  REQUIRE(loads.size() == 2);
  const uint32_t want_clamp[2] = {static_cast<uint32_t>(nv::ClampMode::Undefined),
                                  static_cast<uint32_t>(nv::ClampMode::Constant)};
  const uint32_t want_use[2] = {0, 1};  // MatrixAKHR, MatrixBKHR
  const uint32_t want_rows[2] = {64, 32}, want_cols[2] = {32, 64};
  for (size_t i = 0; i < 2; ++i) {
    CAPTURE(i);
    const auto& ld = loads[i];
    // Result Type, Result, Pointer, Object, TensorLayout, memory operands (Aligned |
    // NonPrivatePointer, 2), tensor addressing operands (none).
    REQUIRE(ld.size() == 9);
    const auto& type = w.def.at(ld[1]);
    REQUIRE((type[0] & 0xffff) == static_cast<uint32_t>(khr::kOpTypeCooperativeMatrix));
    CHECK(w.constant(type[3]) == spv::ScopeWorkgroup);
    CHECK(w.constant(type[4]) == want_rows[i]);
    CHECK(w.constant(type[5]) == want_cols[i]);
    CHECK(w.constant(type[6]) == want_use[i]);
    CHECK(w.opcode_of(ld[3]) == spv::OpConvertUToPtr);  // from the parameter's u64 address
    const auto& ptr_type = w.def.at(w.def.at(ld[3])[1]);
    CHECK(ptr_type[2] == spv::StorageClassPhysicalStorageBuffer);
    // The object: the zero matrix of the result's type.
    CHECK(w.opcode_of(ld[4]) == spv::OpConstantComposite);
    CHECK(w.def.at(ld[4])[1] == ld[1]);
    CHECK(ld[6] == (spv::MemoryAccessAlignedMask | spv::MemoryAccessNonPrivatePointerMask));
    CHECK(ld[7] == 2);
    CHECK(ld[8] == nv::kTensorAddressingNone);
    // The layout: dimensions, then strides, then a slice at the block's offsets with its spans.
    const auto& slice = w.def.at(ld[5]);
    REQUIRE((slice[0] & 0xffff) == static_cast<uint32_t>(nv::kOpTensorLayoutSlice));
    REQUIRE(slice.size() == 8);
    CHECK(w.constant(slice[5]) == want_rows[i]);
    CHECK(w.constant(slice[7]) == want_cols[i]);
    const auto& strides = w.def.at(slice[3]);
    REQUIRE((strides[0] & 0xffff) == static_cast<uint32_t>(nv::kOpTensorLayoutSetStride));
    CHECK(w.constant(strides[5]) == 1);  // the inner stride: %c1
    const auto& dims = w.def.at(strides[3]);
    REQUIRE((dims[0] & 0xffff) == static_cast<uint32_t>(nv::kOpTensorLayoutSetDimension));
    CHECK(w.opcode_of(dims[3]) == static_cast<uint32_t>(nv::kOpCreateTensorLayout));
    const auto& layout_type = w.def.at(slice[1]);
    REQUIRE((layout_type[0] & 0xffff) == static_cast<uint32_t>(nv::kOpTypeTensorLayout));
    CHECK(w.constant(layout_type[2]) == 2);
    CHECK(w.constant(layout_type[3]) == want_clamp[i]);
  }
  // The workgroup's multiply-add takes both loads.
  auto mul_adds = w.all(khr::kOpCooperativeMatrixMulAdd);
  REQUIRE(mul_adds.size() == 1);
  CHECK(mul_adds[0][3] == loads[0][2]);
  CHECK(mul_adds[0][4] == loads[1][2]);
  CHECK(tessera::spirv::uses_cooperative_matrix(art.spirv));
}

TEST_CASE("spirv coopmat2: workgroup matrices need the capability and a shape's granularity") {
  CHECK(emit_error(tensor_kernel(), profile("vulkan-nvidia"), ErrorKind::Unsupported) ==
        "kernel 'k': a workgroup-scope cooperative matrix (wgmat_acc<64x64xf32>) needs the "
        "'coopmat2' capability on target 'vulkan-nvidia' (test.tir:5: 'coopmat_fill')");
  // 8 rows are no multiple of any workgroup shape's M granule (16 or 32).
  const std::string odd = emit_error(kernel("", R"(  %zero = constant {value = 0.0} : f32
  %c0 = constant {value = 0} : i32
  %acc = coopmat_fill %zero : wgmat_acc<8x64xf32>
  coopmat_store %c0, %acc {buffer = 0, stride = 64})",
                                            "shared_0 = tile<512xf32>", 128, 32),
                                     profile("vulkan-nvidia-coopmat2"), ErrorKind::Unsupported);
  CHECK(odd.find("the workgroup-scope matrix wgmat_acc<8x64xf32> is a multiple of none of the "
                 "target's workgroup shapes (") != std::string::npos);
}

}  // namespace spirv_test
