/// \file Every op kind the SIMT IR admits (core/ir/simt.h: the SIMT ops and the scalar tile ops)
/// appears in a module that validates, or is refused with an Unsupported error (mma,
/// ldmatrix, wgmma), or (the coopmat ops) in a module that SPIRV-Tools 2023.1 cannot validate,
/// whose words coopmat_test.cpp checks.
#include <set>

#include "core/ir/op_table.h"
#include "kernels.h"

namespace spirv_test {
namespace {

using tessera::ir::OpKind;

/// Kernels that together use every op kind of a SIMT function.
std::vector<std::string> corpus() {
  std::vector<std::string> kernels;
  const char* binary[] = {"add",    "sub",    "mul",    "div",    "rem",    "min",
                          "max",    "and",    "or",     "xor",    "shl",    "shr",
                          "cmp_eq", "cmp_ne", "cmp_lt", "cmp_le", "cmp_gt", "cmp_ge"};
  for (const char* op : binary) {
    bool compare = std::string(op).starts_with("cmp");
    kernels.push_back(
        value_kernel({DType::i32, DType::i32},
                     "  %r = " + std::string(op) + " %a0, %a1 : " + (compare ? "i1" : "i32"),
                     compare ? DType::i1 : DType::i32));
  }
  const char* unary[] = {"neg", "not", "abs"};
  for (const char* op : unary)
    kernels.push_back(
        value_kernel({DType::i16}, "  %r = " + std::string(op) + " %a0 : i16", DType::i16));
  // every math row of ops.def (op_table.h's traits), unary and binary
  for (tessera::ir::OpKind k : tessera::ir::kinds_where(tessera::ir::is_unary_math))
    kernels.push_back(value_kernel(
        {DType::f32}, "  %r = " + std::string(tessera::ir::op_name(k)) + " %a0 : f32", DType::f32));
  for (tessera::ir::OpKind k : tessera::ir::kinds_where(tessera::ir::is_binary_math))
    kernels.push_back(value_kernel(
        {DType::f32, DType::f32},
        "  %r = " + std::string(tessera::ir::op_name(k)) + " %a0, %a1 : f32", DType::f32));
  kernels.push_back(value_kernel({DType::bf16, DType::bf16, DType::bf16},
                                 "  %r = fma %a0, %a1, %a2 : bf16", DType::bf16));
  kernels.push_back(value_kernel({DType::i1, DType::f16, DType::f16},
                                 "  %r = where %a0, %a1, %a2 : f16", DType::f16));
  kernels.push_back(value_kernel({DType::f32}, "  %r = cast %a0 : i8", DType::i8));
  kernels.push_back(value_kernel({DType::f32}, "  %r = bitcast %a0 : u32", DType::u32));
  kernels.push_back(kernel("%n: i32", "  print %n, %n {prefix = \"n = \", rank = 1}"));
  kernels.push_back(
      value_kernel({DType::u64, DType::u64}, "  %r = atomic_cas %in0, %a0, %a1 : u64", DType::u64));
  kernels.push_back(
      value_kernel({DType::f32}, "  %r = atomic_rmw %in0, %a0 {op = \"max\"} : f32", DType::f32));
  // Program identity, hints, SIMT ops, shared memory and control flow in one kernel.
  kernels.push_back(kernel("%x: ptr<f32>, %out: ptr<f32>, %n: i32",
                           R"(  %pid = program_id {axis = 1} : i32
  %np = num_programs {axis = 2} : i32
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c8 = constant {value = 8} : i32
  %t0 = mul %sg, %c8 : i32
  %tid0 = add %t0, %lane : i32
  %tid = multiple_of %tid0 {values = [1]} : i32
  %tidc = max_contiguous %tid {values = [64]} : i32
  %inside = cmp_lt %tidc, %n : i1
  assume %inside
  %p = ptr_add %x, %tidc : ptr<f32>
  %zero = constant {value = 0.0} : f32
  %v = global_load %p, %inside, %zero {align = 4, width = 1} : f32
  %c1 = constant {value = 1} : i32
  %o = shuffle %v, %c1 {mode = "down"} : f32
  %s = add %v, %o : f32
  shared_store %tidc, %s {buffer = 0, width = 1}
  barrier
  %a, %b = shared_load %c1 {buffer = 0, width = 2} : f32, f32
  %c0 = constant {value = 0} : i32
  %sum = for %c0, %np, %c1, %a ({
  ^(%i: i32, %acc: f32):
    %acc2 = add %acc, %b : f32
    yield %acc2
  }) : f32
  %first = cmp_eq %lane, %c0 : i1
  %fin = if %first ({
    yield %sum
  }, {
    %w = while %sum ({
    ^(%x1: f32):
      %big = cmp_gt %x1, %zero : i1
      condition %big, %x1
    }, {
    ^(%x2: f32):
      %half = mul %x2, %zero : f32
      yield %half
    }) : f32
    yield %w
  }) : f32
  %po = ptr_add %out, %pid : ptr<f32>
  global_store %po, %first, %fin {align = 4, width = 1})",
                           "shared_0 = tile<64xf32>"));
  // The cp_async family copies synchronously on Vulkan.
  kernels.push_back(kernel("%g: ptr<f16>", R"(  %lane = lane_id : i32
  %c8 = constant {value = 8} : i32
  %row = mul %lane, %c8 : i32
  %t = constant {value = 1} : i1
  cp_async %row, %g, %t {buffer = 0}
  cp_async_commit
  cp_async_wait {pending = 0}
  barrier)",
                           "shared_0 = tile<512xf16>"));
  // A device assert fills the fault record (faults_test.cpp checks what it writes).
  kernels.push_back(kernel("%c: i1", "  assert %c {message = \"m\"}"));
  return kernels;
}

