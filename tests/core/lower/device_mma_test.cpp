// \file The SIMT devices and tensor cores: simt:32's target has mma.sync, cp.async and the CUDA
// matrix shapes (simt:8 and simt:64 do not), and matmuls launched on simt:32 through the runtime
// (tensor cores, the cp.async pipeline with carried pointer tiles, masked tails) match the host
// interpreter: the f32 sample (TF32) and f16, bf16, i8 variants.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/target/target.h"
#include "core/ir/ir.h"
#include "runtime/tessera.h"
#include "core/passes/pipeline.h"
#include "samples/kernels/matmul_relu.h"
#include "tests/core/lower/matmul_kernel.h"

using tessera::Device;
using tessera::target::Cap;

TEST_CASE("simt devices: tensor cores at subgroup 32 only") {
  for (const char* name : {"simt:8", "simt:32", "simt:64"}) {
    CAPTURE(name);
    auto t = tessera::target::parse_target(Device::open(name).info().target);
    REQUIRE(t);
    const bool warp = std::string(name) == "simt:32";
    CHECK(t->has(Cap::MmaSync) == warp);
    CHECK(t->has(Cap::CpAsync) == warp);
    CHECK(t->matrix_shapes.empty() == !warp);
    if (warp) CHECK(t->matrix_shapes == tessera::target::profile("cuda-sm_80")->matrix_shapes);
  }
}

TEST_CASE("simt devices: the matmul sample on simt:32 matches the host interpreter") {
  // K = 64: a whole number of blocks (pipelined); K = 48: a masked last block (pipelined, its
  // tail copied as zeros); K = 40: not divisible by 16, so the loads are not provably 16-byte
  // vectors (staged from registers). M and N leave masked rows and columns.
  struct Shape {
    int m, n, k, stages;
    bool pipelined;
  };
  const Shape shapes[] = {{64, 64, 64, 3, true},
                          {100, 80, 48, 3, true},
                          {70, 64, 40, 3, false},
                          {64, 128, 96, 2, true}};
  auto target = *tessera::target::parse_target(Device::open("simt:32").info().target);
  Device host = Device::open("host"), simt = Device::open("simt:32");
  auto matmul = TESSERA_KERNEL(samples::matmul_relu_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am,
                               stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M,
                               BLOCK_N, BLOCK_K);
  for (const Shape& s : shapes) {
    CAPTURE(s.m);
    CAPTURE(s.n);
    CAPTURE(s.k);
    std::mt19937 rng(static_cast<uint32_t>(s.m * s.n + s.k));
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> ha(size_t(s.m) * s.k), hb(size_t(s.k) * s.n);
    for (float& x : ha) x = u(rng);
    for (float& x : hb) x = u(rng);
    std::vector<std::vector<float>> out;
    for (Device* dev : {&host, &simt}) {
      auto a = dev->upload(ha), b = dev->upload(hb);
      auto c = dev->alloc<float>(size_t(s.m) * s.n);
      c.fill(NAN);
      if (dev == &simt) {  // what simt:32 runs: tensor cores, and cp.async where the loads allow
        auto tile = matmul.traced(a, b, c, s.m, s.n, s.k, s.k, 1, s.n, 1, s.n, 1, 32, 32, 32);
        auto lowered =
            tessera::passes::compile(*tile, target, {4, s.stages}, tessera::passes::Stage::Simt)
                .simt;
        int mma = 0, copies = 0;
        tessera::ir::walk(lowered->kernel().body, [&](const tessera::ir::Op* op) {
          mma += op->kind == tessera::ir::OpKind::Mma;
          copies += op->kind == tessera::ir::OpKind::CpAsync;
        });
        CHECK(mma == 8);  // 32x32 over 2x2 warps: 1 x 2 tiles of 16x8 each, 4 k steps of 8
        CHECK((copies > 0) == s.pipelined);
      }
      tessera::Grid grid(tessera::cdiv(s.m, 32), tessera::cdiv(s.n, 32));
      matmul[{grid, {.num_warps = 4, .num_stages = s.stages}}](a, b, c, s.m, s.n, s.k, s.k, 1, s.n,
                                                               1, s.n, 1, 32, 32, 32);
      out.push_back(c.download());
    }
    int bad = 0;
    for (int i = 0; i < s.m; ++i)
      for (int j = 0; j < s.n; ++j) {
        double scale = 0;
        for (int k = 0; k < s.k; ++k)
          scale += std::fabs(double(tessera::round_to_tf32(ha[size_t(i) * s.k + k])) *
                             double(tessera::round_to_tf32(hb[size_t(k) * s.n + j])));
        const size_t o = size_t(i) * s.n + j;
        if (std::fabs(double(out[1][o]) - out[0][o]) <= 1e-5 * scale) continue;
        if (++bad <= 3)
          FAIL_CHECK("c[" << i << ", " << j << "] = " << out[1][o] << ", host " << out[0][o]);
      }
    CHECK(bad == 0);
  }
}

