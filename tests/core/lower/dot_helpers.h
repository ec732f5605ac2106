/// \file Test helpers for dots lowered to the SIMT IR: a one-tile dot kernel (operands loaded
/// row-major or transposed), tracing and lowering for a target, inputs per dtype, and a run in
/// both interpreters with the comparison the dot's semantics allow.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/interp/interpreter.h"
#include "core/interp/simt.h"
#include "core/ir/verifier.h"
#include "core/lang/tl.h"
#include "core/lang/trace.h"
#include "core/lower/simt_lowering.h"
#include "core/passes/pipeline.h"
#include "core/support/float16.h"
#include "core/target/target.h"
#include "tests/core/interp/helpers.h"

namespace dot_test {

namespace tl = tessera::tl;
namespace ir = tessera::ir;
using interp_test::HostMemory;
using interp_test::pack;
using ir::DType;
using tl::_;
using tl::None;

/// c[M, N] = a[M, K] x b[K, N] (+ zeros of ACC). TA: a is stored K x M and transposed in the
/// kernel; TB: b is stored N x K. With LOOP, K runs in steps of BK through a `for` carrying the
/// accumulator (the matmul pattern).
inline void dot_kernel(tl::pointer a, tl::pointer b, tl::pointer c, int M, int N, int K, bool TA,
                       bool TB, bool IEEE, tl::DType ACC, int BK) {
  auto rm = tl::arange(0, M);
  auto rn = tl::arange(0, N);
  auto rk = tl::arange(0, BK);
  auto prec = IEEE ? tl::InputPrecision::Ieee : tl::InputPrecision::Tf32;
  auto acc = tl::zeros({M, N}, ACC);
  for (auto k0 : tl::range(0, K, BK)) {
    auto kk = k0 + rk;
    auto A = TA ? tl::trans(tl::load(a + kk[{_, None}] * M + rm[{None, _}]))
                : tl::load(a + rm[{_, None}] * K + kk[{None, _}]);
    auto B = TB ? tl::trans(tl::load(b + rn[{_, None}] * K + kk[{None, _}]))
                : tl::load(b + kk[{_, None}] * N + rn[{None, _}]);
    acc = tl::dot(A, B, acc, prec);
  }
  tl::store(c + rm[{_, None}] * N + rn[{None, _}], acc);
}

struct DotCase {
  DType in = DType::f16;
  int M = 16, N = 16, K = 16;
  int warps = 4;
  bool ieee = false;
  bool ta = false, tb = false;
  int bk = 0;      ///< K step of the loop; 0: K (one iteration)
  int stages = 3;  ///< num_stages
  DType acc() const { return in == DType::i8 ? DType::i32 : DType::f32; }
};

inline tl::ArgSpec ptr_spec(DType t) {
  tl::ArgSpec s;
  s.dtype = t;
  s.divisible_by_16 = true;
  return s;
}
inline tl::ArgSpec int_spec(int64_t v) {
  tl::ArgSpec s;
  s.value.i = v;
  return s;
}
inline tl::ArgSpec bool_spec(bool v) {
  tl::ArgSpec s;
  s.value.kind = tl::ConstValue::Kind::Bool;
  s.value.i = v;
  return s;
}
inline tl::ArgSpec dtype_spec(DType t) {
  tl::ArgSpec s;
  s.value.kind = tl::ConstValue::Kind::DType;
  s.value.i = static_cast<int64_t>(t);
  return s;
}

/// The traced, optimized tile IR of `c`'s kernel.
inline std::unique_ptr<ir::Module> trace_dot(const DotCase& c) {
  std::vector<tl::ArgSpec> specs = {ptr_spec(c.in),
                                    ptr_spec(c.in),
                                    ptr_spec(c.acc()),
                                    int_spec(c.M),
                                    int_spec(c.N),
                                    int_spec(c.K),
                                    bool_spec(c.ta),
                                    bool_spec(c.tb),
                                    bool_spec(c.ieee),
                                    dtype_spec(c.acc()),
                                    int_spec(c.bk ? c.bk : c.K)};
  std::vector<std::string> names = {"a", "b", "c", "M", "N", "K", "TA", "TB", "IEEE", "ACC", "BK"};
  auto m = tl::trace(dot_kernel, "dot", names, specs);
  tessera::passes::optimize(*m);
  return m;
}

/// The SIMT device "simt:32"'s target (tensor cores through `mma`) with sm_90's shared memory,
/// so that 128x128 f32 tiles fit.
inline tessera::target::Target simt32_target() {
  tessera::target::Target t = *tessera::target::profile("host");
  t.name = "simt-32";
  t.subgroup_size = 32;
  t.max_shared_bytes = 232448;
  t.set(tessera::target::Cap::MmaSync);
  t.set(tessera::target::Cap::CpAsync);
  t.matrix_shapes = tessera::target::profile("cuda-sm_90")->matrix_shapes;
  return t;
}

inline std::unique_ptr<ir::Module> lower(const ir::Module& tile, const tessera::target::Target& t,
                                         int warps, int stages) {
  auto simt = tessera::passes::compile(tile, t, {.num_warps = warps, .num_stages = stages},
                                       tessera::passes::Stage::Simt)
                  .simt;
  std::vector<std::string> errors = ir::verify_all(*simt);
  if (!errors.empty()) FAIL_CHECK("SIMT IR does not verify: " << errors[0]);
  return simt;
}

/// Counts the ops of `kind` in `m`.
inline int count_ops(const ir::Module& m, ir::OpKind kind) {
  int n = 0;
  ir::walk(m.kernel().body, [&](const ir::Op* op) { n += op->kind == kind; });
  return n;
}

/// Random inputs of `in`, as stored (f16/bf16 bits, f32, i8).
struct Inputs {
  std::vector<uint16_t> h;
  std::vector<float> f;
  std::vector<int8_t> q;
  uint64_t add(HostMemory& mem) {
    if (!h.empty()) return mem.add(h);
    if (!f.empty()) return mem.add(f);
    return mem.add(q);
  }
  double at(DType t, size_t i) const {
    if (t == DType::f16) return tessera::f16_to_double(h[i]);
    if (t == DType::bf16) return tessera::bf16_to_double(h[i]);
    if (t == DType::f32) return f[i];
    return q[i];
  }
};

inline Inputs random_inputs(DType t, size_t n, std::mt19937& rng) {
  Inputs in;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (size_t i = 0; i < n; ++i) {
    if (t == DType::f16)
      in.h.push_back(tessera::f16_from_double(u(rng)));
    else if (t == DType::bf16)
      in.h.push_back(tessera::bf16_from_double(u(rng)));
    else if (t == DType::f32)
      in.f.push_back(static_cast<float>(u(rng)));
    else
      in.q.push_back(static_cast<int8_t>(static_cast<int>(rng() % 256) - 128));
  }
  return in;
}

/// Lowers `c` for `t`, runs it in the SIMT interpreter and the tile interpreter on the same random
/// inputs and compares: i8 exactly; floats within 1e-5 of the largest |partial sum| of the
/// element's products (the inputs as the dot sees them, k increasing), since only the order of
/// the f32 additions may differ. Returns the SIMT module for further checks.
inline std::unique_ptr<ir::Module> run_and_compare(const DotCase& c,
                                                   const tessera::target::Target& t,
                                                   uint32_t seed = 1) {
  auto tile = trace_dot(c);
  auto simt = lower(*tile, t, c.warps, c.stages);
  std::mt19937 rng(seed);
  Inputs a = random_inputs(c.in, size_t(c.M) * c.K, rng),
         b = random_inputs(c.in, size_t(c.K) * c.N, rng);
  const size_t n = size_t(c.M) * c.N;
  std::vector<float> want_f(n, -1), got_f(n, -2);
  std::vector<int32_t> want_i(n, -1), got_i(n, -2);
  const bool is_int = c.in == DType::i8;
  HostMemory mem;
  const uint64_t pa = a.add(mem), pb = b.add(mem);
  const uint64_t want = is_int ? mem.add(want_i) : mem.add(want_f);
  const uint64_t got = is_int ? mem.add(got_i) : mem.add(got_f);
  tessera::interp::run(tile->kernel(), pack(tile->kernel(), pa, pb, want), {}, mem);
  tessera::interp::run_simt(simt->kernel(), pack(simt->kernel(), pa, pb, got), {}, mem);
  const bool tf32 = c.in == DType::f32 && !c.ieee;
  int bad = 0;
  for (int i = 0; i < c.M && bad < 5; ++i)
    for (int j = 0; j < c.N && bad < 5; ++j) {
      const size_t o = size_t(i) * c.N + j;
      if (is_int) {
        bad += got_i[o] != want_i[o];
        if (got_i[o] != want_i[o])
          FAIL_CHECK("c[" << i << ", " << j << "] = " << got_i[o] << ", want " << want_i[o]);
        continue;
      }
      double sum = 0, largest = 0;
      for (int k = 0; k < c.K; ++k) {
        double x = a.at(c.in, c.ta ? size_t(k) * c.M + i : size_t(i) * c.K + k);
        double y = b.at(c.in, c.tb ? size_t(j) * c.K + k : size_t(k) * c.N + j);
        if (tf32)
          x = tessera::round_to_tf32(static_cast<float>(x)),
          y = tessera::round_to_tf32(static_cast<float>(y));
        sum += x * y;
        largest = std::max(largest, std::fabs(sum));
      }
      const double err = std::fabs(double(got_f[o]) - want_f[o]);
      if (!(err <= 1e-5 * largest)) {
        ++bad;
        FAIL_CHECK("c[" << i << ", " << j << "] = " << got_f[o] << ", want " << want_f[o]
                        << " (largest partial sum " << largest << ")");
      }
    }
  return simt;
}

}  // namespace dot_test
