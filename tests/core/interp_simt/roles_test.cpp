// \file warp_specialize in the SIMT interpreter: a producer role and a consumer role hand a
// two-stage ring over through full and empty mbarriers (parity waits), which lock-step could not
// run (whichever side ran first would wait for the other forever); the hang a GPU would show when
// the roles wait for each other is a fault naming both waits; the race detector orders what an
// mbarrier's arrivals did before what its waiters do after, and still reports a stage refilled
// (by stores or by TMA) while a consumer that did not arrive may be reading it, and a named
// barrier orders its own threads only; setmaxnreg moves registers through the workgroup's pool,
// a raise waiting for the producer's lowering and faulting when none can meet it.
#include <string>
#include <vector>

#include "tests/core/interp_simt/helpers.h"

using namespace simt_test;

namespace {

/// The rings' mbarriers, initialized by thread 0 before the roles: full[0], full[1] ({FULL_COUNT}
/// arrivals each), empty[0], empty[1] ({EMPTY_COUNT}), then {FENCE}.
constexpr const char* kSetup = R"tir(
  %c2 = constant {value = 2} : i32
  %c3 = constant {value = 3} : i32
  %c64 = constant {value = 64} : i32
  %full_count = constant {value = {FULL_COUNT}} : i32
  %empty_count = constant {value = {EMPTY_COUNT}} : i32
  %first = cmp_eq %tid, %c0 : i1
  if %first ({
    mbarrier_init %c0, %full_count {buffer = 1}
    mbarrier_init %c1, %full_count {buffer = 1}
    mbarrier_init %c2, %empty_count {buffer = 1}
    mbarrier_init %c3, %empty_count {buffer = 1}
    {FENCE}
    yield
  }, {
    yield
  })
  barrier)tir";

/// The consumers' role of the rings below: iteration i waits on full[i % 2] (parity (i / 2) & 1),
/// adds its element of the stage to a running sum and frees the stage ({FREE}); each consumer
/// then stores its sum to out[tid].
constexpr const char* kConsumers = R"tir(
    %sum = for %c0, %n, %c1, %c0 ({
    ^(%i: i32, %acc: i32):
      %st = and %i, %c1 : i32
      %use = shr %i, %c1 : i32
      %parity = and %use, %c1 : i32
      mbarrier_wait %st, %parity {buffer = 1}
      %base = mul %st, %c64 : i32
      %e = add %base, %tid : i32
      %v = shared_load %e {buffer = 0, width = 1} : i32
      %empty = add %st, %c2 : i32
      {FREE}
      %acc2 = add %acc, %v : i32
      yield %acc2
    }) : i32
    %dst = ptr_add %out, %tid : ptr<i32>
    global_store %dst, %true, %sum {align = 4, width = 1})tir";

/// `text` with {IDS} (helpers.h's thread ids and constants), {SETUP} and {CONSUMERS} written
/// out.
std::string with_ids(std::string_view text) {
  return subst(std::string(text),
               {{"IDS", std::string(kThreadId)}, {"SETUP", kSetup}, {"CONSUMERS", kConsumers}});
}

/// 64 consumer threads (role 0) and a producer warp (role 1). Iteration i uses stage i % 2 (64
/// i32s of shared_0) for its (i / 2)-th time: the producer waits until the consumers have freed
/// the stage (empty[s], the previous use's parity: the first use passes at once), writes element
/// e as i * 1000 + e (two per thread), and arrives on full[s]; the consumers wait on full[s], add
/// their element to a running sum, and free the stage ({FREE}). Each consumer then stores its sum.
/// mbarriers: full[0], full[1] (32 arrivals: the producer's threads), empty[0], empty[1]
/// ({EMPTY_COUNT} arrivals).
constexpr const char* kRing = R"tir(
func @ring(%out: ptr<i32>, %n: i32, %s: i32) attributes {shared_0 = tile<128xi32>, shared_1 = tile<4xi64>, stage = "simt", subgroup = 32, threads = 96} {
{IDS}
{SETUP}
  %c32 = constant {value = 32} : i32
  %c1000 = constant {value = 1000} : i32
  warp_specialize {roles = [64, 32]} ({
{CONSUMERS}
    yield
  }, {
    %p = sub %tid, %c64 : i32
    for %c0, %n, %c1 ({
    ^(%p_i: i32):
      %p_st = and %p_i, %c1 : i32
      %p_use = shr %p_i, %c1 : i32
      %used = and %p_use, %c1 : i32
      %p_parity = xor %used, %c1 : i32
      %p_empty = add %p_st, %c2 : i32
      mbarrier_wait %p_empty, {EMPTY_PARITY} {buffer = 1}
      %p_base = mul %p_st, %c64 : i32
      %k = mul %p_i, %c1000 : i32
      %e0 = add %p_base, %p : i32
      %v0 = add %k, %p : i32
      shared_store %e0, %v0 {buffer = 0, width = 1}
      %p32 = add %p, %c32 : i32
      %e1 = add %p_base, %p32 : i32
      %v1 = add %k, %p32 : i32
      shared_store %e1, %v1 {buffer = 0, width = 1}
      mbarrier_arrive_tx %p_st, %c0 {buffer = 1}
      yield
    })
    yield
  })
}
)tir";

