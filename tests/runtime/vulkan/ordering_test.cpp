// \file Cross-stream order on vulkan:0 (tests/runtime/ordering_cases.h). Lavapipe runs each
// stream's submissions on its own queue thread, and an unsubmitted batch waits for nobody, so
// unordered work reads stale data there.
#include <doctest/doctest.h>

#include "runtime/vulkan/vk_test.h"
#include "../ordering_cases.h"

namespace oc = ordering_cases;

namespace {

/// Spin iterations (times ordering_cases::kInner steps) for `dev`. Lavapipe (llvmpipe) ends a
/// shader's loops after 65535 iterations in all, so it gets 500 x 64; there the unordered cases
/// fail anyway, since a stream's open batch is not submitted until someone waits for it.
int spin_iters(const tessera::Device& dev) {
  return dev.info().is_cpu ? 500 : 30000;
}

}  // namespace

TEST_CASE("vulkan ordering: dev.upload then a launch on another stream sees the data") {
  VKTEST_DEVICE(dev);
  oc::upload_then_launch_on_another_stream(dev, spin_iters(dev));
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan ordering: a launch on another stream then download() returns finished data") {
  VKTEST_DEVICE(dev);
  oc::launch_on_another_stream_then_download(dev, spin_iters(dev));
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan ordering: transfers given a stream keep that stream's order") {
  VKTEST_DEVICE(dev);
  oc::explicit_stream_transfers_keep_their_stream_order(dev, spin_iters(dev));
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan ordering: an event recorded on the default stream follows the other streams") {
  VKTEST_DEVICE(dev);
  oc::event_on_default_stream_follows_other_streams(dev, spin_iters(dev));
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan ordering: streams that went away are skipped, later ones are ordered") {
  VKTEST_DEVICE(dev);
  oc::streams_that_went_away(dev, spin_iters(dev));
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan ordering: streams and the default stream used from several threads") {
  VKTEST_DEVICE(dev);
  oc::threads_share_the_order(dev, 5);
  vktest::expect_no_validation_messages(vktest::impl(dev));
}
