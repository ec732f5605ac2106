/// \file Cross-stream order on cuda:0 (tests/runtime/ordering_cases.h): every Tessera stream is
/// a non-blocking CUDA stream, so only the public layer's joins order them (SKIPs without a GPU).
#include "helpers.h"
#include "../ordering_cases.h"

namespace cuda_test {
namespace {

namespace oc = ordering_cases;

/// Spin iterations that keep a stream of an H200 busy for about 60 ms (30000 took 0.6 s).
constexpr int kSpin = 3000;  // times ordering_cases::kInner steps

TEST_CASE("cuda ordering: dev.upload then a launch on another stream sees the data") {
  CUDA_DEVICE_OR_SKIP(dev);
  oc::upload_then_launch_on_another_stream(dev, kSpin);
}

TEST_CASE("cuda ordering: a launch on another stream then download() returns finished data") {
  CUDA_DEVICE_OR_SKIP(dev);
  oc::launch_on_another_stream_then_download(dev, kSpin);
}

TEST_CASE("cuda ordering: transfers given a stream keep that stream's order") {
  CUDA_DEVICE_OR_SKIP(dev);
  oc::explicit_stream_transfers_keep_their_stream_order(dev, kSpin);
}

TEST_CASE("cuda ordering: an event recorded on the default stream follows the other streams") {
  CUDA_DEVICE_OR_SKIP(dev);
  oc::event_on_default_stream_follows_other_streams(dev, kSpin);
}

TEST_CASE("cuda ordering: streams that went away are skipped, later ones are ordered") {
  CUDA_DEVICE_OR_SKIP(dev);
  oc::streams_that_went_away(dev, kSpin);
}

TEST_CASE("cuda ordering: streams and the default stream used from several threads") {
  CUDA_DEVICE_OR_SKIP(dev);
  oc::threads_share_the_order(dev, 20);
}

}  // namespace
}  // namespace cuda_test
