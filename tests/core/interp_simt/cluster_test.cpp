// \file Thread-block clusters in the SIMT interpreter (function attribute `cluster`): the programs
// of a cluster run together, each a workgroup of its own, and reach each other's shared memory:
// cluster_rank, cluster_barrier, an arrival on another program's mbarrier, a TMA copy multicast
// to the cluster; what a GPU would hang on (waits nothing can end, a barrier a program that has
// ended never reaches) and a write to the shared memory of a program that has ended are faults
// that name the programs; a grid whose x is not a multiple of the cluster is refused.
#include <string>
#include <vector>

#include "tests/core/interp_simt/helpers.h"

using namespace simt_test;

namespace {

/// Each thread stores its program id x and cluster rank: out[2 (pid * 32 + tid)] and the next.
constexpr const char* kRanks = R"tir(
func @ranks(%out: ptr<i32>, %s: i32) attributes {cluster = {CLUSTER}, stage = "simt", subgroup = 32, threads = 32} {
{IDS}
  %pid = program_id {axis = 0} : i32
  %rank = cluster_rank : i32
  %c2 = constant {value = 2} : i32
  %c32 = constant {value = 32} : i32
  %row = mul %pid, %c32 : i32
  %t = add %row, %tid : i32
  %e = mul %t, %c2 : i32
  %dst = ptr_add %out, %e : ptr<i32>
  global_store %dst, %true, %pid, %rank {align = 8, width = 2}
}
)tir";

/// Two programs of a cluster hand an arrival over: thread 0 initializes mbarrier 0 (one arrival);
/// the cluster meets ({MEET}); thread 0 arrives on the mbarrier of the program of rank {PEER}
/// (%peer: the other one); every thread waits for its own mbarrier's phase 0, then stores its
/// program id; the cluster meets again before the end ({END}).
constexpr const char* kHandOver = R"tir(
func @hand_over(%out: ptr<i32>, %s: i32) attributes {cluster = 2, shared_0 = tile<1xi64>, stage = "simt", subgroup = 32, threads = 32} {
{IDS}
  %pid = program_id {axis = 0} : i32
  %rank = cluster_rank : i32
  %peer = xor %rank, %c1 : i32
  %first = cmp_eq %tid, %c0 : i1
  if %first ({
    mbarrier_init %c0, %c1 {buffer = 0}
    yield
  }, {
    yield
  })
  {MEET}
  if %first ({
    mbarrier_arrive_tx %c0, %c0, {PEER} {buffer = 0}
    yield
  }, {
    yield
  })
  mbarrier_wait %c0, %c0 {buffer = 0}
  %c32 = constant {value = 32} : i32
  %row = mul %pid, %c32 : i32
  %t = add %row, %tid : i32
  %dst = ptr_add %out, %t : ptr<i32>
  global_store %dst, %true, %pid {align = 4, width = 1}
  {END}
}
)tir";

std::string hand_over(const std::string& meet, const std::string& peer, const std::string& end) {
  return subst(subst(std::string(kHandOver), {{"IDS", std::string(kThreadId)}}),
               {{"MEET", meet}, {"PEER", peer}, {"END", end}});
}

