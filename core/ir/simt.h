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
///   maxnreg = R          registers per thread (1 to 255), optional: PTX `.maxnreg R`. A function
///                        that uses setmaxnreg needs it: ptxas then allocates exactly R (measured
///                        with CUDA 13's ptxas; without `.maxnreg` it allocates what the code
///                        needs), so the workgroup starts with R per thread, the pool's basis.
///   cluster = C          programs per thread-block cluster (1 to 8), optional (absent: 1): the
///                        grid's x is a multiple of C, and programs x = C k ... C k + C - 1 (of
///                        one y and z) form a cluster that runs at once and whose workgroups
///                        reach each other's shared memory (cluster_rank, cluster_barrier,
///                        mbarrier_arrive_tx with a rank, tma_load with multicast). A target
///                        launches the function with that cluster (PTX: cuLaunchKernelEx's
///                        cluster dimension); the ops that use it need the attribute.
///   tensor_map_<i> = "<map>"
///                        TMA tensor map i (numbered densely from 0, written as shared_<i> is):
///                        the text of ir::TensorMapParam::str() (core/ir/abi.h), which parameters
///                        give the tensor's base, dimensions and strides, and the box one copy
///                        moves with its swizzle. A target passes map i to the kernel after the
///                        user's parameters (PTX: `.param .align 64 .b8 [128]`, encoded by the
///                        runtime at launch); the SIMT interpreter reads the same numbers from the
///                        parameters' values.
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
///   barrier {global, id, threads}
///                            every thread of the workgroup waits for the others; shared-memory
///                            writes before it are visible to reads after it, and global-memory
///                            ones too with `global = 1` (tl::debug_barrier). It must be reached
///                            by all threads (uniform control flow). With `threads = N` (a multiple
///                            of 32, at most the workgroup's) it is named barrier `id` (1 to 15;
///                            PTX bar.sync id, N): exactly N threads, whole warps, reach it
///                            together and wait for each other (the consumers of a
///                            warp-specialized loop, without the producer).
///   setmaxnreg {registers, inc}
///                            each warpgroup that executes it (all 128 threads, converged) sets
///                            its register limit per thread to `registers` (24 to 256, a multiple
///                            of 8), raising it (inc = 1) or lowering it (inc = 0) (PTX
///                            setmaxnreg, sm_90a); values are kept. Every warpgroup starts with
///                            the function's `maxnreg` (required) per thread and the workgroup's
///                            pool with none: lowering gives the difference to the pool, raising
///                            takes it and waits until the pool holds enough (forever, if no
///                            other warpgroup lowers its limit: a GPU hangs). The SIMT interpreter
///                            keeps the counts: a raise below or a lowering above the current
///                            limit, and a raise that can never be met, are faults.
///   warp_specialize {roles = [n0, n1, ...]} ({ role 0 }, { role 1 }, ...)
///                            the workgroup splits into roles: region k runs the n_k threads
///                            after the first k roles' (n0 + n1 + ... = T, each a multiple of
///                            32), all roles at once; the op ends when every role has. At the
///                            function's top level only; the regions take no arguments and yield
///                            nothing. The roles run independently (a producer warpgroup and its
///                            consumers): they synchronize through mbarriers, and a role's own
///                            threads through named barriers (a workgroup barrier inside a role
///                            is an error). The SIMT interpreter runs the roles as cooperative
///                            tasks in order: a role runs until it waits on an mbarrier phase not
///                            yet complete, then the next; every role waiting is a fault (the
///                            hang a GPU shows), naming each role's wait.
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
///   mma %a..., %b..., %c... {shape, a}
///                            a matrix-fragment product, D = A x B + C, of a 16xK tile A, a Kx8
///                            tile B and a 16x8 tile C held by the 32 lanes of a subgroup (S must
///                            be 32; every lane executes it together, in uniform control flow)
///                            exactly as PTX's mma.sync.aligned.<shape>.row.col fragments hold
///                            them. (shape, a) is one of
///                              ("m16n8k16", "f16" or "bf16")  K = 16: 8 A and 4 B values of that
///                                                             dtype, C and D f32
///                              ("m16n8k8", "tf32")            K = 8: 4 A and 2 B f32 values,
///                                                             each rounded to TF32 first (nearest,
///                                                             ties away: cvt.rna.tf32.f32), C, D
///                                                             f32
///                              ("m16n8k32", "i8")             K = 32: 16 A and 8 B i8 values,
///                                                             C and D i32
///                            Operands: the A values, the B values, then 4 C values; results: the
///                            4 D values. With g = lane >> 2, t = lane & 3 and e = 4 / the A/B
///                            element bytes (elements per 32-bit register: 2, 1, 4), lane `lane`
///                            holds
///                              A value i:    row g + 8 * ((i / e) % 2),  col t*e + i%e + 4e * (i /
///                              2e) B value i:    row t*e + i%e + 4e * (i / e),  col g C, D value
///                              i: row g + 8 * (i / 2),  col 2t + i%2
///                            (mma_a_coord / mma_b_coord / mma_c_coord below compute these).
///                            D[r][c] = C[r][c] + sum over k of A[r][k] * B[k][c]: every product
///                            is exact; floats accumulate in f32, i8 products in i32 (wrapping).
///                            The order and intermediate precision of the sum within one mma are
///                            unspecified (hardware differs in the last bits of f32); the SIMT
///                            interpreter adds the products to C one at a time, k increasing,
///                            rounding to f32 after each addition (the tile interpreter's `dot`).
///   ldmatrix %index {buffer, count, trans?}
///                            a subgroup-collective load (S = 32, every lane active) of `count`
///                            (1, 2 or 4) matrices of 8 rows x 16 bytes from shared buffer
///                            `buffer` (elements of E = 1, 2 or 4 bytes; a row holds 16 / E of
///                            them), as PTX's ldmatrix.sync.aligned.m8n8.x<count>.b16 does. Lane l
///                            (l < 8 * count) gives in %index (i32, a multiple of 16 / E) the first
///                            element of row l % 8 of matrix l / 8; other lanes' %index is
///                            ignored. Results: count * (4 / E) values of the buffer's dtype;
///                            results j * (4 / E) .. of lane l are the 4 bytes of matrix j at row
///                            l / 4, bytes 4 * (l % 4) .. 4 * (l % 4) + 3. With trans = 1 (E = 2
///                            only) each matrix is read transposed: lane l receives column l / 4
///                            of rows 2 * (l % 4) and 2 * (l % 4) + 1.
///   cp_async %index, %ptr, %pred {buffer}
///                            an asynchronous 16-byte copy from global memory at %ptr (a scalar
///                            pointer to the buffer's dtype, 16-byte aligned) into shared buffer
///                            `buffer` from element %index (i32; 16-byte aligned); if %pred (i1) is
///                            false it reads nothing and writes 16 zero bytes. The copy completes
///                            at some point before the issuing thread's cp_async_wait that retires
///                            its group; other threads may read it after a barrier that follows
///                            that wait. Nothing may read or write its bytes before then.
///   cp_async_commit          closes this thread's group of cp_async copies issued since its
///                            last commit (possibly an empty group).
///   cp_async_wait {pending}  waits until at most `pending` (>= 0) of this thread's committed
///                            groups are incomplete (cp.async.wait_group).
///   mbarrier_init %index, %count {buffer}
///                            initializes the mbarrier at element %index (i32) of shared buffer
///                            `buffer` (of i64 elements) to expect %count (i32, at least 1)
///                            arrivals per phase; phase 0 begins. Every active thread initializes
///                            it (a lowering lets one thread do it, then fence_async_shared and a
///                            barrier before any other thread uses it).
///   mbarrier_arrive_tx %index, %bytes[, %rank] {buffer}
///                            each active thread arrives once at that mbarrier, and its current
///                            phase also expects %bytes (i32, at least 0) more bytes of copies
///                            (PTX mbarrier.arrive.expect_tx). An arrival that the phase no longer
///                            expects is a fault. With %rank (i32, in [0, cluster)): the mbarrier
///                            at the same place in the shared memory of the cluster's program of
///                            that rank (PTX mapa, then the arrive on that address; a release at
///                            CTA scope, as CUTLASS's consumer release).
///   mbarrier_wait %index, %parity {buffer}
///                            each active thread waits until the phase of parity %parity (i32, 0
///                            or 1) of that mbarrier has completed (mbarrier.try_wait.parity in a
///                            loop): the phase whose parity differs from the current phase's. A
///                            wait that no arrival or copy in flight can end hangs a GPU; the SIMT
///                            interpreter reports it as a fault naming the op and what the phase
///                            still expects.
///   mbarrier_inval %index {buffer}
///                            invalidates that mbarrier (PTX mbarrier.inval): its element may then
///                            be initialized again or used as memory. mbarrier_init of an mbarrier
///                            that is still valid is undefined in PTX; the SIMT interpreter reports
///                            it, and an inval with copies still in flight to the mbarrier.
///   tma_load %index, %bar, %c0, ... {buffer, barrier, map}
///                            each active thread issues one TMA tensor copy
///                            (cp.async.bulk.tensor): the box of tensor map `map` whose first
///                            element is at coordinates %c0, ... (i32 elements, one per dimension,
///                            outermost first; the box may lie partly or wholly outside the tensor,
///                            whose elements outside read as zero) is written to shared buffer
///                            `buffer` (of the map's dtype) from element %index, densely,
///                            innermost fastest, 16-byte chunks swizzled as ir::tma_swizzle says
///                            (%index x element bytes a multiple of 128, and of 8 x swizzle). The
///                            copy then completes the box's bytes on the mbarrier at element %bar
///                            of buffer `barrier`. Nothing may read or write the destination
///                            before a wait on that mbarrier sees the phase complete.
///                            With `multicast = 1` a last operand %mask (i32) follows the
///                            coordinates: the copy writes the box to the same place in the
///                            shared memory of every program of the cluster whose rank's bit is
///                            set in %mask, and completes its bytes on the mbarrier at the same
///                            place in each of them (PTX .multicast::cluster).
///   tma_store %index, %c0, ... {buffer, map}
///                            each active thread issues one TMA tensor store
///                            (cp.async.bulk.tensor, shared to global, in a bulk async-group): the
///                            box of tensor map `map` at coordinates %c0, ... (as tma_load's) is
///                            read from shared buffer `buffer` from element %index, laid out as
///                            tma_load writes it, and written to the tensor; the box's elements
///                            outside the tensor are not written. The thread's writes to those
///                            shared bytes must be followed by fence_async_shared before it (and
///                            other threads' by that fence and a barrier). Nothing may write the
///                            source before a tma_store_wait retires the store's group.
///   tma_store_commit         closes this thread's group of tma_stores issued since its last
///                            commit (PTX cp.async.bulk.commit_group).
///   tma_store_wait {pending} waits until at most `pending` (>= 0) of this thread's committed
///                            groups of stores still read shared memory (PTX
///                            cp.async.bulk.wait_group.read). A program must retire every store
///                            so before it ends (its shared memory goes with it); the SIMT
///                            interpreter reports one that does not.
///   cluster_rank             i32: the program's rank in its cluster, in [0, cluster) (PTX
///                            %cluster_ctarank); x % cluster for the grid's program x.
///   cluster_barrier          every thread of every workgroup of the cluster arrives and waits for
///                            the others (PTX barrier.cluster.arrive.release and wait.acquire):
///                            each workgroup's shared-memory writes and mbarrier initializations
///                            before it are visible to the cluster's other workgroups after it. It
///                            must be reached by all threads (uniform control flow), outside
///                            warp_specialize. A program that another's arrivals or copies may
///                            still reach meets its cluster so before it ends.
///   coopmat_fill %x          a cooperative matrix (the result's type, coopmat_a/_b/_acc<RxCxD>)
///                            every element of which is %x (a scalar of D).
///   coopmat_load %index {buffer, stride, col_major?}
///                            the matrix of the result's type whose element (r, c) is element
///                            %index + r * stride + c (with col_major = 1: %index + c * stride + r)
///                            of shared buffer `buffer` (of the matrix's dtype).
///   coopmat_store %index, %m {buffer, stride, col_major?}
///                            writes matrix %m to shared buffer `buffer` as coopmat_load reads it.
///   coopmat_mul_add %a, %b, %c
///                            D = A x B + C for A a coopmat_a<MxK>, B a coopmat_b<KxN> (of one
///                            dtype: f16, bf16 or i8), C and D coopmat_acc<MxN> (f32 for float
///                            inputs, i32 for i8, whose products and sums wrap): every product is
///                            exact, and the order and intermediate precision of the sum are
///                            unspecified, as for `mma`; the SIMT interpreter adds the products to
///                            C one at a time, k increasing, rounding to f32 after each addition.
///                            A cooperative matrix (core/ir/types.h) belongs to one subgroup: which
///                            lane holds which element is the target's secret (SPIR-V's
///                            OpTypeCooperativeMatrixKHR with subgroup scope), so no op reads or
///                            writes its elements one by one. Every lane of the subgroup executes
///                            the four ops above together, in uniform control flow, with the same
///                            %index; the element at %index and `stride` elements lie on 16-byte
///                            boundaries. Matrix values appear only as these ops' operands and
///                            results and as the values carried by for, if and while.
///                            A workgroup-scope matrix (wgmat_a/_b/_acc, VK_NV_cooperative_matrix2)
///                            is the same but owned by the whole workgroup: every thread executes
///                            its ops together (a workgroup-uniform index), and mul_add takes the
///                            three of one scope.
///   coopmat_load_tensor %base, %dim0, %dim1, %stride0, %stride1, %off0, %off1 {clamp_zero?}
///                            a workgroup-scope matrix (wgmat_a or wgmat_b of %base's pointee)
///                            read from a 2-D tensor in global memory (all but %base i32, the same
///                            in every thread; SPIR-V's OpCooperativeMatrixLoadTensorNV through a
///                            tensor layout): element (r, c) is the tensor's element (i, j) =
///                            (%off0 + r, %off1 + c), at %base + i * %stride0 + j * %stride1
///                            (elements), when 0 <= i < %dim0 and 0 <= j < %dim1 (i and j computed
///                            in 32 bits, so a negative coordinate is outside). With clamp_zero = 1
///                            every other element is zero and reads no memory (desc_load's rule);
///                            without it every element must lie inside the tensor (elsewhere the
///                            value is undefined; the SIMT interpreter reports a fault).
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

