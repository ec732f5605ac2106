/// \file The SPIR-V target end to end: the kernel ABI (parameter block, logical grid, early
/// return), the artifact's launch facts, and instruction selection for a vector add.
#include "helpers.h"

namespace spirv_test {
namespace {

const char* kVectorAdd = R"(
func @vector_add(%x: ptr<f32> {divisibility = 16}, %y: ptr<f32> {divisibility = 16},
                 %out: ptr<f32>, %n: i32) attributes {stage = "simt", subgroup = 8, threads = 128} {
  %pid = program_id {axis = 0} : i32
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c8 = constant {value = 8} : i32
  %t0 = mul %sg, %c8 : i32
  %tid = add %t0, %lane : i32
  %c128 = constant {value = 128} : i32
  %base = mul %pid, %c128 : i32
  %i = add %base, %tid : i32
  %m = cmp_lt %i, %n : i1
  %px = ptr_add %x, %i : ptr<f32>
  %zero = constant {value = 0.0} : f32
  %a = global_load %px, %m, %zero {align = 4, width = 1} : f32
  %py = ptr_add %y, %i : ptr<f32>
  %b = global_load %py, %m, %zero {align = 4, width = 1} : f32
  %s = add %a, %b : f32
  %po = ptr_add %out, %i : ptr<f32>
  global_store %po, %m, %s {align = 4, width = 1}
}
)";

TEST_CASE("spirv: vector add validates before and after optimization") {
  Emitted e = emit_both(kVectorAdd);
  CHECK(e.has("OpEntryPoint GLCompute"));
  CHECK(e.has("OpExecutionMode %vector_add LocalSize 128 1 1"));
  CHECK(e.has("OpMemoryModel PhysicalStorageBuffer64 Vulkan"));
  CHECK(e.count("Aligned|NonPrivatePointer 4") == 3);
}

TEST_CASE("spirv: the artifact carries the launch facts") {
  Emitted e = emit(kVectorAdd);
  const Artifact& a = e.artifact;
  CHECK(a.kernel == "vector_add");
  CHECK(a.isa == "spirv");
  CHECK(a.target == profile().str());
  CHECK(a.threads == 128);
  CHECK(a.subgroup == 8);
  CHECK(a.shared_bytes == 0);
  CHECK(a.spirv.size() > 5);
  CHECK(a.spirv[0] == 0x07230203u);
  CHECK(a.spirv[1] == 0x00010600u);  // SPIR-V 1.6
  // Three pointers and an i32: 28 bytes, rounded to 32; then the logical grid.
  REQUIRE(a.params.slots.size() == 4);
  CHECK(a.params.slots[3].offset == 24);
  CHECK(a.params.size == 32);
  CHECK(a.grid_offset == 32);
  // lavapipe's loop limit: every kernel has the fault channel, its address at 48, its tag at 56.
  CHECK(a.fault_offset == 48);
  CHECK(a.param_bytes == 60);
  CHECK(!a.params_by_address);
}

TEST_CASE("spirv: a block that fits is the push-constant range, laid out as the ABI says") {
  Emitted e = emit(kVectorAdd);
  CHECK(e.has("OpDecorate %Params Block"));
  CHECK(e.has("OpMemberDecorate %Params 3 Offset 24"));
  CHECK(e.has("OpMemberDecorate %Params 4 Offset 32"));  // grid x
  CHECK(e.has("OpMemberDecorate %Params 6 Offset 40"));  // grid z
  CHECK(e.has("%params = OpVariable %_ptr_PushConstant_Params PushConstant"));
  CHECK(!e.has("ParamsAddress"));
}

TEST_CASE("spirv: narrow parameters are read from their 32-bit words") {
  std::string text =
      kernel("%out: ptr<i32>, %b: i1, %c: i8, %s: i16, %h: f16", R"(  %t = constant {value = 1} : i1
  %cc = cast %c : i32
  %ss = cast %s : i32
  %hh = cast %h : i32
  %bb = cast %b : i32
  global_store %out, %t, %cc, %ss, %hh, %bb {align = 4, width = 4})");
  Emitted e = emit_both(text);
  // i1 at 8, i8 at 9, i16 at 10: one word at 8; f16 at 12: a word of its own.
  CHECK(e.has("OpMemberDecorate %Params 1 Offset 8"));
  CHECK(e.has("OpMemberDecorate %Params 2 Offset 12"));
  CHECK(e.has("OpShiftRightLogical %uint %"));
  CHECK(!e.has("StoragePushConstant8"));
  CHECK(!e.has("StoragePushConstant16"));
  CHECK(e.artifact.param_bytes == 16 + 12 + 16);  // the grid, then the fault channel
}

TEST_CASE("spirv: a block over the push-constant limit is read through its address") {
  std::string params;
  for (int i = 0; i < 16; ++i) params += "%p" + std::to_string(i) + ": ptr<f32>, ";
  params += "%n: i32";
  std::string text = kernel(params, R"(  %t = constant {value = 1} : i1
  %one = constant {value = 1.0} : f32
  %np = num_programs {axis = 0} : i32
  %x = cast %np : f32
  global_store %p15, %t, %x {align = 4, width = 1})");
  Emitted e = emit_both(text, profile("vulkan-lavapipe"));  // 128 push-constant bytes
  const Artifact& a = e.artifact;
  CHECK(a.params_by_address);
  CHECK(a.grid_offset == 136);
  CHECK(a.fault_offset == 152);  // lavapipe's loop limit: every kernel has the fault channel
  CHECK(a.param_bytes == 164);
  CHECK(e.has("OpMemberDecorate %ParamsAddress 0 Offset 0"));
  CHECK(e.has("OpConvertUToPtr %_ptr_PhysicalStorageBuffer_Params"));
  CHECK(e.has("OpLoad %ulong %"));
  CHECK(e.has("Aligned 8"));  // pointers in the block
  CHECK(e.has("Aligned 4"));  // the i32 and the grid words
  // NVIDIA's 256 push-constant bytes hold it.
  std::string nvidia = text;
  nvidia.replace(nvidia.find("subgroup = 8"), 12, "subgroup = 32");
  CHECK(!emit_both(nvidia, profile("vulkan-nvidia")).artifact.params_by_address);
}

TEST_CASE("spirv: program ids come from the folded grid, workgroups past it return at once") {
  Emitted e = emit(kVectorAdd);
  CHECK(e.has("BuiltIn WorkgroupId"));
  CHECK(e.has("BuiltIn NumWorkgroups"));
  CHECK(e.has("OpUGreaterThanEqual %bool"));
  CHECK(e.has("OpReturn"));
  CHECK(e.has("OpUMod %uint"));
  CHECK(e.has("OpUDiv %uint"));
  // The check comes before any parameter or memory access: the first selection is the return.
  size_t check = e.text.find("OpSelectionMerge"), ret = e.text.find("OpReturn"),
         load = e.text.find("OpConvertUToPtr");
  CHECK(check < ret);
  CHECK(ret < load);
}

TEST_CASE("spirv: shared buffers are workgroup arrays, vectors when always accessed wide") {
  std::string text = kernel("", R"(  %c0 = constant {value = 0} : i32
  %a, %b, %c, %d = shared_load %c0 {buffer = 0, width = 4} : f32, f32, f32, f32
  %e = shared_load %c0 {buffer = 1, width = 1} : f32
  shared_store %c0, %a, %b {buffer = 2, width = 2}
  %h = cast %e : bf16
  shared_store %c0, %h {buffer = 3, width = 1}
  %f = shared_load %c0 {buffer = 3, width = 1} : bf16)",
                            "shared_0 = tile<256xf32>, shared_1 = tile<10xf32>, shared_2 = "
                            "tile<6xf32>, shared_3 = tile<3xbf16>");
  Emitted e = emit_both(text);
  CHECK(e.has("OpTypeArray %v4float %uint_64"));
  CHECK(e.has("OpTypeArray %float %uint_10"));
  CHECK(e.has("OpTypeArray %v2float %uint_3"));
  CHECK(e.has("OpTypeArray %ushort %uint_3"));
  CHECK(e.count("Workgroup") >= 4);
  CHECK(e.has("OpLoad %v4float %"));
  CHECK(e.has("NonPrivatePointer"));
  CHECK(e.artifact.shared_bytes == 1024 + 48 + 32 + 16);
}

}  // namespace
}  // namespace spirv_test
