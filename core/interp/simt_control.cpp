/// \file Control flow and synchronization in lock-step: if runs each side under the mask of the
/// threads that take it and merges the results per thread; for and while iterate while any
/// thread is still in the loop, freezing each thread's results when it leaves; barrier and
/// shuffle insist that every thread of the workgroup (barrier) or of the subgroup (shuffle) is
/// there, since on a GPU anything less hangs or reads undefined values.
#include <algorithm>
#include <cstring>

#include "core/interp/numeric.h"
#include "core/interp/simt_exec.h"

namespace tessera::interp::simt {
namespace {

uint32_t count_on(const uint8_t* on, uint32_t threads) {
  uint32_t n = 0;
  for (uint32_t t = 0; t < threads; ++t) n += on[t];
  return n;
}

void run_if(Machine& m, const Instr& in, const Mask& mask) {
  const uint8_t* c = in.in[0].as<uint8_t>();
  uint32_t taken = 0;
  for (uint32_t t = 0; t < m.threads; ++t) taken += mask.on[t] & c[t];
  const Block& then_block = m.blocks[in.blocks[0]];
  const Block& else_block = m.blocks[in.blocks[1]];
  if (taken == mask.count || taken == 0) {  // uniform: one side, every result from it
    const Block& side = taken ? then_block : else_block;
    m.run_block(taken ? in.blocks[0] : in.blocks[1], mask);
    for (size_t i = 0; i < in.out.size(); ++i) copy_slot(in.out[i], side.yields[i], m.threads);
    return;
  }
  uint8_t* then_on = in.masks[0].data();
  uint8_t* else_on = in.masks[1].data();
  for (uint32_t t = 0; t < m.threads; ++t) {
    then_on[t] = mask.on[t] & c[t];
    else_on[t] = mask.on[t] & !c[t];
  }
  m.run_block(in.blocks[0], {then_on, taken});
  m.run_block(in.blocks[1], {else_on, mask.count - taken});
  for (size_t i = 0; i < in.out.size(); ++i) {
    copy_slot(in.out[i], else_block.yields[i], m.threads);
    copy_slot_masked(in.out[i], then_block.yields[i], c, m.threads);
  }
}

/// for %lb, %ub, %step, %init...: per-thread bounds of the induction variable's dtype T. A
/// thread runs its own trip count; iteration k runs the threads that have more than k trips.
template <class T>
void run_for(Machine& m, const Instr& in, const Mask& mask) {
  using S = typename T::S;
  const S *lb = in.in[0].as<S>(), *ub = in.in[1].as<S>(), *step = in.in[2].as<S>();
  auto* trips = reinterpret_cast<uint64_t*>(in.lanes.data());
  uint64_t most = 0, fewest = UINT64_MAX;
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    if (step[t] == 0) m.fault(*in.op, static_cast<int>(t), "for loop with step 0", "");
    trips[t] = trip_count(static_cast<int64_t>(lb[t]), static_cast<int64_t>(ub[t]),
                          static_cast<int64_t>(step[t]));
    most = std::max(most, trips[t]);
    fewest = std::min(fewest, trips[t]);
  }
  const bool uniform = most == fewest;  // every thread runs every iteration
  const Block& body = m.blocks[in.blocks[0]];
  for (size_t i = 0; i < in.out.size(); ++i) copy_slot(in.out[i], in.in[3 + i], m.threads);
  uint8_t* on = in.masks[0].data();
  S* iv = body.args[0].as<S>();
  for (uint64_t k = 0; k < most; ++k) {
    m.tick(*in.op);
    Mask active = mask;
    if (!uniform) {
      for (uint32_t t = 0; t < m.threads; ++t) on[t] = mask.on[t] && trips[t] > k;
      active = {on, count_on(on, m.threads)};
    }
    // lb + k * step stays inside the range for a thread that runs iteration k, so the wrapping
    // arithmetic is exact; other threads' values are never read.
    for (uint32_t t = 0; t < m.threads; ++t)
      iv[t] = num::wrap<T>(num::widen<T>(lb[t]) + k * num::widen<T>(step[t]));
    for (size_t i = 0; i < in.out.size(); ++i) copy_slot(body.args[1 + i], in.out[i], m.threads);
    m.run_block(in.blocks[0], active);
    for (size_t i = 0; i < in.out.size(); ++i) {
      if (uniform)
        copy_slot(in.out[i], body.yields[i], m.threads);
      else
        copy_slot_masked(in.out[i], body.yields[i], on, m.threads);
    }
  }
}

/// while: `before` decides per thread; a thread whose condition is false leaves with the
/// condition's values as its results, the others run `after` and go round again.
void run_while(Machine& m, const Instr& in, const Mask& mask) {
  const Block& before = m.blocks[in.blocks[0]];
  const Block& after = m.blocks[in.blocks[1]];
  for (size_t i = 0; i < before.args.size(); ++i) copy_slot(before.args[i], in.in[i], m.threads);
  uint8_t* live = in.masks[0].data();
  std::memcpy(live, mask.on, m.threads);
  uint32_t count = mask.count;
  uint8_t* leaving = in.masks[1].data();
  for (;;) {
    m.tick(*in.op);
    m.run_block(in.blocks[0], {live, count});
    const uint8_t* c = before.yields[0].as<uint8_t>();
    uint32_t stay = 0;
    for (uint32_t t = 0; t < m.threads; ++t) {
      leaving[t] = live[t] & !c[t];
      live[t] &= c[t];
      stay += live[t];
    }
    if (stay != count)
      for (size_t i = 0; i < in.out.size(); ++i)
        copy_slot_masked(in.out[i], before.yields[1 + i], leaving, m.threads);
    count = stay;
    if (count == 0) return;
    for (size_t i = 0; i < after.args.size(); ++i)
      copy_slot(after.args[i], before.yields[1 + i], m.threads);
    m.run_block(in.blocks[1], {live, count});
    for (size_t i = 0; i < before.args.size(); ++i)
      copy_slot(before.args[i], after.yields[i], m.threads);
  }
}

/// barrier {threads = imm[0]} (imm[0] = 0: the whole workgroup's). A named barrier (PTX bar.sync
/// id, N) completes when N threads, whole warps, arrive: in lock step, exactly the active ones.
/// Where the race detector keeps clocks (a function with mbarriers: warp_specialize's roles), it
/// orders exactly its threads' accesses (SyncClocks::meet), so an access across it by a thread
/// outside it is still checked; elsewhere it advances the detector's one epoch, as a workgroup
/// barrier does (then such an access goes unchecked: a missed race, never a false one).
void barrier(Machine& m, const Instr& in, const Mask& mask) {
  if (in.imm[0] > 0) {
    const auto expected = static_cast<uint32_t>(in.imm[0]);
    for (uint32_t w = 0; w < m.threads; w += 32) {
      uint32_t on = 0;
      for (uint32_t t = w; t < w + 32 && t < m.threads; ++t) on += mask.on[t];
      if (on != 0 && on != 32)
        m.fault(*in.op, static_cast<int>(w), "named barrier reached by part of a warp",
                ": " + std::to_string(on) + " of the 32 threads of warp " + std::to_string(w / 32));
    }
    if (mask.count != expected)
      m.fault(*in.op, -1, "named barrier that cannot complete (a GPU hangs)",
              ": it waits for " + std::to_string(expected) + " threads, " +
                  std::to_string(mask.count) + " reach it");
    if (m.sync.on)
      m.sync.meet(mask.on);
    else
      m.shared.barrier();
    return;
  }
  if (mask.count != m.threads) {
    const auto absent = std::find(mask.on, mask.on + m.threads, 0) - mask.on;
    m.fault(*in.op, -1, "barrier in divergent control flow",
            ": only " + std::to_string(mask.count) + " of " + std::to_string(m.threads) +
                " threads reach it (thread " + std::to_string(absent) + " does not)");
  }
  m.shared.barrier();
}

/// Thread t (lane `lane`) would read lane `src`: outside the subgroup, or an inactive lane.
[[noreturn]] void bad_source(const Machine& m, const Instr& in, uint32_t t, int64_t lane,
                             int64_t src) {
  const std::string who = "lane " + std::to_string(lane) + " of subgroup " +
                          std::to_string(t / m.subgroup) + " reads lane " + std::to_string(src);
  if (src < 0 || src >= m.subgroup)
    m.fault(*in.op, static_cast<int>(t), "shuffle from a lane outside the subgroup",
            ": " + who + " (subgroup size " + std::to_string(m.subgroup) + ")");
  m.fault(*in.op, static_cast<int>(t), "shuffle from an inactive lane",
          ": " + who + ", which is inactive");
}

/// Every subgroup with an active lane must have all of its lanes active.
void require_whole_subgroups(const Machine& m, const Instr& in, const Mask& mask) {
  for (uint32_t base = 0; base < m.threads; base += m.subgroup) {
    const uint32_t active = count_on(mask.on + base, m.subgroup);
    if (active == 0 || active == m.subgroup) continue;
    const auto absent = std::find(mask.on + base, mask.on + base + m.subgroup, 0) - mask.on;
    m.fault(*in.op, -1, "shuffle in divergent control flow",
            ": " + std::to_string(active) + " of " + std::to_string(m.subgroup) +
                " lanes of subgroup " + std::to_string(base / m.subgroup) + " execute it (lane " +
                std::to_string(absent - base) + " does not)");
  }
}

/// shuffle %v, %n {mode = imm[0]}: each active thread reads the lane its mode names.
template <int N>
void shuffle(Machine& m, const Instr& in, const Mask& mask) {
  const int32_t* n = in.in[1].as<int32_t>();
  const auto mode = static_cast<ir::ShuffleMode>(in.imm[0]);
  const bool shift = mode == ir::ShuffleMode::Up || mode == ir::ShuffleMode::Down;
  const int64_t s = m.subgroup;
  int64_t* from = in.lanes.data();
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    const int64_t lane = t % m.subgroup, base = t - lane;
    int64_t src = n[t];  // idx
    if (mode == ir::ShuffleMode::Xor) src = lane ^ n[t];
    if (mode == ir::ShuffleMode::Up) src = lane - n[t];
    if (mode == ir::ShuffleMode::Down) src = lane + n[t];
    if (shift && (src < 0 || src >= s)) src = lane;  // past the end: the caller's own value
    if (src < 0 || src >= s || !mask.on[base + src]) bad_source(m, in, t, lane, src);
    from[t] = base + src;
  }
  if (mask.count != m.threads) require_whole_subgroups(m, in, mask);
  const std::byte* v = in.in[0].data;
  std::byte* r = in.out[0].data;
  for (uint32_t t = 0; t < m.threads; ++t)
    if (mask.on[t]) std::memcpy(r + t * N, v + from[t] * N, N);
}

}  // namespace

