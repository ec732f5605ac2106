/// \file Cooperative matrices as SPV_KHR_cooperative_matrix: the instructions and their operands
/// read from the module's words (SPIRV-Tools 2023.1 cannot validate these modules), the
/// disassembly Tessera prints for them, the steps that skip SPIRV-Tools, and the refusals.
#include <map>
#include <set>
#include <sstream>

#include <spirv/unified1/spirv.hpp>

#include "helpers.h"
#include "targets/compile.h"

namespace spirv_test {
namespace {

// The numbers of SPV_KHR_cooperative_matrix, spelled out here as the registry gives them (the
// emitter's come from targets/spirv/coopmat_khr.h).
constexpr uint32_t kCapability = 6022, kOpType = 4456, kOpLoad = 4457, kOpStore = 4458,
                   kOpMulAdd = 4459;
constexpr uint32_t kNonPrivatePointer = 0x20, kAllSigned = 0x1 | 0x2 | 0x4 | 0x8;

/// f16 x f16 + f32 at 16x16x16: A row-major with a stride of 24, B column-major, an accumulator
/// filled with a constant and carried by a loop, stored where the subgroup's id says; buffer 2 is
/// also read four f32 at a time, which would otherwise make it an array of vec4.
std::string f16_kernel() {
  return kernel("%out: ptr<f32>, %n: i32", R"(  %zero = constant {value = 0.0} : f32
  %acc0 = coopmat_fill %zero : coopmat_acc<16x16xf32>
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %a = coopmat_load %c0 {buffer = 0, stride = 24} : coopmat_a<16x16xf16>
  %b = coopmat_load %c0 {buffer = 1, stride = 16, col_major = 1} : coopmat_b<16x16xf16>
  %acc = for %c0, %n, %c1, %acc0 ({
  ^(%i: i32, %c: coopmat_acc<16x16xf32>):
    %d = coopmat_mul_add %a, %b, %c : coopmat_acc<16x16xf32>
    yield %d
  }) : coopmat_acc<16x16xf32>
  %sg = subgroup_id : i32
  %c256 = constant {value = 256} : i32
  %at = mul %sg, %c256 : i32
  coopmat_store %at, %acc {buffer = 2, stride = 16}
  barrier
  %x0, %x1, %x2, %x3 = shared_load %c0 {buffer = 2, width = 4} : f32, f32, f32, f32
  %t = constant {value = 1} : i1
  global_store %out, %t, %x0, %x1, %x2, %x3 {align = 16, width = 4})",
                "shared_0 = tile<384xf16>, shared_1 = tile<256xf16>, shared_2 = tile<512xf32>", 64,
                32);
}

/// i8 x i8 + i32 at 16x16x32, the accumulator filled with a runtime value.
std::string i8_kernel() {
  return kernel("%n: i32", R"(  %acc0 = coopmat_fill %n : coopmat_acc<16x16xi32>
  %c0 = constant {value = 0} : i32
  %a = coopmat_load %c0 {buffer = 0, stride = 32} : coopmat_a<16x32xi8>
  %b = coopmat_load %c0 {buffer = 1, stride = 16} : coopmat_b<32x16xi8>
  %d = coopmat_mul_add %a, %b, %acc0 : coopmat_acc<16x16xi32>
  coopmat_store %c0, %d {buffer = 2, stride = 16, col_major = 1})",
                "shared_0 = tile<512xi8>, shared_1 = tile<512xi8>, shared_2 = tile<256xi32>", 32,
                32);
}

/// The module's instructions, each as its words (the opcode word first), and what they define.
struct Module {
  std::vector<std::vector<uint32_t>> insts;
  std::map<uint32_t, std::vector<uint32_t>> def;  ///< result id -> its instruction
  std::map<std::string, uint32_t> named;          ///< OpName -> id

