/// \file Launching PTX artifacts: the packed parameter block reaches the kernel intact (every
/// dtype at its offset), grids in three dimensions, dynamic shared memory above 48 KiB, streams
/// and events, and the cubin disk cache.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "helpers.h"

namespace cuda_test {
namespace {

TEST_CASE("cuda: a vector add runs and matches the host") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::string text = kernel(kVectorAddParams, kVectorAddBody);
  int n = 100000;
  std::vector<float> x(n), y(n), want(n);
  for (int i = 0; i < n; ++i) {
    x[i] = i * 0.5f;
    y[i] = 1.0f / (i + 1);
    want[i] = x[i] + y[i];
  }
  auto k = load(dev, text);
  auto out = run(dev, k, Grid((n + 127) / 128),
                 {buffer(x), buffer(y), buffer(std::vector<float>(n, -1)), scalar(n)});
  CHECK(as<float>(out[2]) == want);
}

TEST_CASE("cuda: kernels named as a template instance or a namespace member launch") {
  CUDA_DEVICE_OR_SKIP(dev);
  const int n = 1000;
  std::vector<float> x(n), y(n), want(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 2.0f;
    want[i] = x[i] + y[i];
  }
  for (const char* name : {"add_kernel<float>", "ns::add_kernel", "add_kernel<float, 4>"}) {
    CAPTURE(name);
    auto m = parse(kernel(kVectorAddParams, kVectorAddBody));
    m->functions.front()->name = name;
    tessera::target::Artifact a = tessera::ptx::emit(m->kernel(), target_of(dev));
    CHECK(a.kernel == name);
    CHECK(a.entry_symbol() != name);
    auto k = tessera::rt::cuda::load(*dev.impl(), a);
    auto out = run(dev, k, Grid((n + 127) / 128),
                   {buffer(x), buffer(y), buffer(std::vector<float>(n, -1)), scalar(n)});
    CHECK(as<float>(out[2]) == want);
  }
}

TEST_CASE("cuda: every parameter dtype arrives at its offset of the packed block") {
  CUDA_DEVICE_OR_SKIP(dev);
  // Each parameter is written, as 64 bits, to out[i].
  std::string text = kernel(
      "%out: ptr<u64>, %a: i1, %b: i8, %c: f16, %d: i32, %e: f64, %f: u16, %g: bf16, %h: i64, %i: "
      "f32, %j: u8, %p: ptr<f32>",
      R"(  %t = constant {value = 1} : i1
  %tid = lane_id : i32
  %z = constant {value = 0} : i32
  %first = cmp_eq %tid, %z : i1
  %va = cast %a : u64
  %vb = cast %b : i64
  %vb2 = bitcast %vb : u64
  %vc16 = bitcast %c : u16
  %vc = cast %vc16 : u64
  %vd = cast %d : i64
  %vd2 = bitcast %vd : u64
  %ve = bitcast %e : u64
  %vf = cast %f : u64
  %vg16 = bitcast %g : u16
  %vg = cast %vg16 : u64
  %vh = bitcast %h : u64
  %vi32 = bitcast %i : u32
  %vi = cast %vi32 : u64
  %vj = cast %j : u64
  %one = constant {value = 1.0} : f32
  global_store %p, %first, %one {align = 4, width = 1}
  %c1 = constant {value = 1} : i32
  %c2 = constant {value = 2} : i32
  %c3 = constant {value = 3} : i32
  %c4 = constant {value = 4} : i32
  %c5 = constant {value = 5} : i32
  %c6 = constant {value = 6} : i32
  %c7 = constant {value = 7} : i32
  %c8 = constant {value = 8} : i32
  %c9 = constant {value = 9} : i32
  %c10 = constant {value = 10} : i32
  global_store %out, %first, %va {align = 8, width = 1}
  %o1 = ptr_add %out, %c1 : ptr<u64>
  global_store %o1, %first, %vb2 {align = 8, width = 1}
  %o2 = ptr_add %out, %c2 : ptr<u64>
  global_store %o2, %first, %vc {align = 8, width = 1}
  %o3 = ptr_add %out, %c3 : ptr<u64>
  global_store %o3, %first, %vd2 {align = 8, width = 1}
  %o4 = ptr_add %out, %c4 : ptr<u64>
  global_store %o4, %first, %ve {align = 8, width = 1}
  %o5 = ptr_add %out, %c5 : ptr<u64>
  global_store %o5, %first, %vf {align = 8, width = 1}
  %o6 = ptr_add %out, %c6 : ptr<u64>
  global_store %o6, %first, %vg {align = 8, width = 1}
  %o7 = ptr_add %out, %c7 : ptr<u64>
  global_store %o7, %first, %vh {align = 8, width = 1}
  %o8 = ptr_add %out, %c8 : ptr<u64>
  global_store %o8, %first, %vi {align = 8, width = 1}
  %o9 = ptr_add %out, %c9 : ptr<u64>
  global_store %o9, %first, %vj {align = 8, width = 1}
  %o10 = ptr_add %out, %c10 : ptr<u64>
  %vl = cast %tid : u64
  global_store %o10, %first, %vl {align = 8, width = 1})",
      "", 32);
  auto k = load(dev, text);
  double e = -1.0 / 3.0;
  float f32 = 6.5f;
  uint64_t ebits, fbits = 0;
  std::memcpy(&ebits, &e, 8);
  std::memcpy(&fbits, &f32, 4);
  auto out =
      run(dev, k, Grid(1),
          {buffer(std::vector<uint64_t>(11, 0xdead)), scalar<uint8_t>(1), scalar<int8_t>(-5),
           scalar<uint16_t>(0x3c00), scalar<int32_t>(-123456), scalar(e), scalar<uint16_t>(65000),
           scalar<uint16_t>(0x4049), scalar<int64_t>(-(int64_t{1} << 40)), scalar(f32),
           scalar<uint8_t>(250), buffer(std::vector<float>{0.0f})});
  std::vector<uint64_t> got = as<uint64_t>(out[0]);
  CHECK(got[0] == 1);
  CHECK(got[1] == static_cast<uint64_t>(int64_t{-5}));
  CHECK(got[2] == 0x3c00);
  CHECK(got[3] == static_cast<uint64_t>(int64_t{-123456}));
  CHECK(got[4] == ebits);
  CHECK(got[5] == 65000);
  CHECK(got[6] == 0x4049);
  CHECK(got[7] == static_cast<uint64_t>(-(int64_t{1} << 40)));
  CHECK(got[8] == fbits);
  CHECK(got[9] == 250);
  CHECK(got[10] == 0);
  CHECK(as<float>(out[11])[0] == 1.0f);  // the pointer parameter after them all
}

