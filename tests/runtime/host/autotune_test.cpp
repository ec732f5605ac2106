/// \file Autotuning on the host interpreter and the SIMT interpreter
/// (tests/runtime/autotune_cases.h), and the checks of the options.
#include <doctest/doctest.h>

#include "../autotune_cases.h"

namespace ac = autotune_cases;
using tessera::ErrorKind;
using tessera::test::error_of;

namespace {
const char* const kDevices[] = {"host", "simt:8"};
}  // namespace

TEST_CASE("autotune: the choice is a configuration, the output holds one launch's result") {
  for (const char* name : kDevices) {
    CAPTURE(name);
    ac::chosen_and_uncorrupted(tessera::Device::open(name));
  }
}

TEST_CASE("autotune: run counts left to the default are 3 timed runs on a CPU device") {
  for (const char* name : kDevices) {
    CAPTURE(name);
    ac::default_run_counts(tessera::Device::open(name));
  }
}

TEST_CASE("autotune: default outputs copy every buffer, an aliased output stays one buffer") {
  for (const char* name : kDevices) {
    CAPTURE(name);
    ac::default_outputs_and_aliasing(tessera::Device::open(name));
  }
}

TEST_CASE("autotune: a fresh autotuner reuses the disk entry, a damaged one is searched again") {
  ac::disk_entry_reused_and_damage_searched(tessera::Device::open("host"));
}

TEST_CASE("autotune: pruned and failing configurations are discarded with their reasons") {
  for (const char* name : kDevices) {
    CAPTURE(name);
    ac::pruned_and_failing_discarded(tessera::Device::open(name));
  }
}

TEST_CASE("autotune: all configurations failing is an error listing each reason") {
  ac::all_failing_lists_reasons(tessera::Device::open("host"));
}

TEST_CASE("autotune: TESSERA_AUTOTUNE_LOG=1 prints the candidates and the choice") {
  ac::log_lines(tessera::Device::open("host"));
}

TEST_CASE("autotune: options naming no parameter, uneven configurations and bad calls") {
  const auto& k = ac::accumulate();
  auto with = [](auto change) {
    tessera::AutotuneOptions o = ac::options();
    change(o);
    return o;
  };
  CHECK(error_of([&] { tessera::autotune(k, with([](auto& o) { o.key = {"m"}; })); },
                 ErrorKind::Argument)
            .find("the key names 'm', which is not a parameter (parameters: x, y, n, BLOCK)") !=
        std::string::npos);
  CHECK(error_of([&] { tessera::autotune(k, with([](auto& o) { o.key = {"BLOCK"}; })); },
                 ErrorKind::Argument)
            .find("which the configurations set") != std::string::npos);
  CHECK(error_of([&] { tessera::autotune(k, with([](auto& o) { o.outputs = {"z"}; })); },
                 ErrorKind::Argument)
            .find(".outputs names 'z'") != std::string::npos);
  CHECK(error_of(
            [&] {
              tessera::autotune(k, with([](auto& o) { o.configs.push_back({{{"BLOCKS", 8}}}); }));
            },
            ErrorKind::Argument)
            .find("configuration 3 (BLOCKS=8 num_warps=4 num_stages=3) names 'BLOCKS'") !=
        std::string::npos);
  CHECK(error_of(
            [&] {
              tessera::autotune(
                  k, with([](auto& o) { o.configs.push_back({{{"BLOCK", 8}, {"BLOCK", 8}}}); }));
            },
            ErrorKind::Argument)
            .find("sets 'BLOCK' twice") != std::string::npos);
  CHECK(error_of([&] { tessera::autotune(k, with([](auto& o) { o.configs.clear(); })); },
                 ErrorKind::Argument)
            .find("no configurations") != std::string::npos);
  CHECK(error_of([&] { tessera::autotune(k, with([](auto& o) { o.grid = nullptr; })); },
                 ErrorKind::Argument)
            .find("no grid function") != std::string::npos);
  const auto tuned = tessera::autotune(k, ac::options());
  auto x = tessera::Device::open("host").alloc<float>(8);
  CHECK(error_of([&] { tuned(x, x); }, ErrorKind::Argument)
            .find("autotuned kernel 'accumulate_kernel' takes 3 arguments (x, y, n) or all 4 "
                  "with the tuned ones, got 2") != std::string::npos);
}

