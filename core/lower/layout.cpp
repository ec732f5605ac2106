/// \file Layout algebra: constructors (blocked, dot) and the relabelings of shape ops.
#include "core/lower/layout.h"

#include <algorithm>
#include <bit>

#include "core/support/error.h"

namespace tessera::lower {

int log2_exact(int64_t v) {
  TESSERA_CHECK(v > 0 && std::has_single_bit(static_cast<uint64_t>(v)), "not a power of two: ", v);
  return std::countr_zero(static_cast<uint64_t>(v));
}

int fast_dim(const Layout& l) {
  if (!l.regs.empty()) return l.regs[0].dim;
  for (const DimBit& b : l.threads)
    if (!b.none()) return b.dim;
  return -1;
}

int reg_run(const Layout& l, int dim) {
  int run = 0;
  while (run < static_cast<int>(l.regs.size()) &&
         l.regs[static_cast<size_t>(run)] == DimBit{dim, run})
    ++run;
  return run;
}

int64_t vector_width(const Layout& l, int dim, int elem_bytes) {
  return std::min<int64_t>({int64_t{1} << reg_run(l, dim), std::max(1, 16 / elem_bytes), 8});
}

int64_t linear_index(const ir::Shape& shape, const std::vector<int64_t>& c) {
  int64_t idx = 0;
  for (size_t d = 0; d < shape.size(); ++d) idx = idx * shape[d] + c[d];
  return idx;
}

std::vector<int64_t> staging_strides(const ir::Shape& shape, int elem_bytes) {
  const size_t rank = shape.size();
  std::vector<int64_t> strides(rank, 1);
  if (rank == 0) return strides;
  const bool pad = rank >= 2 && shape[rank - 1] * elem_bytes % 128 == 0;
  for (size_t d = rank - 1; d-- > 0;)
    strides[d] = strides[d + 1] * shape[d + 1] + (pad && d == rank - 2 ? 16 / elem_bytes : 0);
  return strides;
}

int64_t staging_elements(const ir::Shape& shape, int elem_bytes) {
  return shape.empty() ? 1 : staging_strides(shape, elem_bytes)[0] * shape[0];
}

namespace {

void add_bit(std::vector<int64_t>& c, const DimBit& b) {
  if (!b.none()) c[static_cast<size_t>(b.dim)] |= int64_t{1} << b.bit;
}

std::string bits_str(const std::vector<DimBit>& bits) {
  std::string s = "(";
  for (size_t i = 0; i < bits.size(); ++i) {
    if (i) s += ",";
    s += bits[i].none() ? "-" : std::to_string(bits[i].dim) + "." + std::to_string(bits[i].bit);
  }
  return s + ")";
}

/// Applies `f` to every named bit of the layout.
template <class F>
void map_bits(Layout& l, F&& f) {
  for (DimBit& b : l.regs)
    if (!b.none()) b = f(b);
  for (DimBit& b : l.threads)
    if (!b.none()) b = f(b);
}

}  // namespace

std::vector<int64_t> Layout::reg_coords(int r) const {
  std::vector<int64_t> c(shape.size(), 0);
  for (size_t i = 0; i < regs.size(); ++i)
    if ((r >> i) & 1) add_bit(c, regs[i]);
  return c;
}

std::vector<int64_t> Layout::thread_coords(int64_t t) const {
  std::vector<int64_t> c(shape.size(), 0);
  for (size_t i = 0; i < threads.size(); ++i)
    if ((t >> i) & 1) add_bit(c, threads[i]);
  return c;
}

std::vector<int64_t> Layout::coords(int r, int64_t t) const {
  std::vector<int64_t> c = reg_coords(r);
  std::vector<int64_t> tc = thread_coords(t);
  for (size_t d = 0; d < c.size(); ++d) c[d] |= tc[d];
  return c;
}

bool Layout::is_owner(int64_t t) const {
  for (size_t i = 0; i < threads.size(); ++i)
    if (threads[i].none() && ((t >> i) & 1)) return false;
  return true;
}

int Layout::reg_of(const std::vector<int64_t>& reg_part) const {
  int r = 0;
  for (size_t i = 0; i < regs.size(); ++i) {
    const DimBit& b = regs[i];
    if (!b.none() && ((reg_part[static_cast<size_t>(b.dim)] >> b.bit) & 1)) r |= 1 << i;
  }
  return reg_coords(r) == reg_part ? r : -1;
}

std::string Layout::str() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(shape[i]);
  }
  if (mats && mats->workgroup)
    return s + "] one workgroup matrix of " + std::to_string(mats->lanes) + " invocations";
  if (mats)
    return s + "] matrices " + std::to_string(mats->m) + "x" + std::to_string(mats->n) +
           ", subgroups " + std::to_string(mats->wm) + "x" + std::to_string(mats->wn) + " of " +
           std::to_string(mats->lanes) + ", " + std::to_string(reps_m()) + "x" +
           std::to_string(reps_n()) + " each";
  s += "] regs=";
  s += bits_str(regs);
  s += " threads=";
  s += bits_str(threads);
  return s;
}