/// Every consumer arrives on empty[s] once it has read its element.
constexpr const char* kEachFrees = "mbarrier_arrive_tx %empty, %c0 {buffer = 1}";
/// The consumers meet at their named barrier, then their first thread frees the stage.
constexpr const char* kOneFreesAfterBarrier = R"(barrier {id = 1, threads = 64}
      %leader = cmp_eq %tid, %c0 : i1
      if %leader ({
        mbarrier_arrive_tx %empty, %c0 {buffer = 1}
        yield
      }, {
        yield
      }))";
/// ... the same without the barrier: thread 0 frees the stage that the others may still read.
constexpr const char* kOneFreesAlone = R"(%leader = cmp_eq %tid, %c0 : i1
      if %leader ({
        mbarrier_arrive_tx %empty, %c0 {buffer = 1}
        yield
      }, {
        yield
      }))";

std::string ring(const std::string& free, int empty_count,
                 const std::string& empty_parity = "%p_parity") {
  return subst(with_ids(kRing), {{"FREE", free},
                                 {"FULL_COUNT", "32"},
                                 {"FENCE", ""},
                                 {"EMPTY_COUNT", std::to_string(empty_count)},
                                 {"EMPTY_PARITY", empty_parity}});
}

/// What consumer t stores after n iterations: the sum over i of i * 1000 + t.
std::vector<int32_t> expected_sums(int n) {
  std::vector<int32_t> want(64);
  for (int t = 0; t < 64; ++t) want[static_cast<size_t>(t)] = 1000 * n * (n - 1) / 2 + n * t;
  return want;
}

}  // namespace

TEST_CASE("simt roles: a producer and its consumers hand a two-stage ring over") {
  struct Case {
    const char* name;
    const char* free;
    int empty_count;
  };
  for (const Case& c : {Case{"each consumer frees", kEachFrees, 64},
                        Case{"one frees after the consumers' barrier", kOneFreesAfterBarrier, 1}}) {
    CAPTURE(c.name);
    SimtKernel k(ring(c.free, c.empty_count));
    for (int n : {1, 2, 7}) {
      CAPTURE(n);
      std::vector<int32_t> out(64, -1);
      HostMemory mem;
      k.run(mem, Grid{3}, mem.add(out), n, int32_t{32});  // races checked (the default)
      CHECK(out == expected_sums(n));
    }
  }
}

TEST_CASE("simt roles: roles that wait for each other are the hang a GPU shows, both waits named") {
  // The producer waits for the first use's empty phase to complete (parity 0) before it has
  // filled anything: the consumers wait for it to fill stage 0.
  SimtKernel k(ring(kEachFrees, 64, "%used"));
  std::vector<int32_t> out(64, -1);
  HostMemory mem;
  const std::string e = error_of([&] { k.run(mem, Grid{}, mem.add(out), 3, int32_t{32}); });
  CHECK(e.find("warp_specialize roles that all wait (a GPU hangs) in kernel 'ring' at k.tir:") ==
        0);
  CHECK(e.find("program (0, 0, 0): role 0 (threads 0 to 63) at k.tir:") != std::string::npos);
  CHECK(e.find("waits for the phase of parity 0 of the mbarrier at element 0 of shared buffer 1, "
               "which has 32 arrivals") != std::string::npos);
  CHECK(e.find("; role 1 (threads 64 to 95) at k.tir:") != std::string::npos);
  CHECK(e.find("waits for the phase of parity 0 of the mbarrier at element 2 of shared buffer 1, "
               "which has 64 arrivals") != std::string::npos);
}

