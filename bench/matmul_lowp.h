/// \file What the low-precision matmul rows share (bench/matmul_int8.cpp: int8 -> int32,
/// bench/matmul_fp8.cpp: e4m3 -> f16): the exact product of the sampled rows, and the walk over
/// the tile table that checks every configuration and reports the fastest that passed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/harness.h"
#include "bench/matmul.h"

namespace tessera::bench {

/// The product of the sampled rows of A (M x K) and B (K x N), both row-major, accumulated in Acc
/// (exact for int8 in int64 and for e4m3 in double): ref[s * n + j]. A's elements convert to Acc
/// one at a time; B is read as `b` (its elements or a copy already converted, B being read once
/// per sampled row).
template <class Acc, class A, class B>
std::vector<Acc> reference_rows(const std::vector<A>& a, const B* b,
                                const std::vector<int64_t>& rows, int64_t n, int64_t k) {
  std::vector<Acc> ref(rows.size() * n, Acc{0});
  parallel_for(
      rows.size(),
      [&](size_t begin, size_t end) {
        for (size_t s = begin; s < end; ++s) {
          Acc* acc = &ref[s * n];
          for (int64_t kk = 0; kk < k; ++kk) {
            const Acc av = static_cast<Acc>(a[rows[s] * k + kk]);
            const B* br = &b[kk * n];
            for (int64_t j = 0; j < n; ++j) acc[j] += av * br[j];
          }
        }
      },
      1);
  return ref;
}

/// One low-precision matmul row. `setup(each_config)` runs inside a guard (a throw reports the
/// row as failed): it uploads the inputs, computes the reference, then calls `each_config(check)`,
/// which checks every configuration of `dtype`'s tile table with `check(row, cfg, timed)` (each
/// guarded; `check` launches, compares and returns finish_config's row). The row added is the
/// fastest configuration that passed.
template <class Setup>
void run_lowp_matmul(Bench& b, const Row& base, const std::string& dtype, Setup setup) {
  std::vector<Row> tried;
  Row failed = guarded(base, [&] {
    setup([&](auto&& check) {
      for (const MatmulConfig& cfg : matmul_configs(dtype)) {
        Row row = base;
        row.config = config_label(cfg);
        tried.push_back(guarded(row, [&] { return check(row, cfg, config_timed(b, tried)); }));
      }
    });
    return base;
  });
  b.add(tried.empty() ? failed : best_of(tried));
}

}  // namespace tessera::bench
