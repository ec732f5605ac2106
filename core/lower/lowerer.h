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
#include "core/lower/plan.h"
#include "core/lower/simt_lowering.h"
#include "core/target/target.h"

namespace tessera::lower::detail {

using Regs = std::vector<ir::Value*>;

struct StagedDot;  // mma_operand.h
struct Ring;       // lower_pipeline.cpp

/// Where lower_free() finds the registers and scalars of an op's operands: the lowering itself,
/// or a loop's body evaluated at another iteration (lower_pipeline.cpp).
class ValueSource {
 public:
  virtual ~ValueSource() = default;
  virtual Regs regs(const ir::Value* v, const Layout& l) = 0;
  virtual ir::Value* scalar(const ir::Value* v) = 0;
};

/// What a pipelined loop adds to a plain one (lower_control.cpp emits the loop): values carried
/// after the tile-IR loop's own, code before the loop, at the top of each iteration and after.
class LoopExtension {
 public:
  virtual ~LoopExtension() = default;
  /// Before the SIMT loop (lb, ub, step: its bounds); returns the extra values' initial values.
  virtual std::vector<ir::Value*> before(ir::Value* lb, ir::Value* ub, ir::Value* step) = 0;
  /// At the top of the body (iv; extra: the extra carried values).
  virtual void enter(ir::Value* iv, const std::vector<ir::Value*>& extra) = 0;
  /// The extra values' next values (at the body's end).
  virtual std::vector<ir::Value*> next() = 0;
  /// After the loop.
  virtual void after() = 0;
};

/// The registers per thread of a warp-specialized kernel (setmaxnreg moves them through the
/// workgroup's pool, so what the consumers take is what the producer gave up):
/// - launch: what every thread holds at launch, the function's maxnreg, which ptxas then allocates
///   exactly: an equal share of the SM's 64 Ki registers (the workgroup takes them whole; at most
///   248), or the launch option's maxnreg where smaller (but at least the producer's 40);
/// - producer: what the producer warpgroup lowers its limit to (40: it only issues copies);
/// - consumers: what the consumers raise theirs to (at most 256), with the registers it freed.
/// Without the fixed launch count ptxas allocates what the code needs, and a raise past what the
/// producer frees waits forever (a 4-warp kernel at 58 registers raising to 256 did).
struct RegisterSplit {
  int64_t launch = 0, producer = 0, consumers = 0;
};
RegisterSplit register_split(int64_t consumer_threads, int64_t producer_threads, int maxnreg);

class Lowerer : public ValueSource {
 public:
  explicit Lowerer(const LoweringPlan& plan);
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
  const LoweringPlan& plan() const { return plan_; }
  const AxisInfoMap& axis() const { return plan_.axis(); }
  const Homes& homes() const { return plan_.homes(); }
  const target::Target& target() const { return target_; }
  const ir::Function& source() const { return src_; }
  /// The SIMT value of a tile-IR scalar.
  ir::Value* scalar(const ir::Value* v) override;
  /// The registers of tile value `v` in layout `l` (materialized or converted as needed). A
  /// shape op of a tile that has a home (broadcast, expand_dims, reshape, permute) asked for in
  /// another layout is lowered again in it from its operand, so that a conversion, if one is
  /// needed, moves the operand (a broadcast's is smaller) rather than the result.
  Regs regs(const ir::Value* v, const Layout& l) override;
  /// Is `v` a shape op that regs() lowers again in layout `l` (see regs())?
  bool relabels(const ir::Value* v, const Layout& l) const;
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
  /// Global loads of the registers of layout `l` (element type `elem`) through `ptrs`, `w` per
  /// vector; each vector where masks[i] (none: always) holds, else others[i..] (none: zero).
  /// `attrs` beyond align and width (a cache hint) are passed on.
  Regs global_loads(const Layout& l, ir::Type elem, const Regs& ptrs, const Regs& masks,
                    const Regs& others, int64_t w, std::vector<ir::Attribute> attrs = {});
  /// Emits `body` inside `if (pred)` (directly when pred is the constant true).
  void guarded(ir::Value* pred, const std::function<void()>& body);

