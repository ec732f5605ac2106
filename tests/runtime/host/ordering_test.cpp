// \file Cross-stream order on the interpreters (tests/runtime/ordering_cases.h): each stream is a
// worker thread there, so unordered work really overtakes.
#include <doctest/doctest.h>

#include "../ordering_cases.h"

namespace oc = ordering_cases;
using tessera::Device;

namespace {

/// Iterations of the spin kernel that keep a stream busy for tens of milliseconds on `name`.
int spin_iters(const std::string& name) {
  return name == "host" ? 300 : 60;
}

}  // namespace

TEST_CASE("ordering: dev.upload then a launch on another stream sees the data (host, simt:32)") {
  for (const char* name : {"host", "simt:32"}) {
    CAPTURE(std::string(name));
    oc::upload_then_launch_on_another_stream(Device::open(name), spin_iters(name));
  }
}

TEST_CASE(
    "ordering: a launch on another stream then download() returns finished data (host, simt:32)") {
  for (const char* name : {"host", "simt:32"}) {
    CAPTURE(std::string(name));
    oc::launch_on_another_stream_then_download(Device::open(name), spin_iters(name));
  }
}

TEST_CASE("ordering: transfers given a stream keep that stream's order (host, simt:32)") {
  for (const char* name : {"host", "simt:32"}) {
    CAPTURE(std::string(name));
    oc::explicit_stream_transfers_keep_their_stream_order(Device::open(name), spin_iters(name));
  }
}

TEST_CASE(
    "ordering: an event recorded on the default stream follows the other streams (host, simt:32)") {
  for (const char* name : {"host", "simt:32"}) {
    CAPTURE(std::string(name));
    oc::event_on_default_stream_follows_other_streams(Device::open(name), spin_iters(name));
  }
}

TEST_CASE("ordering: streams that went away are skipped, later ones are ordered (host)") {
  oc::streams_that_went_away(Device::open("host"), spin_iters("host"));
}

TEST_CASE("ordering: streams and the default stream used from several threads (host, simt:32)") {
  oc::threads_share_the_order(Device::open("host"), 20);
  oc::threads_share_the_order(Device::open("simt:32"), 5);
}