TEST_CASE("cuda: three-dimensional grids give each program its ids") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::string text = kernel("%out: ptr<i32>", R"(  %x = program_id {axis = 0} : i32
  %y = program_id {axis = 1} : i32
  %z = program_id {axis = 2} : i32
  %nx = num_programs {axis = 0} : i32
  %ny = num_programs {axis = 1} : i32
  %yz = mul %z, %ny : i32
  %row = add %yz, %y : i32
  %r2 = mul %row, %nx : i32
  %i = add %r2, %x : i32
  %c1000 = constant {value = 1000} : i32
  %v0 = mul %z, %c1000 : i32
  %c100 = constant {value = 100} : i32
  %v1 = mul %y, %c100 : i32
  %v2 = add %v0, %v1 : i32
  %v = add %v2, %x : i32
  %lane = lane_id : i32
  %c0 = constant {value = 0} : i32
  %first = cmp_eq %lane, %c0 : i1
  %p = ptr_add %out, %i : ptr<i32>
  global_store %p, %first, %v {align = 4, width = 1})",
                            "", 64);
  auto out = run(dev, load(dev, text), Grid(7, 5, 3), {buffer(std::vector<int>(105, -1))});
  std::vector<int> got = as<int>(out[0]);
  for (int z = 0; z < 3; ++z)
    for (int y = 0; y < 5; ++y)
      for (int x = 0; x < 7; ++x) CHECK(got[(z * 5 + y) * 7 + x] == z * 1000 + y * 100 + x);
}