TEST_CASE("simt devices: f16, bf16 and i8 matmuls on simt:32 (mma, cp.async) match the host") {
  using tessera::ir::DType;
  Device host = Device::open("host"), simt = Device::open("simt:32");
  auto matmul = TESSERA_KERNEL(matmul_test::matmul_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am,
                               stride_bk, stride_cm, BLOCK_M, BLOCK_N, BLOCK_K, ACC, IEEE);
  const int M = 80, N = 48, K = 80;  // masked rows of the last block; K: 2 x 32 and a half block
  auto target = *tessera::target::parse_target(simt.info().target);
  for (DType in : {DType::f16, DType::bf16, DType::i8}) {
    CAPTURE(tessera::ir::dtype_name(in));
    std::mt19937 rng(static_cast<uint32_t>(in));
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<tessera::half> ha(size_t(M) * K), hb(size_t(K) * N);
    std::vector<tessera::bfloat16> ba(ha.size()), bb(hb.size());
    std::vector<int8_t> qa(ha.size()), qb(hb.size());
    for (size_t i = 0; i < ha.size(); ++i)
      ha[i] = tessera::half(u(rng)), ba[i] = tessera::bfloat16(u(rng)),
      qa[i] = int8_t(rng() % 256 - 128);
    for (size_t i = 0; i < hb.size(); ++i)
      hb[i] = tessera::half(u(rng)), bb[i] = tessera::bfloat16(u(rng)),
      qb[i] = int8_t(rng() % 256 - 128);
    std::vector<std::vector<float>> outf;
    std::vector<std::vector<int32_t>> outi;
    for (Device* dev : {&host, &simt}) {
      tessera::Grid grid(tessera::cdiv(M, 32), tessera::cdiv(N, 32));
      auto run = [&](const auto& a, const auto& b, auto c, DType acc) {
        if (dev == &simt) {  // tensor cores and the cp.async pipeline
          auto tile = matmul.traced(a, b, c, M, N, K, K, N, N, 32, 32, 32, acc, false);
          auto lowered =
              tessera::passes::compile(*tile, target, {4, 3}, tessera::passes::Stage::Simt).simt;
          int mma = 0, copies = 0;
          tessera::ir::walk(lowered->kernel().body, [&](const tessera::ir::Op* op) {
            mma += op->kind == tessera::ir::OpKind::Mma;
            copies += op->kind == tessera::ir::OpKind::CpAsync;
          });
          CHECK(mma == (in == DType::i8 ? 2 : 4));  // 1 x 2 tiles per warp; 32 / k steps
          CHECK(copies > 0);
        }
        matmul[{grid, {.num_warps = 4, .num_stages = 3}}](a, b, c, M, N, K, K, N, N, 32, 32, 32,
                                                          acc, false);
        return c.download();
      };
      if (in == DType::i8) {
        outi.push_back(
            run(dev->upload(qa), dev->upload(qb), dev->alloc<int32_t>(size_t(M) * N), DType::i32));
      } else if (in == DType::f16) {
        outf.push_back(
            run(dev->upload(ha), dev->upload(hb), dev->alloc<float>(size_t(M) * N), DType::f32));
      } else {
        outf.push_back(
            run(dev->upload(ba), dev->upload(bb), dev->alloc<float>(size_t(M) * N), DType::f32));
      }
    }
    // f16/bf16 products are exact and both sum k in order; i8 is exact.
    if (in == DType::i8)
      CHECK(outi[0] == outi[1]);
    else
      CHECK(outf[0] == outf[1]);
  }
}
