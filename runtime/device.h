/// \file Devices: enumerate, open by name ("host", "cuda:0", "vulkan:1"), or take the best one.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/backend.h"
#include "runtime/buffer.h"
#include "runtime/stream.h"

namespace tessera {

class Device {
 public:
  /// Every device of every backend, best first, plus why any backend has none.
  struct Listing {
    std::vector<DeviceInfo> devices;
    std::vector<std::string> unavailable;  ///< "cuda unavailable: ...", one per missing backend
  };
  static Listing enumerate();
  /// Opens a device by name; an unknown or unavailable name is ErrorKind::Runtime naming the
  /// devices that exist.
  static Device open(std::string_view name);
  /// CUDA, else a Vulkan GPU, else lavapipe, else the host interpreter.
  static Device best();

  const DeviceInfo& info() const { return impl_->info(); }
  const std::string& name() const { return impl_->info().name; }

  template <class T>
  Buffer<T> alloc(size_t count) const {
    return Buffer<T>(BufferBase::allocate(impl_, detail::checked_bytes("alloc", count, sizeof(T)),
                                          tl::dtype_of<T>()));
  }
  /// A new buffer holding `data`, uploaded on the default stream: work launched later on any
  /// stream of this device sees the data (class Stream says why).
  template <class T>
  Buffer<T> upload(std::span<const T> data) const {
    Buffer<T> b = alloc<T>(data.size());
    b.upload(data);
    return b;
  }
  template <class T>
  Buffer<T> upload(const std::vector<T>& data) const {
    Buffer<T> b = alloc<T>(data.size());
    b.upload(data);
    return b;
  }

  /// The stream that launches and transfers use unless one is given. Its work is ordered after
  /// the earlier work of every other stream of the device, and theirs after its (class Stream).
  Stream default_stream() const { return adopted(impl_->default_stream(), true); }
  /// A new stream: ordered with the default stream, not with other created streams (class Stream).
  Stream create_stream() const { return adopted(impl_->create_stream(), false); }
  Event create_event() const { return Event(impl_, impl_->create_event()); }
  /// Waits for all work of all streams of this device.
  void synchronize() const { impl_->synchronize(); }

  std::shared_ptr<rt::DeviceImpl> impl() const { return impl_; }
  bool operator==(const Device& o) const { return impl_ == o.impl_; }

 private:
  explicit Device(std::shared_ptr<rt::DeviceImpl> impl) : impl_(std::move(impl)) {}
  Stream adopted(std::shared_ptr<rt::StreamImpl> s, bool is_default) const {
    rt::adopt_stream(*impl_, s, is_default);
    return Stream(std::move(s));
  }
  std::shared_ptr<rt::DeviceImpl> impl_;
};

}  // namespace tessera