Handler select_control(Instr& in, uint32_t threads) {
  const ir::Op& op = *in.op;
  in.masks[0].assign(threads, 0);
  in.masks[1].assign(threads, 0);
  in.lanes.assign(threads, 0);
  switch (op.kind) {
    case ir::OpKind::If:
      return run_if;
    case ir::OpKind::While:
      return run_while;
    case ir::OpKind::WarpSpecialize:
      return run_warp_specialize;
    case ir::OpKind::Barrier:
      in.imm[0] = op.int_attr_or(attr::kThreadCount, 0);
      return barrier;
    case ir::OpKind::For:
      return dispatch(op.region(0)->args.at(0)->type.dtype, [](auto t) -> Handler {
        using T = decltype(t);
        if constexpr (T::kFloat)
          return nullptr;
        else
          return &run_for<T>;
      });
    case ir::OpKind::Shuffle: {
      ir::ShuffleMode mode{};
      TESSERA_CHECK(ir::parse_shuffle_mode(op.str_attr(attr::kMode), &mode), "bad shuffle mode");
      in.imm[0] = static_cast<int64_t>(mode);
      Handler h = nullptr;
      with_elem_size(in.out[0].bytes, [&](auto size) { h = &shuffle<decltype(size)::value>; });
      return h;
    }
    default:
      return nullptr;
  }
}

}  // namespace tessera::interp::simt
