// \file Kernel-language misuse is a tessera::Error of kind User whose message names the user's
// file:line, the op and the shapes; these tests assert the exact messages.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "core/lang/tl.h"
#include "core/lang/trace.h"
#include "core/support/error.h"
#include "tests/support/trace_errors.h"

namespace tl = tessera::tl;
using tessera::ErrorKind;

namespace {

int g_line = 0;  // set by each kernel on the line of its faulty call

std::string at(const std::string& rest) {
  return std::string(__FILE__) + ":" + std::to_string(g_line) + ": error: " + rest;
}

using tessera::test::trace_error;

void bad_arange(tl::ptr<float>) { g_line = __LINE__; tl::arange(0, 100); }
void bad_broadcast(tl::ptr<float>) { g_line = __LINE__; (void)(tl::arange(0, 64) + tl::arange(0, 32)); }
void bad_bitwise(tl::ptr<float> x) {
  auto v = tl::load(x + tl::arange(0, 16));
  g_line = __LINE__; (void)(v & v);
}
void bad_mask(tl::ptr<float> x) {
  auto offs = tl::arange(0, 128);
  g_line = __LINE__; (void)(tl::load(x + offs, tl::arange(0, 64) < 10));
}
void bad_mask_dtype(tl::ptr<float> x) {
  auto offs = tl::arange(0, 128);
  g_line = __LINE__; (void)(tl::load(x + offs, offs));
}
void bad_dot_inner(tl::ptr<float>) {
  auto a = tl::zeros<float>({64, 32});
  auto b = tl::zeros<float>({16, 64});
  g_line = __LINE__; (void)(tl::dot(a, b));
}
void bad_dot_dtype(tl::ptr<float>) {
  auto a = tl::zeros({16, 16}, tl::float16);
  auto b = tl::zeros<float>({16, 16});
  g_line = __LINE__; (void)(tl::dot(a, b));
}
void bad_store(tl::ptr<float>) {
  auto offs = tl::arange(0, 128);
  g_line = __LINE__; tl::store(offs, 1.0f);
}
void bad_loop_bound(tl::ptr<float>) {
  auto offs = tl::arange(0, 64);
  g_line = __LINE__; for (auto i : tl::range(0, offs)) (void)i;
}
void bad_if(tl::ptr<float>) {
  auto offs = tl::arange(0, 64);
  g_line = __LINE__; tl::if_(offs < 3, [] {});
}
void bad_carried_type(tl::ptr<float>, tl::i32 n) {
  auto acc = tl::zeros<float>({16});
  g_line = __LINE__; for (auto i : tl::range(0, n)) {
    (void)i;
    acc = acc.to(tl::float16);
  }
}
void bad_reshape(tl::ptr<float>) {
  auto offs = tl::arange(0, 64);
  g_line = __LINE__; (void)(tl::reshape(offs, {4, 8}));
}
void bad_ptr_float_offset(tl::ptr<float> x) {
  g_line = __LINE__; (void)(x + 1.5f);
}
void bad_math_on_int(tl::ptr<float>) {
  g_line = __LINE__; (void)(tl::exp(tl::arange(0, 16)));
}
void bad_cbrt_on_int(tl::ptr<float>) {
  g_line = __LINE__; (void)(tl::cbrt(tl::arange(0, 16)));
}
void bad_atan_on_int(tl::ptr<int>, tl::i32 n) {
  g_line = __LINE__; (void)(tl::atan(n));
}
void bad_pow_on_int(tl::ptr<float>, tl::i32 n) {
  g_line = __LINE__; (void)(tl::pow(tl::arange(0, 16), n));
}
void bad_break(tl::ptr<float>, tl::i32 n) {
  for (auto i : tl::range(0, n)) {
    (void)i;
    g_line = __LINE__ - 2;
    break;
  }
}
void bad_branch_only_one_side(tl::ptr<float>, tl::i32 n) {
  tl::tensor t;
  g_line = __LINE__; tl::if_(n > 0, [&] { t = tl::zeros<float>({16}); });
}

void bad_desc_rank(tl::ptr<float> x, tl::i32 n) {
  g_line = __LINE__; (void)tl::make_tensor_descriptor(x, {n, n}, {n}, {16, 16});
}
void bad_desc_block(tl::ptr<float> x, tl::i32 n) {
  g_line = __LINE__; (void)tl::make_tensor_descriptor(x, {n}, {1}, {12});
}
void bad_desc_base(tl::ptr<float> x, tl::i32 n) {
  g_line = __LINE__; (void)tl::make_tensor_descriptor(x + tl::arange(0, 16), {n}, {1}, {16});
}
void bad_desc_stride(tl::ptr<float> x, tl::i32 n) {
  g_line = __LINE__; (void)tl::make_tensor_descriptor(x, {n}, {1.5f}, {16});
}
void bad_desc_offsets(tl::ptr<float> x, tl::i32 n) {
  auto d = tl::make_tensor_descriptor(x, {n, n}, {n, 1}, {16, 16});
  g_line = __LINE__; (void)d.load({0});
}
void bad_desc_value(tl::ptr<float> x, tl::i32 n) {
  auto d = tl::make_tensor_descriptor(x, {n, n}, {n, 1}, {16, 16});
  g_line = __LINE__; d.store({0, 0}, tl::zeros<float>({32, 16}));
}

}  // namespace

