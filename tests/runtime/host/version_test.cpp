// \file tessera::version() is the version that project(Tessera VERSION ...) in the top-level
// CMakeLists.txt names, read back from that file here.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "runtime/tessera.h"

TEST_CASE("version: tessera::version() is project(Tessera VERSION ...) of CMakeLists.txt") {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/CMakeLists.txt");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  std::string s = text.str();
  std::regex project(R"(project\(Tessera\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+))");
  REQUIRE(std::regex_search(s, m, project));
  CHECK(tessera::version() == m[1].str());
  CHECK(std::regex_match(std::string(tessera::version()), std::regex(R"([0-9]+\.[0-9]+\.[0-9]+)")));
}
