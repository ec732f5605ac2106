// \file Graph capture and replay on the interpreters (tests/runtime/graph_cases.h): a replay runs
// the recorded launches again, one by one.
#include <doctest/doctest.h>

#include "../graph_cases.h"

namespace gc = graph_cases;
using tessera::Device;

TEST_CASE("graph: 3 dependent kernels replayed 5 times equal 15 eager launches (host, simt:32)") {
  for (const char* name : {"host", "simt:32"}) {
    CAPTURE(std::string(name));
    gc::replay_equals_eager(Device::open(name), 5);
  }
}

TEST_CASE(
    "graph: a replay reads the buffers' current contents, and the graph holds its buffers (host, simt:32)") {
  for (const char* name : {"host", "simt:32"}) {
    CAPTURE(std::string(name));
    gc::replay_sees_new_contents(Device::open(name));
  }
}

TEST_CASE(
    "graph: transfers, events, nesting and other devices are errors naming them (host, simt:32)") {
  gc::capture_errors(Device::open("host"), Device::open("simt:32"));
  gc::capture_errors(Device::open("simt:32"), Device::open("host"));
}
