// \file Launching hand-written GLSL kernels as artifacts: parameters in push constants and by
// address, grids folded past the device's workgroup counts, many dependent launches in one
// stream, and a traced kernel through the Kernel API (compiled by targets::compile).
#include <numeric>

#include "samples/kernels/vector_add.h"
#include "tests/support/errors.h"
#include "vk_test.h"

using tessera::Buffer;
using tessera::Grid;
using vktest::ParamBlock;

namespace {

std::string vector_add_glsl(uint32_t threads) {
  return std::string(vktest::kPrelude) + "layout(local_size_x = " + std::to_string(threads) +
         R"() in;
layout(push_constant, std430) uniform Params {
  uvec2 x; uvec2 y; uvec2 out_; int n;
  layout(offset = 32) uint gx; uint gy; uint gz;
} p;
void main() {
  uvec3 grid = uvec3(p.gx, p.gy, p.gz);
  if (past_the_end(grid)) return;
  uint i = program_id(grid).x * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i < uint(p.n)) Floats(p.out_).v[i] = Floats(p.x).v[i] + Floats(p.y).v[i];
}
)";
}

/// Each program writes its id (x + 1000 * y + 1000000 * z) at its linear index.
std::string program_ids_glsl(uint32_t threads) {
  return std::string(vktest::kPrelude) + "layout(local_size_x = " + std::to_string(threads) +
         R"() in;
layout(push_constant, std430) uniform Params {
  uvec2 out_;
  layout(offset = 8) uint gx; uint gy; uint gz;
} p;
void main() {
  uvec3 grid = uvec3(p.gx, p.gy, p.gz);
  if (past_the_end(grid) || gl_LocalInvocationID.x != 0) return;
  uvec3 pid = program_id(grid);
  Uints(p.out_).v[pid.x + grid.x * (pid.y + grid.y * pid.z)] = pid.x + 1000u * pid.y + 1000000u * pid.z;
}
)";
}

std::string add_scalar_glsl(uint32_t threads) {
  return std::string(vktest::kPrelude) + "layout(local_size_x = " + std::to_string(threads) +
         R"() in;
layout(push_constant, std430) uniform Params {
  uvec2 x; int n; float v;
  layout(offset = 16) uint gx; uint gy; uint gz;
} p;
void main() {
  uint i = program_id(uvec3(p.gx, p.gy, p.gz)).x * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i < uint(p.n)) Floats(p.x).v[i] += p.v;
}
)";
}

}  // namespace

TEST_CASE("vulkan: a vector-add kernel from GLSL, parameters in push constants") {
  VKTEST_DEVICE(dev);
  auto& vk = vktest::impl(dev);
  const int n = 100003;
  const uint32_t threads = 64;
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) hx[i] = 0.5f * i, hy[i] = 1.0f - i;
  Buffer<float> x = dev.upload(hx), y = dev.upload(hy), out = dev.alloc<float>(n + 5);
  out.fill(-7.0f);
  ParamBlock block;
  block.ptr(x).ptr(y).ptr(out).i32(n);
  auto kernel =
      vk.load(vktest::make_artifact(vk, vector_add_glsl(threads), "vector_add", block, threads));
  CHECK(kernel->name == "vector_add");
  CHECK(kernel->threads_per_program == threads);
  vktest::launch(vk, kernel, Grid(tessera::cdiv(n, threads)), block, {x, y, out});
  auto got = out.download();
  for (int i = 0; i < n; ++i)
    if (got[i] != hx[i] + hy[i]) REQUIRE(got[i] == hx[i] + hy[i]);
  for (int i = n; i < n + 5; ++i) CHECK(got[i] == -7.0f);  // masked off: untouched
  vktest::expect_no_validation_messages(vk);
}