TEST_CASE("simt roles: a stage freed before every consumer has read it is a race") {
  SimtKernel k(ring(kOneFreesAlone, 1));
  std::vector<int32_t> out(64, -1);
  HostMemory mem;
  // Iteration 2 refills stage 0: thread 0 arrived after its read, thread 1 did not and reached no
  // barrier with thread 0 before the arrival.
  const std::string e = error_of([&] { k.run(mem, Grid{}, mem.add(out), 3, int32_t{32}); });
  CHECK(e.find("shared-memory race in kernel 'ring' at k.tir:") == 0);
  CHECK(e.find(": thread 65 writes shared_0[1] read by thread 1 at k.tir:") != std::string::npos);
  // Without the race checks the interpreter runs it (lock step reads before the refill).
  SimtOptions unchecked;
  unchecked.check_races = false;
  k.run_opts(mem, Grid{}, unchecked, mem.add(out), 3, int32_t{32});
  CHECK(out == expected_sums(3));
}

TEST_CASE("simt roles: a fault inside a role ends every role and names its thread") {
  // The producer's first element at index 1000 + its stage's base: past the buffer.
  std::string text = ring(kEachFrees, 64);
  const std::string from = "%e0 = add %p_base, %p : i32";
  text.replace(text.find(from), from.size(), "%e0 = add %p_base, %c1000 : i32");
  SimtKernel k(text);
  std::vector<int32_t> out(64, -1);
  HostMemory mem;
  const std::string e = error_of([&] { k.run(mem, Grid{}, mem.add(out), 3, int32_t{32}); });
  CHECK(e.find("out-of-bounds shared store in kernel 'ring' at k.tir:") == 0);
  CHECK(e.find(", thread 64: shared_0[1000] is outside its 128 elements") != std::string::npos);
  // Every role has ended: a correct kernel runs next.
  SimtKernel good(ring(kEachFrees, 64));
  good.run(mem, Grid{}, mem.add(out), 3, int32_t{32});
  CHECK(out == expected_sums(3));
}

namespace {

/// Consumers (64 threads) write their element, meet at named barrier 1, read their neighbour's
/// and arrive on mbarrier 0 (64 arrivals); the producer warp ({WAIT}) reads consumer p's element
/// and stores it to out[p].
constexpr const char* kAcross = R"tir(
func @across(%out: ptr<i32>, %s: i32) attributes {shared_0 = tile<64xi32>, shared_1 = tile<1xi64>, stage = "simt", subgroup = 32, threads = 96} {
{IDS}
  %c64 = constant {value = 64} : i32
  %first = cmp_eq %tid, %c0 : i1
  if %first ({
    mbarrier_init %c0, %c64 {buffer = 1}
    yield
  }, {
    yield
  })
  barrier
  warp_specialize {roles = [64, 32]} ({
    shared_store %tid, %tid {buffer = 0, width = 1}
    barrier {id = 1, threads = 64}
    %next = xor %tid, %c1 : i32
    %w = shared_load %next {buffer = 0, width = 1} : i32
    mbarrier_arrive_tx %c0, %c0 {buffer = 1}
    yield
  }, {
    {WAIT}
    %p = sub %tid, %c64 : i32
    %v = shared_load %p {buffer = 0, width = 1} : i32
    %dst = ptr_add %out, %p : ptr<i32>
    global_store %dst, %true, %v {align = 4, width = 1}
    yield
  })
}
)tir";

}  // namespace

TEST_CASE("simt roles: a named barrier orders its own threads only") {
  // With the wait, the producer reads after every consumer's arrival: consumer p's value.
  SimtKernel ordered(subst(with_ids(kAcross), {{"WAIT", "mbarrier_wait %c0, %c0 {buffer = 1}"}}));
  std::vector<int32_t> out(32, -1);
  HostMemory mem;
  ordered.run(mem, Grid{2}, mem.add(out), int32_t{32});
  for (int p = 0; p < 32; ++p) CHECK(out[static_cast<size_t>(p)] == p);
  // Without it, the consumers' barrier does not order the producer's read (it did not take
  // part): a race, though lock step happens to run the consumers first.
  SimtKernel unordered(subst(with_ids(kAcross), {{"WAIT", ""}}));
  const std::string e = error_of([&] { unordered.run(mem, Grid{}, mem.add(out), int32_t{32}); });
  CHECK(e.find("shared-memory race in kernel 'across' at k.tir:") == 0);
  CHECK(e.find(": thread 64 reads shared_0[0] written by thread 0 at k.tir:") != std::string::npos);
}

