// \file The TMA family in the SIMT interpreter against its definition written here from PTX's
// description: a box of a tensor copied by tma_load lands, zero-filled outside the tensor and
// 16-byte chunks swizzled, once an mbarrier_wait sees the phase complete; the phases advance
// (parity 0, then 1); and the faults where a GPU would hang or misbehave: a wait that can never
// complete, an uninitialized mbarrier, an arrival the phase does not expect, a misaligned box.
// tma_store writes a box's elements inside the tensor when its wait retires it; unfenced
// sources, a source written while the store reads it, and a program ending with a store in
// flight are faults.
#include <string>
#include <vector>

#include "core/ir/tma.h"
#include "tests/core/interp_simt/helpers.h"

using namespace simt_test;

namespace {

/// One thread initializes mbarrier 0, arrives expecting the box's bytes and copies the 8 x 64
/// f16 box at (%r0, %c0) of the [%m x %k] tensor at %src (`{ROUNDS}` times, into the same
/// buffer, waiting on parity 0, 1, 0, ...); every thread then writes 4 elements of shared
/// memory, as they lie, to %out.
constexpr const char* kBoxKernel = R"tir(
func @tma_box(%src: ptr<f16> {divisibility = 16}, %out: ptr<f16>, %m: i32, %k: i32, %r0: i32, %c0: i32) attributes {shared_0 = tile<512xf16>, shared_1 = tile<2xi64>, stage = "simt", subgroup = 32, tensor_map_0 = "tensor_map(%0: f16 [%2 x %3] strides [%3, 1] box [8 x 64] swizzle {SWIZZLE})", threads = 128} {
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c32 = constant {value = 32} : i32
  %t0 = mul %sg, %c32 : i32
  %tid = add %t0, %lane : i32
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %bytes = constant {value = {BYTES}} : i32
  %bar = constant {value = {BAR}} : i32
  %rounds = constant {value = {ROUNDS}} : i32
  %first = cmp_eq %tid, %zero : i1
  if %first ({
    mbarrier_init %zero, %one {buffer = 1}
    fence_async_shared
    yield
  }, {
    yield
  })
  barrier
  {BEFORE}
  %parity = for %zero, %rounds, %one, %zero ({
  ^(%i: i32, %p: i32):
    if %first ({
      {ARRIVE}
      tma_load %zero, %bar, %r0, %c0 {barrier = 1, buffer = 0, map = 0}
      yield
    }, {
      yield
    })
    mbarrier_wait %zero, %p {buffer = 1}
    barrier
    %q = xor %p, %one : i32
    yield %q
  }) : i32
  %c4 = constant {value = 4} : i32
  %e = mul %tid, %c4 : i32
  %v0, %v1, %v2, %v3 = shared_load %e {buffer = 0, width = 4} : f16, f16, f16, f16
  %dst = ptr_add %out, %e : ptr<f16>
  %true = constant {value = 1} : i1
  global_store %dst, %true, %v0, %v1, %v2, %v3 {align = 8, width = 4}
}
)tir";

std::string box_kernel(int swizzle = 128, int rounds = 1, std::string bytes = "1024",
                       std::string bar = "0", bool arrive = true, std::string before = "") {
  return subst(kBoxKernel,
               {{"SWIZZLE", std::to_string(swizzle)},
                {"ROUNDS", std::to_string(rounds)},
                {"BYTES", bytes},
                {"BAR", bar},
                {"ARRIVE", arrive ? "mbarrier_arrive_tx %zero, %bytes {buffer = 1}" : ""},
                {"BEFORE", before}});
}

/// The box as TMA writes it, from PTX's description: row r, column c of the box at byte
/// (r * 64 + c) * 2 before the swizzle, zero outside the m x k tensor.
std::vector<uint16_t> expected_box(const std::vector<uint16_t>& src, int m, int k, int r0, int c0,
                                   int swizzle) {
  std::vector<uint16_t> out(512);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 64; ++c) {
      const int gr = r0 + r, gc = c0 + c;
      const bool inside = gr >= 0 && gr < m && gc >= 0 && gc < k;
      const int64_t at = tessera::ir::tma_swizzle((r * 64 + c) * 2, swizzle) / 2;
      out[static_cast<size_t>(at)] = inside ? src[static_cast<size_t>(gr * k + gc)] : 0;
    }
  return out;
}

}  // namespace

TEST_CASE("simt tma: tma_load copies a box, zero outside the tensor, swizzled, at the wait") {
  const int m = 10, k = 96;
  std::vector<uint16_t> src(m * k);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(0x3c00 + i);
  struct Case {
    int r0, c0, swizzle;
  };
  for (const Case& c : {Case{0, 0, 128}, Case{5, 64, 128}, Case{-3, -40, 128}, Case{2, 32, 0},
                        Case{9, 0, 128}, Case{20, 0, 128}}) {
    CAPTURE(c.r0);
    CAPTURE(c.c0);
    CAPTURE(c.swizzle);
    SimtKernel kernel(box_kernel(c.swizzle));
    std::vector<uint16_t> out(512, 0xffff);
    HostMemory mem;
    kernel.run(mem, Grid{}, mem.add(src), mem.add(out), m, k, c.r0, c.c0);
    CHECK(out == expected_box(src, m, k, c.r0, c.c0, c.swizzle));
  }
}