  explicit Module(const std::vector<uint32_t>& words) {
    for (size_t at = 5; at < words.size(); at += words[at] >> 16) {
      REQUIRE((words[at] >> 16) > 0);
      insts.emplace_back(words.begin() + at, words.begin() + at + (words[at] >> 16));
    }
    for (const auto& i : insts) {
      const uint32_t op = i[0] & 0xffff;
      if (op == spv::OpName) named[reinterpret_cast<const char*>(&i[2])] = i[1];
      if (op == spv::OpTypeFloat || op == spv::OpTypeInt || op == spv::OpTypePointer ||
          op == spv::OpTypeArray || op == spv::OpTypeVector || op == kOpType)
        def[i[1]] = i;
      if (op == spv::OpConstant || op == spv::OpConstantComposite || op == spv::OpVariable ||
          op == spv::OpAccessChain || op == spv::OpPhi || op == kOpLoad || op == kOpMulAdd ||
          op == spv::OpCompositeConstruct || op == spv::OpIMul)
        def[i[2]] = i;
    }
  }
  std::vector<std::vector<uint32_t>> all(uint32_t opcode) const {
    std::vector<std::vector<uint32_t>> out;
    for (const auto& i : insts)
      if ((i[0] & 0xffff) == opcode) out.push_back(i);
    return out;
  }
  uint32_t opcode_of(uint32_t id) const { return def.at(id)[0] & 0xffff; }
  /// The value of an OpConstant (32 bits or less).
  uint32_t constant(uint32_t id) const {
    REQUIRE(opcode_of(id) == spv::OpConstant);
    return def.at(id)[3];
  }
  /// The shared buffer an OpAccessChain starts from ("shared_0", ...).
  std::string chain_base(uint32_t pointer) const {
    REQUIRE(opcode_of(pointer) == spv::OpAccessChain);
    for (const auto& [name, id] : named)
      if (id == def.at(pointer)[3]) return name;
    return "";
  }
  /// The id of the cooperative-matrix type of component `component`, rows x cols and `use`.
  uint32_t matrix(uint32_t component, uint32_t rows, uint32_t cols, uint32_t use) const {
    for (const auto& t : all(kOpType))
      if (t[2] == component && constant(t[3]) == 3 && constant(t[4]) == rows &&
          constant(t[5]) == cols && constant(t[6]) == use)
        return t[1];
    return 0;
  }
  uint32_t scalar(uint32_t opcode, uint32_t width, uint32_t signedness = 1) const {
    for (const auto& t : all(opcode))
      if (t[2] == width && (opcode == spv::OpTypeFloat || t[3] == signedness)) return t[1];
    return 0;
  }
};

Emitted emit_coopmat(const std::string& text) {
  auto module = parse(text);
  Emitted e;
  e.artifact = tessera::spirv::emit(module->kernel(), profile("vulkan-nvidia"));
  e.text = tessera::spirv::disassemble(e.artifact.spirv);
  return e;
}

TEST_CASE("spirv coopmat: the capability, the extension and one type per matrix type") {
  Emitted e = emit_coopmat(f16_kernel());
  Module m(e.artifact.spirv);
  int capabilities = 0;
  for (const auto& i : m.all(spv::OpCapability)) capabilities += i[1] == kCapability;
  CHECK(capabilities == 1);
  REQUIRE(m.all(spv::OpExtension).size() == 1);
  CHECK(std::string(reinterpret_cast<const char*>(&m.all(spv::OpExtension)[0][1])) ==
        "SPV_KHR_cooperative_matrix");
  CHECK(tessera::spirv::uses_cooperative_matrix(e.artifact.spirv));
  CHECK(m.all(kOpType).size() == 3);
  const uint32_t f16 = m.scalar(spv::OpTypeFloat, 16), f32 = m.scalar(spv::OpTypeFloat, 32);
  CHECK(m.matrix(f16, 16, 16, 0) != 0);  // MatrixAKHR
  CHECK(m.matrix(f16, 16, 16, 1) != 0);  // MatrixBKHR
  CHECK(m.matrix(f32, 16, 16, 2) != 0);  // MatrixAccumulatorKHR
}

