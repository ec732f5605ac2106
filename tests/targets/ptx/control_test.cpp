/// \file Structured control flow as branches: loops with carried values (either step sign), ifs
/// with results, while loops, nesting.
#include "helpers.h"

namespace ptx_test {
namespace {

TEST_CASE("ptx: a for loop carries values and exits on the bound") {
  std::string body = R"(  %lb = constant {value = 0} : i32
  %step = constant {value = 1} : i32
  %zero = constant {value = 0.0} : f32
  %tr = constant {value = 1} : i1
  %sum = for %lb, %n, %step, %zero ({
  ^(%i: i32, %acc: f32):
    %p = ptr_add %x, %i : ptr<f32>
    %v = global_load %p, %tr, %zero {align = 4, width = 1} : f32
    %next = add %acc, %v : f32
    yield %next
  }) : f32
  global_store %out, %tr, %sum {align = 4, width = 1})";
  Emitted e = emit_both(kernel("%x: ptr<f32>, %out: ptr<f32>, %n: i32", body));
  CHECK(e.has("bra.uni") + e.has("@%p") >= 1);
  CHECK(e.has("add.rn.f32"));
}

TEST_CASE("ptx: a for loop with i64 bounds and a run-time step of either sign") {
  std::string body = R"(  %tr = constant {value = 1} : i1
  %c = for %lb, %ub, %step, %lb ({
  ^(%i: i64, %acc: i64):
    %next = add %acc, %i : i64
    yield %next
  }) : i64
  global_store %out, %tr, %c {align = 8, width = 1})";
  Emitted e = emit_both(kernel("%out: ptr<i64>, %lb: i64, %ub: i64, %step: i64", body));
  CHECK(e.has("setp.gt.s64"));  // the step's sign picks the comparison
}

TEST_CASE("ptx: if yields its results through the merge block") {
  std::string body = R"(  %tr = constant {value = 1} : i1
  %c0 = constant {value = 0} : i32
  %neg = cmp_lt %v, %c0 : i1
  %r, %s = if %neg ({
    %a = neg %v : i32
    %b = constant {value = 1} : i32
    yield %a, %b
  }, {
    %two = constant {value = 2} : i32
    yield %v, %two
  }) : i32, i32
  %t = mul %r, %s : i32
  global_store %out, %tr, %t {align = 4, width = 1}
  if %neg ({
    barrier
    yield
  }, {
    yield
  }))";
  emit_both(kernel("%out: ptr<i32>, %v: i32", body));
}

TEST_CASE("ptx: while runs its before region, tests, and carries the after region's values") {
  std::string body = R"(  %tr = constant {value = 1} : i1
  %one = constant {value = 1} : i32
  %res = while %n ({
  ^(%x: i32):
    %more = cmp_gt %x, %one : i1
    condition %more, %x
  }, {
  ^(%y: i32):
    %c2 = constant {value = 2} : i32
    %h = div %y, %c2 : i32
    yield %h
  }) : i32
  global_store %out, %tr, %res {align = 4, width = 1})";
  emit_both(kernel("%out: ptr<i32>, %n: i32", body));
}

TEST_CASE("ptx: nested loops and conditionals with shared memory and shuffles") {
  std::string body = R"(  %tr = constant {value = 1} : i1
  %lane = lane_id : i32
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %c32 = constant {value = 32} : i32
  %zero = constant {value = 0.0} : f32
  %total = for %c0, %n, %c32, %zero ({
  ^(%i: i32, %acc: f32):
    %j = add %i, %lane : i32
    %in = cmp_lt %j, %n : i1
    %p = ptr_add %x, %j : ptr<f32>
    %v = global_load %p, %in, %zero {align = 4, width = 1} : f32
    %c16 = constant {value = 16} : i32
    %wd, %ws = while %c16, %v ({
    ^(%d: i32, %s: f32):
      %go = cmp_gt %d, %c0 : i1
      condition %go, %d, %s
    }, {
    ^(%d2: i32, %s2: f32):
      %o = shuffle %s2, %d2 {mode = "xor"} : f32
      %s3 = add %s2, %o : f32
      %h = shr %d2, %c1 : i32
      yield %h, %s3
    }) : i32, f32
    %next = add %acc, %ws : f32
    yield %next
  }) : f32
  %first = cmp_eq %lane, %c0 : i1
  if %first ({
    shared_store %c0, %total {buffer = 0, width = 1}
    yield
  }, {
    yield
  })
  barrier
  %r = shared_load %c0 {buffer = 0, width = 1} : f32
  global_store %out, %first, %r {align = 4, width = 1})";
  Emitted e =
      emit_both(kernel("%x: ptr<f32>, %out: ptr<f32>, %n: i32", body, "shared_0 = tile<1xf32>"));
  CHECK(e.has("shfl.sync.bfly.b32"));
  CHECK(e.has("bar.sync"));
}

}  // namespace
}  // namespace ptx_test
