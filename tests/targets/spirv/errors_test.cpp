/// \file What the SPIR-V target refuses, and how it says so: Unsupported errors naming the kernel
/// and the feature; fallbacks where the target lacks an instruction but the kernel can still run.
#include "kernels.h"

namespace spirv_test {
namespace {

bool mentions(const std::string& message, std::string_view part) {
  return message.find(part) != std::string::npos;
}

TEST_CASE("spirv: f64 on a target without fp64 is Unsupported") {
  std::string text = value_kernel({DType::f64}, "  %r = add %a0, %a0 : f64", DType::f64);
  std::string m = emit_error(text, without(Cap::Fp64), ErrorKind::Unsupported);
  CHECK(mentions(m, "kernel 'k'"));
  CHECK(mentions(m, "dtype f64 is not supported"));
  CHECK(mentions(m, "vulkan-lavapipe"));
  // The same kernel is fine where fp64 exists.
  emit(text, profile("vulkan-lavapipe"));
}

TEST_CASE("spirv: narrow and wide integers need their capabilities") {
  CHECK(mentions(emit_error(value_kernel({DType::i64}, "  %r = add %a0, %a0 : i64", DType::i64),
                            without(Cap::Int64), ErrorKind::Unsupported),
                 "needs the 'int64' capability"));
  CHECK(mentions(emit_error(value_kernel({DType::i8}, "  %r = add %a0, %a0 : i8", DType::i8),
                            without(Cap::Int8), ErrorKind::Unsupported),
                 "dtype i8"));
  CHECK(mentions(emit_error(value_kernel({DType::f16}, "  %r = add %a0, %a0 : f16", DType::f16),
                            without(Cap::Fp16), ErrorKind::Unsupported),
                 "dtype f16"));
  CHECK(mentions(emit_error(value_kernel({DType::bf16}, "  %r = add %a0, %a0 : bf16", DType::bf16),
                            without(Cap::Int16), ErrorKind::Unsupported),
                 "bf16 (stored as 16-bit integers)"));
  CHECK(mentions(emit_error(value_kernel({DType::i1}, "  %r = not %a0 : i1", DType::i1),
                            without(Cap::Int8), ErrorKind::Unsupported),
                 "i1 in memory"));
}

TEST_CASE("spirv: a shuffle needs the subgroup_shuffle capability") {
  std::string text = value_kernel(
      {DType::i32},
      "  %one = constant {value = 1} : i32\n  %r = shuffle %a0, %one {mode = \"xor\"} : i32",
      DType::i32);
  CHECK(mentions(emit_error(text, without(Cap::SubgroupShuffle), ErrorKind::Unsupported),
                 "a subgroup shuffle needs the 'subgroup_shuffle' capability"));
  emit(text, profile("vulkan-lavapipe"));
}

TEST_CASE("spirv: mma and ldmatrix are Unsupported (no mma.sync fragments on Vulkan)") {
  std::string text =
      kernel("%h: f16, %f: f32",
             "  %d0, %d1, %d2, %d3 = mma %h, %h, %h, %h, %h, %h, %h, %h, %h, %h, %h, "
             "%h, %f, %f, %f, %f {a = \"f16\", shape = \"m16n8k16\"} : f32, f32, f32, f32",
             "", 32, 32);
  std::string m = emit_error(text, profile("vulkan-nvidia"), ErrorKind::Unsupported);
  CHECK(mentions(m, "'mma' (mma.sync fragments) needs the 'mma_sync' capability"));
  CHECK(mentions(m, "cooperative matrices"));
}

TEST_CASE("spirv: fp8 is Unsupported on every SPIR-V target, naming the dtype and the target") {
  for (DType t : {DType::f8e4m3, DType::f8e5m2}) {
    const std::string d(tessera::ir::dtype_name(t));
    CAPTURE(d);
    std::string text = value_kernel({t}, "  %r = cast %a0 : f32", DType::f32);
    std::string m = emit_error(text, profile("vulkan-lavapipe"), ErrorKind::Unsupported);
    CHECK(mentions(m, "dtype " + d + " is not supported (SPIR-V has no fp8"));
    CHECK(mentions(m, "on target 'vulkan-lavapipe'"));
  }
}

TEST_CASE("spirv: f64 math on a target without fp64 is Unsupported, naming the target") {
  std::string text = value_kernel({DType::f64}, "  %r = exp %a0 : f64", DType::f64);
  std::string m = emit_error(text, without(Cap::Fp64), ErrorKind::Unsupported);
  CHECK(mentions(m, "dtype f64 is not supported on target 'vulkan-lavapipe'"));
}

TEST_CASE("spirv: 64-bit atomics need int64 atomics") {
  std::string text =
      value_kernel({DType::i64}, "  %r = atomic_rmw %in0, %a0 {op = \"add\"} : i64", DType::i64);
  CHECK(mentions(emit_error(text, without(Cap::Int64Atomics), ErrorKind::Unsupported),
                 "a 64-bit atomic"));
  CHECK(emit(text).has("OpCapability Int64Atomics"));
}

std::string float_atomic(std::string_view op) {
  return value_kernel({DType::f32},
                      "  %r = atomic_rmw %in0, %a0 {op = \"" + std::string(op) + "\"} : f32",
                      DType::f32);
}

TEST_CASE("spirv: float atomic max is a CAS loop, with or without the extension") {
  // The extension leaves -0 against +0 to the driver; the IR orders -0 < +0.
  Emitted lavapipe = emit_both(float_atomic("max"), profile("vulkan-lavapipe"));
  CHECK(!lavapipe.has("OpAtomicFMaxEXT"));
  CHECK(lavapipe.has("OpAtomicCompareExchange %uint"));
  // NVIDIA's Vulkan driver has no f32 atomic min/max either: compare-and-swap on the bits.
  std::string nvidia = float_atomic("max");
  nvidia.replace(nvidia.find("subgroup = 8"), 12, "subgroup = 32");
  Emitted cas = emit_both(nvidia, profile("vulkan-nvidia"));
  CHECK(!cas.has("OpAtomicFMaxEXT"));
  CHECK(cas.has("OpAtomicCompareExchange %uint"));
  CHECK(cas.has("OpLoopMerge"));
  // The order is given by fences around the loop, whose atomics are relaxed.
  CHECK(cas.count("OpMemoryBarrier") == 2);
}

TEST_CASE("spirv: float atomic add uses the extension when present, else a CAS loop") {
  Emitted native = emit_both(float_atomic("add"));
  CHECK(native.has("OpAtomicFAddEXT %float"));
  CHECK(native.has("OpExtension \"SPV_EXT_shader_atomic_float_add\""));
  Emitted cas = emit_both(float_atomic("add"), without(Cap::FloatAtomicAdd));
  CHECK(!cas.has("OpAtomicFAddEXT"));
  CHECK(cas.has("OpAtomicCompareExchange %uint"));
  // f16 atomics work on the 32-bit word around the element.
  Emitted half = emit_both(
      value_kernel({DType::f16}, "  %r = atomic_rmw %in0, %a0 {op = \"add\"} : f16", DType::f16));
  CHECK(half.has("OpAtomicCompareExchange %uint"));
  CHECK(half.has("OpBitwiseAnd %ulong"));  // the word's address
}

TEST_CASE("spirv: atomics map scope and order to Vulkan-memory-model operands") {
  auto atomic = [](std::string_view attrs) {
    return emit_both(value_kernel({DType::i32},
                                  "  %r = atomic_rmw %in0, %a0 {" + std::string(attrs) + "} : i32",
                                  DType::i32));
  };
  // gpu scope is Device (1); acq_rel is AcquireRelease|UniformMemory|MakeAvailable|MakeVisible.
  Emitted e = atomic("op = \"add\"");
  CHECK(e.has("OpAtomicIAdd %int"));
  CHECK(e.has("%uint_1 %uint_24648"));
  CHECK(e.has("OpCapability VulkanMemoryModelDeviceScope"));
  CHECK(atomic("op = \"max\", scope = \"cta\", sem = \"relaxed\"").has("OpAtomicSMax %int"));
  CHECK(atomic("op = \"max\", scope = \"cta\", sem = \"relaxed\"").has("%uint_2 %uint_0"));
  CHECK(atomic("op = \"xchg\", scope = \"sys\", sem = \"release\"").has("%uint_5 %uint_8260"));
  CHECK(emit_both(value_kernel({DType::u32}, "  %r = atomic_rmw %in0, %a0 {op = \"min\"} : u32",
                               DType::u32))
            .has("OpAtomicUMin %uint"));
  // A failed compare-exchange acquires but never releases.
  Emitted cas = emit_both(value_kernel({DType::i32, DType::i32},
                                       "  %r = atomic_cas %in0, %a0, %a1 {sem = \"acq_rel\"} : i32",
                                       DType::i32));
  CHECK(cas.has("%uint_24648 %uint_16450"));
}

TEST_CASE("spirv: launch limits of the target are checked") {
  std::string big = kernel("", "  barrier", "", /*threads=*/2048, /*subgroup=*/8);
  CHECK(mentions(emit_error(big, profile(), ErrorKind::Unsupported), "2048 threads"));
  std::string shared = kernel("", "  barrier", "shared_0 = tile<9000xf32>");
  CHECK(mentions(emit_error(shared, profile(), ErrorKind::Unsupported),
                 "36000 bytes of shared memory exceed the limit of 32768"));
  std::string wrong = kernel("", "  barrier", "", 64, /*subgroup=*/32);
  CHECK(mentions(emit_error(wrong, profile("vulkan-lavapipe"), ErrorKind::Unsupported),
                 "subgroup size 32"));
  CHECK(mentions(emit_error(kernel("", "  barrier"), profile("cuda-sm_90"), ErrorKind::Unsupported),
                 "needs a Vulkan target"));
  CHECK(mentions(emit_error(kernel("", "  barrier"), without(Cap::BufferDeviceAddress),
                            ErrorKind::Unsupported),
                 "'bda' capability"));
}

TEST_CASE("spirv: a tile-IR function is a caller's bug") {
  auto module = tessera::ir::parse("func @t(%n: i32) {\n}\n", "tile.tir");
  CHECK_THROWS_AS(tessera::spirv::emit(module->kernel(), profile()), Error);
  try {
    tessera::spirv::emit(module->kernel(), profile());
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Internal);
  }
}

}  // namespace
}  // namespace spirv_test