TEST_CASE("spirv coopmat: f16 loads, the loop's mul_add and the store carry their operands") {
  Emitted e = emit_coopmat(f16_kernel());
  Module m(e.artifact.spirv);
  const uint32_t f16 = m.scalar(spv::OpTypeFloat, 16), f32 = m.scalar(spv::OpTypeFloat, 32);
  const uint32_t a = m.matrix(f16, 16, 16, 0), b = m.matrix(f16, 16, 16, 1),
                 acc = m.matrix(f32, 16, 16, 2);
  // coopmat_fill of a constant: an OpConstantComposite with one constituent, 0.0f.
  std::vector<uint32_t> fill;
  for (const auto& i : m.all(spv::OpConstantComposite))
    if (i[1] == acc) fill = i;
  REQUIRE(fill.size() == 4);
  CHECK(m.constant(fill[3]) == 0u);
  // Loads: Result Type, Result, Pointer, MemoryLayout, Stride, NonPrivatePointer.
  auto loads = m.all(kOpLoad);
  REQUIRE(loads.size() == 2);
  CHECK(loads[0].size() == 7);
  CHECK(loads[0][1] == a);
  CHECK(m.chain_base(loads[0][3]) == "shared_0");
  CHECK(m.constant(loads[0][4]) == 0);  // RowMajorKHR
  CHECK(m.constant(loads[0][5]) == 24);
  CHECK(loads[0][6] == kNonPrivatePointer);
  CHECK(loads[1][1] == b);
  CHECK(m.chain_base(loads[1][3]) == "shared_1");
  CHECK(m.constant(loads[1][4]) == 1);  // ColumnMajorKHR
  CHECK(m.constant(loads[1][5]) == 16);
  CHECK(loads[1][6] == kNonPrivatePointer);
  // The loop carries the accumulator in a phi; f16 inputs need no signedness operand.
  auto mul_adds = m.all(kOpMulAdd);
  REQUIRE(mul_adds.size() == 1);
  const auto& mma = mul_adds[0];
  CHECK(mma.size() == 6);
  CHECK(mma[1] == acc);
  CHECK(mma[3] == loads[0][2]);
  CHECK(mma[4] == loads[1][2]);
  REQUIRE(m.opcode_of(mma[5]) == spv::OpPhi);
  const auto& phi = m.def.at(mma[5]);
  CHECK(phi[1] == acc);
  CHECK(phi[3] == fill[2]);  // from the entry: the filled matrix
  CHECK(phi[5] == mma[2]);   // from the latch: the product
  // Store: Pointer (element subgroup_id * 256 of buffer 2), Object, MemoryLayout, Stride.
  auto stores = m.all(kOpStore);
  REQUIRE(stores.size() == 1);
  CHECK(stores[0].size() == 6);
  CHECK(m.chain_base(stores[0][1]) == "shared_2");
  CHECK(m.opcode_of(m.def.at(stores[0][1])[4]) == spv::OpIMul);  // the runtime index
  CHECK(m.def.at(stores[0][2])[1] == acc);
  CHECK(m.constant(stores[0][3]) == 0);
  CHECK(m.constant(stores[0][4]) == 16);
  CHECK(stores[0][5] == kNonPrivatePointer);
}

TEST_CASE("spirv coopmat: buffers of coopmat ops stay arrays of scalars") {
  Module m(emit_coopmat(f16_kernel()).artifact.spirv);
  const uint32_t f32 = m.scalar(spv::OpTypeFloat, 32);
  // shared_2 is read four f32 at a time too, which alone would make it an array of vec4.
  const auto& var = m.def.at(m.named.at("shared_2"));
  const auto& array = m.def.at(m.def.at(var[1])[3]);
  REQUIRE((array[0] & 0xffff) == spv::OpTypeArray);
  CHECK(array[2] == f32);
  CHECK(m.constant(array[3]) == 512);
}

TEST_CASE("spirv coopmat: i8 x i8 + i32 is signed, a runtime fill is a one-part construct") {
  Emitted e = emit_coopmat(i8_kernel());
  Module m(e.artifact.spirv);
  const uint32_t i8 = m.scalar(spv::OpTypeInt, 8), i32 = m.scalar(spv::OpTypeInt, 32);
  const uint32_t a = m.matrix(i8, 16, 32, 0), b = m.matrix(i8, 32, 16, 1),
                 acc = m.matrix(i32, 16, 16, 2);
  CHECK(a != 0);
  CHECK(b != 0);
  REQUIRE(acc != 0);
  auto constructs = m.all(spv::OpCompositeConstruct);
  REQUIRE(constructs.size() == 1);
  CHECK(constructs[0].size() == 4);
  CHECK(constructs[0][1] == acc);
  auto mma = m.all(kOpMulAdd);
  REQUIRE(mma.size() == 1);
  REQUIRE(mma[0].size() == 7);
  CHECK(mma[0][5] == constructs[0][2]);
  CHECK(mma[0][6] == kAllSigned);
  auto stores = m.all(kOpStore);
  REQUIRE(stores.size() == 1);
  CHECK(m.constant(stores[0][3]) == 1);  // ColumnMajorKHR
  CHECK(m.constant(stores[0][4]) == 16);
}