#include "abi.h"
#include "ir.h"
#include "ops.h"

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
/// The `maxnreg` attribute (registers per thread at most, CompileOptions::maxnreg); 0 when absent.
int simt_maxnreg(const Function& fn);
/// The `cluster` attribute (programs per thread-block cluster); 1 when absent.
int simt_cluster(const Function& fn);

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
/// Where each buffer starts in one arena of shared memory (targets that lay buffers out in one
/// arena, as PTX does): in order, each at a multiple of 16 bytes, and of 1024 when its size is a
/// multiple of 1024 (so wgmma's swizzled operands start on their 1024-byte pattern).
std::vector<int64_t> shared_offsets(const Function& fn);
/// Bytes of shared memory `fn` needs: the arena's end (shared_offsets plus the last buffer's
/// size, rounded up to 16).
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
  int64_t buffer() const { return op->int_attr(attr::kBuffer); }
  int width() const { return static_cast<int>(op->int_attr(attr::kWidth)); }
};
struct SharedStoreOp : OpView<OpKind::SharedStore> {
  using OpView::OpView;
  Value* index() const { return op->operand(0); }
  std::span<Value* const> values() const {
    return {op->operands.data() + 1, op->operands.size() - 1};
  }
  int64_t buffer() const { return op->int_attr(attr::kBuffer); }
  int width() const { return static_cast<int>(op->int_attr(attr::kWidth)); }
};
/// A global load's or store's cache modifier ("ca", "cg", ...; "" for none) without the leading
/// '.' Triton spells it with (IR written by hand may carry it; the kernel language drops it).
inline std::string cache_modifier(const Op& op) {
  std::string cache = op.str_attr_or(attr::kCache, "");
  if (!cache.empty() && cache.front() == '.') cache.erase(0, 1);
  return cache;
}
struct GlobalLoadOp : OpView<OpKind::GlobalLoad> {
  using OpView::OpView;
  Value* ptr() const { return op->operand(0); }
  Value* pred() const { return op->operand(1); }
  std::span<Value* const> others() const {
    return {op->operands.data() + 2, op->operands.size() - 2};
  }
  int width() const { return static_cast<int>(op->int_attr(attr::kWidth)); }
  int64_t align() const { return op->int_attr(attr::kAlign); }
  std::string cache() const { return op->str_attr_or(attr::kCache, ""); }
};
struct GlobalStoreOp : OpView<OpKind::GlobalStore> {
  using OpView::OpView;
  Value* ptr() const { return op->operand(0); }
  Value* pred() const { return op->operand(1); }
  std::span<Value* const> values() const {
    return {op->operands.data() + 2, op->operands.size() - 2};
  }
  int width() const { return static_cast<int>(op->int_attr(attr::kWidth)); }
  int64_t align() const { return op->int_attr(attr::kAlign); }
};