TEST_CASE("cuda: dynamic shared memory above 48 KiB is opted in per kernel") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (target_of(dev).max_shared_bytes < 100000) {
    MESSAGE("SKIP: the device allows only " << target_of(dev).max_shared_bytes
                                            << " bytes of shared memory");
    return;
  }
  // 24576 f32 = 96 KiB: each thread writes its slots, then reads a neighbour's after a barrier.
  std::string text = kernel("%out: ptr<f32>", R"(  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c32 = constant {value = 32} : i32
  %t0 = mul %sg, %c32 : i32
  %tid = add %t0, %lane : i32
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %c128 = constant {value = 128} : i32
  %c24576 = constant {value = 24576} : i32
  %unused = for %tid, %c24576, %c128, %c0 ({
  ^(%i: i32, %d: i32):
    %v = cast %i : f32
    shared_store %i, %v {buffer = 0, width = 1}
    yield %d
  }) : i32
  barrier
  %c24575 = constant {value = 24575} : i32
  %j = sub %c24575, %tid : i32
  %r = shared_load %j {buffer = 0, width = 1} : f32
  %t = constant {value = 1} : i1
  %p = ptr_add %out, %tid : ptr<f32>
  global_store %p, %t, %r {align = 4, width = 1})",
                            "shared_0 = tile<24576xf32>");
  auto k = load(dev, text);
  CHECK(k->shared_bytes == 98304);
  auto out = run(dev, k, Grid(2), {buffer(std::vector<float>(128, 0))});
  std::vector<float> got = as<float>(out[0]);
  for (int t = 0; t < 128; ++t) CHECK(got[t] == 24575 - t);
}

TEST_CASE("cuda: events time work and order streams") {
  CUDA_DEVICE_OR_SKIP(dev);
  tessera::Stream s1 = dev.create_stream(), s2 = dev.create_stream();
  tessera::Event start = dev.create_event(), end = dev.create_event(), done = dev.create_event();
  auto a = dev.alloc<float>(1 << 24);
  auto b = dev.alloc<float>(1 << 24);
  start.record(s1);
  a.fill(1.5f, &s1);
  done.record(s1);
  end.record(s1);
  done.wait_in(s2);
  b.copy_from(a, &s2);  // after the fill, through the event
  CHECK(b.slice((1 << 24) - 4, 4).download(&s2) == std::vector<float>(4, 1.5f));
  double ms = end.elapsed_since(start);
  CHECK(ms >= 0);
  CHECK(ms < 10000);
  auto [kind, what] = error_of([&] { dev.create_event().elapsed_since(start); });
  CHECK(kind == ErrorKind::Argument);
  CHECK(what == "elapsed_ms (end event): the event was never recorded");
}

TEST_CASE("cuda: cubins are cached on disk, and a damaged entry is compiled again") {
  CUDA_DEVICE_OR_SKIP(dev);
  auto dir =
      std::filesystem::temp_directory_path() / ("tessera_cache_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
  std::string text = kernel("%out: ptr<i32>", R"(  %c = constant {value = 41} : i32
  %t = constant {value = 1} : i1
  global_store %out, %t, %c {align = 4, width = 1})");
  load(dev, text);
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir / "cuda"))
    entries.push_back(e.path());
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].extension() == ".cubin");
  auto size = std::filesystem::file_size(entries[0]);
  CHECK(size > 100);
  std::ofstream(entries[0], std::ios::binary | std::ios::trunc) << "TSRCUB1\ngarbage";
  auto k = load(dev, text);  // recompiled
  CHECK(as<int>(run(dev, k, Grid(1), {buffer(std::vector<int>{0})})[0])[0] == 41);
  CHECK(std::filesystem::file_size(entries[0]) == size);  // rewritten whole
  unsetenv("TESSERA_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cuda_test