namespace {

/// The ring of kRing with its stages filled by TMA (two producer warps: a whole warpgroup in
/// all, as fence_async_shared needs): the producer's first thread waits for the stage to be
/// free, arms full[s] with the stage's 256 bytes and copies rows 2i and 2i + 1 of the
/// [rows x 32] i32 tensor at %src (a box of 2 x 32) into it. The copy lands when a consumer's
/// wait on full[s] looks; each consumer adds element t of the stage (src[64 i + t] of a tensor
/// holding 0, 1, 2, ...) and frees the stage ({FREE}; empty[s] expects {EMPTY_COUNT} arrivals).
constexpr const char* kTmaRing = R"tir(
func @tma_ring(%src: ptr<i32> {divisibility = 16}, %out: ptr<i32>, %n: i32, %rows: i32, %cols: i32, %s: i32) attributes {shared_0 = tile<128xi32>, shared_1 = tile<4xi64>, stage = "simt", subgroup = 32, tensor_map_0 = "tensor_map(%0: i32 [%3 x %4] strides [%4, 1] box [2 x 32] swizzle 0)", threads = 128} {
{IDS}
{SETUP}
  %c256 = constant {value = 256} : i32
  warp_specialize {roles = [64, 64]} ({
{CONSUMERS}
    yield
  }, {
    %issuer = cmp_eq %tid, %c64 : i1
    if %issuer ({
      for %c0, %n, %c1 ({
      ^(%p_i: i32):
        %p_st = and %p_i, %c1 : i32
        %p_use = shr %p_i, %c1 : i32
        %used = and %p_use, %c1 : i32
        %p_parity = xor %used, %c1 : i32
        %p_empty = add %p_st, %c2 : i32
        mbarrier_wait %p_empty, %p_parity {buffer = 1}
        mbarrier_arrive_tx %p_st, %c256 {buffer = 1}
        %p_base = mul %p_st, %c64 : i32
        %row = mul %p_i, %c2 : i32
        tma_load %p_base, %p_st, %row, %c0 {barrier = 1, buffer = 0, map = 0}
        yield
      })
      yield
    }, {
      yield
    })
    yield
  })
}
)tir";

}  // namespace

TEST_CASE("simt roles: a TMA producer fills the ring its consumers free") {
  const int n = 5;
  std::vector<int32_t> src(64 * n);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<int32_t>(i);
  std::vector<int32_t> want(64);
  for (int t = 0; t < 64; ++t) want[static_cast<size_t>(t)] = 64 * n * (n - 1) / 2 + n * t;
  SimtKernel k(subst(with_ids(kTmaRing), {{"FREE", kEachFrees},
                                          {"EMPTY_COUNT", "64"},
                                          {"FULL_COUNT", "1"},
                                          {"FENCE", "fence_async_shared"}}));
  std::vector<int32_t> out(64, -1);
  HostMemory mem;
  k.run(mem, Grid{2}, mem.add(src), mem.add(out), n, 2 * n, 32, int32_t{32});
  CHECK(out == want);
  // Thread 0 alone freeing the stage: the copy into stage 0 for iteration 2 may land while
  // thread 1 still reads it.
  SimtKernel alone(subst(with_ids(kTmaRing), {{"FREE", kOneFreesAlone},
                                              {"EMPTY_COUNT", "1"},
                                              {"FULL_COUNT", "1"},
                                              {"FENCE", "fence_async_shared"}}));
  const std::string e = error_of(
      [&] { alone.run(mem, Grid{}, mem.add(src), mem.add(out), n, 2 * n, 32, int32_t{32}); });
  CHECK(e.find("shared-memory race in kernel 'tma_ring' at k.tir:") == 0);
  CHECK(e.find(": thread 64 writes shared_0[1] read by thread 1 at k.tir:") != std::string::npos);
}

