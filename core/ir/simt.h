/// \file The SIMT IR: the per-thread program that every target emits from.
///
/// The SIMT IR reuses the tile IR's containers (Module, Function, Region, Op, Value), its printer,
/// parser, verifier and scalar passes. A Function whose attribute `stage` is "simt" is a SIMT
/// kernel: every value is a scalar or a pointer (no tiles), and it runs as one *workgroup* per
/// program of the grid. Its function attributes say how:
///
///   stage = "simt"
///   threads = T          threads per workgroup (32 x num_warps)
///   subgroup = S         the subgroup size it was lowered for (8, 32, 64); T % S == 0
///   shared_<i> = tile<Nxdtype>
///                        shared-memory buffer i (i = 0, 1, ... numbered densely, each written
///                        without leading zeros: shared_0, shared_1, ..., shared_10): a 1-D tile
///                        type whose element count N (any positive count, not necessarily a power
///                        of two) and non-pointer dtype give the buffer's size and element type,
///                        e.g. `shared_0 = tile<1024xf32>`. Buffers do not overlap and are
///                        uninitialized when the workgroup starts. Other attribute names that
///                        start with `shared` are errors.
///   target = "<text>"    the target description it was lowered for (core/target); optional
///
/// Function attributes print in the function header (one line, sorted by name):
///   func @k(%x: ptr<f32>, %n: i32) attributes {shared_0 = tile<4xf32>, stage = "simt",
///           subgroup = 32, target = "cuda-sm_90", threads = 128} loc(...) {
/// A function without `stage` is a tile-IR function; `stage` has no other value than "simt".
///
/// Thread t of a workgroup is lane t % S of subgroup t / S.
///
/// Ops only the SIMT IR has (trait kSimt):
///   lane_id                  i32 in [0, S)
///   subgroup_id              i32 in [0, T / S)
///   barrier                  every thread of the workgroup waits for the others; shared-memory
///                            writes before it are visible to reads after it. It must be reached
///                            by all threads (uniform control flow).
///   shuffle %v, %n {mode}    the value of %v (a scalar or a pointer; the result has its type)
///                            in another lane of the same subgroup, %n an i32:
///                            mode "xor": lane ^ n; "idx": lane n; "up": lane - n; "down": lane + n
///                            ("up"/"down" past the subgroup's end give the caller's own %v).
///                            All lanes of the subgroup must execute it together.
///   shared_load %index {buffer, width}
///                            `width` (1, 2, 4, 8; at most the buffer's count) consecutive
///                            elements of shared buffer `buffer` starting at element %index (i32,
///                            a multiple of width): `width` results of the buffer's dtype.
///   shared_store %index, %v0, ... {buffer, width}
///                            writes the `width` values (of the buffer's dtype) to consecutive
///                            elements starting at %index (as for shared_load).
///   global_load %ptr, %pred, %other0, ... {width, align, cache?}
///                            if %pred (i1): `width` (1, 2, 4, 8, 16) consecutive elements at %ptr
///                            (a scalar pointer, `align`-byte aligned; align a power of two >= the
///                            element size, i1 counting one byte); else the `width` %other values
///                            (of the pointee dtype), touching no memory. `width` results of the
///                            pointee dtype. `cache` is an optional string hint.
///   global_store %ptr, %pred, %v0, ... {width, align}
///                            if %pred: writes the `width` values (of the pointee dtype) to
///                            consecutive elements at %ptr (width and align as for global_load).
///   print %i0.., %v {prefix, hex, rank}
///                            prints element (i0, ..) of a tile of rank `rank` (default 0) held by
///                            this thread (rank 0: a scalar), as the tile interpreter does: `rank`
///                            i32 indices, then exactly one scalar or pointer value.
///   assert %i0.., %cond {message, rank}
///                            a false %cond (an i1 scalar, after `rank` i32 indices) is a device
///                            fault naming the message and the index.
///
/// Every scalar tile-IR op keeps its meaning on scalars: program_id, num_programs, constant,
/// the elementwise ops, cast, bitcast, where, ptr_add, atomic_rmw and atomic_cas (scalar
/// pointer, value and mask), multiple_of, max_contiguous, assume, and the structured control
/// flow (for, if, while, yield, condition). Tile-only ops (arange, splat, broadcast, expand_dims,
/// reshape, permute, cat, load, store, reduce*, scan*, dot) do not appear.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/ir.h"
#include "core/ir/ops.h"

