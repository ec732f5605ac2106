/// \file Device enumeration over every backend, opening by name, and Device::best().
#include "runtime/device.h"

#include <algorithm>
#include <mutex>

#include "core/support/error.h"

namespace tessera {
namespace {

/// Every backend's enumerate function, in one table.
constexpr rt::DriverReport (*kDrivers[])() = {
    rt::enumerate_host,
    rt::enumerate_cuda,
    rt::enumerate_vulkan,
};

/// Every device, made on first use. Its destructor runs at exit before the drivers' own teardown
/// (the drivers are loaded and initialized while it is made, so their exit handlers run after
/// it) and closes every device then: kernels, buffers and streams that statics made before main
/// hold (a TESSERA_KERNEL at namespace scope, the launchers of tessera_add_kernels) are
/// destroyed after the drivers are gone, and must find nothing left to give back.
struct Registry {
  std::vector<std::shared_ptr<rt::DeviceImpl>> devices;  // best first
  std::vector<std::string> unavailable;
  Registry() = default;
  Registry(Registry&&) = default;
  ~Registry() {
    for (const auto& d : devices) d->close();
  }
};

const Registry& registry() {
  static Registry reg = [] {
    Registry r;
    for (auto driver : kDrivers) {
      rt::DriverReport report = driver();
      if (!report.unavailable.empty()) r.unavailable.push_back(report.unavailable);
      for (auto& d : report.devices) r.devices.push_back(std::move(d));
    }
    std::stable_sort(r.devices.begin(), r.devices.end(),
                     [](const auto& a, const auto& b) { return a->info().rank > b->info().rank; });
    return r;
  }();
  return reg;
}

}  // namespace

Device::Listing Device::enumerate() {
  Listing l;
  for (const auto& d : registry().devices) l.devices.push_back(d->info());
  l.unavailable = registry().unavailable;
  return l;
}

Device Device::open(std::string_view name) {
  std::string names;
  for (const auto& d : registry().devices) {
    if (d->info().name == name) return Device(d);
    names += (names.empty() ? "" : ", ") + d->info().name;
  }
  std::string why;
  for (const std::string& u : registry().unavailable) why += "; " + u;
  fail(ErrorKind::Runtime, "no device named '", name, "' (devices: ", names, why, ")");
}

Device Device::best() {
  TESSERA_CHECK(!registry().devices.empty(),
                "no devices at all (the host device is always present)");
  return Device(registry().devices.front());
}

}  // namespace tessera