namespace {

/// Two warpgroups that start with {LAUNCH} registers per thread: role 0 raises its limit to
/// {RAISE} ({CONSUMER}), role 1 lowers its own to 40 ({PRODUCER}); then each stores its thread
/// index.
constexpr const char* kRegisters = R"tir(
func @registers(%out: ptr<i32>, %s: i32) attributes {maxnreg = {LAUNCH}, stage = "simt", subgroup = 32, threads = 256} {
{IDS}
  warp_specialize {roles = [128, 128]} ({
    {CONSUMER}
    %dst = ptr_add %out, %tid : ptr<i32>
    global_store %dst, %true, %tid {align = 4, width = 1}
    yield
  }, {
    {PRODUCER}
    %dst2 = ptr_add %out, %tid : ptr<i32>
    global_store %dst2, %true, %tid {align = 4, width = 1}
    yield
  })
}
)tir";

/// kRegisters at `launch`, the consumers raising to `raise`; the error it raises ("" if none).
std::string registers(int launch, int raise, bool producer_lowers = true,
                      const std::string& consumer = "setmaxnreg {inc = 1, registers = {RAISE}}") {
  std::string text = subst(with_ids(kRegisters),
                           {{"CONSUMER", consumer},
                            {"PRODUCER", producer_lowers ? "setmaxnreg {inc = 0, registers = 40}"
                                                         : "%unused = add %tid, %c1 : i32"}});
  text = subst(text, {{"LAUNCH", std::to_string(launch)}, {"RAISE", std::to_string(raise)}});
  SimtKernel k(text);
  std::vector<int32_t> out(256, -1);
  HostMemory mem;
  std::string e = error_of([&] { k.run(mem, Grid{2}, mem.add(out), int32_t{32}); });
  if (e.empty())
    for (int t = 0; t < 256; ++t) CHECK(out[t] == t);
  return e;
}

}  // namespace

TEST_CASE("simt roles: setmaxnreg raises a limit with the registers another role gave up") {
  // Launch 168 (384-thread kernels' share), 144, 248: the producer frees 128 x (launch - 40); the
  // consumers take 128 x (raise - launch). Role 0 runs first and waits for role 1's lowering.
  CHECK(registers(168, 256) == "");  // 16384 freed, 11264 taken
  CHECK(registers(144, 248) == "");  // 13312 freed, 13312 taken: all of it
  CHECK(registers(248, 256) == "");
  // One more step of 8 than the pool holds: the consumers wait for registers no role will free.
  const std::string e = registers(144, 256);
  CHECK(e.find("warp_specialize roles that all wait (a GPU hangs) in kernel 'registers'") == 0);
  CHECK(e.find("role 0 (threads 0 to 127) at k.tir:") != std::string::npos);
  CHECK(e.find("waits for 14336 registers in the pool (warpgroup 0 raising 144 to 256 per "
               "thread), which holds 13312") != std::string::npos);
  // Without the producer's lowering, or without roles, nothing can fill the pool.
  CHECK(registers(168, 176, false).find("waits for 1024 registers in the pool") !=
        std::string::npos);
  SimtKernel alone(
      kernel("func @alone(%s: i32) attributes {maxnreg = 168, stage = \"simt\", subgroup = 32, "
             "threads = 128} {",
             "  setmaxnreg {inc = 1, registers = 176}\n"));
  HostMemory mem;
  const std::string a = error_of([&] { alone.run(mem, Grid{}, int32_t{32}); });
  CHECK(a.find("setmaxnreg.inc that can never complete (a GPU hangs) in kernel 'alone'") == 0);
  CHECK(a.find("it waits for 1024 registers in the pool (warpgroup 0 raising 168 to 176 per "
               "thread), which holds 0") != std::string::npos);
}

TEST_CASE("simt roles: setmaxnreg misuse is a fault: the wrong direction, part of a warpgroup") {
  CHECK(registers(168, 160).find("setmaxnreg.inc below the warpgroup's register limit in kernel "
                                 "'registers'") == 0);
  CHECK(registers(168, 160).find("warpgroup 0 holds 168 per thread, the op asks for 160") !=
        std::string::npos);
  CHECK(registers(32, 256).find("setmaxnreg.dec above the warpgroup's register limit") == 0);
  // ptxas requires the whole warpgroup, converged.
  const std::string half =
      "%c64 = constant {value = 64} : i32\n    %low = cmp_lt %tid, %c64 : i1\n    if %low ({\n"
      "      setmaxnreg {inc = 1, registers = {RAISE}}\n      yield\n    }, {\n      yield\n"
      "    })";
  CHECK(registers(168, 232, true, half)
            .find("setmaxnreg in divergent control flow in kernel 'registers'") == 0);
}
