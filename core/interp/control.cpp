/// \file Structured control flow: for, if and while run their regions in the same environment.
/// A for loop's trip count is computed up front in 64-bit unsigned arithmetic, so bounds near
/// the limits of i32/i64 neither overflow nor loop forever; step 0 is a DeviceFault.
#include "core/interp/exec.h"
#include "core/interp/numeric.h"
#include "core/interp/scalar.h"

namespace tessera::interp {
namespace {

using ir::Op;
using ir::OpKind;
using Values = std::vector<RuntimeValue>;

Values operand_values(const Exec& ex, const Op& op, size_t first) {
  Values out;
  for (size_t i = first; i < op.operands.size(); ++i) out.push_back(ex.get(op.operand(i)));
  return out;
}

void bind_results(Exec& ex, const Op& op, Values values) {
  TESSERA_CHECK(values.size() == op.results.size(), "'", op.name(), "' yields ", values.size(),
                " values for ", op.results.size(), " results");
  for (size_t i = 0; i < values.size(); ++i) ex.set(op.result(i), std::move(values[i]));
}

void run_for(Exec& ex, const Op& op) {
  const ir::DType dtype = op.region(0)->args.at(0)->type.dtype;  // the induction variable's
  const int64_t lb = int_element(ex.get(op.operand(0)));
  const int64_t ub = int_element(ex.get(op.operand(1)));
  const int64_t step = int_element(ex.get(op.operand(2)));
  if (step == 0) ex.fault(op, "for loop with step 0", "");
  Values iter = operand_values(ex, op, 3);
  const ir::Region& body = *op.region(0);
  const uint64_t trips = trip_count(lb, ub, step);
  for (uint64_t t = 0; t < trips; ++t) {
    ex.tick(op);
    // lb + t * step stays inside [lb, ub), so the wrapping arithmetic is exact.
    const uint64_t iv = static_cast<uint64_t>(lb) + t * static_cast<uint64_t>(step);
    Values args;
    args.push_back(int_scalar(dtype, static_cast<int64_t>(iv)));
    for (RuntimeValue& v : iter) args.push_back(std::move(v));
    iter = ex.run_region(body, std::move(args));
  }
  bind_results(ex, op, std::move(iter));
}

void run_if(Exec& ex, const Op& op) {
  const bool cond = int_element(ex.get(op.operand(0))) != 0;
  bind_results(ex, op, ex.run_region(*op.region(cond ? 0 : 1), {}));
}

/// before(args) ends in `condition %c, %v...`; while %c, after(%v) yields the next args.
void run_while(Exec& ex, const Op& op) {
  const ir::Region& before = *op.region(0);
  const ir::Region& after = *op.region(1);
  Values args = operand_values(ex, op, 0);
  for (;;) {
    ex.tick(op);
    Values cond = ex.run_region(before, std::move(args));
    TESSERA_CHECK(!cond.empty(), "while's before region does not end in 'condition'");
    const bool go_on = int_element(cond.front()) != 0;
    cond.erase(cond.begin());
    if (!go_on) return bind_results(ex, op, std::move(cond));
    args = ex.run_region(after, std::move(cond));
  }
}

}  // namespace

uint64_t trip_count(int64_t lb, int64_t ub, int64_t step) {
  if (step > 0 && lb < ub) {
    const uint64_t span = static_cast<uint64_t>(ub) - static_cast<uint64_t>(lb);
    const uint64_t s = static_cast<uint64_t>(step);
    return span / s + (span % s != 0);
  }
  if (step < 0 && lb > ub) {
    const uint64_t span = static_cast<uint64_t>(lb) - static_cast<uint64_t>(ub);
    const uint64_t s = 0 - static_cast<uint64_t>(step);
    return span / s + (span % s != 0);
  }
  return 0;
}

void exec_control(Exec& ex, const Op& op) {
  switch (op.kind) {
    case OpKind::For:
      return run_for(ex, op);
    case OpKind::If:
      return run_if(ex, op);
    case OpKind::While:
      return run_while(ex, op);
    default:
      TESSERA_CHECK(false, "not a control-flow op: ", op.name());
  }
}

}  // namespace tessera::interp
