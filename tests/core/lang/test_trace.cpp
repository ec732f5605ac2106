// \file Tracing the seed kernels: op structure, loop-carried variables, branch results.
#include <doctest/doctest.h>

#include <string>

#include "core/ir/ops.h"
#include "core/lang/tl.h"
#include "core/lang/trace.h"

namespace tl = tessera::tl;
using tessera::ir::OpKind;

namespace {

int count_ops(tessera::ir::Region* r, OpKind kind) {
  int n = 0;
  tessera::ir::walk(r, [&](tessera::ir::Op* op) { n += op->kind == kind; });
  return n;
}

tessera::ir::Op* first_op(tessera::ir::Region* r, OpKind kind) {
  tessera::ir::Op* found = nullptr;
  tessera::ir::walk(r, [&](tessera::ir::Op* op) {
    if (!found && op->kind == kind) found = op;
  });
  return found;
}

template <class... P>
std::unique_ptr<tessera::ir::Module> trace_with(void (*fn)(P...), std::vector<tl::ArgSpec> specs) {
  std::vector<std::string> names;
  for (size_t i = 0; i < specs.size(); ++i) names.push_back("p" + std::to_string(i));
  return tl::trace(fn, "k", names, specs);
}

tl::ArgSpec f32_ptr() {
  return {tessera::ir::DType::f32};
}
tl::ArgSpec i32_scalar() {
  return {tessera::ir::DType::i32};
}
tl::ArgSpec constant(int64_t v) {
  tl::ArgSpec s;
  s.value.i = v;
  return s;
}

void gelu_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, int BLOCK) {
  auto pid = tl::program_id(0);
  auto offs = pid * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  auto v = tl::load(x + offs, mask);
  auto a = 0.79788456f * (v + 0.044715f * v * v * v);
  auto e = tl::exp(2.0f * a);
  tl::store(y + offs, 0.5f * v * (1.0f + (e - 1.0f) / (e + 1.0f)), mask);
}

void row_sum_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, int BLOCK) {
  auto row = tl::program_id(0);
  auto acc = tl::zeros<float>({BLOCK});
  for (auto start : tl::range(0, n, BLOCK)) {
    auto cols = start + tl::arange(0, BLOCK);
    acc += tl::load(x + row * n + cols, cols < n, 0.0f);
  }
  tl::store(out + row, tl::sum(acc, 0));
}

void desc_kernel(tl::ptr<tessera::half> x, tl::i32 m, tl::i64 n) {
  auto a = tl::make_tensor_descriptor(x, {m, m}, {m, 1}, {32, 16});
  auto b = tl::make_tensor_descriptor(x, {m, n}, {m, 1}, {32, 16});
  a.store({1, 2}, a.load({tl::program_id(0), 0}) + 1);
  (void)b.load({0, 0});
}

/// Triton's defaults: min/max ignore NaN, tl.max of f16 is f32, tl.max of i8 is i32.
void defaults_kernel(tl::ptr<tessera::half> x, tl::ptr<int8_t> y, tl::ptr<float> out) {
  auto h = tl::load(x + tl::arange(0, 16));
  auto b = tl::load(y + tl::arange(0, 16));
  auto hi = tl::maximum(tl::max(h, 0), 0.0f);  // one statement each: a fixed order of ops
  auto lo = tl::minimum(tl::min(h, 0, false, tl::PropagateNan::All), 1.0f, tl::PropagateNan::All);
  auto bi = tl::max(b, 0).to(tessera::ir::DType::f32);
  auto q = tl::truediv(tl::max(b, 0), 3);
  tl::store(out, hi + lo + bi + q);
}

}  // namespace

TEST_CASE("trace: min/max default to Triton's NaN rule and dtypes, PropagateNan::All stays") {
  auto m =
      trace_with(defaults_kernel, {{tessera::ir::DType::f16}, {tessera::ir::DType::i8}, f32_ptr()});
  std::vector<std::string> seen;
  tessera::ir::walk(m->kernel().body, [&](tessera::ir::Op* op) {
    if (op->kind != OpKind::Reduce && op->kind != OpKind::Max && op->kind != OpKind::Min) return;
    seen.push_back(std::string(op->name()) + " " + op->operand(0)->type.str() + " -> " +
                   op->result()->type.str() + " " + op->str_attr_or("nan", "-"));
  });
  const std::vector<std::string> want = {
      "reduce tile<16xf32> -> f32 ignore",  // tl::max(h): h widened to f32 first
      "max f32 -> f32 ignore",              // tl::maximum(.., 0.0f)
      "reduce tile<16xf32> -> f32 -",       // tl::min(h, .., All): the IR's default
      "min f32 -> f32 -",                   // tl::minimum(.., All)
      "reduce tile<16xi32> -> i32 -",       // tl::max(b): i8 widened to i32, no NaN rule
      "reduce tile<16xi32> -> i32 -"};
  std::string all;
  for (const std::string& s : seen) all += s + "; ";
  CAPTURE(all);
  CHECK(seen == want);
  int fdivs = 0;
  tessera::ir::walk(m->kernel().body, [&](tessera::ir::Op* op) {
    if (op->kind == OpKind::Div) fdivs += op->result()->type.dtype == tessera::ir::DType::f32;
  });
  CHECK(fdivs == 1);  // truediv of i32 by an int is an f32 division
}