/// A [16 x 32] i32 tensor copied whole into both programs of a cluster: rank r's thread 0 arms
/// its mbarrier for the whole 2048 bytes and copies rows 8r .. 8r + 7 (a box of 8 x 32) to
/// element 256 r of shared_0 with the multicast %mask ({MASK}); every thread waits, then writes the
/// 512 elements it sees to out[512 pid ...], 16 per thread.
constexpr const char* kMulticast = R"tir(
func @multicast(%src: ptr<i32> {divisibility = 16}, %out: ptr<i32>, %rows: i32, %cols: i32, %s: i32) attributes {cluster = 2, shared_0 = tile<512xi32>, shared_1 = tile<1xi64>, stage = "simt", subgroup = 32, tensor_map_0 = "tensor_map(%0: i32 [%2 x %3] strides [%3, 1] box [8 x 32] swizzle 0)", threads = 32} {
{IDS}
  %pid = program_id {axis = 0} : i32
  %rank = cluster_rank : i32
  %c8 = constant {value = 8} : i32
  %c16 = constant {value = 16} : i32
  %c32 = constant {value = 32} : i32
  %c256 = constant {value = 256} : i32
  %c512 = constant {value = 512} : i32
  %c2048 = constant {value = 2048} : i32
  {MASK}
  %first = cmp_eq %tid, %c0 : i1
  if %first ({
    mbarrier_init %c0, %c1 {buffer = 1}
    yield
  }, {
    yield
  })
  cluster_barrier
  if %first ({
    mbarrier_arrive_tx %c0, %c2048 {buffer = 1}
    %row = mul %rank, %c8 : i32
    %at = mul %rank, %c256 : i32
    tma_load %at, %c0, %row, %c0, %mask {barrier = 1, buffer = 0, map = 0, multicast = 1}
    yield
  }, {
    yield
  })
  mbarrier_wait %c0, %c0 {buffer = 1}
  %base = mul %pid, %c512 : i32
  for %c0, %c16, %c1 ({
  ^(%i: i32):
    %ri = mul %i, %c32 : i32
    %e = add %ri, %tid : i32
    %v = shared_load %e {buffer = 0, width = 1} : i32
    %o = add %base, %e : i32
    %dst = ptr_add %out, %o : ptr<i32>
    global_store %dst, %true, %v {align = 4, width = 1}
    yield
  })
  cluster_barrier
}
)tir";

}  // namespace

TEST_CASE("simt cluster: cluster_rank is the program's place in its cluster along x") {
  for (int cluster : {1, 2, 4}) {
    CAPTURE(cluster);
    SimtKernel k(subst(subst(std::string(kRanks), {{"IDS", std::string(kThreadId)}}),
                       {{"CLUSTER", std::to_string(cluster)}}));
    std::vector<int32_t> out(2 * 32 * 8, -1);
    HostMemory mem;
    k.run(mem, Grid{8}, mem.add(out), int32_t{32});
    for (int pid = 0; pid < 8; ++pid)
      for (int t = 0; t < 32; ++t) {
        CHECK(out[size_t(2 * (pid * 32 + t))] == pid);
        CHECK(out[size_t(2 * (pid * 32 + t) + 1)] == pid % cluster);
      }
  }
}

TEST_CASE("simt cluster: a grid whose x is not a multiple of the cluster is refused") {
  SimtKernel k(
      subst(subst(std::string(kRanks), {{"IDS", std::string(kThreadId)}}), {{"CLUSTER", "4"}}));
  std::vector<int32_t> out(2 * 32 * 6, -1);
  HostMemory mem;
  const std::string e =
      error_of([&] { k.run(mem, Grid{6}, mem.add(out), int32_t{32}); }, tessera::ErrorKind::User);
  CHECK(e.find("kernel 'ranks' runs in clusters of 4 programs along x, but the grid's x is 6") !=
        std::string::npos);
}

TEST_CASE("simt cluster: programs arrive on each other's mbarriers") {
  // Rank 0 waits first: its wait lets rank 1 run, whose arrival ends it.
  SimtKernel k(hand_over("cluster_barrier", "%peer", "cluster_barrier"));
  std::vector<int32_t> out(32 * 4, -1);
  HostMemory mem;
  k.run(mem, Grid{4}, mem.add(out), int32_t{32});
  for (int i = 0; i < 32 * 4; ++i) CHECK(out[size_t(i)] == i / 32);
}

