// \file The grouped launch order (core/passes/grouped_launch.h): which kernels it renames, and
// that a renamed matmul still computes every C tile exactly once, on grids whose first axis is
// and is not a multiple of the group, on the host interpreter (which runs the tile IR) and on
// simt:8 (the SIMT IR).
#include "core/passes/grouped_launch.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/ir/ir.h"
#include "core/ir/printer.h"
#include "core/passes/pipeline.h"
#include "core/target/target.h"
#include "runtime/tessera.h"
#include "samples/kernels/matmul_relu.h"

namespace {

using tessera::Device;
namespace ir = tessera::ir;
namespace passes = tessera::passes;

size_t count(const ir::Module& m, const std::string& what) {
  const std::string text = ir::print(m);
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("grouped launch: the seed matmul's 2-D grid is renamed, unless the option is off") {
  Device host = Device::open("host");
  auto matmul = TESSERA_KERNEL(samples::matmul_relu_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am,
                               stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M,
                               BLOCK_N, BLOCK_K);
  auto a = host.alloc<float>(64 * 64), b = host.alloc<float>(64 * 64),
       c = host.alloc<float>(64 * 64);
  auto tile = matmul.traced(a, b, c, 64, 64, 64, 64, 1, 64, 1, 64, 1, 16, 16, 16);
  const auto target = *tessera::target::profile("cuda-sm_90a");
  const auto on = passes::compile(*tile, target, {}, passes::Stage::Tile, tessera::Dumps());
  CHECK(count(*on.tile, "num_programs") == 2);  // X and Y: the grid's extents
  CHECK(count(*on.tile, "program_id") == 2);    // the hardware's (x, y), read once each
  const auto off = passes::compile(*tile, target, {.grouped_launch = false}, passes::Stage::Tile,
                                   tessera::Dumps());
  CHECK(count(*off.tile, "num_programs") == 0);
  CHECK(passes::group_launch_order(*off.tile));  // the step itself, run on the kernel as written
  CHECK(ir::print(*off.tile).find("num_programs") != std::string::npos);
}

TEST_CASE("grouped launch: every C tile is computed once, whatever the grid") {
  // Grids X x Y with X below, at and above the group of 8 and not a multiple of it; Y from 1.
  struct Grid {
    int x, y;
  };
  const Grid grids[] = {{1, 1}, {3, 5}, {8, 2}, {9, 3}, {17, 2}, {12, 1}};
  const int block = 8, k = 24;
  auto matmul = TESSERA_KERNEL(samples::matmul_relu_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am,
                               stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M,
                               BLOCK_N, BLOCK_K);
  for (const char* name : {"host", "simt:8"}) {
    Device dev = Device::open(name);
    for (const Grid& g : grids) {
      CAPTURE(name);
      CAPTURE(g.x);
      CAPTURE(g.y);
      const int m = g.x * block - 3, n = g.y * block - 1;  // masked last rows and columns
      std::mt19937 rng(static_cast<uint32_t>(m * 131 + n));
      std::uniform_int_distribution<int> u(-4, 4);  // small integers: every sum exact in f32
      std::vector<float> ha(size_t(m) * k), hb(size_t(k) * n);
      for (float& v : ha) v = float(u(rng));
      for (float& v : hb) v = float(u(rng));
      auto a = dev.upload(ha), b = dev.upload(hb);
      auto c = dev.alloc<float>(size_t(m) * n);
      c.fill(NAN);  // a tile no program computed stays NaN
      matmul[{tessera::Grid(g.x, g.y), {.num_warps = 1}}](a, b, c, m, n, k, k, 1, n, 1, n, 1, block,
                                                          block, block);
      const std::vector<float> hc = c.download();
      int bad = 0;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          float want = 0;
          for (int kk = 0; kk < k; ++kk) want += ha[size_t(i) * k + kk] * hb[size_t(kk) * n + j];
          want = std::max(want, 0.0f);
          if (hc[size_t(i) * n + j] == want) continue;
          if (++bad <= 3)
            FAIL_CHECK("c[" << i << ", " << j << "] = " << hc[size_t(i) * n + j] << ", expected "
                            << want);
        }
      CHECK(bad == 0);
    }
  }
}

}  // namespace
