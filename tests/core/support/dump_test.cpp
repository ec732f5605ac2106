/// \file TESSERA_DUMP's word table: the CUDA driver's report word is accepted everywhere, even
/// where no CUDA device can print it.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/support/dump.h"

using tessera::Dumps;

TEST_CASE("dump: ptxstats is a word, listed after ptx") {
  Dumps d = Dumps::parse("ptx,ptxstats", "TESSERA_DUMP");
  CHECK(d.has("ptxstats"));
  CHECK(d.has("ptx"));
  CHECK_FALSE(Dumps::parse("ptx", "TESSERA_DUMP").has("ptxstats"));
  auto words = tessera::dump_words();
  auto at = [&](std::string_view name) {
    return std::find_if(words.begin(), words.end(), [&](auto& w) { return w.name == name; });
  };
  REQUIRE(at("ptxstats") != words.end());
  CHECK(at("ptxstats") == at("ptx") + 1);
  CHECK(at("ptxstats")->summary.find("registers") != std::string_view::npos);
}