TEST_CASE("simt tma: the mbarrier's phases alternate parity, one copy per phase") {
  const int m = 16, k = 64;
  std::vector<uint16_t> src(m * k);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i * 7);
  SimtKernel kernel(box_kernel(128, 3));
  std::vector<uint16_t> out(512, 0xffff);
  HostMemory mem;
  kernel.run(mem, Grid{2}, mem.add(src), mem.add(out), m, k, 8, 0);
  CHECK(out == expected_box(src, m, k, 8, 0, 128));
}

TEST_CASE("simt tma: misuse a GPU would hang on or corrupt is a fault naming the op") {
  const int m = 8, k = 64;
  std::vector<uint16_t> src(m * k, 0), out(512);
  auto error = [&](const std::string& text) {
    SimtKernel kernel(text);
    HostMemory mem;
    return error_of([&] { kernel.run(mem, Grid{}, mem.add(src), mem.add(out), m, k, 0, 0); });
  };
  // Expecting more bytes than the copy brings: the phase never completes.
  std::string e = error(box_kernel(128, 1, "2048"));
  CHECK(e.find("mbarrier_wait that can never complete (a GPU hangs) in kernel 'tma_box' at "
               "k.tir:") != std::string::npos);
  CHECK(e.find("which has 0 arrivals and 1024 bytes outstanding in phase 0") != std::string::npos);
  // No arrival: the copy lands, the arrival is still missing.
  e = error(box_kernel(128, 1, "1024", "0", false));
  CHECK(e.find("1 arrivals and -1024 bytes outstanding in phase 0") != std::string::npos);
  // The copy completes on mbarrier 1, never initialized.
  e = error(box_kernel(128, 1, "1024", "1"));
  CHECK(e.find("use of an uninitialized mbarrier in kernel 'tma_box'") != std::string::npos);
  // Every thread reads the destination, then thread 0 issues the copy with no barrier between:
  // the copy may land before the other threads' reads.
  const std::string read = "%old = shared_load %zero {buffer = 0, width = 1} : f16";
  e = error(box_kernel(128, 1, "1024", "0", true, read));
  CHECK(e.find("thread 0 writes shared_0[0] read by thread 1 at") != std::string::npos);
  CHECK(error(box_kernel(128, 1, "1024", "0", true, read + "\n  barrier")) == "");
}

TEST_CASE("simt tma: an mbarrier is initialized again only after mbarrier_inval") {
  // Thread 0 initializes mbarrier 0 twice, with {INVAL} between the two.
  constexpr const char* kTwice = R"tir(
func @twice(%n: i32) attributes {shared_0 = tile<1xi64>, stage = "simt", subgroup = 32, threads = 32} {
  %lane = lane_id : i32
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %first = cmp_eq %lane, %zero : i1
  if %first ({
    mbarrier_init %zero, %one {buffer = 0}
    {INVAL}
    mbarrier_init %zero, %one {buffer = 0}
    mbarrier_inval %zero {buffer = 0}
    yield
  }, {
    yield
  })
}
)tir";
  auto error = [&](const std::string& inval) {
    SimtKernel kernel(subst(kTwice, {{"INVAL", inval}}));
    HostMemory mem;
    return error_of([&] { kernel.run(mem, Grid{}, 0); });
  };
  CHECK(error("mbarrier_inval %zero {buffer = 0}").empty());
  const std::string e = error("");
  CHECK(e.find("mbarrier_init of a valid mbarrier in kernel 'twice'") != std::string::npos);
  CHECK(e.find("mbarrier_inval it first") != std::string::npos);
}

TEST_CASE("simt tma: mbarrier_inval with a copy in flight to the mbarrier is a fault") {
  const int m = 8, k = 64;
  std::vector<uint16_t> src(m * k, 0), out(512);
  // The copy is issued, then the mbarrier invalidated before any wait lands it.
  std::string text = box_kernel();
  const std::string wait = "    mbarrier_wait %zero, %p {buffer = 1}\n";
  const size_t at = text.find(wait);
  REQUIRE(at != std::string::npos);
  text.replace(at, wait.size(),
               "    if %first ({\n      mbarrier_inval %zero {buffer = 1}\n      yield\n    }, {\n"
               "      yield\n    })\n");
  SimtKernel kernel(text);
  HostMemory mem;
  const std::string e =
      error_of([&] { kernel.run(mem, Grid{}, mem.add(src), mem.add(out), m, k, 0, 0); });
  CHECK(e.find("mbarrier_inval with a copy in flight to it in kernel 'tma_box'") !=
        std::string::npos);
}

