/// \file Internal to the verifier: the per-op diagnostic context and the per-family checks that
/// verifier.cpp dispatches to (verifier_ops.cpp, verifier_elementwise.cpp, verifier_reduce.cpp,
/// verifier_control.cpp, verifier_simt.cpp).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../support/error.h"
#include "ir.h"
#include "ops.h"
#include "simt.h"

namespace tessera::ir::verifier_detail {

/// "(i32, tile<4xf32>)".
std::string types_str(const std::vector<Type>& types);
std::vector<Type> types_of(const std::vector<Value*>& values);
/// Every dimension positive and a power of two.
bool is_valid_shape(const Shape& shape);

/// What the ops of a SIMT function may refer to.
struct SimtContext {
  /// The declared shared buffers by number; nullopt for one whose attribute is malformed (already
  /// reported, so uses of it are not checked further).
  std::map<int64_t, std::optional<SharedBuffer>> buffers;
  /// The function's subgroup size; nullopt when the attribute is missing or malformed.
  std::optional<int64_t> subgroup;
  /// The function's thread count; nullopt when the attribute is missing or malformed.
  std::optional<int64_t> threads;
  /// The declared TMA tensor maps by number; nullopt for one whose attribute is malformed.
  std::map<int64_t, std::optional<TensorMapParam>> maps;
  /// The function's `maxnreg` (registers per thread at launch); 0 when absent.
  int64_t maxnreg = 0;
  /// The function's `cluster` (programs per thread-block cluster); 0 when absent.
  int64_t cluster = 0;
};

/// The checks of one op: typed access to its operands and attributes, and one way to report.
/// The structural checks have passed when a family check runs: the operand, result and region
/// counts match ops.def (fixed counts) and no operand is null.
class OpChecker {
 public:
  OpChecker(const Op& op, std::vector<std::string>& diags, const SimtContext* simt = nullptr)
      : op(op), simt(simt), diags_(diags) {}

  const Op& op;
  const SimtContext* simt;  ///< the function's, if it is a SIMT function; null in the tile IR
  const Type& in(size_t i) const { return op.operands[i]->type; }
  const Type& out(size_t i = 0) const { return op.results[i]->type; }
  size_t num_in() const { return op.operands.size(); }

  /// Records "<loc>: error: '<op>' op <parts...>" and returns false.
  template <class... Args>
  bool fail(const Args&... parts) {
    diags_.push_back(detail::concat(op.loc.str(), ": error: '", op.name(), "' op ", parts...));
    failed_ = true;
    return false;
  }
  bool failed() const { return failed_; }

  /// A required integer attribute; reports it missing or of another kind.
  std::optional<int64_t> int_attr(std::string_view name);
  /// An optional integer attribute that must be 0 or 1 (a flag).
  bool flag_attr(std::string_view name);
  /// An integer attribute in [lo, hi].
  std::optional<int64_t> int_attr_in(std::string_view name, int64_t lo, int64_t hi);
  /// `axis` in [0, rank).
  std::optional<int> axis_attr(int rank);
  /// A string attribute (required or not) that `parse` accepts; `choices` lists the spellings.
  template <class E>
  std::optional<E> enum_attr(std::string_view name, bool (*parse)(std::string_view, E*),
                             std::string_view choices, bool required) {
    const std::string* s = str_attr(name, required);
    E value{};
    if (!s) return std::nullopt;
    if (parse(*s, &value)) return value;
    fail("expects attribute '", name, "' to be one of ", choices, "; got \"", *s, "\"");
    return std::nullopt;
  }
  /// A string attribute; null when absent (reported if required) or of another kind (reported).
  const std::string* str_attr(std::string_view name, bool required);
  /// A required integer-list attribute.
  const std::vector<int64_t>* ints_attr(std::string_view name);