/// One mma.sync instruction shape and operand type (the `mma` op's shape and `a` attributes).
struct MmaShape {
  std::string_view shape;                      ///< "m16n8k16", "m16n8k8", "m16n8k32"
  std::string_view a;                          ///< "f16", "bf16", "tf32", "i8"
  int k;                                       ///< 16, 8, 32
  DType in;                                    ///< the A and B values' dtype (f32 for tf32)
  DType acc;                                   ///< the C and D values' dtype (f32 or i32)
  int a_count() const { return 16 * k / 32; }  ///< A values per lane
  int b_count() const { return 8 * k / 32; }   ///< B values per lane
  static constexpr int kCCount = 4;            ///< C and D values per lane
  /// Elements per 32-bit register (e above): 2 for f16/bf16, 1 for tf32, 4 for i8.
  int per_reg() const { return 4 / dtype_bytes(in); }
};
/// The supported (shape, a) pairs, in the order listed above.
std::span<const MmaShape> mma_shapes();
/// The entry for (shape, a); null for a pair mma does not support.
const MmaShape* find_mma_shape(std::string_view shape, std::string_view a);
/// The entry whose A/B dtype is `in` (f32 meaning tf32); null if none.
const MmaShape* mma_shape_for(DType in);

/// The (row, col) of fragment value i in `lane` (see `mma` above).
struct MatrixCoord {
  int row, col;
  bool operator==(const MatrixCoord&) const = default;
};
MatrixCoord mma_a_coord(const MmaShape& s, int lane, int i);
MatrixCoord mma_b_coord(const MmaShape& s, int lane, int i);
MatrixCoord mma_c_coord(int lane, int i);

