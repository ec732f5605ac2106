/// \file tl::range: an IR `for` loop written as a C++ range-based for.
///
/// `begin()` opens the loop: every live variable becomes an iteration argument of a new body
/// region, the iterator yields the induction variable once, and `++` closes the loop: variables
/// whose value changed are carried (yielded, and set to the loop's results afterwards); the others
/// are folded back to their value before the loop.
#pragma once

#include <source_location>
#include <vector>

#include "../ir/ir.h"
#include "tensor.h"

namespace tessera::tl {

/// The loop tl::range makes; iterate over it once with a range-based `for` (it is neither copied
/// nor reused).
class Range {
 public:
  /// A loop from `lo` to `hi` (exclusive) by `step`, i32 or i64 scalars of the active trace;
  /// `attrs` go onto the `for` op (tl::RangeOptions).
  Range(ir::Value* lo, ir::Value* hi, ir::Value* step, std::source_location loc,
        std::vector<ir::Attribute> attrs = {});
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
  ~Range();

  /// Visits the body once: `*it` is the induction variable, `++it` closes the loop.
  class iterator {
   public:
    tensor operator*() const;  ///< the induction variable, a scalar of the bounds' dtype
    iterator& operator++();    ///< closes the loop body (the loop is traced once)
    /// False once the body has been traced.
    bool operator!=(const iterator& other) const { return done_ != other.done_; }

   private:
    friend class Range;
    iterator(Range* range, bool done) : range_(range), done_(done) {}
    Range* range_;
    bool done_;
  };

  iterator begin();  ///< opens the loop: live variables become its iteration arguments
  iterator end() { return iterator(this, true); }  ///< the end of the one-pass iteration

 private:
  void open();
  void close();

  ir::Value* lo_;
  ir::Value* hi_;
  ir::Value* step_;
  std::source_location loc_;
  std::vector<ir::Attribute> attrs_;  // the loop's options
  bool opened_ = false;
  bool closed_ = false;
  ir::Region* outer_ = nullptr;
  ir::Region* body_ = nullptr;
  std::vector<tensor*> vars_;        // captured variables (null once destroyed)
  std::vector<ir::Value*> inits_;    // their values before the loop
  std::vector<tensor*> unset_vars_;  // live variables without a value at the start
};

}  // namespace tessera::tl
