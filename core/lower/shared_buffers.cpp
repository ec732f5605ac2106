/// \file The lowering's shared memory: the buffers a kernel allocates (dedicated ones for rings
/// and held operands, scratch shared by layout changes and reductions), their reuse once
/// released, and the check against the target's limit per workgroup.
#include <algorithm>

#include "core/lower/lowerer.h"
#include "core/support/error.h"

namespace tessera::lower::detail {

void Lowerer::check_shared_limit() const {
  int64_t bytes = 0;
  for (const Buffer& buf : buffers_) bytes += buf.count * ir::dtype_bytes(buf.dtype);
  if (bytes <= target_.max_shared_bytes) return;
  fail(ErrorKind::Unsupported, "kernel '", src_.name, "' needs ", bytes,
       " bytes of shared memory, but target '", target_.name, "' allows ", target_.max_shared_bytes,
       " per workgroup; use smaller blocks (BLOCK sizes of dots, reductions and layout changes) "
       "or fewer warps (num_warps = ",
       plan_.options().num_warps, ")");
}

int Lowerer::scratch(ir::DType dtype, int64_t count) {
  // The first scratch buffer of the dtype that holds `count`; else the largest, grown.
  int pick = -1;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    if (!b.scratch || b.dtype != dtype) continue;
    if (b.count >= count) return static_cast<int>(i);
    if (pick < 0 || b.count > buffers_[static_cast<size_t>(pick)].count) pick = static_cast<int>(i);
  }
  if (pick < 0) {
    buffers_.push_back({dtype, count, true});
    return static_cast<int>(buffers_.size()) - 1;
  }
  Buffer& b = buffers_[static_cast<size_t>(pick)];
  const int64_t per_kib = 1024 / ir::dtype_bytes(dtype);
  b.count = b.whole_kib ? (count + per_kib - 1) / per_kib * per_kib : count;
  return pick;
}

bool Lowerer::scratch_fits(ir::DType dtype, int64_t count) const {
  // What scratch(dtype, count) would allocate: nothing, the largest buffer grown, or a new one.
  int64_t bytes = 0, largest = -1;
  for (const Buffer& b : buffers_) {
    bytes += b.count * ir::dtype_bytes(b.dtype);
    if (!b.scratch || b.dtype != dtype) continue;
    if (b.count >= count) return true;  // reused as it is
    largest = std::max(largest, b.count);
  }
  bytes += (count - std::max<int64_t>(largest, 0)) * ir::dtype_bytes(dtype);
  return bytes <= target_.max_shared_bytes;
}

void Lowerer::release_buffer(int buffer) {
  Buffer& b = buffers_.at(static_cast<size_t>(buffer));
  b.whole_kib = b.count * ir::dtype_bytes(b.dtype) % 1024 == 0;
  b.scratch = true;
  b.released = true;
}

int Lowerer::new_buffer(ir::DType dtype, int64_t count) {
  // A released dedicated buffer of the dtype (an earlier loop's ring) is taken back: the rings of
  // loops one after another, or in the two copies of remainder versioning (core/passes/
  // rem_version.h), share their shared memory instead of adding it up. The one that holds
  // `count`, else the largest, grown (whole KiB stay whole KiB: wgmma's alignment). A barrier
  // first: other threads may still read what its last user left.
  int pick = -1;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    if (!b.released || !b.scratch || b.dtype != dtype) continue;
    const int64_t have = pick < 0 ? -1 : buffers_[static_cast<size_t>(pick)].count;
    if ((have < count && b.count > have) || (b.count >= count && b.count < have))
      pick = static_cast<int>(i);
  }
  if (pick < 0) {
    buffers_.push_back({dtype, count, false});
    return static_cast<int>(buffers_.size()) - 1;
  }
  Buffer& b = buffers_[static_cast<size_t>(pick)];
  const int64_t per_kib = 1024 / ir::dtype_bytes(dtype);
  const bool whole_kib = b.whole_kib || count % per_kib == 0;
  b.count = std::max(b.count, count);
  if (whole_kib) b.count = (b.count + per_kib - 1) / per_kib * per_kib;
  b.scratch = false;
  b.released = false;
  barrier();
  return pick;
}

}  // namespace tessera::lower::detail