struct MmaOp : OpView<OpKind::Mma> {
  using OpView::OpView;
  /// The shape entry; internal error for an unverified pair.
  const MmaShape& shape() const;
  std::span<Value* const> a() const { return {op->operands.data(), size_t(shape().a_count())}; }
  std::span<Value* const> b() const {
    return {op->operands.data() + shape().a_count(), size_t(shape().b_count())};
  }
  std::span<Value* const> c() const {
    return {op->operands.data() + shape().a_count() + shape().b_count(), MmaShape::kCCount};
  }
};
struct LdMatrixOp : OpView<OpKind::LdMatrix> {
  using OpView::OpView;
  Value* index() const { return op->operand(0); }
  int64_t buffer() const { return op->int_attr(attr::kBuffer); }
  int count() const { return static_cast<int>(op->int_attr(attr::kCount)); }
  bool trans() const { return op->int_attr_or(attr::kTrans, 0) != 0; }
};
struct CpAsyncOp : OpView<OpKind::CpAsync> {
  using OpView::OpView;
  Value* index() const { return op->operand(0); }
  Value* ptr() const { return op->operand(1); }
  Value* pred() const { return op->operand(2); }
  int64_t buffer() const { return op->int_attr(attr::kBuffer); }
};

struct CoopMatLoadOp : OpView<OpKind::CoopMatLoad> {
  using OpView::OpView;
  Value* index() const { return op->operand(0); }
  int64_t buffer() const { return op->int_attr(attr::kBuffer); }
  int64_t stride() const { return op->int_attr(attr::kStride); }
  bool col_major() const { return op->int_attr_or(attr::kColMajor, 0) != 0; }
};
struct CoopMatStoreOp : OpView<OpKind::CoopMatStore> {
  using OpView::OpView;
  Value* index() const { return op->operand(0); }
  Value* value() const { return op->operand(1); }
  int64_t buffer() const { return op->int_attr(attr::kBuffer); }
  int64_t stride() const { return op->int_attr(attr::kStride); }
  bool col_major() const { return op->int_attr_or(attr::kColMajor, 0) != 0; }
};

