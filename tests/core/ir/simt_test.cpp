// \file The SIMT helpers of core/ir/simt.h: reading and writing a SIMT function's attributes, and
// the typed views of the SIMT ops.
#include <doctest/doctest.h>

#include "core/ir/parser.h"
#include "core/ir/printer.h"
#include "core/ir/simt.h"
#include "core/ir/verifier.h"
#include "core/support/error.h"

namespace tessera::ir {
namespace {

TEST_CASE("simt: is_simt reads the stage attribute") {
  Module m;
  Function* fn = m.add_function("k");
  CHECK_FALSE(is_simt(*fn));
  fn->set_attr("stage", std::string("tile"));
  CHECK_FALSE(is_simt(*fn));
  fn->set_attr("stage", int64_t{1});
  CHECK_FALSE(is_simt(*fn));
  fn->set_attr("stage", std::string("simt"));
  CHECK(is_simt(*fn));
}

TEST_CASE(
    "simt: set_simt_attrs and add_shared_buffer write what the getters and the printer read") {
  Module m;
  Function* fn = m.add_function("k", Location::make("k.cpp", 1, 1));
  set_simt_attrs(*fn, 96, 32, "cuda-sm_90");
  CHECK(add_shared_buffer(*fn, DType::f32, 3) == 0);
  CHECK(add_shared_buffer(*fn, DType::i1, 8) == 1);
  CHECK(is_simt(*fn));
  CHECK(simt_threads(*fn) == 96);
  CHECK(simt_subgroup(*fn) == 32);
  CHECK(simt_num_subgroups(*fn) == 3);
  CHECK(simt_target(*fn) == "cuda-sm_90");
  CHECK(shared_buffers(*fn) == std::vector<SharedBuffer>{{DType::f32, 3}, {DType::i1, 8}});
  CHECK(shared_buffers(*fn)[0].bytes() == 12);
  CHECK(shared_memory_bytes(*fn) == 32);  // 12 and 8 bytes, each rounded up to 16
  CHECK(verify_all(m).empty());
  CHECK(print(m) ==
        "func @k() attributes {shared_0 = tile<3xf32>, shared_1 = tile<8xi1>, stage = \"simt\", "
        "subgroup = 32, target = \"cuda-sm_90\", threads = 96} loc(\"k.cpp\":1:1) {\n}\n");

  Function* bare = m.add_function("bare");
  set_simt_attrs(*bare, 32, 32);
  CHECK(simt_target(*bare).empty());
  CHECK(find_attr(bare->attrs, "target") == nullptr);
  CHECK(shared_buffers(*bare).empty());
  CHECK(shared_memory_bytes(*bare) == 0);
}

TEST_CASE("simt: shared buffers come in index order, not attribute (name) order") {
  Module m;
  Function* fn = m.add_function("k");
  set_simt_attrs(*fn, 32, 32);
  for (int64_t i = 0; i < 12; ++i) CHECK(add_shared_buffer(*fn, DType::u16, 1000 + i) == i);
  CHECK(fn->attrs[2].name == "shared_10");  // sorted by name
  std::vector<SharedBuffer> buffers = shared_buffers(*fn);
  REQUIRE(buffers.size() == 12);
  for (int64_t i = 0; i < 12; ++i) CHECK(buffers[static_cast<size_t>(i)].count == 1000 + i);
  // Each buffer of 2 * (1000 + i) bytes rounds up to a multiple of 16.
  int64_t want = 0;
  for (int64_t i = 0; i < 12; ++i) want += (2 * (1000 + i) + 15) / 16 * 16;
  CHECK(shared_memory_bytes(*fn) == want);
  CHECK(verify_all(m).empty());
}

TEST_CASE("simt: buffer attribute names") {
  CHECK(shared_buffer_attr(0) == "shared_0");
  CHECK(shared_buffer_attr(12) == "shared_12");
  CHECK(parse_shared_buffer_attr("shared_0") == 0);
  CHECK(parse_shared_buffer_attr("shared_10") == 10);
  for (const char* bad : {"shared", "shared_", "shared_01", "shared_-1", "shared_x", "shared_1x",
                          "Shared_1", "shared_99999999999999999999", "xshared_1"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_shared_buffer_attr(bad).has_value());
  }
}

TEST_CASE("simt: the getters reject a function that is not a valid SIMT function") {
  Module m;
  Function* fn = m.add_function("tile");
  auto internal = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.kind() == ErrorKind::Internal;
    }
    return false;
  };
  CHECK(internal([&] { simt_threads(*fn); }));
  CHECK(internal([&] { simt_subgroup(*fn); }));
  fn->set_attr("shared_1", Type::tile(DType::f32, {4}));
  CHECK(internal([&] { shared_buffers(*fn); }));  // shared_0 is missing
  fn->set_attr("shared_0", Type::scalar(DType::f32));
  CHECK(internal([&] { shared_buffers(*fn); }));  // not a 1-D tile type
  CHECK(internal([&] { add_shared_buffer(*fn, DType::f32, 0); }));
}

