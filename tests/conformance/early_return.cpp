/// \file tl::return_if (Triton's `if cond: return` in the kernel body): programs whose flag
/// (loaded from memory) is set end after their first store, one more ends at a second early
/// return on its program id, and the others run a tl::range loop and store; elements of
/// programs that returned keep their poison. n is not a multiple of the tile.
#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

/// pre[offs] = 7; return where flags[pid]; acc = x, then acc = acc * 2 + i for i in [0, 3);
/// return where pid == 3; out[offs] = acc.
void early_return_kernel(tl::pointer x, tl::ptr<int32_t> flags, tl::pointer pre, tl::pointer out,
                         tl::i32 n, int BLOCK) {
  auto pid = tl::program_id(0);
  auto offs = pid * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(pre + offs, 7, mask);
  tl::return_if(tl::load(flags + pid) != 0);
  auto acc = tl::load(x + offs, mask, 0);
  for (auto i : tl::range(0, 3)) acc = acc * 2 + i;
  tl::return_if(pid == 3);
  tl::store(out + offs, acc, mask);
}

void early_return_case(Context& ctx, DType t) {
  auto k = TESSERA_KERNEL(early_return_kernel, x, flags, pre, out, n, BLOCK);
  const int block = 64, n = 300, programs = 5;
  HostArray x = ctx.random(t, n, -100, 100);
  HostArray flags(DType::i32, programs);
  const int flag[programs] = {0, 1, 0, 0, 1};
  for (int p = 0; p < programs; ++p) flags.set_int(p, flag[p]);
  DevArray dx = ctx.upload(x), df = ctx.upload(flags);
  DevArray pre = ctx.poisoned(t, n), out = ctx.poisoned(t, n);
  k[{programs}](dx.buf, df.buf, pre.buf, out.buf, n, block);
  HostArray want_pre(t, n), want(t, n);
  for (int i = 0; i < n; ++i) {
    const int p = i / block;
    want_pre.set_int(i, 7);
    if (flag[p] || p == 3)
      want.set_bits(i, Context::poison_bits(t));
    else {
      // The kernel rounds to the dtype after each step (x * 8 + 4 rounded once differs by an
      // ulp where 4x + 1 rounds: seed 1839540137 on simt:32, f16[141]).
      double acc = x.f(i);
      for (int step = 0; step < 3; ++step) acc = round_to(t, round_to(t, acc * 2) + step);
      want.set_f(i, acc);
    }
  }
  ctx.check_exact("stores before the early return " + dname(t), ctx.download(pre), want_pre);
  ctx.check_exact("stores after the early returns " + dname(t), ctx.download(out), want);
}

}  // namespace

void register_early_return(std::vector<Case>& out) {
  for (DType t : {DType::i32, DType::f32, DType::f16}) {
    out.push_back({"control/early_return/" + dname(t), needs_of({t}), "",
                   [t](Context& ctx) { early_return_case(ctx, t); }});
  }
}

}  // namespace tessera::conformance
