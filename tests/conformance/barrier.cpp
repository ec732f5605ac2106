/// \file tl::debug_barrier: a program stores a tile to scratch memory, waits, and loads the
/// elements other threads (and warps) stored, reversed; three rounds, several programs, so a
/// barrier that did not order global memory across the program's threads gives stale values.
#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

void barrier_kernel(tl::pointer x, tl::pointer scratch, tl::pointer out, int BLOCK, int ROUNDS) {
  auto base = tl::program_id(0) * BLOCK;
  auto offs = base + tl::arange(0, BLOCK);
  auto v = tl::load(x + offs);
  for (int r = 0; r < ROUNDS; ++r) {
    tl::store(scratch + offs, v);
    tl::debug_barrier();  // every store of the program lands before any thread reads
    v = tl::load(scratch + (base + (BLOCK - 1) - tl::arange(0, BLOCK))) + 1;
    tl::debug_barrier();  // every read lands before the next round overwrites
  }
  tl::store(out + offs, v);
}

void barrier_case(Context& ctx) {
  auto k = TESSERA_KERNEL(barrier_kernel, x, scratch, out, BLOCK, ROUNDS);
  const int block = 256, programs = 3, rounds = 3, n = block * programs;
  HostArray x = ctx.random(DType::i32, n, -1000, 1000);
  DevArray dx = ctx.upload(x), scratch = ctx.poisoned(DType::i32, n),
           o = ctx.poisoned(DType::i32, n);
  k[{programs}](dx.buf, scratch.buf, o.buf, block, rounds);
  std::vector<int64_t> want(n);
  for (int i = 0; i < n; ++i) {
    const int p = i / block, j = i % block;  // an odd number of reversals
    want[i] = x.i(p * block + (block - 1 - j)) + rounds;
  }
  ctx.check_ints("three reversal rounds through scratch memory", ctx.download(o), want);
}

}  // namespace

void register_barrier(std::vector<Case>& out) {
  out.push_back({"memory/debug_barrier", {}, "", barrier_case});
}

}  // namespace tessera::conformance