struct CoopMatLoadTensorOp : OpView<OpKind::CoopMatLoadTensor> {
  using OpView::OpView;
  Value* base() const { return op->operand(0); }
  Value* dim(int d) const { return op->operand(1 + d); }
  Value* stride(int d) const { return op->operand(3 + d); }
  Value* offset(int d) const { return op->operand(5 + d); }
  bool clamp_zero() const { return op->int_attr_or(attr::kClampZero, 0) != 0; }
};

/// The mbarrier ops: mbarrier_init (value: the arrival count), mbarrier_arrive_tx (the bytes),
/// mbarrier_wait (the parity) and mbarrier_inval (no value).
struct MbarrierOp {
  const Op* op;
  explicit MbarrierOp(const Op* o);
  Value* index() const { return op->operand(0); }
  Value* value() const { return op->operand(1); }
  /// mbarrier_arrive_tx's %rank (the cluster's program whose mbarrier it is), or null: its own.
  Value* rank() const { return op->operands.size() > 2 ? op->operand(2) : nullptr; }
  int64_t buffer() const { return op->int_attr(attr::kBuffer); }
};
struct TmaLoadOp : OpView<OpKind::TmaLoad> {
  using OpView::OpView;
  Value* index() const { return op->operand(0); }
  Value* barrier_index() const { return op->operand(1); }
  bool multicast() const { return op->int_attr_or(attr::kMulticast, 0) != 0; }
  std::span<Value* const> coords() const {
    return {op->operands.data() + 2, op->operands.size() - 2 - (multicast() ? 1 : 0)};
  }
  /// The multicast mask (multicast() only).
  Value* mask() const { return op->operands.back(); }
  int64_t buffer() const { return op->int_attr(attr::kBuffer); }
  int64_t barrier() const { return op->int_attr(attr::kBarrier); }
  int64_t map() const { return op->int_attr(attr::kMap); }
};

