/// \file Internal: the state of one tile-to-SIMT lowering, shared by the op files.
///
/// Values are lowered on demand. A *free* tile value (constants, arange, splat, the shape ops and
/// pure elementwise ops of free values: index arithmetic, masks, pointer tiles) is recomputed
/// directly in whatever layout a consumer asks for, at the position of its definition (hoisted
/// out of loops). Every other tile value has a *home* layout chosen before lowering (homes.cpp)
/// and is converted when a consumer wants another one. Scalars are uniform: every thread holds
/// them, and scalar tile-IR ops become the same SIMT ops.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/ir/builder.h"
#include "core/ir/ir.h"
#include "core/ir/simt.h"
#include "core/lower/axis_info.h"
#include "core/lower/layout.h"
#include "core/lower/simt_lowering.h"
#include "core/target/target.h"

namespace tessera::lower::detail {

using Regs = std::vector<ir::Value*>;

/// How a dot runs on tensor cores (lower_mma.cpp): the instruction, the warps' tiling and the
/// layouts of the accumulator and of the operand fragments.
struct MmaPlan {
  const ir::MmaShape* shape;
  MmaWarps warps;
  Layout acc, a, b;
};
struct StagedDot;  // mma_operand.h
struct Pipeline;   // lower_pipeline.cpp

/// The plan for `dot` when the target has mma.sync (Cap::MmaSync, 32-lane subgroups, the shape
/// in its matrix_shapes), the dtypes have an instruction (f16/bf16 into f32, f32 with TF32
/// precision into f32, i8 into i32) and the tile is a whole number of instruction tiles for the
/// warps; nullopt otherwise (the FMA form).
std::optional<MmaPlan> mma_plan(const ir::Op& dot, const target::Target& target, int64_t threads);

/// Home layouts of the non-free tile values, and which values are free (homes.cpp).
class Homes {
 public:
  Homes(const ir::Function& fn, const AxisInfoMap& axis, int64_t threads,
        const target::Target& target);
  bool is_free(const ir::Value* v) const;
  const Layout& home(const ir::Value* v) const;
  /// The layout a load, store or atomic through `ptr` (a pointer tile) works in: coalesced
  /// along its most contiguous dimension, vectorized where alignment allows.
  Layout coalesced(const ir::Value* ptr) const;
  /// The home of a non-free value, or the default layout of a free one.
  Layout layout_for(const ir::Value* v) const;

 private:
  void region(const ir::Region& r);
  void op(const ir::Op& o);
  void loop_args(const ir::Region& body, size_t first, std::span<ir::Value* const> inits,
                 const ir::Op* terminator_owner);
  Layout operand_home(const ir::Op& o) const;
  /// The home of operand 0, or its default layout when it is free.
  Layout operand_layout(const ir::Op& o) const;
  bool known(const ir::Value* v) const { return homes_.count(v) != 0; }

  const AxisInfoMap& axis_;
  int64_t threads_;
  const target::Target& target_;
  std::unordered_map<const ir::Value*, bool> free_;
  std::unordered_map<const ir::Value*, Layout> homes_;
};

class Lowerer {
 public:
  Lowerer(const ir::Function& src, const target::Target& target, const SimtOptions& options);
  std::unique_ptr<ir::Module> run();

  // --- emission ------------------------------------------------------------------------------
  ir::Builder& b() { return b_; }
  ir::Module& out_module() { return *out_; }
  /// An insertion point that survives insertions before it: a region and the op to insert
  /// before (null: the region's end).
  struct InsertPoint {
    ir::Region* region;
    ir::Op* before;
  };
  InsertPoint save() const;
  void restore(const InsertPoint& p);
  /// Restores the builder's insertion point (at scope exit, or earlier with restore()).
  class InsertPointGuard {
   public:
    explicit InsertPointGuard(Lowerer& l) : l_(l), p_(l.save()) {}
    ~InsertPointGuard() { restore(); }
    void restore() {
      if (!done_) l_.restore(p_);
      done_ = true;
    }