/// Traces `fn` first (which sets g_line), then compares its error with the expected text.
#define CHECK_ERROR(fn, rest)             \
  do {                                    \
    std::string got = trace_error(fn);    \
    CHECK(got == at(std::string rest));   \
  } while (0)

TEST_CASE("lang errors: arange of a non-power-of-two length") {
  CHECK_ERROR(bad_arange, ("'arange': range [0, 100) has 100 elements, which is not a power of two"));
}

TEST_CASE("lang errors: operands that do not broadcast name both shapes") {
  CHECK_ERROR(bad_broadcast, ("'add': shapes [64] and [32] are not broadcastable"));
}

TEST_CASE("lang errors: bitwise ops need integers") {
  CHECK_ERROR(bad_bitwise, ("'and': operands must be integers, got f32"));
}

TEST_CASE("lang errors: a mask must have the pointer's shape and be i1") {
  CHECK_ERROR(bad_mask, ("'load': mask shape [64] does not match pointer shape [128]"));
  CHECK_ERROR(bad_mask_dtype, ("'load': the mask has type tile<128xi32>, expected i1 (a comparison)"));
}

TEST_CASE("lang errors: dot checks inner dimensions and dtypes") {
  CHECK_ERROR(bad_dot_inner, ("'dot': inner dimensions differ: lhs is [64, 32], rhs is [16, 64]"));
  CHECK_ERROR(bad_dot_dtype, ("'dot': operand dtypes differ: f16 and f32"));
}

TEST_CASE("lang errors: storing through a non-pointer") {
  CHECK_ERROR(bad_store, ("'store': the address operand has type tile<128xi32>, expected a pointer or a tile of "
           "pointers (e.g. x + offs)"));
}

TEST_CASE("lang errors: a tile used where a scalar is required") {
  CHECK_ERROR(bad_loop_bound, ("'for': the upper bound is a tile (tile<64xi32>) but must be a scalar"));
  CHECK_ERROR(bad_if, ("'if': the condition is a tile (tile<64xi1>) but must be a scalar"));
}

TEST_CASE("lang errors: a loop-carried variable may not change type") {
  CHECK_ERROR(bad_carried_type, ("'for': a carried variable changes type from tile<16xf32> to tile<16xf16>; convert it "
           "with .to() so both sides agree"));
}

