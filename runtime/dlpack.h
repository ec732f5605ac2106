/// \file DLPack interop: a Buffer exported as a DLManagedTensor, and a DLManagedTensor imported
/// as a Buffer, so tensors pass between Tessera and PyTorch, JAX, CuPy, ... without copies.
///
/// Compile-time optional: the API exists where <dlpack/dlpack.h> (Debian 12: libdlpack-dev,
/// DLPack 0.6) is found when the including file is compiled, and TESSERA_HAS_DLPACK is then 1.
/// Tessera ships no copy of the header; libtessera is built with it by scripts/install-deps.
#pragma once

#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>

#include <cstdint>
#include <span>

#include "buffer.h"
#include "device.h"

/// 1 where the DLPack API below is available.
#define TESSERA_HAS_DLPACK 1

namespace tessera {

/// Exports `buffer` as a DLManagedTensor: 1-D of all its elements, or of `shape` (row-major,
/// compact: no strides), whose element count must be the buffer's. The tensor refers to the
/// buffer's memory (no copy) and keeps it alive until its deleter is called, which the consumer
/// must do exactly once. Device types: kDLCPU for host and simt devices, kDLCUDA (with the
/// device's ordinal) for cuda:N. Errors: an empty buffer or a shape of another element count
/// (ErrorKind::Argument); a vulkan device (DLPack's kDLVulkan has no device address, so
/// ErrorKind::Unsupported) and bool buffers (DLPack 0.6 has no bool type: Unsupported).
/// Work enqueued on the buffer is not waited for: synchronize before the consumer reads.
DLManagedTensor* to_dlpack(const BufferBase& buffer, std::span<const int64_t> shape = {});

/// Imports a DLManagedTensor as a buffer of `device` over its memory (no copy), of all its
/// elements in row-major order. On success Tessera owns `tensor` and calls its deleter when the
/// last buffer referring to the memory goes; on an error the tensor is untouched and still the
/// caller's. The tensor's device must be `device`'s: kDLCPU for host and simt devices, kDLCUDA
/// with the same ordinal for cuda:N (and its memory in the primary context, as Device::wrap
/// checks). Errors (ErrorKind::Argument): a null tensor or data pointer, another device, strides
/// that are not compact row-major (naming the dimension and both strides), a negative extent;
/// ErrorKind::Unsupported: kDLVulkan and other device types, vector dtypes (lanes > 1) and
/// dtypes Tessera lacks.
BufferBase from_dlpack(const Device& device, DLManagedTensor* tensor);

namespace detail {
/// Throws ErrorKind::Argument unless `tensor`'s dtype is `want`.
void check_dlpack_dtype(const DLManagedTensor* tensor, ir::DType want);
}  // namespace detail

/// from_dlpack(device, tensor) as a typed buffer; a tensor of another dtype is an
/// ErrorKind::Argument error naming both (and leaves the tensor the caller's).
template <class T>
Buffer<T> from_dlpack(const Device& device, DLManagedTensor* tensor) {
  detail::check_dlpack_dtype(tensor, tl::dtype_of<T>());
  return Buffer<T>(from_dlpack(device, tensor));
}

}  // namespace tessera

#endif