/// The cooperative-matrix ops, carried by for, if and while (SPV_KHR_cooperative_matrix: not
/// validated).
std::string coopmat_kernel() {
  return kernel("%n: i32", R"(  %zero = constant {value = 0.0} : f32
  %acc0 = coopmat_fill %zero : coopmat_acc<16x16xf32>
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %a = coopmat_load %c0 {buffer = 0, stride = 16} : coopmat_a<16x16xf16>
  %b = coopmat_load %c0 {buffer = 1, stride = 16, col_major = 1} : coopmat_b<16x16xf16>
  %acc = for %c0, %n, %c1, %acc0 ({
  ^(%i: i32, %c: coopmat_acc<16x16xf32>):
    %d = coopmat_mul_add %a, %b, %c : coopmat_acc<16x16xf32>
    yield %d
  }) : coopmat_acc<16x16xf32>
  %big = cmp_gt %n, %c1 : i1
  %pick = if %big ({
    yield %acc
  }, {
    yield %acc0
  }) : coopmat_acc<16x16xf32>
  %w = while %pick ({
  ^(%x1: coopmat_acc<16x16xf32>):
    condition %big, %x1
  }, {
  ^(%x2: coopmat_acc<16x16xf32>):
    %e = coopmat_mul_add %a, %b, %x2 : coopmat_acc<16x16xf32>
    yield %e
  }) : coopmat_acc<16x16xf32>
  coopmat_store %c0, %w {buffer = 2, stride = 16})",
                "shared_0 = tile<256xf16>, shared_1 = tile<256xf16>, shared_2 = tile<256xf32>", 64,
                32);
}

/// A kernel with one op of `kind` that the SPIR-V target refuses.
std::string refused_kernel(OpKind kind) {
  const char* attrs = "shared_0 = tile<512xf16>";
  switch (kind) {
    case OpKind::Assert:
      return kernel("%c: i1", "  assert %c");
    case OpKind::LdMatrix:
      return kernel("%i: i32", "  %x0, %x1 = ldmatrix %i {buffer = 0, count = 1} : f16, f16", attrs,
                    32, 32);
    case OpKind::Wgmma:
      return kernel("%i: i32, %f: f32",
                    R"(  %d0, %d1, %d2, %d3 = wgmma %i, %i, %f, %f, %f, %f {a = "f16",
                           a_smem = [0, 128, 0, 1024, 0], b_smem = [0, 128, 0, 1024, 0],
                           shape = "m64n8k16"} : f32, f32, f32, f32)",
                    attrs, 128, 32);
    case OpKind::WgmmaFence:
      return kernel("", "  wgmma_fence", "", 128, 32);
    case OpKind::WgmmaCommit:
      return kernel("", "  wgmma_commit", "", 128, 32);
    case OpKind::WgmmaWait:
      return kernel("", "  wgmma_wait {pending = 0}", "", 128, 32);
    case OpKind::FenceAsyncShared:
      return kernel("", "  fence_async_shared", "", 128, 32);
    case OpKind::SetMaxNReg:
      return kernel("", "  setmaxnreg {inc = 1, registers = 232}", "maxnreg = 232", 128, 32);
    case OpKind::WarpSpecialize:
      return kernel("",
                    "  warp_specialize {roles = [64, 64]} ({\n    yield\n  }, {\n    yield\n  })",
                    "", 128, 32);
    case OpKind::InlineAsm:
    case OpKind::InlineAsmImpure:
      return kernel("%i: i32", "  %r = " + std::string(tessera::ir::op_name(kind)) +
                                   R"( %i {asm = "mov.b32 $0, $1;", constraints = "=r,r"} : i32)");
    case OpKind::MbarrierInit:
      return kernel("%i: i32", "  mbarrier_init %i, %i {buffer = 0}", "shared_0 = tile<1xi64>");
    case OpKind::MbarrierArriveTx:
      return kernel("%i: i32", "  mbarrier_arrive_tx %i, %i {buffer = 0}",
                    "shared_0 = tile<1xi64>");
    case OpKind::MbarrierWait:
      return kernel("%i: i32", "  mbarrier_wait %i, %i {buffer = 0}", "shared_0 = tile<1xi64>");
    case OpKind::MbarrierInval:
      return kernel("%i: i32", "  mbarrier_inval %i {buffer = 0}", "shared_0 = tile<1xi64>");
    case OpKind::TmaLoad:
      return kernel("%a: ptr<f16> {divisibility = 16}, %i: i32",
                    "  tma_load %i, %i, %i {barrier = 1, buffer = 0, map = 0}",
                    "shared_0 = tile<512xf16>, shared_1 = tile<1xi64>, tensor_map_0 = "
                    "\"tensor_map(%0: f16 [%1] strides [1] box [64] swizzle 0)\"");
    case OpKind::TmaStore:
      return kernel("%a: ptr<f16> {divisibility = 16}, %i: i32",
                    "  tma_store %i, %i {buffer = 0, map = 0}",
                    "shared_0 = tile<512xf16>, tensor_map_0 = "
                    "\"tensor_map(%0: f16 [%1] strides [1] box [64] swizzle 0)\"");
    case OpKind::TmaStoreCommit:
      return kernel("", "  tma_store_commit", "");
    case OpKind::TmaStoreWait:
      return kernel("", "  tma_store_wait {pending = 0}", "");
    case OpKind::ClusterRank:
      return kernel("", "  %r = cluster_rank : i32", "cluster = 2");
    case OpKind::ClusterBarrier:
      return kernel("", "  cluster_barrier", "cluster = 2");
    default:
      return kernel("%h: f16, %f: f32",
                    R"(  %d0, %d1, %d2, %d3 = mma %h, %h, %h, %h, %h, %h, %h, %h, %h, %h, %h, %h,
                           %f, %f, %f, %f {a = "f16", shape = "m16n8k16"} : f32, f32, f32, f32)",
                    "", 32, 32);
  }
}

