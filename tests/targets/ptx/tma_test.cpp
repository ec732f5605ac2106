/// \file The TMA instruction forms (mbarrier.init, mbarrier.arrive.expect_tx,
/// cp.async.bulk.tensor.2d ... mbarrier::complete_tx::bytes, mbarrier.try_wait.parity) and a
/// tensor map as a `.param .align 64 .b8 [128]` kernel parameter, assembled by ptxas for sm_90a;
/// the same kernel runs on a GPU in tests/runtime/cuda/tma_test.cpp.
#include <doctest/doctest.h>

#include "helpers.h"
#include "tma_box_ptx.h"

TEST_CASE("ptx tma: a tensor map parameter, an mbarrier and a bulk tensor copy assemble") {
  const auto a = ptx_test::assemble(tma_test::kTmaBoxPtx, "sm_90a");
  if (!a.ran) {
    MESSAGE(
        "SKIP: ptxas not found (no CUDA toolkit in /usr/local/cuda or $CUDA_HOME): PTX not "
        "assembled");
    return;
  }
  CHECK_MESSAGE(a.ok, a.log);
  // sm_80 has no TMA: ptxas refuses the module (its .target is sm_90a).
  CHECK_FALSE(ptx_test::assemble(tma_test::kTmaBoxPtx, "sm_80").ok);
}

namespace {

/// A SIMT kernel with the TMA family: thread 0 initializes the mbarrier, arms it with the box's
/// bytes and copies two 64 x 64 f16 boxes of map 0 (a 128-column block row: 2 copies) at
/// (%r0, %c0) and (%r0, %c0 + 64); everyone waits for phase 0 and stores one element; thread 0
/// invalidates the mbarrier.
constexpr const char* kTmaKernel = R"(
func @tma_ring(%a: ptr<f16> {divisibility = 16}, %out: ptr<f16> {divisibility = 16}, %m: i32, %k: i32 {divisibility = 16}, %r0: i32, %c0: i32) attributes {shared_0 = tile<8192xf16>, shared_1 = tile<1xi64>, stage = "simt", subgroup = 32, tensor_map_0 = "tensor_map(%0: f16 [%2 x %3] strides [%3, 1] box [64 x 64] swizzle 128) x 2 copies", threads = 128} {
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c32 = constant {value = 32} : i32
  %t0 = mul %sg, %c32 : i32
  %tid = add %t0, %lane : i32
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %bytes = constant {value = 16384} : i32
  %half = constant {value = 4096} : i32
  %c64 = constant {value = 64} : i32
  %first = cmp_eq %tid, %zero : i1
  if %first ({
    mbarrier_init %zero, %one {buffer = 1}
    fence_async_shared
    yield
  }, {
    yield
  })
  barrier
  if %first ({
    mbarrier_arrive_tx %zero, %bytes {buffer = 1}
    tma_load %zero, %zero, %r0, %c0 {barrier = 1, buffer = 0, map = 0}
    %c1 = add %c0, %c64 : i32
    tma_load %half, %zero, %r0, %c1 {barrier = 1, buffer = 0, map = 0}
    yield
  }, {
    yield
  })
  mbarrier_wait %zero, %zero {buffer = 1}
  %v = shared_load %tid {buffer = 0, width = 1} : f16
  %dst = ptr_add %out, %tid : ptr<f16>
  %true = constant {value = 1} : i1
  global_store %dst, %true, %v {align = 2, width = 1}
  barrier
  if %first ({
    mbarrier_inval %zero {buffer = 1}
    yield
  }, {
    yield
  })
}
)";

}  // namespace

TEST_CASE("ptx tma: the SIMT TMA family emits the checked forms, with the map as a parameter") {
  const ptx_test::Emitted e = ptx_test::emit(kTmaKernel, ptx_test::profile("cuda-sm_90a"));
  CHECK(e.has("mbarrier.init.shared::cta.b64 ["));
  CHECK(e.has("mbarrier.arrive.expect_tx.shared::cta.b64 _, ["));
  CHECK(e.count("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [") ==
        2);
  CHECK(e.has("mbarrier.try_wait.parity.shared::cta.b64"));
  CHECK(e.has("mbarrier.inval.shared::cta.b64 ["));
  CHECK(e.has(".param .align 64 .b8 tma_ring_param_6[128]"));
  CHECK(e.has("cvta.param.u64"));
  // The artifact: the map after the six user parameters, in a 64-aligned 128-byte slot.
  REQUIRE(e.artifact.tensor_maps.size() == 1);
  CHECK(e.artifact.tensor_maps[0].copies == 2);
  CHECK(e.artifact.tensor_maps[0].base_param == 0);
  REQUIRE(e.artifact.params.slots.size() == 7);
  CHECK(e.artifact.params.slots[6].offset == 64);
  CHECK(e.artifact.params.slots[6].size == 128);
  CHECK(e.artifact.param_bytes == 192);
}

TEST_CASE("ptx tma: a target without TMA refuses the family, naming the op") {
  auto [kind, message] =
      ptx_test::error_of([] { ptx_test::emit(kTmaKernel, ptx_test::profile("cuda-sm_80")); });
  CHECK(kind == tessera::ErrorKind::Unsupported);
  CHECK(message.find("'mbarrier_init' is not supported on") != std::string::npos);
  CHECK(message.find("TMA copies and mbarriers need sm_90 or newer") != std::string::npos);
}

