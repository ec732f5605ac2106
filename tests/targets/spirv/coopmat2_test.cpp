/// \file The builder's SPV_NV_cooperative_matrix2 / SPV_NV_tensor_addressing instructions: the
/// emitted words of each one against the SPIR-V registry's encoding (opcode, word count, operand
/// order, masks), the capabilities and extensions they bring, Tessera's disassembly of them, and
/// the builder's refusals. SPIRV-Tools 2023.1 cannot check these modules (validate() says so).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/support/error.h"
#include "targets/spirv/builder.h"
#include "targets/spirv/spirv.h"

namespace {

using tessera::spirv::Builder;
using tessera::spirv::Value;
namespace khr = tessera::spirv::khr;
namespace nv = tessera::spirv::nv;

/// The module's instructions after the header, each as its words (the first holds the count and
/// opcode).
std::vector<std::vector<uint32_t>> instructions(const std::vector<uint32_t>& words) {
  std::vector<std::vector<uint32_t>> out;
  for (size_t at = 5; at < words.size(); at += words[at] >> 16) {
    REQUIRE((words[at] >> 16) != 0);
    out.emplace_back(words.begin() + at, words.begin() + at + (words[at] >> 16));
  }
  return out;
}

std::vector<std::vector<uint32_t>> with_opcode(const std::vector<uint32_t>& words, uint32_t op) {
  std::vector<std::vector<uint32_t>> out;
  for (auto& inst : instructions(words))
    if ((inst[0] & 0xffff) == op) out.push_back(inst);
  return out;
}

/// The value of every 32-bit OpConstant, by id; OpConstantTrue as 1.
std::map<uint32_t, uint32_t> constants(const std::vector<uint32_t>& words) {
  std::map<uint32_t, uint32_t> out;
  for (auto& inst : instructions(words)) {
    if ((inst[0] & 0xffff) == spv::OpConstant && inst.size() == 4) out[inst[2]] = inst[3];
    if ((inst[0] & 0xffff) == spv::OpConstantTrue) out[inst[2]] = 1;
  }
  return out;
}

uint32_t header(uint32_t count, spv::Op op) {
  return count << 16 | static_cast<uint32_t>(op);
}

/// What the test module defines, to find its ids in the words.
struct Ids {
  uint32_t matrix_a = 0, matrix_acc = 0, layout_type = 0, view_type = 0;
  Value buffer, zero, layout, sliced, view, clipped, loaded, acc;
};

/// A compute entry point with a workgroup-scope dot's tensor traffic: an A tile loaded through a
/// sliced, clamped 2-D layout and a transposing view, and an accumulator stored through a layout.
std::vector<uint32_t> tensor_module(Ids* ids) {
  Builder b;
  uint32_t fn = b.begin_function("main");
  uint32_t h = b.t_float(16), f = b.t_float(32), u32 = b.t_uint(32);
  ids->matrix_a = b.t_coopmat(h, 32, 16, khr::MatrixUse::A, spv::ScopeWorkgroup);
  ids->matrix_acc = b.t_coopmat(f, 32, 16, khr::MatrixUse::Accumulator, spv::ScopeWorkgroup);
  ids->buffer = b.variable(b.t_pointer(spv::StorageClassWorkgroup, b.t_array(h, 4096)));
  ids->layout_type = b.t_tensor_layout(2, nv::ClampMode::Constant);
  ids->view_type = b.t_tensor_view(2, true, {1, 0});
  Value m = b.c_u32(100), k = b.c_u32(70);
  ids->layout = b.tensor_layout(ids->layout_type);
  Value sized = b.tensor_layout_dimensions(ids->layout, {m, k});
  Value strided = b.tensor_layout_strides(sized, {k, b.c_u32(1)});
  ids->sliced =
      b.tensor_layout_slice(strided, {b.c_u32(96), b.c_u32(32), b.c_u32(64), b.c_u32(16)});
  Value clamped = b.tensor_layout_clamp_value(ids->sliced, b.c_u32(0));
  ids->view = b.tensor_view(ids->view_type);
  Value view_sized = b.tensor_view_dimensions(ids->view, {b.c_u32(16), b.c_u32(32)});
  Value view_strided = b.tensor_view_strides(view_sized, {b.c_u32(32), b.c_u32(1)});
  ids->clipped = b.tensor_view_clip(view_strided, b.c_u32(0), b.c_u32(4), b.c_u32(0), b.c_u32(16));
  ids->zero = b.c_composite(ids->matrix_a, {b.c_float(h, 0.0)});
  ids->loaded =
      b.coopmat_load_tensor(ids->matrix_a, ids->buffer, ids->zero, clamped, 0, false, ids->clipped);
  ids->acc = b.c_composite(ids->matrix_acc, {b.c_float(f, 0.0)});
  uint32_t out_type = b.t_tensor_layout(2, nv::ClampMode::Undefined);
  Value out = b.tensor_layout_dimensions(b.tensor_layout(out_type), {m, b.c_u32(64)});
  b.coopmat_store_tensor(ids->buffer, ids->acc, out, 0, true);
  (void)u32;
  b.ret();
  b.end_function();
  b.entry_point(spv::ExecutionModelGLCompute, fn, "main", {ids->buffer.id});
  b.execution_mode(fn, spv::ExecutionModeLocalSize, {128, 1, 1});
  return b.assemble();
}

}  // namespace

