/// \file The SIMT interpreter's workgroup-scope matrices (core/ir/simt.h): coopmat_load_tensor
/// reads a 2-D tensor's block with the bounds rule exactly as stated (zero outside with
/// clamp_zero, a fault without it), and the whole workgroup owns the matrix (both subgroups'
/// threads hold its elements, and a store to shared memory writes every one).
#include <cstdint>
#include <vector>

#include "helpers.h"

namespace simt_test {
namespace {

// An 8x8 i8 block of the rows x cols tensor %x (row stride %ld, column stride 1) at (%o0, %o1),
// stored to shared memory (rows 16 apart) and copied out one element per thread.
const std::string kLoadTensor = kernel(
    R"(func @load_tensor(%x: ptr<i8>, %out: ptr<i8>, %s: i32, %rows: i32, %cols: i32, %ld: i32, %o0: i32, %o1: i32) attributes {stage = "simt", threads = 64, subgroup = 32, shared_0 = tile<128xi8>} {)",
    R"(
  %m = coopmat_load_tensor %x, %rows, %cols, %ld, %c1, %o0, %o1 {CLAMP} : wgmat_a<8x8xi8> loc("t.cpp":3:1)
  coopmat_store %c0, %m {buffer = 0, stride = 16}
  barrier
  %c3 = constant {value = 3} : i32
  %c7 = constant {value = 7} : i32
  %r = shr %tid, %c3 : i32
  %c = and %tid, %c7 : i32
  %c16 = constant {value = 16} : i32
  %r16 = mul %r, %c16 : i32
  %at = add %r16, %c : i32
  %v = shared_load %at {buffer = 0, width = 1} : i8
  %p = ptr_add %out, %tid : ptr<i8>
  global_store %p, %true, %v {align = 1, width = 1}
)");

struct Tensor {
  int rows = 5, cols = 6, ld = 7;  // a row stride past the columns: the gap is never read
  std::vector<int8_t> data;
  Tensor() {
    data.assign(static_cast<size_t>(rows * ld), int8_t{-1});
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) data[static_cast<size_t>(i * ld + j)] = int8_t(i * 10 + j);
  }
  /// Element (r, c) of the block at (o0, o1), desc_load's rule: zero outside the tensor.
  int expected(int o0, int o1, int r, int c) const {
    const int i = o0 + r, j = o1 + c;
    return i >= 0 && i < rows && j >= 0 && j < cols ? i * 10 + j : 0;
  }
};

std::vector<int8_t> run(const std::string& clamp, int o0, int o1, const Tensor& t) {
  std::vector<int8_t> x = t.data, out(64, int8_t{99});
  HostMemory mem;
  SimtKernel k(subst(kLoadTensor, {{"CLAMP", clamp}}));
  k.run(mem, Grid{}, mem.add(x), mem.add(out), int32_t{32}, t.rows, t.cols, t.ld, o0, o1);
  return out;
}

}  // namespace

TEST_CASE("simt coopmat2: a clamped tensor load reads zero outside the tensor, at every edge") {
  const Tensor t;
  // Inside, past the bottom and right edges, and at negative offsets (above and left).
  for (auto [o0, o1] : {std::pair{0, 0}, {2, 1}, {-3, -5}, {4, 5}, {-8, 0}, {9, 9}}) {
    CAPTURE(o0);
    CAPTURE(o1);
    const std::vector<int8_t> out = run("{clamp_zero = 1}", o0, o1, t);
    for (int e = 0; e < 64; ++e) {
      CAPTURE(e);
      CHECK(out[static_cast<size_t>(e)] == t.expected(o0, o1, e / 8, e % 8));
    }
  }
}

TEST_CASE("simt coopmat2: an unclamped tensor load inside the tensor reads it, outside it faults") {
  Tensor t;
  t.rows = 12, t.cols = 9, t.ld = 9;
  t.data.assign(static_cast<size_t>(t.rows * t.ld), 0);
  for (int i = 0; i < t.rows; ++i)
    for (int j = 0; j < t.cols; ++j) t.data[static_cast<size_t>(i * t.ld + j)] = int8_t(i * 10 + j);
  const std::vector<int8_t> out = run("", 4, 1, t);  // rows 4..11, columns 1..8: all inside
  for (int e = 0; e < 64; ++e) CHECK(out[static_cast<size_t>(e)] == (4 + e / 8) * 10 + 1 + e % 8);
  CHECK(error_of([&] {
          run("", 5, 1, t);
        }).find("coopmat_load_tensor outside the tensor in kernel 'load_tensor' at t.cpp:3") !=
        std::string::npos);
  CHECK(error_of([&] { run("", 5, 1, t); }).find("is the tensor's (12, 1) of [12, 9]") !=
        std::string::npos);
}

}  // namespace simt_test
