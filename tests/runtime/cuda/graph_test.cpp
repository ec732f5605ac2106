/// \file Graph capture and replay on cuda:0 (tests/runtime/graph_cases.h): a capture is a CUDA
/// stream capture instantiated as a CUDA graph, a replay one cuGraphLaunch (SKIPs without a GPU).
#include "helpers.h"
#include "../graph_cases.h"

namespace gc = graph_cases;
using cuda_test::device_or_skip;
using tessera::Device;

TEST_CASE("cuda graph: 3 dependent kernels replayed 5 times equal 15 eager launches") {
  CUDA_DEVICE_OR_SKIP(dev);
  gc::replay_equals_eager(dev, 5);
}

TEST_CASE("cuda graph: 1000 replays of one graph equal 3000 eager launches") {
  CUDA_DEVICE_OR_SKIP(dev);
  gc::replay_equals_eager(dev, 1000);
}

TEST_CASE(
    "cuda graph: a replay reads the buffers' current contents, and the graph holds its buffers") {
  CUDA_DEVICE_OR_SKIP(dev);
  gc::replay_sees_new_contents(dev);
}

TEST_CASE("cuda graph: transfers, events, nesting and other devices are errors naming them") {
  CUDA_DEVICE_OR_SKIP(dev);
  gc::capture_errors(dev, Device::open("host"));
}