void Layout::check() const {
  if (mats) {
    TESSERA_CHECK(shape.size() == 2 && regs.empty() && threads.empty() &&
                      shape[0] % (mats->m * mats->wm) == 0 && shape[1] % (mats->n * mats->wn) == 0,
                  "malformed matrix layout: ", str());
    return;
  }
  std::vector<std::vector<int>> seen(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    seen[d].assign(static_cast<size_t>(log2_exact(shape[d])), 0);
  auto note = [&](const DimBit& b) {
    if (b.none()) return;
    TESSERA_CHECK(b.dim < rank() && b.bit < static_cast<int>(seen[b.dim].size()),
                  "layout names a bit outside the shape: ", str());
    seen[b.dim][b.bit] += 1;
  };
  for (const DimBit& b : regs) {
    TESSERA_CHECK(!b.none(), "a register bit names nothing: ", str());
    note(b);
  }
  for (const DimBit& b : threads) note(b);
  for (const auto& dim : seen)
    for (int n : dim) TESSERA_CHECK(n == 1, "layout does not name every bit once: ", str());
}

Layout blocked(const ir::Shape& shape, const std::vector<int>& order, int vec, int64_t threads) {
  Layout l;
  l.shape = shape;
  std::vector<DimBit> fill;  // coordinate bits, fastest first
  for (int d : order)
    for (int b = 0; b < log2_exact(shape[static_cast<size_t>(d)]); ++b) fill.push_back({d, b});
  size_t next = 0;
  int vec_bits = vec > 1 ? log2_exact(vec) : 0;
  for (int i = 0; i < vec_bits && next < fill.size(); ++i) l.regs.push_back(fill[next++]);
  for (int i = 0; i < log2_exact(threads); ++i)
    l.threads.push_back(next < fill.size() ? fill[next++] : DimBit{});
  while (next < fill.size()) l.regs.push_back(fill[next++]);
  return l;
}

Layout staging_layout(const ir::Shape& shape, int fast, int vec, int store_dim, int store_vec,
                      int elem_bytes, int64_t threads, int lanes,
                      const std::function<int64_t(const std::vector<int64_t>&)>& byte_offset) {
  Layout l;
  l.shape = shape;
  std::vector<DimBit> fill;  // coordinate bits not yet placed, fast's first
  for (int d : {fast, 1 - fast})
    for (int b = 0; b < log2_exact(shape[static_cast<size_t>(d)]); ++b) fill.push_back({d, b});
  auto take = [&](size_t i) {
    DimBit b = fill[i];
    fill.erase(fill.begin() + static_cast<long>(i));
    return b;
  };
  // Register bits: the load vector, then the store vector, within the elements per thread.
  const int per_thread =
      std::max(0, log2_exact(shape[0]) + log2_exact(shape[1]) - log2_exact(threads));
  const int vec_bits = std::min(log2_exact(vec), per_thread);
  for (int i = 0; i < vec_bits && !fill.empty(); ++i) l.regs.push_back(take(0));
  int store_bits = 0;
  if (store_dim != fast) {
    store_bits = std::min(log2_exact(store_vec), per_thread - vec_bits);
    for (int i = 0; i < store_bits; ++i) {
      auto it = std::find(fill.begin(), fill.end(), DimBit{store_dim, i});
      if (it == fill.end()) break;
      l.regs.push_back(take(static_cast<size_t>(it - fill.begin())));
    }
  }
  const int store_bytes =
      std::min(16, (store_dim == fast ? 1 << vec_bits : 1 << store_bits) * elem_bytes);
  // A store phase: 128 bytes of banks in units of max(store_bytes, 4); a lane bit is good when the
  // bank unit it moves to is independent (over GF(2)) of the phase's other lane bits', or when
  // it stays inside one 32-bit word (bytes of one word are written together).
  const int unit = std::max(store_bytes, 4);
  const int phase_bits = std::min(log2_exact(lanes), log2_exact(128 / unit));
  std::vector<int64_t> basis;  // the lane bits' bank vectors, reduced, largest first
  auto reduce = [&](int64_t v) {
    for (int64_t b : basis) v = std::min(v, v ^ b);
    return v;
  };
  auto bank_vector = [&](const DimBit& b) {
    std::vector<int64_t> c(shape.size(), 0);
    c[static_cast<size_t>(b.dim)] = int64_t{1} << b.bit;
    const int64_t off = byte_offset(c);
    return off < 4 ? int64_t{-1} : (off / unit) % (128 / unit);  // -1: within one word
  };
  for (int i = 0; i < log2_exact(threads); ++i) {
    size_t pick = 0;
    if (i < phase_bits) {
      for (size_t j = 0; j < fill.size(); ++j) {
        const int64_t v = bank_vector(fill[j]);
        if (v < 0 || reduce(v) != 0) {
          pick = j;
          if (v > 0) {
            basis.push_back(reduce(v));
            std::sort(basis.rbegin(), basis.rend());  // reduce() needs leading bits descending
          }
          break;
        }
      }
    }
    l.threads.push_back(fill.empty() ? DimBit{} : take(pick));
  }
  l.regs.insert(l.regs.end(), fill.begin(), fill.end());
  l.check();
  return l;
}

Layout default_layout(const ir::Shape& shape, int64_t threads) {
  std::vector<int> order;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) order.push_back(d);
  return blocked(shape, order, 1, threads);
}