TEST_CASE("lang errors: reshape keeps the element count, pointers take integer offsets, math needs floats") {
  CHECK_ERROR(bad_reshape, ("'reshape': cannot reshape [64] (64 elements) to [4, 8] (32 elements)"));
  CHECK_ERROR(bad_ptr_float_offset, ("'ptr_add': the offset must be an integer, got f32"));
  CHECK_ERROR(bad_math_on_int, ("'exp': expects a float operand, got tile<16xi32>; convert it with .to(tl::float32)"));
  CHECK_ERROR(bad_cbrt_on_int, ("'cbrt': expects a float operand, got tile<16xi32>; convert it with .to(tl::float32)"));
  CHECK_ERROR(bad_pow_on_int, ("'pow': expects float operands, got i32; convert them with .to(tl::float32)"));
  CHECK_ERROR(bad_atan_on_int, ("'atan': expects a float operand, got i32; convert it with .to(tl::float32)"));
}

TEST_CASE("lang errors: leaving an IR loop early is reported at the loop") {
  CHECK_ERROR(bad_break, ("'for': the loop body left early (break or return); IR loops run their body to the end: "
           "use tl::while_ with a condition instead"));
}

TEST_CASE("lang errors: a variable first assigned in one side of a branch") {
  CHECK_ERROR(bad_branch_only_one_side, ("'if': a variable with no value before the branch is assigned in only one of its sides; "
           "assign it in both, or give it a value before"));
}

TEST_CASE("lang errors: the kernel language outside a traced kernel") {
  try {
    tl::program_id(0);
    FAIL("expected an error");
  } catch (const tessera::Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    CHECK(std::string(e.what()).find("called outside a kernel being traced") != std::string::npos);
  }
}

namespace {

tl::tensor g_kept;  // a kernel value kept past its trace: every use below is a user error
const char* kStale =
    "a tl::tensor used outside the trace that made it (kept in a static, or captured from "
    "another kernel's trace, or used after its trace ended); make kernel values inside the "
    "kernel, and pass values between kernels through buffers";

void keeps_a_value(tl::ptr<float> x) {
  auto offs = tl::arange(0, 64);
  g_kept = offs;
  tl::store(x + offs, 1.0f);
}
void uses_kept_in_operator(tl::ptr<float>) { g_line = __LINE__; (void)(g_kept + 1); }
void uses_kept_in_sum(tl::ptr<float>) { g_line = __LINE__; (void)tl::sum(g_kept); }
void uses_kept_in_store(tl::ptr<float> x) { g_line = __LINE__; tl::store(g_kept, x); }
void uses_kept_as_pointer(tl::ptr<float>) { g_line = __LINE__; (void)tl::load(g_kept); }
void uses_kept_index(tl::ptr<float>) { g_line = __LINE__; (void)g_kept[{tl::_, tl::None}]; }

}  // namespace

TEST_CASE("lang errors: a tl::tensor kept from a finished trace is an error, not freed memory") {
  // The first trace's module is gone when trace_error returns; g_kept still points into it.
  CHECK(trace_error(keeps_a_value) == "");
  REQUIRE(g_kept.defined());
  CHECK_ERROR(uses_kept_in_operator, ("'tensor': " + std::string(kStale)));
  CHECK_ERROR(uses_kept_in_sum, ("'reduce': " + std::string(kStale)));
  CHECK_ERROR(uses_kept_in_store, ("'store': " + std::string(kStale)));
  CHECK_ERROR(uses_kept_as_pointer, ("'load': " + std::string(kStale)));
  CHECK_ERROR(uses_kept_index, ("'expand_dims': " + std::string(kStale)));
  // Outside every trace: asking its shape is the same error, without a line to name.
  try {
    (void)g_kept.shape();
    FAIL("expected an error");
  } catch (const tessera::Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    CHECK(std::string(e.what()) == "error: " + std::string(kStale));
  }
  g_kept = tl::tensor();
}

// --- limits (core/ir/limits.h) -----------------------------------------------------------------