TEST_CASE("spirv coopmat: the disassembly names the KHR instructions and says what was skipped") {
  Emitted e = emit_coopmat(f16_kernel());
  CAPTURE(e.text);
  CHECK(
      e.text.starts_with("; SPIR-V with SPV_KHR_cooperative_matrix: not validated, not "
                         "optimized: SPIRV-Tools 2023.1 predates the extension\n"));
  CHECK(e.has("OpCapability CooperativeMatrixKHR"));
  CHECK(e.has("OpExtension \"SPV_KHR_cooperative_matrix\""));
  CHECK(
      e.has("%coopmat_a_16x16xf16 = OpTypeCooperativeMatrixKHR %half %uint_3 %uint_16 "
            "%uint_16 %uint_0"));
  CHECK(
      e.has("%coopmat_acc_16x16xf32 = OpTypeCooperativeMatrixKHR %float %uint_3 %uint_16 "
            "%uint_16 %uint_2"));
  CHECK(e.has("= OpCooperativeMatrixLoadKHR %coopmat_a_16x16xf16 %"));
  CHECK(e.has(" %uint_0 %uint_24 NonPrivatePointer\n"));
  CHECK(e.has(" %uint_1 %uint_16 NonPrivatePointer\n"));
  CHECK(e.has("= OpCooperativeMatrixMulAddKHR %coopmat_acc_16x16xf32 %"));
  CHECK(e.has("OpCooperativeMatrixStoreKHR %"));
  CHECK(e.has("= OpPhi %coopmat_acc_16x16xf32 %"));
  CHECK(e.has("= OpConstantComposite %coopmat_acc_16x16xf32 %float_0"));
  // Ids defined by the KHR instructions read as SPIRV-Tools prints them where they are used.
  Emitted i8 = emit_coopmat(i8_kernel());
  CAPTURE(i8.text);
  CHECK(i8.has("= OpCompositeConstruct %coopmat_acc_16x16xi32 %"));
  CHECK(
      i8.has(" MatrixASignedComponentsKHR|MatrixBSignedComponentsKHR|"
             "MatrixCSignedComponentsKHR|MatrixResultSignedComponentsKHR\n"));
}

TEST_CASE("spirv coopmat: an if that forwards matrices merges them with a phi, not OpSelect") {
  Emitted e = emit_coopmat(kernel("%n: i32", R"(  %zero = constant {value = 0.0} : f32
  %one = constant {value = 1.0} : f32
  %x = coopmat_fill %zero : coopmat_acc<16x16xf32>
  %y = coopmat_fill %one : coopmat_acc<16x16xf32>
  %c0 = constant {value = 0} : i32
  %big = cmp_gt %n, %c0 : i1
  %pick = if %big ({
    yield %x
  }, {
    yield %y
  }) : coopmat_acc<16x16xf32>
  coopmat_store %c0, %pick {buffer = 0, stride = 16})",
                                  "shared_0 = tile<256xf32>", 32, 32));
  Module m(e.artifact.spirv);
  CHECK(m.all(spv::OpSelect).empty());
  auto phis = m.all(spv::OpPhi);
  REQUIRE(phis.size() == 1);
  CHECK(phis[0].size() == 7);
  CHECK(phis[0][4] != phis[0][6]);  // two parents: the then block and the header
  CHECK(m.all(kOpStore)[0][2] == phis[0][2]);
}

TEST_CASE("spirv coopmat: targets::emit skips SPIRV-Tools' steps and says so") {
  auto module = parse(f16_kernel());
  std::ostringstream out;
  tessera::Dumps dumps = tessera::Dumps::parse("times,spirv", "test");
  dumps.redirect(out);
  Artifact a = tessera::targets::emit(module->kernel(), profile("vulkan-nvidia"), dumps);
  CHECK(tessera::spirv::uses_cooperative_matrix(a.spirv));
  const std::string text = out.str();
  CAPTURE(text);
  CHECK(text.find("// spirv step validate skipped: SPIR-V with SPV_KHR_cooperative_matrix") !=
        std::string::npos);
  CHECK(text.find("// spirv step optimize skipped") != std::string::npos);
  CHECK(text.find("OpCooperativeMatrixMulAddKHR") != std::string::npos);
  CHECK(tessera::spirv::validate(a.spirv) == std::string(tessera::spirv::kCooperativeMatrixNote));
}

TEST_CASE("spirv coopmat: modules without matrices declare neither capability nor extension") {
  Emitted e = emit(kernel("%n: i32", "  %m = add %n, %n : i32"));
  CHECK(!tessera::spirv::uses_cooperative_matrix(e.artifact.spirv));
  CHECK(!e.has("CooperativeMatrix"));
  CHECK(!e.has("OpExtension"));
}

TEST_CASE("spirv coopmat: a target without the coopmat capability refuses matrices") {
  std::string error = emit_error(f16_kernel(), without(Cap::CooperativeMatrix, "vulkan-nvidia"),
                                 ErrorKind::Unsupported);
  CHECK(error ==
        "kernel 'k': a cooperative matrix (coopmat_acc<16x16xf32>) needs the 'coopmat' capability "
        "on target 'vulkan-nvidia' (test.tir:3: 'coopmat_fill')");
}