Layout slice(const Layout& l, int axis) {
  Layout out = l;
  out.shape.erase(out.shape.begin() + axis);
  std::vector<DimBit> regs;
  for (const DimBit& b : l.regs)
    if (b.dim != axis) regs.push_back(b.dim > axis ? DimBit{b.dim - 1, b.bit} : b);
  out.regs = regs;
  for (DimBit& b : out.threads) {
    if (b.dim == axis)
      b = DimBit{};
    else if (b.dim > axis)
      b.dim -= 1;
  }
  return out;
}

Layout expand_dims(const Layout& l, int axis) {
  Layout out = l;
  out.shape.insert(out.shape.begin() + axis, 1);
  map_bits(out, [&](DimBit b) { return b.dim >= axis ? DimBit{b.dim + 1, b.bit} : b; });
  return out;
}

Layout reshape(const Layout& l, const ir::Shape& to) {
  // Row-major: bit b of dim d is bit (b + log2 of the product of the later dims) of the linear
  // index; the new shape splits the linear index the same way.
  auto offsets = [](const ir::Shape& s) {
    std::vector<int> off(s.size());
    int acc = 0;
    for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
      off[static_cast<size_t>(d)] = acc;
      acc += log2_exact(s[static_cast<size_t>(d)]);
    }
    return off;
  };
  std::vector<int> from_off = offsets(l.shape), to_off = offsets(to);
  Layout out = l;
  out.shape = to;
  map_bits(out, [&](DimBit b) {
    int p = from_off[static_cast<size_t>(b.dim)] + b.bit;
    for (size_t d = 0; d < to.size(); ++d) {
      int width = log2_exact(to[d]);
      if (p >= to_off[d] && p < to_off[d] + width)
        return DimBit{static_cast<int>(d), p - to_off[d]};
    }
    TESSERA_CHECK(false, "reshape bit out of range");
    return b;
  });
  return out;
}

