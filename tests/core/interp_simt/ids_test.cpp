// \file Thread identity in the SIMT interpreter at subgroup sizes 8, 32 and 64: lane_id and
// subgroup_id cover every (lane, subgroup) pair once, threads of one subgroup see each other
// through shuffles, and program_id / num_programs follow a 2-D grid.
#include <set>
#include <vector>

#include "tests/core/interp_simt/helpers.h"

using namespace simt_test;

namespace {

// Each thread writes 6 values at out[(program * 128 + tid) * 6]: lane, subgroup, the subgroup of
// lane 0 of its subgroup (through a shuffle), program x, program y, num_programs x * 100 + y.
const std::string kIds = kernel(
    R"(func @ids(%out: ptr<i32>, %s: i32) attributes {stage = "simt", threads = 128, subgroup = 32} {)",
    R"(
  %px = program_id {axis = 0} : i32
  %py = program_id {axis = 1} : i32
  %nx = num_programs {axis = 0} : i32
  %ny = num_programs {axis = 1} : i32
  %row = mul %py, %nx : i32
  %prog = add %row, %px : i32
  %c128 = constant {value = 128} : i32
  %pbase = mul %prog, %c128 : i32
  %slot = add %pbase, %tid : i32
  %c6 = constant {value = 6} : i32
  %at = mul %slot, %c6 : i32
  %p = ptr_add %out, %at : ptr<i32>
  %sg0 = shuffle %sg, %c0 {mode = "idx"} : i32
  %c100 = constant {value = 100} : i32
  %n100 = mul %nx, %c100 : i32
  %grid = add %n100, %ny : i32
  global_store %p, %true, %lane, %sg {align = 8, width = 2}
  %c2 = constant {value = 2} : i32
  %p3 = ptr_add %p, %c2 : ptr<i32>
  global_store %p3, %true, %sg0, %px {align = 4, width = 2}
  %c4 = constant {value = 4} : i32
  %p5 = ptr_add %p, %c4 : ptr<i32>
  global_store %p5, %true, %py, %grid {align = 8, width = 2}
)");

}  // namespace

TEST_CASE("simt ids: lane and subgroup ids, program ids over a 2-D grid, at S = 8, 32, 64") {
  for (int s : kSubgroups) {
    CAPTURE(s);
    SimtKernel k(kIds, s);
    const Grid grid{3, 2, 1};
    std::vector<int32_t> out(6 * 128 * 6, -1);
    HostMemory mem;
    k.run(mem, grid, mem.add(out), int32_t{s});
    for (int prog = 0; prog < 6; ++prog) {
      std::set<std::pair<int, int>> seen;
      for (int slot = 0; slot < 128; ++slot) {
        const int32_t* v = &out[static_cast<size_t>((prog * 128 + slot) * 6)];
        CHECK(v[0] >= 0);
        CHECK(v[0] < s);
        CHECK(v[1] >= 0);
        CHECK(v[1] < 128 / s);
        CHECK(slot == v[1] * s + v[0]);  // each thread wrote its own slot
        CHECK(v[2] == v[1]);             // lane 0 of my subgroup is in my subgroup
        CHECK(v[3] == prog % 3);
        CHECK(v[4] == prog / 3);
        CHECK(v[5] == 302);
        seen.insert({v[0], v[1]});
      }
      CHECK(seen.size() == 128);
    }
  }
}