TEST_CASE("simt cluster: waits that no program of the cluster can end are the hang, each named") {
  // Both arrive on rank 0's mbarrier: rank 1's first, then rank 0's own, so rank 0 waits for
  // parity 0 in phase 2, and rank 1's mbarrier gets no arrival.
  SimtKernel k(hand_over("cluster_barrier", "%c0", "cluster_barrier"));
  std::vector<int32_t> out(32 * 2, -1);
  HostMemory mem;
  const std::string e = error_of([&] { k.run(mem, Grid{2}, mem.add(out), int32_t{32}); });
  CHECK(e.find("the workgroups of a cluster that all wait (a GPU hangs) in kernel 'hand_over' at "
               "k.tir:") == 0);
  CHECK(e.find(": program (0, 0, 0) at k.tir:") != std::string::npos);
  CHECK(e.find("which has 1 arrivals and 0 bytes outstanding in phase 2 and no copy in flight; "
               "program (1, 0, 0) at k.tir:") != std::string::npos);
  CHECK(e.find("which has 1 arrivals and 0 bytes outstanding in phase 0 and no copy in flight") !=
        std::string::npos);
}

TEST_CASE("simt cluster: a program that has ended is out of the others' reach") {
  // Rank 0 ends at once; rank 1 then arrives on its mbarrier (no barrier orders the two).
  SimtKernel k(kernel(
      R"(func @late(%s: i32) attributes {cluster = 2, shared_0 = tile<1xi64>, stage = "simt", subgroup = 32, threads = 32} {)",
      R"(  %rank = cluster_rank : i32
  %first = cmp_eq %tid, %c0 : i1
  if %first ({
    mbarrier_init %c0, %c1 {buffer = 0}
    yield
  }, {
    yield
  })
  %late = cmp_eq %rank, %c1 : i1
  %arrives = and %first, %late : i1
  if %arrives ({
    mbarrier_arrive_tx %c0, %c0, %c0 {buffer = 0}
    yield
  }, {
    yield
  })
)"));
  HostMemory mem;
  const std::string e = error_of([&] { k.run(mem, Grid{2}, int32_t{32}); });
  CHECK(e.find("a write to the shared memory of a program that has ended in kernel 'late'") == 0);
  CHECK(e.find("program (1, 0, 0), thread 0: program (0, 0, 0) (rank 0) of the cluster ended "
               "first") != std::string::npos);
  // Only rank 0 meets the cluster at the end: rank 1 has ended without reaching it.
  SimtKernel half(hand_over("cluster_barrier", "%peer", R"(%is0 = cmp_eq %rank, %c0 : i1
  if %is0 ({
    cluster_barrier
    yield
  }, {
    yield
  }))"));
  std::vector<int32_t> out(32 * 2, -1);
  const std::string h = error_of([&] { half.run(mem, Grid{2}, mem.add(out), int32_t{32}); });
  CHECK(h.find("cluster_barrier that can never complete (a GPU hangs) in kernel 'hand_over'") == 0);
  CHECK(h.find(": program (1, 0, 0) (rank 1) of the cluster has ended without reaching it") !=
        std::string::npos);
}

TEST_CASE("simt cluster: a multicast copy writes the box to every program of the mask") {
  std::vector<int32_t> src(16 * 32);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<int32_t>(i * 7 + 1);
  SimtKernel k(subst(subst(std::string(kMulticast), {{"IDS", std::string(kThreadId)}}),
                     {{"MASK", "%mask = constant {value = 3} : i32"}}));
  std::vector<int32_t> out(512 * 4, -1);
  HostMemory mem;
  k.run(mem, Grid{4}, mem.add(src), mem.add(out), 16, 32, int32_t{32});
  for (int pid = 0; pid < 4; ++pid)
    for (int e = 0; e < 512; ++e) CHECK(out[size_t(pid * 512 + e)] == src[size_t(e)]);
  // Each copying its half only to itself: the other half never lands, and the mbarrier's 2048
  // bytes never complete in either program.
  SimtKernel own(subst(subst(std::string(kMulticast), {{"IDS", std::string(kThreadId)}}),
                       {{"MASK", "%mask = shl %c1, %rank : i32"}}));
  const std::string e =
      error_of([&] { own.run(mem, Grid{2}, mem.add(src), mem.add(out), 16, 32, int32_t{32}); });
  CHECK(e.find("the workgroups of a cluster that all wait (a GPU hangs) in kernel 'multicast'") ==
        0);
  CHECK(e.find("which has 0 arrivals and 1024 bytes outstanding") != std::string::npos);
}
