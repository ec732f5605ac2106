// \file Types' text form: Type::str() and parse_type() are inverse, and malformed text is refused.
#include <doctest/doctest.h>

#include "core/ir/types.h"

namespace tessera::ir {
namespace {

TEST_CASE("types: str and parse_type round trip for every dtype, pointers and tiles") {
  const Shape shapes[] = {{}, {1}, {128}, {64, 32}, {2, 1, 4}};
  for (int d = 0; d < kNumDTypes; ++d) {
    DType dtype = static_cast<DType>(d);
    CHECK(parse_dtype(dtype_name(dtype)) == dtype);
    for (const Shape& s : shapes) {
      for (bool is_ptr : {false, true}) {
        Type t{dtype, is_ptr, s};
        CAPTURE(t.str());
        CHECK(parse_type(t.str()) == t);
      }
    }
  }
}

TEST_CASE("types: the text of scalars, pointers and tiles") {
  CHECK(Type::scalar(DType::bf16).str() == "bf16");
  CHECK(Type::pointer(DType::u8).str() == "ptr<u8>");
  CHECK(Type::tile(DType::f16, {64, 32}).str() == "tile<64x32xf16>");
  CHECK(Type::ptr_tile(DType::f32, {128}).str() == "tile<128xptr<f32>>");
}

TEST_CASE("types: parse_type refuses text that is not exactly one type") {
  const char* bad[] = {"",
                       "f31",
                       "i32 ",
                       " i32",
                       "tile<>",
                       "tile<4x>",
                       "tile<4xf32",
                       "tile<xf32>",
                       "tile<4xx f32>",
                       "ptr<>",
                       "ptr<ptr<f32>>",
                       "ptr<tile<4xf32>>",
                       "tile<4xtile<2xf32>>",
                       "tile<-4xf32>",
                       "tile<4xf32>>",
                       "ptr<f32"};
  for (const char* text : bad) {
    CAPTURE(text);
    CHECK_FALSE(parse_type(text).has_value());
  }
}

}  // namespace
}  // namespace tessera::ir
