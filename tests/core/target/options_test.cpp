/// \file CompileOptions' one table of fields: its text forms are the ones the caches, captures
/// and AOT labels wrote before (byte for byte), they parse back, and the hash sees every field.
#include "core/target/options.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

namespace tessera {
namespace {

CompileOptions all_set() {
  return {.num_warps = 8,
          .num_stages = 2,
          .maxnreg = 64,
          .debug = true,
          .fp_fusion = true,
          .coopmat2 = true,
          .grouped_launch = false,
          .tma_store = true,
          .cluster = 2};  // every field away from its default
}

TEST_CASE("options: text forms, byte for byte as the five sites wrote them") {
  const CompileOptions d;
  // The artifact cache's key: every option (keys of existing entries must not change).
  CHECK(describe(d, OptionsText::Every) ==
        "num_warps=4 num_stages=3 maxnreg=0 debug=0 fp_fusion=0 coopmat2=0 grouped_launch=1 "
        "tma_store=0 cluster=1");
  CHECK(describe(all_set(), OptionsText::Every) ==
        "num_warps=8 num_stages=2 maxnreg=64 debug=1 fp_fusion=1 coopmat2=1 grouped_launch=0 "
        "tma_store=1 cluster=2");
  // AOT labels and specializations: num_warps and num_stages, the rest where not default.
  CHECK(describe(d, OptionsText::Short) == "num_warps=4 num_stages=3");
  CHECK(describe(all_set(), OptionsText::Short) ==
        "num_warps=8 num_stages=2 maxnreg=64 debug=1 fp_fusion=1 coopmat2=1 grouped_launch=0 "
        "tma_store=1 cluster=2");
  // TESSERA_CAPTURE's line: the short form without debug.
  CHECK(describe(all_set(), OptionsText::Capture) ==
        "num_warps=8 num_stages=2 maxnreg=64 fp_fusion=1 coopmat2=1 grouped_launch=0 tma_store=1 "
        "cluster=2");
  CHECK(describe({.coopmat2 = true}, OptionsText::Capture) ==
        "num_warps=4 num_stages=3 coopmat2=1");
  CHECK(describe({.fp_fusion = true}, OptionsText::Capture) ==
        "num_warps=4 num_stages=3 fp_fusion=1");
  CHECK(option_names() ==
        "num_warps, num_stages, maxnreg, debug, fp_fusion, coopmat2, grouped_launch, tma_store, "
        "cluster");
}

TEST_CASE("options: every form parses back, other words are left alone") {
  for (const CompileOptions& o : {CompileOptions{}, all_set(), CompileOptions{.maxnreg = 32}}) {
    for (OptionsText form : {OptionsText::Every, OptionsText::Short}) {
      CompileOptions back;
      CHECK(parse_options("BLOCK=1024 " + describe(o, form) + " n=i32:div16", back));
      CHECK(back == o);
    }
  }
  CompileOptions o;
  std::string error;
  CHECK_FALSE(parse_options("num_warps=4 num_stages=x", o, &error));
  CHECK(error == "num_stages needs an integer, got 'x'");
  REQUIRE(find_option("maxnreg") != nullptr);
  CHECK(find_option("maxnreg")->integer == &CompileOptions::maxnreg);
  CHECK(find_option("BLOCK") == nullptr);
  CHECK_FALSE(set_option(o, "warps", 8));
}

TEST_CASE("options: the hash changes with every field") {
  std::set<uint64_t> hashes = {options_hash({})};
  for (const OptionField& f : kOptionFields) {
    CompileOptions o;
    set_option(o, f, f.flag ? !option_value(o, f) : option_value(o, f) + 1);
    CHECK(o != CompileOptions{});
    hashes.insert(options_hash(o));
  }
  CHECK(hashes.size() == std::size(kOptionFields) + 1);
}

}  // namespace
}  // namespace tessera