   private:
    Lowerer& l_;
    InsertPoint p_;
    bool done_ = false;
  };
  ir::Value* emit(ir::OpKind kind, std::vector<ir::Value*> operands, ir::Type type,
                  std::vector<ir::Attribute> attrs = {});
  ir::Value* const_int(ir::DType t, int64_t v);
  ir::Value* const_float(ir::DType t, double v);
  ir::Value* const_bool(bool v) { return const_int(ir::DType::i1, v ? 1 : 0); }
  /// Scalar arithmetic helpers on i32 values.
  ir::Value* add(ir::Value* a, ir::Value* b);
  ir::Value* mul(ir::Value* a, ir::Value* b);
  ir::Value* and_(ir::Value* a, ir::Value* b);

  // --- threads -------------------------------------------------------------------------------
  int64_t threads() const { return threads_; }
  int subgroup() const { return subgroup_; }
  ir::Value* tid() { return tid_; }
  ir::Value* lane() { return lane_; }
  ir::Value* subgroup_id() { return subgroup_id_; }
  /// This thread's share of coordinate `dim` in layout `l` (an i32, computed once per layout).
  ir::Value* thread_coord(const Layout& l, int dim);
  /// True in the one thread of each group of broadcast copies (i1; constant true if none).
  ir::Value* owner(const Layout& l);
  /// The value `make` emits at the kernel's entry (hoisted out of every loop and branch), made
  /// once per `key`: thread-dependent index arithmetic.
  ir::Value* at_entry(const std::string& key, const std::function<ir::Value*()>& make);

  // --- values ----------------------------------------------------------------------------------
  const AxisInfoMap& axis() const { return axis_; }
  const Homes& homes() const { return *homes_; }
  const target::Target& target() const { return target_; }
  const ir::Function& source() const { return src_; }
  /// The SIMT value of a tile-IR scalar.
  ir::Value* scalar(const ir::Value* v);
  /// The registers of tile value `v` in layout `l` (materialized or converted as needed).
  Regs regs(const ir::Value* v, const Layout& l);
  /// Records the SIMT value(s) of a tile-IR value defined by the op being lowered.
  void define_scalar(const ir::Value* v, ir::Value* s);
  void define_tile(const ir::Value* v, const Layout& l, Regs r);
  /// Converts registers between layouts of one shape (register moves or shared memory). With
  /// `through_shared`, the owners' values always go through shared memory, so broadcast copies
  /// receive their owner's value (atomics' results).
  Regs convert(const Regs& r, const ir::Type& elem, const Layout& from, const Layout& to,
               bool through_shared = false);
  Regs convert_through_shared(const Regs& r, const ir::Type& elem, const Layout& l);
  /// The coordinates of register `reg` of this thread in layout `l`, as i32 values.
  std::vector<ir::Value*> element_index(const Layout& l, int reg);
  /// Emits `body` inside `if (pred)` (directly when pred is the constant true).
  void guarded(ir::Value* pred, const std::function<void()>& body);

  // --- shared memory -----------------------------------------------------------------------------
  /// A scratch buffer of at least `count` elements of `dtype` (one per dtype, grown as needed).
  int scratch(ir::DType dtype, int64_t count);
  /// A dedicated buffer (for dot operands, which live across a loop).
  int new_buffer(ir::DType dtype, int64_t count);
  void barrier();

  // --- structure ---------------------------------------------------------------------------------
  void lower_region(const ir::Region& src, ir::Region* dst);
  /// Opens a nested scope whose SIMT ops go into `dst`, inside the SIMT op `owner`.
  void push_scope(ir::Region* dst, ir::Op* owner);
  void pop_scope();
  int depth() const { return static_cast<int>(scopes_.size()) - 1; }
  void set_depth(const ir::Value* v, int d) { depth_[v] = d; }
  std::string kernel_name() const { return src_.name; }

