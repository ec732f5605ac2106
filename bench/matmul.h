/// \file What the matmul cases share (bench/matmul.cpp, bench/matmul_int8.cpp): the tile table.
#pragma once

#include <string>
#include <vector>

#include "bench/harness.h"

namespace tessera::bench {

struct MatmulConfig {
  int block_m, block_n, block_k, num_warps, num_stages;
};

/// The tile configurations tried per input dtype ("tf32": f32 inputs on the TF32 path, "fp16",
/// "bf16", "int8"), in order; every one is checked, the fastest that passes is reported. Tune by
/// editing the table in bench/matmul.cpp (peers.py's SEED_MATMUL mirrors it). The environment
/// variable TESSERA_BENCH_CONFIG keeps only the configurations whose label as the row shows it
/// (config_label's "BMxBNxBK num_warps=W num_stages=S", with " group=G" after the tile for a
/// grouped kernel: pass its group_m) contains its text, for profiling one of them; peers.py
/// filters its labels the same way.
std::vector<MatmulConfig> matmul_configs(const std::string& dtype, int group_m = 0);

/// "128x128x64 num_warps=8 num_stages=3" ("128x128x64 group=8 ..." with a GROUP_M).
std::string config_label(const MatmulConfig& c, int group_m = 0);

/// Whether the next configuration of a table is timed, given the rows of those tried before it.
/// All are on a full run; small runs (the interpreters, CI) check every configuration but time
/// only the first few that pass (kTimedSmall): timing costs 20 runs of an interpreted kernel.
bool config_timed(const Bench& b, const std::vector<Row>& tried);

/// The problem sizes: 4096^3 and 8192^3, or small ones that are not multiples of any tile
/// (K and N multiples of 8, M above 16, as torch._int_mm requires of the int8 peer).
struct MatmulShape {
  int64_t m, n, k;
};
MatmulShape matmul_mid(bool small);
MatmulShape matmul_big(bool small);

/// The rows a check compares: every row of a small problem, 64 spread rows and the last of a
/// large one.
std::vector<int64_t> sampled_rows(int64_t m, bool small);

/// Finishes a configuration's checked row: measured (timed if it passed) when `timed`, else its
/// status alone, marked "checked, not timed".
Row finish_config(Bench& b, Row row, const std::function<void()>& launch, const BufferBase& out,
                  bool timed);

}  // namespace tessera::bench