namespace {

void huge_arange(tl::ptr<float>) { g_line = __LINE__; (void)tl::arange(0, 1 << 24); }
void largest_arange(tl::ptr<float> x) { auto o = tl::arange(0, 1 << 20); tl::store(x + o, 1.0f); }
void huge_broadcast(tl::ptr<float>) {
  auto a = tl::arange(0, 2048);
  auto b = tl::arange(0, 1024);
  g_line = __LINE__; (void)(a[{tl::_, tl::None}] + b[{tl::None, tl::_}]);
}
void huge_zeros(tl::ptr<float>) { g_line = __LINE__; (void)tl::zeros<float>({4096, 512}); }

int g_if_line = 0;
/// `depth` ifs inside one another around a store.
void nested_ifs(tl::ptr<float> x, tl::tensor& v, int depth) {
  if (depth == 0) {
    tl::store(x, v);
    return;
  }
  g_if_line = __LINE__; tl::if_(v > 0.0f, [&] { v += 1.0f; nested_ifs(x, v, depth - 1); });
}
void ifs_at_limit(tl::ptr<float> x) { auto v = tl::load(x); nested_ifs(x, v, 256); }
void ifs_over_limit(tl::ptr<float> x) { auto v = tl::load(x); nested_ifs(x, v, 10000); }
void loops_over_limit(tl::ptr<float> x) {
  auto v = tl::load(x);
  std::function<void(int)> nest = [&](int depth) {
    if (depth == 0) return tl::store(x, v);
    g_line = __LINE__; for (auto i : tl::range(0, 2)) { v += i.to(tl::float32); nest(depth - 1); }
  };
  nest(300);
}
void endless_loop(tl::ptr<float> x) {
  auto v = tl::load(x);
  for (int i = 0; i < 10000000; ++i) { g_line = __LINE__; v = v + 1.0f; }
  tl::store(x, v);
}

}  // namespace

TEST_CASE("lang limits: a tile over 2^20 elements is an error at its line") {
  CHECK_ERROR(huge_arange, ("'arange': a tile of shape [16777216] is over the limit of 1048576 (2^20) "
                            "elements per tile"));
  CHECK(trace_error(largest_arange) == "");
  CHECK_ERROR(huge_broadcast, ("'add': a tile of shape [2048, 1024] is over the limit of 1048576 (2^20) "
                               "elements per tile"));
  CHECK_ERROR(huge_zeros, ("'full': a tile of shape [4096, 512] is over the limit of 1048576 (2^20) "
                           "elements per tile"));
}

TEST_CASE("lang limits: regions nest 256 deep at most") {
  CHECK(trace_error(ifs_at_limit) == "");
  g_line = g_if_line;  // the innermost if_ is the 257th
  CHECK_ERROR(ifs_over_limit, ("'if': regions nested 257 deep, over the limit of 256 (for, if, while "
                               "and combine functions inside one another)"));
  CHECK_ERROR(loops_over_limit, ("'for': regions nested 257 deep, over the limit of 256 (for, if, "
                                 "while and combine functions inside one another)"));
}

TEST_CASE("lang limits: a kernel traces 200000 operations at most") {
  CHECK_ERROR(endless_loop, ("'kernel': more than 200000 operations traced, the limit of one kernel (a "
                             "C++ loop that never ends? tl::range makes an IR loop, traced once)"));
}

TEST_CASE("lang errors: tensor descriptors name the parameter that is wrong") {
  CHECK_ERROR(bad_desc_rank, ("'make_tensor_descriptor': shape, strides and block_shape need one "
                              "entry per dimension; got 2, 1 and 2"));
  CHECK_ERROR(bad_desc_block, ("'make_tensor_descriptor': shape [12] has a dimension that is not a "
                               "power of two (12)"));
  CHECK_ERROR(bad_desc_base, ("'make_tensor_descriptor': the base is a tile of pointers "
                              "(tile<16xptr<f32>>), expected one pointer"));
  CHECK_ERROR(bad_desc_stride, ("'make_tensor_descriptor': strides[0] has type f32, expected an "
                                "integer scalar"));
  CHECK_ERROR(bad_desc_offsets, ("'desc_load': the descriptor has 2 dimensions; got 1 offsets"));
  CHECK_ERROR(bad_desc_value, ("'desc_store': value shape [32, 16] does not match the block shape "
                               "[16, 16]"));
}