  /// Reports unless got == want: "expects <what> of type <want><note>, got <got>".
  bool expect_type(std::string_view what, const Type& got, const Type& want,
                   std::string_view note = "");
  /// Reports unless the lists match: "expects <what> (<want...>), got (<got...>)".
  bool expect_types(std::string_view what, const std::vector<Type>& got,
                    const std::vector<Type>& want);
  /// All operands in [first, num_in()) have the type of operand `first`.
  bool expect_same_operand_types(size_t first = 0);
  /// A pointer or a tile of pointers at operand `i`.
  bool expect_pointer(size_t i);
  /// The number of results, for kinds whose result count is variadic in ops.def.
  bool expect_num_results(size_t n, std::string_view why);

 private:
  std::vector<std::string>& diags_;
  bool failed_ = false;
};

/// The `values` attribute of an assert (0 to kMaxAssertValues; 0 when absent, reported when
/// out of range).
inline int64_t assert_values(OpChecker& c) {
  return c.op.find_attr(attr::kValues)
             ? c.int_attr_in(attr::kValues, 0, kMaxAssertValues).value_or(0)
             : 0;
}

// One function per op family; each switches on the kinds it owns.
void check_identity_or_construction(OpChecker& c);  // verifier_ops.cpp
void check_hint_or_debug(OpChecker& c);             // verifier_ops.cpp
void check_elementwise(OpChecker& c);               // verifier_elementwise.cpp
void check_memory(OpChecker& c);                    // verifier_elementwise.cpp
/// The optional `nan` attribute of min, max, reduce and scan: "propagate" or "ignore".
void check_nan_attr(OpChecker& c);        // verifier_elementwise.cpp
void check_reduction(OpChecker& c);       // verifier_reduce.cpp
void check_control(OpChecker& c);         // verifier_control.cpp
void check_simt(OpChecker& c);            // verifier_simt.cpp: the kSimt kinds
void check_simt_debug(OpChecker& c);      // verifier_simt.cpp: SIMT print, assert
void check_wgmma_family(OpChecker& c);    // verifier_wgmma.cpp
void check_coopmat_family(OpChecker& c);  // verifier_coopmat.cpp
void check_inline_asm(OpChecker& c);      // verifier_inline_asm.cpp
void check_tma_family(OpChecker& c);      // verifier_tma.cpp
/// The `tensor_map_<i>` attributes of SIMT function `fn`: text, parameters, dense numbering
/// (verifier_tma.cpp). Reports through `fail` ("(SIMT) expects ...").
std::map<int64_t, std::optional<TensorMapParam>> check_tensor_maps(
    const Function& fn, const std::function<void(const std::string&)>& fail);
/// In a SIMT function: an operand that a wgmma defines is read only by a wgmma (as C), a
/// wgmma_wait or a yield (verifier_wgmma.cpp).
void check_async_operands(OpChecker& c);
/// The shared buffer named by the integer attribute `name` (verifier_simt.cpp); null (reported)
/// when it names none.
const SharedBuffer* buffer_attr(OpChecker& c, std::string_view name = attr::kBuffer);

/// The function attributes: sorted; `stage` absent or "simt"; a SIMT function's threads,
/// subgroup, target and shared buffers (verifier_simt.cpp). Returns the context of a SIMT
/// function, nullopt for a tile function. Diagnostics read "<loc>: error: function '<name>' ...".
std::optional<SimtContext> check_function_attrs(const Function& fn,
                                                std::vector<std::string>& diags);
/// The op belongs to the function's stage (no kTileOnly op in a SIMT function, no kSimt op in a
/// tile function) and, in a SIMT function, its results and region arguments are scalars or
/// pointers (verifier_simt.cpp). False if the op's typing rules must not run.
bool check_stage(OpChecker& c);

/// Every region of a `for`/`if`/`while`/`reduce_generic`/`scan_generic` ends in the terminator
/// its op expects (verifier_control.cpp).
void check_terminators(OpChecker& c);

}  // namespace tessera::ir::verifier_detail
