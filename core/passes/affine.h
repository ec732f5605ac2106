/// \file Affine forms of 32-bit integer values and of addresses, over the scalars a function
/// knows before one of its top-level ops, and the run-time tests built from them: how remainder
/// versioning (rem_version.h) and single-trip versioning (single_trip.h) prove a fact for a copy
/// of the code that follows.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/ir/builder.h"
#include "core/ir/ir.h"

namespace tessera::passes {

/// Coefficients and ranges past these are not analysed, so that every sum a test builds stays
/// exact in 64 bits (32-bit scalars times at most 2^24, a few of them, plus ranges of 2^40).
constexpr int64_t kMaxCoefficient = int64_t{1} << 24;
constexpr int64_t kMaxRange = int64_t{1} << 40;
constexpr size_t kMaxTerms = 16;

/// An integer value, element by element, as sum_i coeff_i * scalar_i + an offset in [lo, hi]:
/// the scalars are uniform (one value for the whole tile), the offset is what index tiles add.
struct Affine {
  std::vector<std::pair<ir::Value*, int64_t>> terms;
  int64_t lo = 0, hi = 0;

  static Affine scalar(ir::Value* v) { return Affine{{{v, 1}}, 0, 0}; }
  static Affine range(int64_t lo, int64_t hi) { return Affine{{}, lo, hi}; }

  bool is_constant() const { return terms.empty() && lo == hi; }
  bool bounded() const;
  /// this += sign * o (both bounded, so nothing overflows).
  void add(const Affine& o, int64_t sign);
  /// this *= c (|c| <= kMaxCoefficient, this bounded); false (this unusable) where a product
  /// leaves 64 bits.
  bool scale(int64_t c);
  bool operator==(const Affine&) const = default;
};

/// The address of each element of a pointer value: a scalar pointer known before the split plus
/// signed 32-bit offsets (the `ptr_add`s on the way), each in units of its pointer's element.
struct Address {
  ir::Value* base = nullptr;
  std::vector<std::pair<Affine, int64_t>> offsets;  ///< (offset in elements, bytes per element)
  bool operator==(const Address&) const = default;
};

/// One function's analysis: which top-level ops come before the split, and the forms.
class AffineAnalysis {
 public:
  AffineAnalysis(const ir::Function& fn, size_t split);

  /// Reads `v` as `as` wherever the analysis meets it (a single-trip loop's induction variable
  /// as its lower bound); `as` must be known before the split.
  void substitute(const ir::Value* v, ir::Value* as) { subst_[v] = as; }

  /// `v` (signed 32-bit) as an affine form over scalars known before the split, or none.
  std::optional<Affine> affine(ir::Value* v, int depth = 0) const;
  /// The addresses of pointer value `v` (scalar or tile), or none.
  std::optional<Address> address(ir::Value* v, int depth = 0) const;

 private:
  /// A scalar the test can read before the split: a parameter or a top-level op's result there.
  bool available(const ir::Value* v) const;
  ir::Value* read(ir::Value* v) const;

  const ir::Function& fn_;
  std::unordered_set<const ir::Op*> before_;
  std::unordered_map<const ir::Value*, ir::Value*> subst_;
};

/// Builds a run-time test, a conjunction of facts about forms, in 64-bit arithmetic at the
/// builder's insertion point (before the split), each scalar widened once.
class TestBuilder {
 public:
  explicit TestBuilder(ir::Builder& b) : b_(b) {}

  /// Can disjoint() test `a`: bounded offsets of elements up to 16 bytes, few enough scalar
  /// terms that its sums stay inside 64 bits?
  static bool testable(const Address& a);

  /// Every element of `a` lies in [lo, hi].
  void in_range(const Affine& a, int64_t lo, int64_t hi);
  /// The `a_bytes` bytes at each address of `a` and the `b_bytes` at each address of `b` do not
  /// overlap; also that each offset is exact in 32 bits (in_range). False, adding nothing, where
  /// the sums could leave 64 bits.
  bool disjoint(const Address& a, int64_t a_bytes, const Address& b, int64_t b_bytes);

  /// The conjunction; null when nothing was added.
  ir::Value* result() const { return test_; }

 private:
  ir::Value* constant(int64_t x);
  ir::Value* wide(ir::Value* v);
  /// sum coeff * scalar + offset in 64 bits.
  ir::Value* bound(const Affine& a, int64_t offset);
  /// The byte address of each element's first byte plus `extra`, at each offset's low or high end.
  ir::Value* edge(const Address& a, bool high, int64_t extra);
  void both(ir::Value* t);

  ir::Builder& b_;
  ir::Value* test_ = nullptr;
  std::unordered_map<const ir::Value*, ir::Value*> wide_;
  std::vector<std::tuple<Affine, int64_t, int64_t>> tested_;  ///< in_range's facts so far
};

/// Copies `op` (with its regions) as a new op in no region yet: operands found in `map` become
/// their copies, the others stay; the copy's results and region arguments enter `map`.
ir::Op* clone_op(ir::Module& m, const ir::Op& op,
                 std::unordered_map<const ir::Value*, ir::Value*>& map);

/// Rewrites `fn`'s body from top-level op `split` to its end into `if (test) { a copy } else {
/// as written }`, `test` built by `make_test` before the split; returns the map from the tail's
/// values to the copy's.
template <class MakeTest>
std::unordered_map<const ir::Value*, ir::Value*> version_tail(ir::Module& m, ir::Function& fn,
                                                              size_t split, MakeTest&& make_test);
/// The same with the test built: `first` is the op the split was at.
std::unordered_map<const ir::Value*, ir::Value*> version_tail_with(ir::Module& m, ir::Function& fn,
                                                                   ir::Op* first, ir::Value* test);

template <class MakeTest>
std::unordered_map<const ir::Value*, ir::Value*> version_tail(ir::Module& m, ir::Function& fn,
                                                              size_t split, MakeTest&& make_test) {
  ir::Op* first = fn.body->ops[split];
  ir::Builder b(m);
  b.set_insertion_before(first);
  b.set_loc(first->loc);
  ir::Value* test = make_test(b);
  return version_tail_with(m, fn, first, test);
}

}  // namespace tessera::passes
