#include <doctest/doctest.h>

#include "core/support/filter.h"

using tessera::matches_filter;

TEST_CASE("filter: substrings, globs and comma-separated lists") {
  CHECK(matches_filter("softmax fp32 4096x16384", "4096x"));
  CHECK(!matches_filter("softmax fp32 8192x4096", "4096x"));
  CHECK(matches_filter("softmax fp32 8192x4096", "softmax*4096"));
  CHECK(!matches_filter("softmax fp32 4096x16384", "softmax*4096"));  // a glob matches whole names
  CHECK(matches_filter("atomics/max/f32", "atomics/m?x/*"));
  CHECK(!matches_filter("atomics/min/f32", "atomics/max/*"));
  CHECK(matches_filter("seed/gelu", "cast,seed/*"));
  CHECK(!matches_filter("seed/gelu", ",,"));
  CHECK(matches_filter("", "*"));
  CHECK(!matches_filter("", "?"));
}