TEST_CASE("spirv coopmat2: tensor types carry their dimension count, clamp mode and permutation") {
  Ids ids;
  std::vector<uint32_t> words = tensor_module(&ids);
  auto values = constants(words);
  auto layouts = with_opcode(words, nv::kOpTypeTensorLayout);
  REQUIRE(layouts.size() == 2);  // Constant and Undefined clamp modes: two types
  CHECK(layouts[0][0] == header(4, nv::kOpTypeTensorLayout));
  CHECK(layouts[0][1] == ids.layout_type);
  CHECK(values.at(layouts[0][2]) == 2);
  CHECK(values.at(layouts[0][3]) == 1);  // ClampMode Constant
  CHECK(values.at(layouts[1][3]) == 0);  // ClampMode Undefined
  auto views = with_opcode(words, nv::kOpTypeTensorView);
  REQUIRE(views.size() == 1);
  CHECK(views[0][0] == header(6, nv::kOpTypeTensorView));
  CHECK(views[0][1] == ids.view_type);
  CHECK(values.at(views[0][2]) == 2);
  CHECK(values.at(views[0][3]) == 1);  // HasDimensions: OpConstantTrue
  CHECK(values.at(views[0][4]) == 1);  // the permutation {1, 0}: a transposing view
  CHECK(values.at(views[0][5]) == 0);
}

TEST_CASE("spirv coopmat2: workgroup-scope matrices say Workgroup in their scope operand") {
  Ids ids;
  std::vector<uint32_t> words = tensor_module(&ids);
  auto values = constants(words);
  auto types = with_opcode(words, khr::kOpTypeCooperativeMatrix);
  REQUIRE(types.size() == 2);
  for (auto& t : types) {
    CHECK(t[0] == header(7, khr::kOpTypeCooperativeMatrix));
    CHECK(values.at(t[3]) == spv::ScopeWorkgroup);
    CHECK(values.at(t[4]) == 32);
    CHECK(values.at(t[5]) == 16);
  }
  // Subgroup scope stays the default: the KHR plans' types are unchanged.
  Builder b;
  uint32_t sub = b.t_coopmat(b.t_float(16), 16, 16, khr::MatrixUse::A);
  CHECK(b.info(sub).scope == spv::ScopeSubgroup);
  CHECK(sub != b.t_coopmat(b.t_float(16), 16, 16, khr::MatrixUse::A, spv::ScopeWorkgroup));
}