TEST_CASE("trace: tensor descriptors are desc_load and desc_store in their index dtype") {
  auto m =
      trace_with(desc_kernel, {{tessera::ir::DType::f16}, i32_scalar(), {tessera::ir::DType::i64}});
  auto* body = m->kernel().body;
  REQUIRE(count_ops(body, OpKind::DescLoad) == 2);
  REQUIRE(count_ops(body, OpKind::DescStore) == 1);
  auto* load = first_op(body, OpKind::DescLoad);
  CHECK(load->result()->type.str() == "tile<32x16xf16>");
  CHECK(load->operands.size() == 7);  // base, 2 dims, 2 strides, 2 offsets
  CHECK(load->operand(1)->type.str() == "i32");
  auto* store = first_op(body, OpKind::DescStore);
  CHECK(store->operands.back()->type.str() == "tile<32x16xf16>");  // converted back to f16
  // The second descriptor's n is i64: every index of its access is i64.
  const tessera::ir::Op* wide = nullptr;
  tessera::ir::walk(body, [&](tessera::ir::Op* op) {
    if (op->kind == OpKind::DescLoad && op != load) wide = op;
  });
  REQUIRE(wide != nullptr);
  for (size_t i = 1; i < wide->operands.size(); ++i) CHECK(wide->operand(i)->type.str() == "i64");
}

TEST_CASE("trace: gelu has one load, one store and f32 tiles of BLOCK elements") {
  auto m = trace_with(gelu_kernel, {f32_ptr(), f32_ptr(), i32_scalar(), constant(128)});
  auto* body = m->kernel().body;
  CHECK(m->kernel().params.size() == 3);
  CHECK(count_ops(body, OpKind::Load) == 1);
  CHECK(count_ops(body, OpKind::Store) == 1);
  CHECK(count_ops(body, OpKind::Exp) == 1);
  auto* load = first_op(body, OpKind::Load);
  CHECK(load->result()->type.str() == "tile<128xf32>");
  CHECK(load->loc.line > 0);
}

TEST_CASE("trace: operators record the user's line") {
  auto m = trace_with(gelu_kernel, {f32_ptr(), f32_ptr(), i32_scalar(), constant(128)});
  auto* cmp = first_op(m->kernel().body, OpKind::CmpLt);
  REQUIRE(cmp);
  CHECK(std::string(cmp->loc.file) == __FILE__);
  // `auto mask = offs < n;` is three lines below `gelu_kernel`'s pid line.
  auto* pid = first_op(m->kernel().body, OpKind::ProgramId);
  CHECK(cmp->loc.line == pid->loc.line + 2);
}

TEST_CASE("trace: row_sum's accumulator is carried by the loop, other variables are not") {
  auto m = trace_with(row_sum_kernel, {f32_ptr(), f32_ptr(), i32_scalar(), constant(256)});
  auto* loop = first_op(m->kernel().body, OpKind::For);
  REQUIRE(loop);
  tessera::ir::ForOp f(loop);
  CHECK(f.inits().size() == 1);
  CHECK(loop->results.size() == 1);
  CHECK(loop->result()->type.str() == "tile<256xf32>");
  CHECK(f.body()->args.size() == 2);
  auto* reduce = first_op(m->kernel().body, OpKind::Reduce);
  CHECK(reduce->operand(0) == loop->result());
}

namespace {

void not_and_reassign(tl::ptr<float> x, tl::i32 n) {
  auto offs = tl::arange(0, 16);
  auto inside = offs < n;
  auto outside = !inside;  // `!` on a tensor: the tensor overload, not bool
  auto m = n;              // a copy of a parameter handle ...
  m = m + 1;               // ... takes any tensor value
  tl::store(x + offs, 1.0f, outside & (offs < m));
}

}  // namespace

TEST_CASE("trace: `!` on a tile is a logical not, and parameter handles can be reassigned") {
  auto m = trace_with(not_and_reassign, {f32_ptr(), i32_scalar()});
  CHECK(count_ops(m->kernel().body, OpKind::Not) == 1);
  CHECK(count_ops(m->kernel().body, OpKind::Store) == 1);
}