TEST_CASE("vulkan: grids past the workgroup-count limit are folded, every program runs once") {
  VKTEST_DEVICE(dev);
  auto& vk = vktest::impl(dev);
  const uint32_t threads = static_cast<uint32_t>(vk.target().subgroup_size);
  const uint32_t max_x = vk.facts().props.limits.maxComputeWorkGroupCount[0];
  std::vector<Grid> grids = {Grid(5, 7, 3), Grid(70000), Grid(40000, 2, 1)};
  if (max_x > 200000) grids.push_back(Grid(1, 70000, 1));  // NVIDIA: fold y instead of x
  for (Grid grid : grids) {
    CAPTURE(grid.x);
    CAPTURE(grid.y);
    CAPTURE(grid.z);
    size_t total = grid.programs();
    Buffer<uint32_t> out = dev.alloc<uint32_t>(total + 64);
    out.fill(0xffffffffu);
    ParamBlock block;
    block.ptr(out);
    auto kernel = vk.load(
        vktest::make_artifact(vk, program_ids_glsl(threads), "program_ids", block, threads));
    vktest::launch(vk, kernel, grid, block, {out});
    auto got = out.download();
    size_t wrong = 0;
    for (uint32_t z = 0; z < grid.z; ++z)
      for (uint32_t y = 0; y < grid.y; ++y)
        for (uint32_t x = 0; x < grid.x; ++x)
          wrong += got[x + grid.x * (y + grid.y * z)] != x + 1000u * y + 1000000u * z;
    CHECK(wrong == 0);
    for (size_t i = total; i < total + 64; ++i)
      CHECK(got[i] == 0xffffffffu);  // folded tail returned
  }
  vktest::expect_no_validation_messages(vk);
}

TEST_CASE("vulkan: hundreds of dependent launches in one stream run in order") {
  VKTEST_DEVICE(dev);
  auto& vk = vktest::impl(dev);
  const uint32_t threads = 32;
  const int n = 1000, launches = 300;  // more than one batch: submissions must keep the order
  Buffer<float> a = dev.alloc<float>(n), b = dev.alloc<float>(n);
  a.fill(0.0f);
  b.fill(0.0f);
  ParamBlock pa, pb;
  pa.ptr(a).i32(n).f32(1.0f);
  pb.ptr(b).i32(n).f32(2.0f);
  auto kernel =
      vk.load(vktest::make_artifact(vk, add_scalar_glsl(threads), "add_scalar", pa, threads));
  Grid grid(tessera::cdiv(n, threads));
  for (int i = 0; i < launches; ++i) {
    vktest::launch(vk, kernel, grid, pa, {a});
    vktest::launch(vk, kernel, grid, pb, {b});
    if (i % 100 == 99) b.copy_from(a);  // b = a, mid-stream: orders against both chains
  }
  auto ga = a.download(), gb = b.download();
  // b: 2 per launch, reset to a's value (100, 200, 300) after launches 99, 199, 299.
  CHECK(std::all_of(ga.begin(), ga.end(), [&](float v) { return v == launches * 1.0f; }));
  CHECK(std::all_of(gb.begin(), gb.end(), [&](float v) { return v == 300.0f; }));
  vktest::expect_no_validation_messages(vk);
}

TEST_CASE("vulkan: parameters passed by address get a slot per launch") {
  VKTEST_DEVICE(dev);
  auto& vk = vktest::impl(dev);
  const uint32_t threads = static_cast<uint32_t>(vk.target().subgroup_size);
  std::string glsl =
      std::string(vktest::kPrelude) + "layout(local_size_x = " + std::to_string(threads) + R"() in;
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Block {
  uvec2 out_; uint index; uint value; uint gx; uint gy; uint gz;
};
layout(push_constant, std430) uniform Params { uvec2 block; } p;
void main() {
  Block b = Block(p.block);
  if (past_the_end(uvec3(b.gx, b.gy, b.gz)) || gl_LocalInvocationID.x != 0) return;
  Uints(b.out_).v[b.index] = b.value;
}
)";
  const int launches = 200;
  Buffer<uint32_t> out = dev.alloc<uint32_t>(launches);
  out.fill(0u);
  ParamBlock block;
  block.ptr(out).u32(0).u32(0);
  auto artifact = vktest::make_artifact(vk, glsl, "by_address", block, threads);
  artifact.params_by_address = true;
  auto kernel = vk.load(artifact);
  for (int i = 0; i < launches; ++i) {
    ParamBlock p;
    p.ptr(out).u32(static_cast<uint32_t>(i)).u32(static_cast<uint32_t>(i * i + 1));
    vktest::launch(vk, kernel, Grid(1), p, {out});
  }
  auto got = out.download();
  for (int i = 0; i < launches; ++i) CHECK(got[i] == static_cast<uint32_t>(i * i + 1));
  vktest::expect_no_validation_messages(vk);
}

