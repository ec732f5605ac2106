/// \file Thread-block clusters (CompileOptions::cluster) on cuda:0: on sm_90 and newer the lowering
/// marks the kernel clustered and the runtime launches it with cuLaunchKernelEx (eagerly and in a
/// captured graph); on older devices the same launch runs without clusters. Either way the result
/// is the one of cluster 1, and a grid whose x is not a multiple of the cluster is refused.
#include <cmath>

#include "helpers.h"
#include "runtime/artifact_cache.h"
#include "samples/kernels/vector_add.h"

namespace cuda_test {
namespace {

constexpr int kBlock = 1024;

TEST_CASE("cuda clusters: a vector add in clusters of 2 equals cluster 1, eager and in a graph") {
  CUDA_DEVICE_OR_SKIP(dev);
  const int n = (1 << 20) + 17;
  // An even grid: the programs past the end are masked off.
  const tessera::Grid grid(2 * tessera::cdiv(tessera::cdiv(n, kBlock), 2));
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) {
    hx[i] = static_cast<float>(i % 1000) * 0.25f;
    hy[i] = 1.0f / static_cast<float>(i + 1);
  }
  auto x = dev.upload(hx), y = dev.upload(hy);
  auto plain = dev.alloc<float>(n), clustered = dev.alloc<float>(n), replayed = dev.alloc<float>(n);
  for (auto* b : {&plain, &clustered, &replayed}) b->fill(NAN);
  auto add = TESSERA_KERNEL(samples::vector_add_kernel, x_ptr, y_ptr, out_ptr, n, BLOCK);
  add[{grid}](x, y, plain, n, kBlock);
  add[{grid, {.cluster = 2}}](x, y, clustered, n, kBlock);
  tessera::Stream s = dev.create_stream();
  tessera::Graph g = s.capture([&] { add[{grid, {.cluster = 2}, &s}](x, y, replayed, n, kBlock); });
  CHECK(g.launches() == 1);
  g.replay(s);
  s.synchronize();
  const std::vector<float> want = plain.download();
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += want[i] != hx[i] + hy[i];
  CHECK(wrong == 0);
  CHECK(clustered.download() == want);
  CHECK(replayed.download() == want);

  // The compile for this device carries the cluster where the target has clusters (sm_90+).
  const tessera::target::Target t = target_of(dev);
  const uint32_t want_cluster = t.sm >= 90 ? 2 : 1;
  MESSAGE(dev.info().description << ": cluster " << want_cluster);
  tessera::CompileOptions options;
  options.cluster = 2;
  const tessera::target::Artifact a =
      tessera::rt::jit_compile(*add.traced(x, y, plain, n, kBlock), t, options);
  CHECK(a.cluster == want_cluster);
  auto k = tessera::rt::cuda::load(*dev.impl(), a);
  CHECK(k->cluster == want_cluster);

  // A grid whose x is not a multiple of the cluster: the kernel's check on every device...
  auto [kind, message] = error_of([&] { add[{3, {.cluster = 2}}](x, y, clustered, n, kBlock); });
  CHECK(kind == ErrorKind::Argument);
  CHECK(message ==
        "kernel 'vector_add_kernel': cluster = 2 groups the grid's x into clusters of 2 programs, "
        "but grid x = 3 is not a multiple of it");
  // ... and the CUDA launch's, for a clustered kernel launched directly.
  if (want_cluster == 1) return;
  REQUIRE(k->params.slots.size() == 4);
  std::tie(kind, message) = error_of([&] {
    run(dev, k, Grid(3), {buffer(hx), buffer(hy), buffer(std::vector<float>(n)), scalar(n)});
  });
  CHECK(kind == ErrorKind::Argument);
  CHECK(message ==
        "kernel 'vector_add_kernel': cluster = 2 groups the grid's x into clusters of 2 programs, "
        "but grid x = 3 is not a multiple of it");
  const std::vector<std::vector<std::byte>> out =
      run(dev, k, grid, {buffer(hx), buffer(hy), buffer(std::vector<float>(n)), scalar(n)});
  CHECK(as<float>(out[2]) == want);
}

}  // namespace
}  // namespace cuda_test