TEST_CASE("ptx tma: tma_store, its commit and its wait emit the bulk-group forms") {
  // Every thread writes an element of the box; fence, barrier; thread 0 stores the 64 x 64 f16
  // box at (%r0, %c0) of map 0 and waits until it has read shared memory.
  constexpr const char* kStore = R"tir(
func @tma_store(%a: ptr<f16> {divisibility = 16}, %m: i32, %k: i32 {divisibility = 16}, %r0: i32, %c0: i32) attributes {shared_0 = tile<4096xf16>, stage = "simt", subgroup = 32, tensor_map_0 = "tensor_map(%0: f16 [%1 x %2] strides [%2, 1] box [64 x 64] swizzle 128)", threads = 128} {
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c32 = constant {value = 32} : i32
  %t0 = mul %sg, %c32 : i32
  %tid = add %t0, %lane : i32
  %zero = constant {value = 0} : i32
  %x = constant {value = 1.0} : f16
  shared_store %tid, %x {buffer = 0, width = 1}
  fence_async_shared
  barrier
  %first = cmp_eq %tid, %zero : i1
  if %first ({
    tma_store %zero, %r0, %c0 {buffer = 0, map = 0}
    tma_store_commit
    tma_store_wait {pending = 0}
    yield
  }, {
    yield
  })
  barrier
}
)tir";
  const ptx_test::Emitted e = ptx_test::emit(kStore, ptx_test::profile("cuda-sm_90a"));
  CHECK(e.has("fence.proxy.async.shared::cta"));
  CHECK(e.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [") == 1);
  CHECK(e.has("cp.async.bulk.commit_group;"));
  CHECK(e.has("cp.async.bulk.wait_group.read 0;"));
  REQUIRE(e.artifact.tensor_maps.size() == 1);
  CHECK(e.artifact.params.slots.size() == 6);
  auto [kind, message] =
      ptx_test::error_of([&] { ptx_test::emit(kStore, ptx_test::profile("cuda-sm_80")); });
  CHECK(kind == tessera::ErrorKind::Unsupported);
  CHECK(message.find("'tma_store' is not supported on") != std::string::npos);
}

TEST_CASE("ptx tma: the cluster ops: the rank, the barrier, a remote arrival, a multicast copy") {
  // Rank r's thread 0 initializes the mbarrier; the cluster meets; thread 0 arms it for the
  // whole 64 x 64 f16 box and copies its half (rows 32 r ..) to both programs; then arrives on
  // the other program's mbarrier 1; everyone waits; the cluster meets before the end.
  constexpr const char* kCluster = R"tir(
func @pair(%a: ptr<f16> {divisibility = 16}, %m: i32, %k: i32 {divisibility = 16}) attributes {cluster = 2, shared_0 = tile<4096xf16>, shared_1 = tile<2xi64>, stage = "simt", subgroup = 32, tensor_map_0 = "tensor_map(%0: f16 [%1 x %2] strides [%2, 1] box [32 x 64] swizzle 128)", threads = 128} {
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c32 = constant {value = 32} : i32
  %t0 = mul %sg, %c32 : i32
  %tid = add %t0, %lane : i32
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %three = constant {value = 3} : i32
  %bytes = constant {value = 8192} : i32
  %c2048 = constant {value = 2048} : i32
  %rank = cluster_rank : i32
  %peer = xor %rank, %one : i32
  %first = cmp_eq %tid, %zero : i1
  if %first ({
    mbarrier_init %zero, %one {buffer = 1}
    mbarrier_init %one, %one {buffer = 1}
    yield
  }, {
    yield
  })
  cluster_barrier
  if %first ({
    mbarrier_arrive_tx %zero, %bytes {buffer = 1}
    %row = mul %rank, %c32 : i32
    %at = mul %rank, %c2048 : i32
    tma_load %at, %zero, %row, %zero, %three {barrier = 1, buffer = 0, map = 0, multicast = 1}
    mbarrier_arrive_tx %one, %zero, %peer {buffer = 1}
    yield
  }, {
    yield
  })
  mbarrier_wait %zero, %zero {buffer = 1}
  mbarrier_wait %one, %zero {buffer = 1}
  cluster_barrier
}
)tir";
  const ptx_test::Emitted e = ptx_test::emit(kCluster, ptx_test::profile("cuda-sm_90a"));
  CHECK(e.has("mov.u32 %r"));
  CHECK(e.has("%cluster_ctarank;"));
  CHECK(e.count("fence.mbarrier_init.release.cluster;") == 2);
  CHECK(e.count("barrier.cluster.arrive.release.aligned;") == 2);
  CHECK(e.count("barrier.cluster.wait.acquire.aligned;") == 2);
  CHECK(
      e.has("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes."
            "multicast::cluster ["));
  CHECK(e.has("mapa.shared::cluster.u32"));
  CHECK(e.has("mbarrier.arrive.expect_tx.shared::cluster.b64 _, [%tessera_remote], "));
}