namespace tessera::ir {

/// True if `fn` is a SIMT-stage function (attribute stage = "simt").
bool is_simt(const Function& fn);

/// The attributes of a SIMT function. The getters expect a verified SIMT function: a missing or
/// malformed attribute is an internal error.
int simt_threads(const Function& fn);        ///< T, attribute `threads`
int simt_subgroup(const Function& fn);       ///< S, attribute `subgroup`
int simt_num_subgroups(const Function& fn);  ///< T / S
/// The `target` attribute; empty when absent.
std::string simt_target(const Function& fn);

/// One shared-memory buffer: `count` elements of `dtype`.
struct SharedBuffer {
  DType dtype;
  int64_t count;

  int64_t bytes() const { return count * dtype_bytes(dtype); }
  bool operator==(const SharedBuffer&) const = default;
};

/// The shared buffers of `fn`, indexed by buffer number (shared_0 first); empty for a function
/// without any.
std::vector<SharedBuffer> shared_buffers(const Function& fn);
/// Bytes of shared memory `fn` needs when each buffer starts 16-byte aligned: the sum of the
/// buffers' sizes, each rounded up to a multiple of 16.
int64_t shared_memory_bytes(const Function& fn);

/// "shared_<index>", the attribute that declares buffer `index`.
std::string shared_buffer_attr(int64_t index);
/// The index of a buffer attribute name "shared_<i>" (i without leading zeros); nullopt for
/// any other name.
std::optional<int64_t> parse_shared_buffer_attr(std::string_view name);

/// Marks `fn` as a SIMT function: sets stage, threads, subgroup and (when non-empty) target.
void set_simt_attrs(Function& fn, int threads, int subgroup, std::string_view target = {});
/// Declares the next shared buffer (shared_<n> for n buffers so far); returns its index.
int64_t add_shared_buffer(Function& fn, DType dtype, int64_t count);

enum class ShuffleMode { Xor, Idx, Up, Down };
std::string_view to_string(ShuffleMode m);
bool parse_shuffle_mode(std::string_view s, ShuffleMode* out);

// Typed views of the SIMT ops (see ops.h for the tile ops'). The accessors expect verified IR.
struct ShuffleOp : OpView<OpKind::Shuffle> {
  using OpView::OpView;
  Value* value() const { return op->operand(0); }
  Value* lane() const { return op->operand(1); }  ///< %n: the xor mask, lane, or distance
  ShuffleMode mode() const;
};
struct SharedLoadOp : OpView<OpKind::SharedLoad> {
  using OpView::OpView;
  Value* index() const { return op->operand(0); }
  int64_t buffer() const { return op->int_attr("buffer"); }
  int width() const { return static_cast<int>(op->int_attr("width")); }
};
struct SharedStoreOp : OpView<OpKind::SharedStore> {
  using OpView::OpView;
  Value* index() const { return op->operand(0); }
  std::span<Value* const> values() const {
    return {op->operands.data() + 1, op->operands.size() - 1};
  }
  int64_t buffer() const { return op->int_attr("buffer"); }
  int width() const { return static_cast<int>(op->int_attr("width")); }
};
struct GlobalLoadOp : OpView<OpKind::GlobalLoad> {
  using OpView::OpView;
  Value* ptr() const { return op->operand(0); }
  Value* pred() const { return op->operand(1); }
  std::span<Value* const> others() const {
    return {op->operands.data() + 2, op->operands.size() - 2};
  }
  int width() const { return static_cast<int>(op->int_attr("width")); }
  int64_t align() const { return op->int_attr("align"); }
  std::string cache() const { return op->str_attr_or("cache", ""); }
};
struct GlobalStoreOp : OpView<OpKind::GlobalStore> {
  using OpView::OpView;
  Value* ptr() const { return op->operand(0); }
  Value* pred() const { return op->operand(1); }
  std::span<Value* const> values() const {
    return {op->operands.data() + 2, op->operands.size() - 2};
  }
  int width() const { return static_cast<int>(op->int_attr("width")); }
  int64_t align() const { return op->int_attr("align"); }
};

/// `print` and `assert` in a SIMT function: `rank` (default 0) i32 indices, then the printed
/// value or the condition (AssertOp::cond() and the tile-IR reading of `print` do not apply).
struct SimtDebugOp {
  const Op* op;
  explicit SimtDebugOp(const Op* o);
  int rank() const { return static_cast<int>(op->int_attr_or("rank", 0)); }
  std::span<Value* const> indices() const { return {op->operands.data(), op->operands.size() - 1}; }
  Value* value() const { return op->operands.back(); }  ///< the value or the condition
};

}  // namespace tessera::ir