Layout permute(const Layout& l, const std::vector<int64_t>& order) {
  Layout out = l;
  for (size_t i = 0; i < order.size(); ++i) out.shape[i] = l.shape[static_cast<size_t>(order[i])];
  std::vector<int> where(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    where[static_cast<size_t>(order[i])] = static_cast<int>(i);
  map_bits(out, [&](DimBit b) { return DimBit{where[static_cast<size_t>(b.dim)], b.bit}; });
  return out;
}

Layout broadcast(const Layout& l, const ir::Shape& shape) {
  Layout out = l;
  out.shape = shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (l.shape[d] == shape[d]) continue;
    TESSERA_CHECK(l.shape[d] == 1, "broadcast of a non-1 dimension");
    for (int b = 0; b < log2_exact(shape[d]); ++b) {
      DimBit bit{static_cast<int>(d), b};
      auto slot = std::find_if(out.threads.begin(), out.threads.end(),
                               [](const DimBit& x) { return x.none(); });
      if (slot != out.threads.end())
        *slot = bit;
      else
        out.regs.push_back(bit);
    }
  }
  return out;
}

Layout unbroadcast(const Layout& l, const ir::Shape& from) {
  Layout out = l;
  out.shape = from;
  std::vector<DimBit> regs;
  for (const DimBit& b : l.regs)
    if (from[static_cast<size_t>(b.dim)] != 1 || l.shape[static_cast<size_t>(b.dim)] == 1)
      regs.push_back(b);
  out.regs = regs;
  for (DimBit& b : out.threads)
    if (!b.none() && from[static_cast<size_t>(b.dim)] == 1 &&
        l.shape[static_cast<size_t>(b.dim)] != 1)
      b = DimBit{};
  return out;
}

Layout cat(const Layout& l, int axis) {
  Layout out = l;
  out.regs.push_back(DimBit{axis, log2_exact(l.shape[static_cast<size_t>(axis)])});
  out.shape[static_cast<size_t>(axis)] *= 2;
  return out;
}

Layout dot_layout(int64_t m, int64_t n, int64_t threads) {
  int bm = log2_exact(m), bn = log2_exact(n), bt = log2_exact(threads);
  int per_thread = std::max(0, bm + bn - bt);  // log2 of elements per thread
  int rn = std::min(per_thread / 2, bn);
  int rm = std::min(per_thread - rn, bm);
  rn = per_thread - rm;
  // Up to 4 consecutive columns and 4 consecutive rows per thread (vector reads of B and of A's
  // transpose), the rest of each dimension's register bits at its top (strided copies).
  const int vn = std::min(2, rn), vm = std::min(2, rm);
  Layout l;
  l.shape = {m, n};
  for (int b = vn; b < bn - (rn - vn); ++b) l.threads.push_back({1, b});
  for (int b = vm; b < bm - (rm - vm); ++b) l.threads.push_back({0, b});
  while (static_cast<int>(l.threads.size()) < bt) l.threads.push_back({});
  for (int b = 0; b < vn; ++b) l.regs.push_back({1, b});
  for (int b = 0; b < vm; ++b) l.regs.push_back({0, b});
  for (int b = bn - (rn - vn); b < bn; ++b) l.regs.push_back({1, b});
  for (int b = bm - (rm - vm); b < bm; ++b) l.regs.push_back({0, b});
  return l;
}

MmaWarps mma_warps(int64_t m, int64_t n, int warps) {
  MmaWarps w;
  while (w.m * w.n < warps) {
    if (m / 16 / w.m >= n / 16 / w.n && w.m < m / 16)
      w.m *= 2;
    else
      w.n *= 2;
  }
  return w;
}

