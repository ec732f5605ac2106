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