struct TmaStoreOp : OpView<OpKind::TmaStore> {
  using OpView::OpView;
  Value* index() const { return op->operand(0); }
  std::span<Value* const> coords() const {
    return {op->operands.data() + 1, op->operands.size() - 1};
  }
  int64_t buffer() const { return op->int_attr(attr::kBuffer); }
  int64_t map() const { return op->int_attr(attr::kMap); }
};

/// "tensor_map_<index>", the attribute that declares tensor map `index`.
std::string tensor_map_attr(int64_t index);
/// The index of an attribute name "tensor_map_<i>" (i without leading zeros); nullopt for any
/// other name.
std::optional<int64_t> parse_tensor_map_attr(std::string_view name);
/// The tensor maps of `fn` (a verified SIMT function), map 0 first; empty for most.
std::vector<TensorMapParam> tensor_maps(const Function& fn);
/// Declares the next tensor map of `fn`; returns its index.
int64_t add_tensor_map(Function& fn, const TensorMapParam& map);

/// `print` and `assert` in a SIMT function: `rank` (default 0) i32 indices, an assert's
/// reported values (attribute `values`, default 0: scalars, see AssertOp), then the printed value
/// or the condition (the tile-IR reading of `print` does not apply).
struct SimtDebugOp {
  const Op* op;
  explicit SimtDebugOp(const Op* o);
  int rank() const { return static_cast<int>(op->int_attr_or(attr::kRank, 0)); }
  int num_values() const { return static_cast<int>(op->int_attr_or(attr::kValues, 0)); }
  std::span<Value* const> indices() const {
    return {op->operands.data(), static_cast<size_t>(rank())};
  }
  std::span<Value* const> values() const {
    return {op->operands.data() + rank(), static_cast<size_t>(num_values())};
  }
  Value* value() const { return op->operands.back(); }  ///< the value or the condition
};

}  // namespace tessera::ir