namespace {

/// Thread bits of a tensor-core layout: the lanes, then the warps along M (named by `wm`, or
/// nothing), then along N (`wn`).
std::vector<DimBit> mma_threads(const std::vector<DimBit>& lanes, MmaWarps w, int64_t threads,
                                DimBit wm, DimBit wn) {
  std::vector<DimBit> t = lanes;
  for (int b = 0; b < log2_exact(w.m); ++b)
    t.push_back(wm.none() ? DimBit{} : DimBit{wm.dim, wm.bit + b});
  for (int b = 0; b < log2_exact(w.n); ++b)
    t.push_back(wn.none() ? DimBit{} : DimBit{wn.dim, wn.bit + b});
  TESSERA_CHECK(static_cast<int64_t>(t.size()) == log2_exact(threads), "mma layout for ", threads,
                " threads with ", w.m, "x", w.n, " warps");
  return t;
}

/// Register bits `from`.. up to the dimension's top bit.
void repeat_bits(std::vector<DimBit>& regs, int dim, int from, int64_t size) {
  for (int b = from; b < log2_exact(size); ++b) regs.push_back({dim, b});
}

}  // namespace

Layout mma_acc_layout(int64_t m, int64_t n, MmaWarps w, int64_t threads) {
  Layout l;
  l.shape = {m, n};
  l.threads = mma_threads({{1, 1}, {1, 2}, {0, 0}, {0, 1}, {0, 2}}, w, threads, {0, 4}, {1, 3});
  l.regs = {{1, 0}, {0, 3}};
  repeat_bits(l.regs, 1, 3 + log2_exact(w.n), n);
  repeat_bits(l.regs, 0, 4 + log2_exact(w.m), m);
  l.check();
  return l;
}

Layout wgmma_acc_layout(int64_t m, int64_t n, const WgmmaTiling& t, int64_t threads) {
  Layout l;
  l.shape = {m, n};
  // Lanes: two column bits, three row bits; warps of the warpgroup: row bits 4, 5.
  l.threads = {{1, 1}, {1, 2}, {0, 0}, {0, 1}, {0, 2}, {0, 4}, {0, 5}};
  const int row_slab = 6 + log2_exact(t.wg_m);
  const int col_slab = log2_exact(t.instr_n) + log2_exact(t.reps_n);
  for (int b = 0; b < log2_exact(t.wg_m); ++b) l.threads.push_back({0, 6 + b});
  for (int b = 0; b < log2_exact(t.wg_n); ++b) l.threads.push_back({1, col_slab + b});
  while (static_cast<int64_t>(l.threads.size()) < log2_exact(threads)) l.threads.push_back({});
  l.regs = {{1, 0}, {0, 3}};
  for (int b = 3; b < log2_exact(t.instr_n); ++b) l.regs.push_back({1, b});
  for (int b = 0; b < log2_exact(t.reps_n); ++b) l.regs.push_back({1, log2_exact(t.instr_n) + b});
  for (int b = 0; b < log2_exact(t.reps_m); ++b) l.regs.push_back({0, row_slab + b});
  TESSERA_CHECK(int64_t{64} * t.wg_m * t.reps_m == m && int64_t{t.instr_n} * t.reps_n * t.wg_n == n,
                "wgmma tiling does not cover [", m, "x", n, "]");
  l.check();
  return l;
}

Layout wgmma_acc_t_layout(int64_t m, int64_t n, const WgmmaTiling& t, int64_t threads) {
  return permute(wgmma_acc_layout(n, m, t, threads), {1, 0});
}

Layout wgmma_a_regs_layout(int64_t m, int64_t k, const WgmmaTiling& t, int elem_bytes,
                           int64_t threads) {
  const int lp = log2_exact(4 / elem_bytes);  // log2 of the values per 32-bit register
  Layout l;
  l.shape = {m, k};
  // Lanes: two k bits above the register's values, three row bits; warps: row bits 4, 5.
  l.threads = {{1, lp}, {1, lp + 1}, {0, 0}, {0, 1}, {0, 2}, {0, 4}, {0, 5}};
  for (int b = 0; b < log2_exact(t.wg_m); ++b) l.threads.push_back({0, 6 + b});
  for (int b = 0; b < log2_exact(t.wg_n); ++b) l.threads.push_back({});
  while (static_cast<int64_t>(l.threads.size()) < log2_exact(threads)) l.threads.push_back({});
  // Value j: k bits from j % p, row bit 3 from j / p % 2, k bit lp + 2 from j / 2p.
  for (int b = 0; b < lp; ++b) l.regs.push_back({1, b});
  l.regs.push_back({0, 3});
  l.regs.push_back({1, lp + 2});
  for (int b = 0; b < log2_exact(t.reps_m); ++b) l.regs.push_back({0, 6 + log2_exact(t.wg_m) + b});
  for (int b = lp + 3; b < log2_exact(k); ++b) l.regs.push_back({1, b});
  TESSERA_CHECK(int64_t{64} * t.wg_m * t.reps_m == m && k % (8 << lp) == 0, "wgmma's A [", m, "x",
                k, "] does not fit the tiling");
  l.check();
  return l;
}