  // --- shared memory -----------------------------------------------------------------------------
  /// A scratch buffer of at least `count` elements of `dtype` (one per dtype, grown as needed).
  int scratch(ir::DType dtype, int64_t count);
  /// Would scratch(dtype, count) keep the kernel's shared memory within the target's limit?
  bool scratch_fits(ir::DType dtype, int64_t count) const;
  /// A dedicated buffer (for dot operands, which live across a loop): a released one of the dtype
  /// taken back (grown as needed, after a barrier) where there is one, else a new one.
  int new_buffer(ir::DType dtype, int64_t count);
  /// Ends a dedicated buffer's use (after its loop): later scratch() calls of its dtype may reuse
  /// it. A buffer of a multiple of 1024 bytes keeps that when it grows (wgmma's alignment).
  void release_buffer(int buffer);
  /// Every thread of the kernel's warps waits for the others (`global`: global memory ordered
  /// too). Inside the consumers' role of a warp-specialized kernel, a named barrier of theirs.
  void barrier(bool global = false);
  /// A warp-specialized kernel's warp_specialize op (its regions: the consumers', the
  /// producer's), or null.
  ir::Op* roles_op() const { return roles_; }
  /// (Warp-specialized) the registers per thread at launch and of each role.
  RegisterSplit registers() const;
  ir::Region* producer_region() const { return roles_ ? roles_->regions[1] : nullptr; }
  /// The index of tensor map `map` among the kernel's (declared on the first request).
  int64_t tensor_map(const ir::TensorMapParam& map);
  /// Emits `f`'s ops at the kernel's end, after the body (and after its roles, where it has
  /// them), which every thread of the workgroup reaches: a ring shared by a cluster meets the
  /// cluster there before its mbarriers go.
  void at_exit(std::function<void()> f) { exits_.push_back(std::move(f)); }

  // --- structure ---------------------------------------------------------------------------------
  void lower_region(const ir::Region& src, ir::Region* dst);
  /// Opens a nested scope whose SIMT ops go into `dst`, inside the SIMT op `owner`.
  void push_scope(ir::Region* dst, ir::Op* owner);
  void pop_scope();
  int depth() const { return static_cast<int>(scopes_.size()) - 1; }
  void set_depth(const ir::Value* v, int d) { depth_[v] = d; }
  std::string kernel_name() const { return src_.name; }

