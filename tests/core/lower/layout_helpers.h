// \file Shared by the layout algebra tests: a sweep of layouts and reference checks written from
// the definitions in core/lower/layout.h (not from layout.cpp), each returning the first
// violation as text ("" when the layout satisfies it).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/lower/layout.h"

namespace layout_test {

using Coords = std::vector<int64_t>;
using tessera::ir::Shape;
using tessera::lower::Layout;

inline int bits_of(int64_t v) {
  return std::countr_zero(static_cast<uint64_t>(v));
}

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

/// Row-major index, written here so that linear_index() is checked rather than trusted.
inline int64_t row_major(const Shape& s, const Coords& c) {
  int64_t idx = 0, stride = 1;
  for (size_t d = s.size(); d-- > 0;) {
    idx += c[d] * stride;
    stride *= s[d];
  }
  return idx;
}

inline std::string coords_str(const Coords& c) {
  std::string s = "(";
  for (size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
  return s + ")";
}

inline std::string slot_str(int r, int64_t t) {
  return "reg " + std::to_string(r) + " thread " + std::to_string(t);
}

/// Every permutation of 0..rank-1, identity first.
inline std::vector<std::vector<int64_t>> permutations(int rank) {
  std::vector<int64_t> p(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) p[static_cast<size_t>(i)] = i;
  std::vector<std::vector<int64_t>> out;
  do out.push_back(p);
  while (std::next_permutation(p.begin(), p.end()));
  return out;
}

/// The tile shapes of the sweep: 1-D to 3-D, size-1 dims, tiles smaller and larger than every
/// thread count.
inline const std::vector<Shape>& sweep_shapes() {
  static const std::vector<Shape> shapes = {
      {1},       {2},        {32},       {256},       {4096},     {1, 1},
      {1, 64},   {64, 1},    {16, 16},   {8, 128},    {128, 32},  {2, 512},
      {2, 4, 8}, {1, 32, 8}, {8, 1, 16}, {4, 16, 32}, {16, 16, 1}};
  return shapes;
}

inline const std::vector<int64_t>& sweep_threads() {
  static const std::vector<int64_t> threads = {32, 64, 128, 256};
  return threads;
}

/// Blocked layouts over the sweep (every order, vec 1 and 4, 32 and 128 threads), dot layouts
/// and tensor-core layouts: the inputs of the relabeling tests.
inline std::vector<Layout> sample_layouts() {
  std::vector<Layout> out;
  for (const Shape& s : sweep_shapes())
    for (const auto& p : permutations(static_cast<int>(s.size())))
      for (int vec : {1, 4})
        for (int64_t threads : {32, 128}) {
          std::vector<int> order(p.begin(), p.end());
          out.push_back(tessera::lower::blocked(s, order, vec, threads));
        }
  for (int64_t threads : {32, 256}) {
    out.push_back(tessera::lower::dot_layout(64, 32, threads));
    out.push_back(tessera::lower::dot_layout(8, 8, threads));
  }
  for (int warps : {1, 4}) {
    tessera::lower::MmaWarps w = tessera::lower::mma_warps(64, 64, warps);
    out.push_back(tessera::lower::mma_acc_layout(64, 64, w, 32 * warps));
    out.push_back(tessera::lower::mma_a_layout(64, 32, 2, w, 32 * warps));
    out.push_back(tessera::lower::mma_b_layout(32, 64, 2, w, 32 * warps));
  }
  return out;
}

/// Checks, from the definitions: every coordinate is inside the shape; thread t is an owner
/// exactly when no lower thread holds the same elements; the owners hold each element exactly
/// once; every other thread holds, register by register, what its lowest copy holds.
inline std::string coverage_error(const Layout& l) {
  std::vector<int64_t> holder(static_cast<size_t>(numel(l.shape)), -1);  // lowest thread
  std::vector<int> owned(holder.size(), 0);
  std::map<std::vector<int64_t>, int64_t> first_with_set;  // element set -> lowest thread
  for (int64_t t = 0; t < l.num_threads(); ++t) {
    std::vector<int64_t> held;
    for (int r = 0; r < l.num_regs(); ++r) {
      Coords c = l.coords(r, t);
      if (c.size() != l.shape.size()) return "rank mismatch at " + slot_str(r, t);
      for (size_t d = 0; d < c.size(); ++d)
        if (c[d] < 0 || c[d] >= l.shape[d])
          return coords_str(c) + " outside the shape at " + slot_str(r, t);
      held.push_back(row_major(l.shape, c));
    }
    auto [it, fresh] = first_with_set.emplace(held, t);
    if (l.is_owner(t) != fresh)
      return "is_owner(" + std::to_string(t) + ") is " + (fresh ? "false" : "true") +
             ", but the lowest thread holding its elements is " + std::to_string(it->second);
    if (!fresh) continue;
    for (int64_t e : held) {
      if (holder[static_cast<size_t>(e)] >= 0 && holder[static_cast<size_t>(e)] != t)
        return "element " + std::to_string(e) + " owned by threads " +
               std::to_string(holder[static_cast<size_t>(e)]) + " and " + std::to_string(t);
      holder[static_cast<size_t>(e)] = t;
      owned[static_cast<size_t>(e)] += 1;
    }
  }
  for (size_t e = 0; e < owned.size(); ++e)
    if (owned[e] != 1)
      return "element " + std::to_string(e) + " held " + std::to_string(owned[e]) +
             " times by owners";
  return "";
}

/// coords(r, t) is the bitwise-disjoint sum of reg_coords(r) and thread_coords(t), and
/// reg_of(reg_coords(r)) gives r back.
inline std::string decomposition_error(const Layout& l) {
  for (int r = 0; r < l.num_regs(); ++r) {
    Coords rc = l.reg_coords(r);
    if (l.reg_of(rc) != r) return "reg_of(reg_coords(" + std::to_string(r) + ")) != r";
    for (int64_t t = 0; t < l.num_threads(); ++t) {
      Coords tc = l.thread_coords(t), c = l.coords(r, t);
      for (size_t d = 0; d < c.size(); ++d) {
        if (rc[d] & tc[d]) return "register and thread bits overlap at " + slot_str(r, t);
        if (c[d] != rc[d] + tc[d])
          return "coords != reg_coords + thread_coords at " + slot_str(r, t);
      }
    }
  }
  return "";
}

/// For every slot of `l`: `want(r, t)` (the expected coordinates) equals l.coords(r, t).
template <class F>
std::string coords_error(const Layout& l, F&& want) {
  for (int64_t t = 0; t < l.num_threads(); ++t)
    for (int r = 0; r < l.num_regs(); ++r) {
      Coords got = l.coords(r, t), expected = want(r, t);
      if (got != expected)
        return slot_str(r, t) + ": got " + coords_str(got) + ", want " + coords_str(expected);
    }
  return "";
}

}  // namespace layout_test