Layout wgmma_a_layout(int64_t m, int64_t k, const WgmmaTiling& t, int64_t threads) {
  TESSERA_CHECK(t.wg_n == 1, "wgmma's A from registers with warpgroups along N");
  return wgmma_acc_layout(m, k, {t.wg_m, 1, static_cast<int>(k), t.reps_m, 1}, threads);
}

Layout mma_a_layout(int64_t m, int64_t k, int per, MmaWarps w, int64_t threads) {
  const int pb = log2_exact(per);
  Layout l;
  l.shape = {m, k};
  l.threads = mma_threads({{1, pb}, {1, pb + 1}, {0, 0}, {0, 1}, {0, 2}}, w, threads, {0, 4}, {});
  for (int b = 0; b < pb; ++b) l.regs.push_back({1, b});
  l.regs.push_back({0, 3});
  l.regs.push_back({1, pb + 2});
  repeat_bits(l.regs, 0, 4 + log2_exact(w.m), m);
  repeat_bits(l.regs, 1, pb + 3, k);
  l.check();
  return l;
}

Layout mma_b_layout(int64_t k, int64_t n, int per, MmaWarps w, int64_t threads) {
  const int pb = log2_exact(per);
  Layout l;
  l.shape = {k, n};
  l.threads = mma_threads({{0, pb}, {0, pb + 1}, {1, 0}, {1, 1}, {1, 2}}, w, threads, {}, {1, 3});
  for (int b = 0; b < pb; ++b) l.regs.push_back({0, b});
  l.regs.push_back({0, pb + 2});
  repeat_bits(l.regs, 1, 3 + log2_exact(w.n), n);
  repeat_bits(l.regs, 0, pb + 3, k);
  l.check();
  return l;
}

}  // namespace tessera::lower

namespace tessera::lower {

Layout mat_layout(int64_t m, int64_t n, const MatTiling& t) {
  Layout l;
  l.shape = {m, n};
  l.mats = t;
  l.check();
  return l;
}

Layout mat_twin(const Layout& l, int64_t threads) {
  TESSERA_CHECK(l.mats.has_value(), "mat_twin of a linear layout: ", l.str());
  const MatTiling& t = *l.mats;
  const int mb = log2_exact(t.m), nb = log2_exact(t.n);
  const int per = log2_exact(std::max<int64_t>(1, t.m * t.n / t.lanes));  // elements per lane
  Layout out;
  out.shape = l.shape;
  int row = 0, col = 0;
  auto next_in_matrix = [&]() -> DimBit {
    if (col < nb) return {1, col++};
    if (row < mb) return {0, row++};
    return {};
  };
  const int vec = std::min(per, 2);  // up to 4 elements along a row per register run
  for (int i = 0; i < vec; ++i) out.regs.push_back(next_in_matrix());
  for (int i = 0; i < log2_exact(t.lanes); ++i) out.threads.push_back(next_in_matrix());
  for (int i = vec; i < per; ++i) out.regs.push_back(next_in_matrix());
  for (int i = 0; i < log2_exact(l.reps_n()); ++i) out.regs.push_back({1, nb + i});
  for (int i = 0; i < log2_exact(l.reps_m()); ++i) out.regs.push_back({0, mb + i});
  const int col_top = nb + log2_exact(l.reps_n()), row_top = mb + log2_exact(l.reps_m());
  for (int i = 0; i < log2_exact(t.wm); ++i) out.threads.push_back({0, row_top + i});
  for (int i = 0; i < log2_exact(t.wn); ++i) out.threads.push_back({1, col_top + i});
  while (static_cast<int64_t>(1) << out.threads.size() < threads) out.threads.push_back({});
  out.check();
  return out;
}

}  // namespace tessera::lower