TEST_CASE("simt: shuffle modes as text") {
  for (ShuffleMode m : {ShuffleMode::Xor, ShuffleMode::Idx, ShuffleMode::Up, ShuffleMode::Down}) {
    ShuffleMode back{};
    REQUIRE(parse_shuffle_mode(to_string(m), &back));
    CHECK(back == m);
  }
  CHECK(to_string(ShuffleMode::Down) == "down");
  ShuffleMode out{};
  CHECK_FALSE(parse_shuffle_mode("butterfly", &out));
}

TEST_CASE("simt: the typed views name operands and attributes") {
  std::unique_ptr<Module> m = parse(
      "func @k(%p: ptr<f16>, %n: i32) attributes {shared_0 = tile<8xf16>, stage = \"simt\", "
      "subgroup = 8, threads = 16} {\n"
      "  %t = constant {value = 1} : i1\n"
      "  %z = constant {value = 0.0} : f16\n"
      "  %a, %b = global_load %p, %t, %z, %z {align = 4, cache = \".cg\", width = 2} : f16, f16\n"
      "  %s = shuffle %a, %n {mode = \"down\"} : f16\n"
      "  shared_store %n, %a, %s {buffer = 0, width = 2}\n"
      "  %c, %d = shared_load %n {buffer = 0, width = 2} : f16, f16\n"
      "  global_store %p, %t, %c, %d {align = 4, width = 2}\n"
      "  print %n, %n, %c {rank = 2}\n"
      "  assert %t\n"
      "}\n");
  REQUIRE(verify_all(*m).empty());
  const Function& fn = m->kernel();
  const std::vector<Op*>& ops = fn.body->ops;
  Value* p = fn.params[0].value;
  Value* n = fn.params[1].value;
  GlobalLoadOp load(ops[2]);
  CHECK(load.ptr() == p);
  CHECK(load.pred() == ops[0]->result());
  CHECK(load.others().size() == 2);
  CHECK(load.others()[1] == ops[1]->result());
  CHECK(load.width() == 2);
  CHECK(load.align() == 4);
  CHECK(load.cache() == ".cg");
  ShuffleOp shuffle(ops[3]);
  CHECK(shuffle.value() == load.result(0));
  CHECK(shuffle.lane() == n);
  CHECK(shuffle.mode() == ShuffleMode::Down);
  SharedStoreOp store(ops[4]);
  CHECK(store.index() == n);
  CHECK(store.values().size() == 2);
  CHECK(store.values()[1] == shuffle.result());
  CHECK(store.buffer() == 0);
  CHECK(store.width() == 2);
  SharedLoadOp shared(ops[5]);
  CHECK(shared.index() == n);
  CHECK(shared.buffer() == 0);
  CHECK(shared.width() == 2);
  GlobalStoreOp gstore(ops[6]);
  CHECK(gstore.values().size() == 2);
  CHECK(gstore.values()[0] == shared.result(0));
  CHECK(gstore.align() == 4);
  SimtDebugOp print_op(ops[7]);
  CHECK(print_op.rank() == 2);
  CHECK(print_op.indices().size() == 2);
  CHECK(print_op.value() == shared.result(0));
  SimtDebugOp assert_op(ops[8]);
  CHECK(assert_op.rank() == 0);
  CHECK(assert_op.indices().empty());
  CHECK(assert_op.value() == ops[0]->result());
  CHECK_THROWS_AS(SimtDebugOp{ops[0]}, Error);
}

}  // namespace
}  // namespace tessera::ir