TEST_CASE("spirv coopmat2: layout and view setters: operands in order, one per dimension") {
  Ids ids;
  std::vector<uint32_t> words = tensor_module(&ids);
  auto values = constants(words);
  auto create = with_opcode(words, nv::kOpCreateTensorLayout);
  REQUIRE(create.size() == 2);
  CHECK(create[0] == std::vector<uint32_t>{header(3, nv::kOpCreateTensorLayout), ids.layout_type,
                                           ids.layout.id});
  auto dims = with_opcode(words, nv::kOpTensorLayoutSetDimension);
  REQUIRE(dims.size() == 2);
  CHECK(dims[0][0] == header(6, nv::kOpTensorLayoutSetDimension));
  CHECK(dims[0][1] == ids.layout_type);
  CHECK(dims[0][3] == ids.layout.id);
  CHECK(values.at(dims[0][4]) == 100);
  CHECK(values.at(dims[0][5]) == 70);
  auto strides = with_opcode(words, nv::kOpTensorLayoutSetStride);
  REQUIRE(strides.size() == 1);
  CHECK(strides[0][0] == header(6, nv::kOpTensorLayoutSetStride));
  CHECK(strides[0][3] == dims[0][2]);  // the layout the dimensions made
  CHECK(values.at(strides[0][4]) == 70);
  CHECK(values.at(strides[0][5]) == 1);
  auto slice = with_opcode(words, nv::kOpTensorLayoutSlice);
  REQUIRE(slice.size() == 1);
  CHECK(slice[0][0] == header(8, nv::kOpTensorLayoutSlice));
  CHECK(slice[0][2] == ids.sliced.id);
  std::vector<uint32_t> slice_values;
  for (size_t i = 4; i < 8; ++i) slice_values.push_back(values.at(slice[0][i]));
  CHECK(slice_values == std::vector<uint32_t>{96, 32, 64, 16});  // offset, span per dimension
  auto clamp = with_opcode(words, nv::kOpTensorLayoutSetClampValue);
  REQUIRE(clamp.size() == 1);
  CHECK(clamp[0][0] == header(5, nv::kOpTensorLayoutSetClampValue));
  CHECK(clamp[0][3] == ids.sliced.id);
  CHECK(values.at(clamp[0][4]) == 0);
  CHECK(with_opcode(words, nv::kOpCreateTensorView)[0] ==
        std::vector<uint32_t>{header(3, nv::kOpCreateTensorView), ids.view_type, ids.view.id});
  auto view_dims = with_opcode(words, nv::kOpTensorViewSetDimension);
  REQUIRE(view_dims.size() == 1);
  CHECK(view_dims[0][0] == header(6, nv::kOpTensorViewSetDimension));
  CHECK(view_dims[0][3] == ids.view.id);
  CHECK(with_opcode(words, nv::kOpTensorViewSetStride)[0][0] ==
        header(6, nv::kOpTensorViewSetStride));
  auto clip = with_opcode(words, nv::kOpTensorViewSetClip);
  REQUIRE(clip.size() == 1);
  CHECK(clip[0][0] == header(8, nv::kOpTensorViewSetClip));
  CHECK(clip[0][2] == ids.clipped.id);
  CHECK(values.at(clip[0][5]) == 4);  // ClipRowSpan
}

TEST_CASE("spirv coopmat2: tensor loads and stores: pointer, object, layout, then both masks") {
  Ids ids;
  std::vector<uint32_t> words = tensor_module(&ids);
  auto loads = with_opcode(words, nv::kOpCooperativeMatrixLoadTensor);
  REQUIRE(loads.size() == 1);
  auto clamp = with_opcode(words, nv::kOpTensorLayoutSetClampValue);
  REQUIRE(clamp.size() == 1);
  // type, result, pointer, object, layout, memory operand None, TensorView, the view.
  CHECK(loads[0] == std::vector<uint32_t>{header(9, nv::kOpCooperativeMatrixLoadTensor),
                                          ids.matrix_a, ids.loaded.id, ids.buffer.id, ids.zero.id,
                                          clamp[0][2], spv::MemoryAccessMaskNone,
                                          nv::kTensorAddressingView, ids.clipped.id});
  auto stores = with_opcode(words, nv::kOpCooperativeMatrixStoreTensor);
  REQUIRE(stores.size() == 1);
  auto dims = with_opcode(words, nv::kOpTensorLayoutSetDimension);
  // pointer, object, layout, NonPrivatePointer, no tensor addressing operands.
  CHECK(stores[0] == std::vector<uint32_t>{header(6, nv::kOpCooperativeMatrixStoreTensor),
                                           ids.buffer.id, ids.acc.id, dims[1][2],
                                           spv::MemoryAccessNonPrivatePointerMask,
                                           nv::kTensorAddressingNone});
}