TEST_CASE("autotune: one autotuner on two devices searches on each") {
  ac::TempCache cache;
  const auto tuned = tessera::autotune(ac::accumulate(), ac::options());
  for (const char* name : kDevices) {
    CAPTURE(name);
    ac::Inputs in(tessera::Device::open(name), 64);
    tuned(in.dx, in.dy, int32_t{64});
    CHECK(in.dy.download() == in.expected(1, 64));
    CHECK_FALSE(tuned.last_report().from_disk);  // the disk key names the device too
  }
  CHECK(tuned.search_count() == 2);
}

namespace {

namespace tl = tessera::tl;

/// C = A B (f16 in, f32 out) through descriptors, the K loop warp-specialized when WS is 1
/// (Triton's `tl.range(..., warp_specialize=WS)` with WS a tuned constexpr).
void ws_matmul_kernel(tl::pointer a, tl::pointer b, tl::ptr<float> c, tl::i32 M, tl::i32 N,
                      tl::i32 K, tl::i32 stride_a, tl::i32 stride_b, int BM, int BN, int BK,
                      int WS) {
  auto da = tl::make_tensor_descriptor(a, {M, K}, {stride_a, 1}, {BM, BK});
  auto db = tl::make_tensor_descriptor(b, {K, N}, {stride_b, 1}, {BK, BN});
  auto dc = tl::make_tensor_descriptor(c, {M, N}, {stride_b, 1}, {BM, BN});
  auto m0 = tl::program_id(0) * BM, n0 = tl::program_id(1) * BN;
  auto acc = tl::zeros<float>({BM, BN});
  for (auto k : tl::range(0, K, BK, {.warp_specialize = WS != 0}))
    acc = tl::dot(da.load({m0, k}), db.load({k, n0}), acc);
  dc.store({m0, n0}, acc);
}

}  // namespace

TEST_CASE("autotune: warp specialization is a configuration's choice (a WS meta-parameter)") {
  // On the SIMT interpreter with sm_90a's lowering: configurations with and without the producer
  // warpgroup both run (races checked) and give the exact product; the layouts dump shows that
  // the WS = 1 ones were planned warp-specialized.
  ac::TempCache cache;
  static const auto k =
      TESSERA_KERNEL(ws_matmul_kernel, a, b, c, M, N, K, stride_a, stride_b, BM, BN, BK, WS);
  const tessera::Device dev = tessera::Device::open("simt:cuda-sm_90a");
  const int M = 128, N = 128, K = 192;
  std::vector<tessera::half> a(M * K), b(K * N);
  std::vector<double> want(M * N, 0.0);
  for (int i = 0; i < M * K; ++i) a[i] = tessera::half(static_cast<float>((i * 7) % 9 - 4) / 4);
  for (int i = 0; i < K * N; ++i) b[i] = tessera::half(static_cast<float>((i * 5) % 7 - 3) / 2);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int l = 0; l < K; ++l)
        want[i * N + j] += static_cast<double>(static_cast<float>(a[i * K + l])) *
                           static_cast<float>(b[l * N + j]);
  auto da = dev.upload(a), db = dev.upload(b);
  auto dc = dev.upload(std::vector<float>(M * N, -1.0f));
  tessera::AutotuneOptions o{.configs = {{{{"BM", 128}, {"BN", 128}, {"BK", 64}, {"WS", 0}}, 4, 2},
                                         {{{"BM", 128}, {"BN", 128}, {"BK", 64}, {"WS", 1}}, 4, 2},
                                         {{{"BM", 128}, {"BN", 128}, {"BK", 64}, {"WS", 1}}, 4, 3}},
                             .key = {"M", "N", "K"},
                             .grid =
                                 [](const tessera::Meta& m) {
                                   return tessera::Grid(tessera::cdiv(m["M"], m["BM"]),
                                                        tessera::cdiv(m["N"], m["BN"]));
                                 },
                             .outputs = {"c"},
                             .warmup_runs = 0,
                             .timed_runs = 1};
  const auto tuned = tessera::autotune(k, o);
  tessera::test::ScopedEnv dump("TESSERA_DUMP", "layouts");
  const std::string layouts = tessera::test::capture(2, [&] { tuned(da, db, dc, M, N, K, K, N); });
  const tessera::AutotuneReport r = tuned.last_report();
  REQUIRE(r.candidates.size() == 3);
  for (const tessera::AutotuneCandidate& c : r.candidates) CHECK(c.discarded == "");
  CHECK(layouts.find("warp_specialized, 2 stages") != std::string::npos);
  CHECK(layouts.find("warp_specialized, 3 stages") != std::string::npos);
  const std::vector<float> got = dc.download();
  for (int i = 0; i < M * N; ++i) CHECK(got[i] == static_cast<float>(want[i]));
}