TEST_CASE("spirv: every op kind of a SIMT function validates or is refused") {
  std::set<OpKind> covered;
  for (const std::string& text : corpus()) {
    CAPTURE(text);
    emit_both(text, profile("vulkan-lavapipe"));
    emit_both(text, without(Cap::FloatAtomicAdd));
    emit_both(text, with({Cap::FusedFma, Cap::DenormPreserve32, Cap::IeeeMinMax}));
    auto module = parse(text);
    tessera::ir::walk(module->kernel().body,
                      [&](const tessera::ir::Op* op) { covered.insert(op->kind); });
  }
  {
    auto module = parse(coopmat_kernel());
    auto a = tessera::spirv::emit(module->kernel(), profile("vulkan-nvidia"));
    CHECK(tessera::spirv::uses_cooperative_matrix(a.spirv));
    CHECK(!tessera::spirv::disassemble(a.spirv).empty());
    tessera::ir::walk(module->kernel().body,
                      [&](const tessera::ir::Op* op) { covered.insert(op->kind); });
  }
  {
    // VK_NV_cooperative_matrix2's tensor load (coopmat2_emit_test.cpp checks its words).
    auto module = parse(kernel("%p: ptr<f16>, %n: i32", R"(
  %a = coopmat_load_tensor %p, %n, %n, %n, %n, %n, %n : wgmat_a<32x16xf16>)",
                               "", 128, 32));
    auto a = tessera::spirv::emit(module->kernel(), profile("vulkan-nvidia-coopmat2"));
    CHECK(tessera::spirv::uses_cooperative_matrix(a.spirv));
    tessera::ir::walk(module->kernel().body,
                      [&](const tessera::ir::Op* op) { covered.insert(op->kind); });
  }
  // mma and ldmatrix have no SPIR-V form: they are refused (errors_test.cpp checks the
  // messages). wgmma and its fences, and the TMA family: Hopper's PTX only; so is inline assembly.
  std::set<OpKind> refused = {OpKind::Mma,
                              OpKind::LdMatrix,
                              OpKind::Wgmma,
                              OpKind::WgmmaFence,
                              OpKind::WgmmaCommit,
                              OpKind::WgmmaWait,
                              OpKind::FenceAsyncShared,
                              OpKind::SetMaxNReg,
                              OpKind::WarpSpecialize,
                              OpKind::MbarrierInit,
                              OpKind::MbarrierArriveTx,
                              OpKind::MbarrierWait,
                              OpKind::MbarrierInval,
                              OpKind::TmaLoad,
                              OpKind::TmaStore,
                              OpKind::TmaStoreCommit,
                              OpKind::TmaStoreWait,
                              OpKind::ClusterRank,
                              OpKind::ClusterBarrier};
  refused.insert({OpKind::InlineAsm, OpKind::InlineAsmImpure});  // H20
  for (OpKind kind : refused) {
    CAPTURE(tessera::ir::op_name(kind));
    emit_error(refused_kernel(kind), profile("vulkan-nvidia"), ErrorKind::Unsupported);
  }
  // A named barrier of part of the workgroup has no SPIR-V form either.
  emit_error(kernel("", "  barrier {id = 1, threads = 32}", "", 64, 32), profile("vulkan-nvidia"),
             ErrorKind::Unsupported);
  for (int k = 0; k < tessera::ir::num_op_kinds(); ++k) {
    auto kind = static_cast<OpKind>(k);
    if (tessera::ir::has_trait(kind, tessera::ir::kTileOnly)) continue;
    CAPTURE(tessera::ir::op_name(kind));
    CHECK((covered.count(kind) || refused.count(kind)));
  }
}

}  // namespace
}  // namespace spirv_test
