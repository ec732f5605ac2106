/// \file dot: acc[M,N] + a[M,K] x b[K,N] in the accumulator's dtype, summing over k in
/// increasing order. For float accumulators each step is fused like a tensor core or an FMA:
/// acc = round(acc + a*b) with the product exact (f32 inputs are first rounded to TF32 unless
/// precision = "ieee"; f16/bf16/f32 products are exact in double, f64 uses std::fma). Integer
/// accumulators wrap (i8 x i8 -> i32).
#include <cmath>

#include "core/interp/exec.h"
#include "core/interp/numeric.h"

namespace tessera::interp {
namespace {

using ir::Op;

struct Dims {
  int64_t m, n, k;
};

/// The elements of a float or integer operand as doubles, TF32-rounded when asked.
std::vector<double> as_doubles(const RuntimeValue& v, bool tf32) {
  std::vector<double> out(static_cast<size_t>(v.numel()));
  const bool round = tf32 && v.dtype == ir::DType::f32;
  for (int64_t i = 0; i < v.numel(); ++i) {
    const double x = float_element(v, i);
    out[i] = round ? round_to_tf32(static_cast<float>(x)) : x;
  }
  return out;
}

template <class T>
void float_dot(const RuntimeValue& a, const RuntimeValue& b, RuntimeValue& acc, Dims d, bool tf32) {
  using S = typename T::S;
  TESSERA_CHECK(T::kDType == ir::DType::f64 || a.dtype != ir::DType::f64, "dot of f64 inputs into ",
                ir::dtype_name(T::kDType));
  const std::vector<double> x = as_doubles(a, tf32), y = as_doubles(b, tf32);
  S* c = acc.data<S>();
  std::vector<double> row(static_cast<size_t>(d.n));
  for (int64_t i = 0; i < d.m; ++i) {
    for (int64_t j = 0; j < d.n; ++j) row[j] = T::to_double(c[i * d.n + j]);
    for (int64_t k = 0; k < d.k; ++k) {
      const double xv = x[i * d.k + k];
      const double* yk = &y[k * d.n];
      for (int64_t j = 0; j < d.n; ++j) {
        if constexpr (T::kDType == ir::DType::f64)
          row[j] = std::fma(xv, yk[j], row[j]);
        else  // the product is exact; odd_sum makes the one rounding below correct
          row[j] = T::to_double(T::from_double(num::odd_sum(row[j], xv * yk[j])));
      }
    }
    for (int64_t j = 0; j < d.n; ++j) c[i * d.n + j] = T::from_double(row[j]);
  }
}

template <class T>
void int_dot(const RuntimeValue& a, const RuntimeValue& b, RuntimeValue& acc, Dims d) {
  using S = typename T::S;
  auto widened = [](const RuntimeValue& v) {  // by each input's own signedness
    std::vector<uint64_t> out(static_cast<size_t>(v.numel()));
    for (int64_t i = 0; i < v.numel(); ++i) out[i] = static_cast<uint64_t>(int_element(v, i));
    return out;
  };
  const std::vector<uint64_t> x = widened(a), y = widened(b);
  S* c = acc.data<S>();
  for (int64_t i = 0; i < d.m; ++i)
    for (int64_t k = 0; k < d.k; ++k) {
      const uint64_t xv = x[i * d.k + k];
      for (int64_t j = 0; j < d.n; ++j)
        c[i * d.n + j] = num::wrap<T>(num::widen<T>(c[i * d.n + j]) + xv * y[k * d.n + j]);
    }
}

}  // namespace

void exec_dot(Exec& ex, const Op& op) {
  const RuntimeValue& a = ex.get(op.operand(0));
  const RuntimeValue& b = ex.get(op.operand(1));
  RuntimeValue acc = ex.get(op.operand(2));
  TESSERA_CHECK(a.shape.size() == 2 && b.shape.size() == 2 && acc.shape.size() == 2 &&
                    a.shape[1] == b.shape[0] && acc.shape[0] == a.shape[0] &&
                    acc.shape[1] == b.shape[1],
                "dot of ", a.type().str(), " and ", b.type().str(), " into ", acc.type().str());
  TESSERA_CHECK(ir::is_float(a.dtype) == ir::is_float(acc.dtype) &&
                    ir::is_float(b.dtype) == ir::is_float(acc.dtype),
                "dot of ", a.type().str(), " and ", b.type().str(), " into ", acc.type().str());
  ir::DotPrecision precision = ir::DotPrecision::Tf32;
  TESSERA_CHECK(ir::parse_dot_precision(op.str_attr_or(attr::kPrecision, "tf32"), &precision),
                "bad dot precision");
  const Dims d{a.shape[0], b.shape[1], a.shape[1]};
  dispatch(acc.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (T::kFloat)
      float_dot<T>(a, b, acc, d, precision == ir::DotPrecision::Tf32);
    else
      int_dot<T>(a, b, acc, d);
  });
  ex.set(op.result(), std::move(acc));
}

}  // namespace tessera::interp
