// \file Shared by the axis-info tests: a kernel parsed from text with its AxisInfoMap (values
// looked up by their names in the text), and an independent check of the claims on concrete values.
#pragma once

#include <doctest/doctest.h>

#include <bit>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/ir.h"
#include "core/ir/parser.h"
#include "core/ir/verifier.h"
#include "core/lower/axis_info.h"

namespace axis_test {

namespace ir = tessera::ir;
using tessera::lower::AxisInfo;
using tessera::lower::AxisInfoMap;
using tessera::lower::pow2_divisor;
using Ints = std::vector<int64_t>;

/// A parsed, verified kernel and its axis info, with values looked up by their name in the text.
class Analysis {
 public:
  explicit Analysis(std::string text) : text_(std::move(text)) {
    module_ = ir::parse(text_, "axis_info_test");
    std::vector<std::string> errors = ir::verify_all(*module_);
    INFO(text_);
    REQUIRE(errors.empty());
    map_ = std::make_unique<AxisInfoMap>(module_->kernel());
  }

  /// The info of `%name`: a parameter, or a result of the op whose text defines it.
  const AxisInfo& operator[](std::string_view name) const { return map_->get(value(name)); }

  const ir::Value* value(std::string_view name) const {
    for (const ir::Param& p : module_->kernel().params)
      if ("%" + p.name == name) return p.value;
    uint32_t line = 0;
    size_t index = 0;
    size_t start = 0;
    for (uint32_t n = 1; start <= text_.size() && !line; ++n) {
      size_t end = text_.find('\n', start);
      std::string_view l = std::string_view(text_).substr(
          start, end == std::string::npos ? std::string::npos : end - start);
      size_t eq = l.find(" = ");
      if (eq != std::string_view::npos && l.find('%') < eq) {
        std::string_view lhs = l.substr(0, eq);
        size_t i = 0;
        for (size_t pos = lhs.find('%'); pos != std::string_view::npos;
             pos = lhs.find('%', pos + 1), ++i) {
          size_t stop = lhs.find_first_of(", ", pos);
          if (lhs.substr(pos, stop == std::string_view::npos ? std::string_view::npos
                                                             : stop - pos) == name) {
            line = n;
            index = i;
          }
        }
      }
      if (end == std::string::npos) break;
      start = end + 1;
    }
    const ir::Value* found = nullptr;
    ir::walk(module_->kernel().body, [&](ir::Op* op) {
      if (op->loc.line == line && index < op->results.size()) found = op->result(index);
    });
    INFO("no value " << name);
    REQUIRE(found);
    return found;
  }

 private:
  std::string text_;
  std::unique_ptr<ir::Module> module_;
  std::unique_ptr<AxisInfoMap> map_;
};

inline AxisInfo info(Ints contiguity, Ints divisibility, Ints constancy) {
  return AxisInfo{std::move(contiguity), std::move(divisibility), std::move(constancy)};
}

inline std::string str(const AxisInfo& a) {
  auto list = [](const Ints& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  return "contiguity " + list(a.contiguity) + " divisibility " + list(a.divisibility) +
         " constancy " + list(a.constancy);
}

/// What axis_info.h promises, checked on `values` (row-major, of `shape`; {} for a scalar):
/// along each dim d, runs of contiguity[d] elements, aligned to that many positions, step by
/// `step` (1 for integers, the element size for pointers given as byte addresses), each run's
/// first element is a multiple of divisibility[d], and aligned runs of constancy[d] are equal.
inline std::string broken_claim(const AxisInfo& a, Ints shape, const Ints& values,
                                int64_t step = 1) {
  if (shape.empty()) shape = {1};
  int64_t numel = 1;
  for (int64_t n : shape) numel *= n;
  if (static_cast<int64_t>(values.size()) != numel)
    return "test error: values do not fit the shape";
  if (a.contiguity.size() != shape.size() || a.divisibility.size() != shape.size() ||
      a.constancy.size() != shape.size())
    return "one entry per dimension expected";
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t n = shape[d], c = a.contiguity[d], q = a.divisibility[d], s = a.constancy[d];
    if (!std::has_single_bit(static_cast<uint64_t>(c)) ||
        !std::has_single_bit(static_cast<uint64_t>(q)) ||
        !std::has_single_bit(static_cast<uint64_t>(s)))
      return "dim " + std::to_string(d) + ": not powers of two";
    if (c > n || s > n) return "dim " + std::to_string(d) + ": a run longer than the dimension";
    int64_t stride = 1;
    for (size_t e = d + 1; e < shape.size(); ++e) stride *= shape[e];
    for (size_t first = 0; first < values.size(); ++first) {
      const int64_t i = static_cast<int64_t>(first) / stride % n;  // position along d
      const int64_t v = values[first];
      const std::string at = "dim " + std::to_string(d) + " element " + std::to_string(first);
      if (i % c == 0 && v % q != 0)
        return at + ": run start " + std::to_string(v) + " not a multiple of " + std::to_string(q);
      if (i % c != 0 && v != values[first - static_cast<size_t>(stride)] + step)
        return at + ": run not consecutive";
      if (i % s != 0 && v != values[first - static_cast<size_t>(stride)])
        return at + ": run not constant";
    }
  }
  return "";
}

/// broken_claim, with the info in front of the violation (for doctest's expansion).
inline std::string claims(const AxisInfo& a, Ints shape, const Ints& values, int64_t step = 1) {
  std::string broken = broken_claim(a, std::move(shape), values, step);
  return broken.empty() ? "" : str(a) + ": " + broken;
}

/// Row-major values of a tile of `shape` from f(i, j) (1-D: f(i, 0)).
template <class F>
Ints tile(const Ints& shape, F&& f) {
  Ints v;
  const int64_t rows = shape[0], cols = shape.size() > 1 ? shape[1] : 1;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) v.push_back(f(i, j));
  return v;
}

}  // namespace axis_test

namespace doctest {
template <>
struct StringMaker<tessera::lower::AxisInfo> {
  static String convert(const tessera::lower::AxisInfo& a) { return axis_test::str(a).c_str(); }
};
}  // namespace doctest