TEST_CASE("spirv coopmat2: the instructions bring their capabilities and extensions") {
  Builder b;
  b.t_coopmat(b.t_float(16), 16, 16, khr::MatrixUse::A);
  CHECK(!b.has_capability(nv::kCapabilityTensorAddressing));
  Ids ids;
  std::vector<uint32_t> words = tensor_module(&ids);
  std::vector<uint32_t> caps;
  for (auto& inst : with_opcode(words, spv::OpCapability)) caps.push_back(inst[1]);
  auto has = [&](spv::Capability c) {
    return std::find(caps.begin(), caps.end(), static_cast<uint32_t>(c)) != caps.end();
  };
  CHECK(has(khr::kCapabilityCooperativeMatrix));
  CHECK(has(nv::kCapabilityTensorAddressing));
  CHECK(has(nv::kCapabilityCooperativeMatrixTensorAddressing));
  std::string text(reinterpret_cast<const char*>(words.data()), words.size() * 4);
  CHECK(text.find("SPV_KHR_cooperative_matrix") != std::string::npos);
  CHECK(text.find("SPV_NV_cooperative_matrix2") != std::string::npos);
  CHECK(text.find("SPV_NV_tensor_addressing") != std::string::npos);
  // Neither validated nor optimized: SPIRV-Tools 2023.1 cannot read these modules.
  CHECK(tessera::spirv::uses_cooperative_matrix(words));
  CHECK(tessera::spirv::validate(words) == tessera::spirv::kCooperativeMatrixNote);
}

TEST_CASE("spirv coopmat2: Tessera disassembles the NV instructions in SPIRV-Tools' manner") {
  Ids ids;
  std::string text = tessera::spirv::disassemble(tensor_module(&ids));
  CAPTURE(text);
  for (const char* line :
       {"OpCapability TensorAddressingNV", "OpCapability CooperativeMatrixTensorAddressingNV",
        "OpExtension \"SPV_NV_tensor_addressing\"", "= OpTypeTensorLayoutNV ",
        "= OpTypeTensorViewNV ", "= OpCreateTensorLayoutNV ", "= OpTensorLayoutSliceNV ",
        "= OpTensorViewSetClipNV ", "= OpCooperativeMatrixLoadTensorNV ", " None TensorView %",
        "OpCooperativeMatrixStoreTensorNV ", " NonPrivatePointer None"})
    CHECK(text.find(line) != std::string::npos);
}

TEST_CASE("spirv coopmat2: the builder refuses malformed tensor layouts and views") {
  Builder b;
  CHECK_THROWS_AS(b.t_tensor_layout(0, nv::ClampMode::Undefined), tessera::Error);
  CHECK_THROWS_AS(b.t_tensor_layout(6, nv::ClampMode::Undefined), tessera::Error);
  CHECK_THROWS_AS(b.t_tensor_view(2, false, {0, 0}), tessera::Error);
  CHECK_THROWS_AS(b.t_tensor_view(2, false, {0}), tessera::Error);
  CHECK_THROWS_AS(b.t_coopmat(b.t_float(16), 16, 16, khr::MatrixUse::A, spv::ScopeDevice),
                  tessera::Error);
  b.begin_function("main");
  Value layout = b.tensor_layout(b.t_tensor_layout(2, nv::ClampMode::ClampToEdge));
  CHECK_THROWS_AS(b.tensor_layout_dimensions(layout, {b.c_u32(4)}), tessera::Error);
  CHECK_THROWS_AS(b.tensor_layout_slice(layout, {b.c_u32(0), b.c_u32(4)}), tessera::Error);
  CHECK_THROWS_AS(b.tensor_layout_dimensions(layout, {b.c_u32(4), b.c_int(b.t_uint(64), 4)}),
                  tessera::Error);
  CHECK_THROWS_AS(b.tensor_view(b.t_uint(32)), tessera::Error);
  CHECK_NOTHROW(b.tensor_layout_dimensions(layout, {b.c_u32(4), b.c_u32(8)}));
}