  // --- op lowering (one file per family) ------------------------------------------------------------
  void lower_op(const ir::Op& op);
  Regs lower_free(const ir::Op& op, const Layout& l);  ///< a free tile op in layout l
  void lower_elementwise(const ir::Op& op);            ///< non-free elementwise (lowerer.cpp)
  void lower_load(const ir::Op& op);                    ///< lower_memory.cpp
  void lower_store(const ir::Op& op);
  void lower_atomic(const ir::Op& op);
  void lower_print(const ir::Op& op);
  void lower_assert(const ir::Op& op);
  void lower_reduce(const ir::Op& op);                  ///< lower_reduce.cpp
  void lower_reduce_generic(const ir::Op& op);
  void lower_scan(const ir::Op& op);
  void lower_dot(const ir::Op& op);                     ///< lower_dot.cpp
  void lower_mma(const ir::Op& op, const MmaPlan& plan);  ///< lower_mma.cpp
  void lower_cat(const ir::Op& op);
  void lower_for(const ir::Op& op);                     ///< lower_control.cpp
  /// The software pipeline of a matmul loop (lower_pipeline.cpp): null unless `loop` is a `for`
  /// whose body's one tensor-core dot reads two loads that cp.async can prefetch (num_stages > 1).
  std::shared_ptr<Pipeline> plan_pipeline(const ir::Op& loop);
  /// Before the SIMT loop (lb, ub, step: its bounds): prefetches stages 0 .. S-2; returns the
  /// initial values of the extra loop-carried values (the stages read and written, the count of
  /// iterations done).
  std::vector<ir::Value*> pipeline_prologue(Pipeline& p, ir::Value* lb, ir::Value* ub,
                                            ir::Value* step);
  /// At the top of the body (iv; extra: the extra carried values): waits for this iteration's
  /// stage and prefetches the one S-1 iterations ahead.
  void pipeline_enter(Pipeline& p, ir::Value* iv, const std::vector<ir::Value*>& extra);
  /// The extra carried values' next values (at the body's end).
  std::vector<ir::Value*> pipeline_next(Pipeline& p);
  /// After the loop: drains the copies still in flight.
  void pipeline_exit(Pipeline& p);
  void lower_if(const ir::Op& op);
  void lower_while(const ir::Op& op);

  /// Emits `combine` for generic reductions/scans: clones the combine region on scalars.
  std::vector<ir::Value*> apply_combine(const ir::Region& combine, const std::vector<ir::Value*>& lhs,
                                        const std::vector<ir::Value*>& rhs);

 private:
  struct Scope {
    ir::Region* dst;
    ir::Op* open = nullptr;  // the SIMT op in `dst` whose region is being filled
    std::unordered_map<std::string, Regs> cache;  // "<value id>|<layout>" -> registers
    std::unordered_map<const ir::Value*, ir::Value*> scalars;
  };

  /// Runs `f` with the builder at the end of scope `d`'s code so far (before its open op).
  template <class F>
  auto at_depth(int d, F&& f);
  int depth_of(const ir::Value* v) const;
  std::string key(const ir::Value* v, const Layout& l) const;
  const Regs* find(const ir::Value* v, const Layout& l) const;
  void check_shared_limit() const;

  const ir::Function& src_;
  const target::Target& target_;
  SimtOptions options_;
  int64_t threads_;
  int subgroup_;
  AxisInfoMap axis_;
  std::unique_ptr<Homes> homes_;
  std::unique_ptr<ir::Module> out_;
  ir::Function* fn_ = nullptr;
  ir::Builder b_;
  std::vector<Scope> scopes_;
  std::unordered_map<const ir::Value*, int> depth_;
  std::unordered_map<const ir::Value*, int> ids_;
  ir::Value* tid_ = nullptr;
  ir::Value* lane_ = nullptr;
  ir::Value* subgroup_id_ = nullptr;
  std::map<std::string, ir::Value*> thread_coords_;  // at depth 0
  struct Buffer {
    ir::DType dtype;
    int64_t count;
    bool scratch;
  };
  std::vector<Buffer> buffers_;
  Location loc_;
  /// Dots whose operands a pipelined loop stages (lower_mma reads them from there), and the tile
  /// ops that loop lowers itself (its loads and their transposes).
  std::unordered_map<const ir::Op*, std::shared_ptr<StagedDot>> staged_dots_;
  std::unordered_set<const ir::Op*> pipelined_ops_;
};

/// The widest vector (in elements) an access in layout `l` through `ptr` can use: registers 0..w-1
/// consecutive along one dimension, and the pointers' contiguity and alignment, the mask's and
/// `other`'s constancy covering w elements (lower_memory.cpp).
int64_t access_width(const Lowerer& lw, const Layout& l, const ir::Value* ptr,
                     const ir::Value* mask, const ir::Value* other);

}  // namespace tessera::lower::detail