namespace {

/// Every thread writes 4 elements of %in, as they lie, into shared memory (the 8 x 64 f16 box
/// as TMA lays it out, {SWIZZLE}); then {BEFORE}, and thread 0 stores the box at (%r0, %c0) of
/// the [%m x %k] tensor at %dst by TMA ({AFTER_STORE} between the store and its wait).
constexpr const char* kStoreKernel = R"tir(
func @tma_box_store(%dst: ptr<f16> {divisibility = 16}, %in: ptr<f16>, %m: i32, %k: i32, %r0: i32, %c0: i32) attributes {shared_0 = tile<512xf16>, stage = "simt", subgroup = 32, tensor_map_0 = "tensor_map(%0: f16 [%2 x %3] strides [%3, 1] box [8 x 64] swizzle {SWIZZLE})", threads = 128} {
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c32 = constant {value = 32} : i32
  %t0 = mul %sg, %c32 : i32
  %tid = add %t0, %lane : i32
  %zero = constant {value = 0} : i32
  %c4 = constant {value = 4} : i32
  %e = mul %tid, %c4 : i32
  %src = ptr_add %in, %e : ptr<f16>
  %true = constant {value = 1} : i1
  %z = constant {value = 0.0} : f16
  %v0, %v1, %v2, %v3 = global_load %src, %true, %z, %z, %z, %z {align = 8, width = 4} : f16, f16, f16, f16
  shared_store %e, %v0, %v1, %v2, %v3 {buffer = 0, width = 4}
  {BEFORE}
  %first = cmp_eq %tid, %zero : i1
  if %first ({
    tma_store %zero, %r0, %c0 {buffer = 0, map = 0}
    tma_store_commit
    {AFTER_STORE}
    {WAIT}
    yield
  }, {
    yield
  })
  barrier
}
)tir";

std::string store_kernel(int swizzle = 128, std::string before = "fence_async_shared\n  barrier",
                         std::string after = "", bool wait = true) {
  return subst(kStoreKernel, {{"SWIZZLE", std::to_string(swizzle)},
                              {"BEFORE", before},
                              {"AFTER_STORE", after},
                              {"WAIT", wait ? "tma_store_wait {pending = 0}" : ""}});
}

}  // namespace

TEST_CASE("simt tma: tma_store writes a box's elements inside the tensor, unswizzled") {
  const int m = 10, k = 96;
  std::vector<uint16_t> in(512);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(0x4000 + i);
  struct Case {
    int r0, c0, swizzle;
  };
  for (const Case& c :
       {Case{0, 0, 128}, Case{5, 64, 128}, Case{-3, -40, 128}, Case{2, 32, 0}, Case{20, 0, 128}}) {
    CAPTURE(c.r0);
    CAPTURE(c.c0);
    CAPTURE(c.swizzle);
    SimtKernel kernel(store_kernel(c.swizzle));
    std::vector<uint16_t> out(m * k, 0xffff), expected = out;
    // Element (r, c) of the box lies at byte (r * 64 + c) * 2, swizzled, of shared memory.
    for (int r = 0; r < 8; ++r)
      for (int col = 0; col < 64; ++col) {
        const int gr = c.r0 + r, gc = c.c0 + col;
        if (gr < 0 || gr >= m || gc < 0 || gc >= k) continue;
        const int64_t at = tessera::ir::tma_swizzle((r * 64 + col) * 2, c.swizzle) / 2;
        expected[static_cast<size_t>(gr * k + gc)] = in[static_cast<size_t>(at)];
      }
    HostMemory mem;
    kernel.run(mem, Grid{}, mem.add(out), mem.add(in), m, k, c.r0, c.c0);
    CHECK(out == expected);
  }
}

TEST_CASE("simt tma: tma_store misuse is a fault naming the op") {
  const int m = 8, k = 64;
  std::vector<uint16_t> in(512, 0x3c00), out(m * k);
  auto error = [&](const std::string& text) {
    SimtKernel kernel(text);
    HostMemory mem;
    return error_of([&] { kernel.run(mem, Grid{}, mem.add(out), mem.add(in), m, k, 0, 0); });
  };
  // The shared stores not fenced for the async proxy.
  std::string e = error(store_kernel(128, "barrier"));
  CHECK(e.find("tma_store reads shared memory not fenced for it in kernel 'tma_box_store'") !=
        std::string::npos);
  // The source written again before the wait retired the store.
  e = error(store_kernel(128, "fence_async_shared\n  barrier",
                         "shared_store %zero, %v0 {buffer = 0, width = 1}"));
  CHECK(e.find("while the tma_store at k.tir:") != std::string::npos);
  CHECK(e.find("no tma_store_wait retired it") != std::string::npos);
  // No wait at all: the program ends with the store reading its shared memory.
  e = error(store_kernel(128, "fence_async_shared\n  barrier", "", false));
  CHECK(e.find("a tma_store still in flight as the program ends in kernel 'tma_box_store'") !=
        std::string::npos);
}