  // --- op lowering (one file per family)
  // ------------------------------------------------------------
  void lower_op(const ir::Op& op);
  /// A free tile op in layout l, its operands from `src` (by default the lowering's values;
  /// lower_elementwise.cpp).
  Regs lower_free(const ir::Op& op, const Layout& l, ValueSource& src);
  Regs lower_free(const ir::Op& op, const Layout& l) { return lower_free(op, l, *this); }
  void lower_elementwise(const ir::Op& op);  ///< non-free elementwise (lower_elementwise.cpp)
  void lower_inline_asm(const ir::Op& op);   ///< inline_asm, inline_asm_impure (same file)
  void lower_load(const ir::Op& op);         ///< lower_memory.cpp
  void lower_store(const ir::Op& op);
  void lower_tma_store(const ir::Op& op);  ///< a desc_store (lower_tma_store.cpp)
  void lower_atomic(const ir::Op& op);
  void lower_print(const ir::Op& op);
  void lower_assert(const ir::Op& op);
  void lower_reduce(const ir::Op& op);  ///< lower_reduce.cpp
  void lower_reduce_generic(const ir::Op& op);
  void lower_scan(const ir::Op& op);
  void lower_dot(const ir::Op& op);                            ///< by its plan's kind:
  void lower_fma_dot(const ir::Op& op, const DotPlan& plan);   ///< lower_dot.cpp
  void lower_mma(const ir::Op& op, const DotPlan& plan);       ///< lower_mma.cpp
  void lower_wgmma(const ir::Op& op, const DotPlan& plan);     ///< lower_wgmma.cpp
  void lower_coopmat(const ir::Op& op, const DotPlan& plan);   ///< lower_coopmat.cpp
  void lower_coopmat2(const ir::Op& op, const DotPlan& plan);  ///< lower_coopmat2.cpp
  /// The SIMT type of one register of a tile of type `tile` in layout `l`: its element, or for
  /// an opaque layout an accumulator matrix.
  ir::Type register_type(const ir::Type& tile, const Layout& l) const;
  /// Stores registers of layout `l` into padded tile `t` of buffer `buf` from element `base`
  /// (an i32, or null for 0), in vectors along the tile's contiguous dimension.
  void store_padded(const Regs& r, const Layout& l, int buf, ir::Value* base, const PaddedTile& t);
  /// An opaque layout's matrices in its linear twin (mat_twin), and back.
  Regs mats_to_linear(const Regs& mats, const Layout& from);
  Regs linear_to_mats(const Regs& lin, const Layout& to);
  /// Registers of the twin of `to` made matrices: one coopmat_fill when they are one value.
  Regs fill_mats(const Regs& lin, const Layout& to);
  /// How many elements of K a cooperative-matrix dot without a ring stages at a time: all of K
  /// where its padded operand tiles fit in shared memory beside the kernel's buffers and its
  /// accumulator's conversion scratch, else the largest power-of-two chunk that fits
  /// (lower_coopmat.cpp; fast_a, fast_b: the operands' contiguous dimensions).
  int64_t coopmat_chunk(const ir::Op& op, const DotPlan& plan, int fast_a, int fast_b) const;
  /// Stores the elements of chunk `chunk` (k from chunk * kc, kc elements) of an operand in
  /// layout `l` (K along `k_dim`) into padded tile `t` of buffer `buf` from element `base`.
  void store_chunk(const Regs& r, const Layout& l, int k_dim, int64_t kc, int64_t chunk, int buf,
                   ir::Value* base, const PaddedTile& t);
  void lower_cat(const ir::Op& op);
  void lower_for(const ir::Op& op);  ///< by its plan's kind:
  /// A loop, plain or with `ext`'s additions (lower_control.cpp).
  void emit_for(const ir::Op& op, LoopExtension* ext);
  /// A loop whose plan is a cp.async ring (lower_pipeline.cpp).
  void lower_ring_loop(const ir::Op& op, const LoopPlan& plan);
  /// The operands a ring has staged for `dot` in its current iteration (null: none).
  const StagedDot* staged_operands(const ir::Op& ring_loop, const ir::Op& dot) const;
  void lower_if(const ir::Op& op);
  void lower_while(const ir::Op& op);

  /// Emits `combine` for generic reductions/scans: clones the combine region on scalars.
  std::vector<ir::Value*> apply_combine(const ir::Region& combine,
                                        const std::vector<ir::Value*>& lhs,
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
  void open_roles();
  int depth_of(const ir::Value* v) const;
  std::string key(const ir::Value* v, const Layout& l) const;
  const Regs* find(const ir::Value* v, const Layout& l) const;
  void check_shared_limit() const;

  const LoweringPlan& plan_;
  const ir::Function& src_;
  const target::Target& target_;
  int64_t threads_;
  int subgroup_;
  ir::Op* roles_ = nullptr;
  std::vector<std::function<void()>> exits_;  ///< at_exit's, in order
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
    bool whole_kib = false;  ///< a released buffer that wgmma read: its size stays whole KiB
    bool released = false;   ///< a dedicated buffer after its loop (new_buffer may take it back)
  };
  std::vector<Buffer> buffers_;
  std::vector<ir::TensorMapParam> maps_;  ///< the kernel's tensor maps, map i at i
  Location loc_;
  /// The rings of the loops being emitted (lower_mma reads its staged operands from there).
  std::unordered_map<const ir::Op*, const Ring*> rings_;
};

}  // namespace tessera::lower::detail