TEST_CASE(
    "spirv coopmat: bf16 matrices are SPV_KHR_bfloat16's, fills of them and shapes the target lacks are refused") {
  // A bf16 product: A and B loaded from the buffers' 16-bit words as bf16 matrices.
  std::string bf16 = kernel("", R"(  %c0 = constant {value = 0} : i32
  %z = constant {value = 0.0} : f32
  %c = coopmat_fill %z : coopmat_acc<16x16xf32>
  %a = coopmat_load %c0 {buffer = 0, stride = 16} : coopmat_a<16x16xbf16>
  %b = coopmat_load %c0 {buffer = 0, stride = 16} : coopmat_b<16x16xbf16>
  %d = coopmat_mul_add %a, %b, %c : coopmat_acc<16x16xf32>
  coopmat_store %c0, %d {buffer = 1, stride = 16})",
                            "shared_0 = tile<256xbf16>, shared_1 = tile<256xf32>", 32, 32);
  Emitted e = emit_coopmat(bf16);
  Module m(e.artifact.spirv);
  std::set<uint32_t> caps;
  for (const auto& i : m.all(spv::OpCapability)) caps.insert(i[1]);
  CHECK(caps.count(5116) == 1);  // BFloat16TypeKHR
  CHECK(caps.count(5118) == 1);  // BFloat16CooperativeMatrixKHR
  std::set<std::string> extensions;
  for (const auto& i : m.all(spv::OpExtension))
    extensions.insert(reinterpret_cast<const char*>(&i[1]));
  CHECK(extensions.count("SPV_KHR_bfloat16") == 1);
  // OpTypeFloat 16 with the BFloat16KHR encoding (0), the A and B matrices' component.
  uint32_t bf = 0;
  for (const auto& t : m.all(spv::OpTypeFloat))
    if (t.size() == 4 && t[2] == 16 && t[3] == 0) bf = t[1];
  REQUIRE(bf != 0);
  CHECK(m.matrix(bf, 16, 16, 0) != 0);
  CHECK(m.matrix(bf, 16, 16, 1) != 0);
  CHECK(m.all(kOpMulAdd).size() == 1);
  CHECK(m.all(kOpMulAdd)[0].size() == 6);  // no signedness operand for floats
  CHECK(e.text.find("OpCapability BFloat16CooperativeMatrixKHR") != std::string::npos);
  CHECK(e.text.find("OpTypeFloat 16 BFloat16KHR") != std::string::npos);
  // Tessera's bf16 scalars are f32 values: no bf16 matrix is filled from one.
  std::string fill = kernel("", R"(  %z = constant {value = 0.0} : bf16
  %c = coopmat_fill %z : coopmat_a<16x16xbf16>
  %c0 = constant {value = 0} : i32
  coopmat_store %c0, %c {buffer = 0, stride = 16})",
                            "shared_0 = tile<256xbf16>", 32, 32);
  CHECK(emit_error(fill, profile("vulkan-nvidia"), ErrorKind::Unsupported)
            .find("a bf16 cooperative matrix filled from a scalar (load it from memory)") !=
        std::string::npos);
  std::string shape = kernel("", R"(  %c0 = constant {value = 0} : i32
  %a = coopmat_load %c0 {buffer = 0, stride = 32} : coopmat_a<32x32xf16>)",
                             "shared_0 = tile<1024xf16>", 32, 32);
  CHECK(emit_error(shape, profile("vulkan-nvidia"), ErrorKind::Unsupported)
            .starts_with("kernel 'k': the cooperative matrix coopmat_a<32x32xf16> belongs to none "
                         "of the target's matrix shapes (16x16x16:f16*f16+f32, "));
}

TEST_CASE("spirv coopmat: a multiply needs its own shape, not only shapes for each matrix") {
  using tessera::ir::DType;
  Target t = profile("vulkan-nvidia");
  // Each matrix of a 16x16x16 multiply belongs to one of these shapes; the multiply to none.
  t.matrix_shapes = {{16, 8, 16, DType::f16, DType::f16, DType::f32},
                     {8, 16, 16, DType::f16, DType::f16, DType::f32},
                     {16, 16, 8, DType::f16, DType::f16, DType::f32}};
  CHECK(emit_error(f16_kernel(), t, ErrorKind::Unsupported) ==
        "kernel 'k': the matrix multiply 16x16x16:f16*f16+f32 is not among the target's "
        "(16x8x16:f16*f16+f32, 8x16x16:f16*f16+f32, 16x16x8:f16*f16+f32) on target "
        "'vulkan-nvidia' (test.tir:10: 'coopmat_mul_add')");
}

}  // namespace
}  // namespace spirv_test