TEST_CASE("vulkan: launches on two streams, ordered by an event") {
  VKTEST_DEVICE(dev);
  auto& vk = vktest::impl(dev);
  const uint32_t threads = 32;
  const int n = 4096;
  tessera::Stream s1 = dev.create_stream(), s2 = dev.create_stream();
  Buffer<float> a = dev.alloc<float>(n), b = dev.alloc<float>(n);
  a.fill(1.0f, &s1);
  ParamBlock p;
  p.ptr(a).i32(n).f32(0.5f);
  auto kernel =
      vk.load(vktest::make_artifact(vk, add_scalar_glsl(threads), "add_scalar", p, threads));
  for (int i = 0; i < 20; ++i)
    vktest::launch(vk, kernel, Grid(tessera::cdiv(n, threads)), p, {a}, &s1);
  tessera::Event done = dev.create_event();
  done.record(s1);
  done.wait_in(s2);
  b.copy_from(a, &s2);  // must see all 20 launches of s1
  auto got = b.download(&s2);
  CHECK(std::all_of(got.begin(), got.end(), [](float v) { return v == 11.0f; }));
  vktest::expect_no_validation_messages(vk);
}

TEST_CASE("vulkan: a traced kernel through the Kernel API matches the host") {
  VKTEST_DEVICE(dev);
  const int n = 10007, BLOCK = 256;
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) hx[i] = 0.25f * i, hy[i] = 3.0f - i;
  auto x = dev.upload(hx), y = dev.upload(hy);
  auto out = dev.alloc<float>(n);
  auto add = TESSERA_KERNEL(samples::vector_add_kernel, x_ptr, y_ptr, out_ptr, n, BLOCK);
  add[{tessera::cdiv(n, BLOCK)}](x, y, out, n, BLOCK);
  auto got = out.download();
  for (int i = 0; i < n; ++i) REQUIRE(got[i] == hx[i] + hy[i]);
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan: the Kernel API's grid check leaves folding to the backend") {
  // The per-axis grid check of KernelBase::launch reads the device's target description, whose
  // grid on Vulkan is the workgroup counts (65535 each on lavapipe); Tessera's SPIR-V kernels
  // carry the logical grid and are folded past it, so a traced kernel runs on a grid over the
  // counts, and only a grid that does not fold even so is refused (Unsupported, by the backend).
  VKTEST_DEVICE(dev);
  auto& vk = vktest::impl(dev);
  const uint32_t max_x = vk.facts().props.limits.maxComputeWorkGroupCount[0];
  const int BLOCK = 32;
  auto add = TESSERA_KERNEL(samples::vector_add_kernel, x_ptr, y_ptr, out_ptr, n, BLOCK);
  if (max_x < (1u << 20)) {  // lavapipe: one program more than the counts, so it is folded
    const int n = static_cast<int>(max_x + 1) * BLOCK - 5;
    std::vector<float> hx(static_cast<size_t>(n)), hy(static_cast<size_t>(n), 1.0f);
    for (int i = 0; i < n; ++i) hx[i] = 0.5f * static_cast<float>(i % 1000);
    auto x = dev.upload(hx), y = dev.upload(hy);
    auto out = dev.alloc<float>(static_cast<size_t>(n));
    add[{{max_x + 1}, {.num_warps = 1}}](x, y, out, n, BLOCK);
    auto got = out.download();
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += got[i] != hx[i] + hy[i];
    CHECK(wrong == 0);
  }
  auto x = dev.alloc<float>(64);
  const std::string msg = tessera::test::error_of(
      [&] { add[{{tessera::Grid(4294967295u, 4294967295u, 1)}}](x, x, x, 64, BLOCK); },
      tessera::ErrorKind::Unsupported);
  CHECK(msg.find("exceeds the workgroup counts of") != std::string::npos);
  CHECK(msg.find("even when folded") != std::string::npos);
  vktest::expect_no_validation_messages(vk);
}
