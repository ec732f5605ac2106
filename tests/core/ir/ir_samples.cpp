// \file The sample modules of ir_samples.h.
#include "tests/core/ir/ir_samples.h"

#include <limits>

#include "core/ir/op_table.h"
#include "core/ir/simt.h"

namespace tessera::ir::samples {
namespace {

constexpr int64_t kB = 16;

/// Builds the kernel of every_op_kind() one op family at a time.
class KernelBuilder {
 public:
  explicit KernelBuilder(FunctionBuilder& fb) : m_(*fb.module), b_(fb.b), p_(fb.params) {}

  void build() {
    identity_and_construction();
    integer_elementwise();
    memory_and_float_elementwise();
    reductions();
    debug_and_hints();
    control_flow();
  }

 private:
  Value* v(OpKind k, std::vector<Value*> ops, Type t, std::vector<Attribute> attrs = {}) {
    return b_.create_value(k, std::move(ops), std::move(t), std::move(attrs));
  }
  Type ti(DType d) const { return Type::tile(d, {kB}); }
  void at(uint32_t line) { b_.set_loc(Location::make("/src/every_op.cpp", line, 3)); }

  void identity_and_construction() {
    at(10);
    pid_ = v(OpKind::ProgramId, {}, i32(), {{"axis", int64_t{0}}});
    v(OpKind::NumPrograms, {}, i32(), {{"axis", int64_t{2}}});
    c16_ = b_.constant_int(i32(), kB);
    c0_ = b_.constant_int(i32(), 0);
    b_.set_loc(Location{});  // some ops have no location
    range_ = v(OpKind::Arange, {}, ti(DType::i32), {{"start", int64_t{0}}, {"end", kB}});
    splat_ = v(OpKind::Splat, {pid_}, ti(DType::i32));
    at(11);
    Value* row = v(OpKind::ExpandDims, {range_}, tile(DType::i32, {1, kB}), {{"axis", int64_t{0}}});
    Value* wide = v(OpKind::Broadcast, {row}, tile(DType::i32, {4, kB}));
    v(OpKind::Reshape, {wide}, tile(DType::i32, {4 * kB}));
    v(OpKind::Permute, {wide}, tile(DType::i32, {kB, 4}), {{"order", std::vector<int64_t>{1, 0}}});
    v(OpKind::Cat, {range_, splat_}, tile(DType::i32, {2 * kB}), {{"axis", int64_t{0}}});
  }

  void integer_elementwise() {
    at(20);
    for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::And,
                     OpKind::Or, OpKind::Xor, OpKind::Shl, OpKind::Shr})
      v(k, {range_, splat_}, ti(DType::i32));
    v(OpKind::Min, {range_, splat_}, ti(DType::i32));
    v(OpKind::Max, {range_, splat_}, ti(DType::i32), {{"nan", std::string("ignore")}});
    for (OpKind k :
         {OpKind::CmpEq, OpKind::CmpNe, OpKind::CmpLt, OpKind::CmpLe, OpKind::CmpGt, OpKind::CmpGe})
      v(k, {range_, splat_}, ti(DType::i1));
    for (OpKind k : {OpKind::Neg, OpKind::Not, OpKind::Abs}) v(k, {range_}, ti(DType::i32));
  }

  void memory_and_float_elementwise() {
    at(30);
    Value* xs = v(OpKind::Splat, {p_[0]}, Type::ptr_tile(DType::f32, {kB}));
    ptrs_ = v(OpKind::PtrAdd, {xs, range_}, xs->type);
    mask_ = v(OpKind::CmpLt, {range_, v(OpKind::Splat, {p_[2]}, ti(DType::i32))}, ti(DType::i1));
    Value* zero = b_.constant_float(ti(DType::f32), 0.0);
    x_ = v(OpKind::Load, {ptrs_, mask_, zero}, ti(DType::f32), {{"cache", std::string(".cg")}});
    v(OpKind::Load, {ptrs_}, ti(DType::f32));
    for (OpKind k : ir::kinds_where(ir::is_unary_math))  // every unary math row of ops.def
      v(k, {x_}, ti(DType::f32));
    for (OpKind k : ir::kinds_where(ir::is_binary_math))  // and every binary one
      v(k, {x_, x_}, ti(DType::f32));
    v(OpKind::Fma, {x_, x_, x_}, ti(DType::f32));
    y_ = v(OpKind::Where, {mask_, x_, zero}, ti(DType::f32));
    v(OpKind::Cast, {x_}, ti(DType::f16));
    v(OpKind::Bitcast, {x_}, ti(DType::i32));
    b_.create(OpKind::Store, {ptrs_, y_, mask_}, {});
    b_.create(OpKind::Store, {ptrs_, y_}, {});
    v(OpKind::AtomicRmw, {ptrs_, x_, mask_}, ti(DType::f32),
      {{"op", std::string("add")}, {"scope", std::string("gpu")}, {"sem", std::string("relaxed")}});
    Value* qs =
        v(OpKind::PtrAdd, {v(OpKind::Splat, {p_[3]}, Type::ptr_tile(DType::i32, {kB})), range_},
          Type::ptr_tile(DType::i32, {kB}));
    v(OpKind::AtomicCas, {qs, range_, splat_}, ti(DType::i32), {{"sem", std::string("acq_rel")}});
    // A 1-D descriptor over p_[0] of p_[2] elements: the block at offset pid, stored back.
    Value* one = b_.constant_int(i32(), 1);
    Value* block = v(OpKind::DescLoad, {p_[0], p_[2], one, pid_}, ti(DType::f32));
    b_.create(OpKind::DescStore, {p_[0], p_[2], one, pid_, block}, {});
  }

  void reductions() {
    at(40);
    v(OpKind::Reduce, {x_}, f32(), {{"axis", int64_t{0}}, {"kind", std::string("sum")}});
    v(OpKind::Reduce, {x_}, i32(), {{"axis", int64_t{0}}, {"kind", std::string("argmax")}});
    v(OpKind::Scan, {x_}, ti(DType::f32),
      {{"axis", int64_t{0}}, {"kind", std::string("max")}, {"reverse", int64_t{1}}});
    Op* rg = b_.create(OpKind::ReduceGeneric, {x_, range_}, {f32(), i32()}, {{"axis", int64_t{0}}});
    combine(rg, {f32(), i32()});
    Op* sg = b_.create(OpKind::ScanGeneric, {x_}, {ti(DType::f32)}, {{"axis", int64_t{0}}});
    combine(sg, {f32()});
    Value* a = b_.constant_float(tile(DType::f16, {kB, 32}), 1.0);
    Value* bm = b_.constant_float(tile(DType::f16, {32, kB}), 2.0);
    Value* acc = b_.constant_float(tile(DType::f32, {kB, kB}), 0.0);
    v(OpKind::Dot, {a, bm, acc}, acc->type, {{"precision", std::string("ieee")}});
  }

  /// A combine region taking left then right elements and yielding max/min of each pair.
  void combine(Op* op, const std::vector<Type>& elems) {
    Region* r = b_.add_region(op);
    std::vector<Value*> l, rr, out;
    for (const Type& t : elems) l.push_back(m_.add_arg(r, t));
    for (const Type& t : elems) rr.push_back(m_.add_arg(r, t));
    Builder inner(m_, r);
    inner.set_loc(b_.loc());
    for (size_t i = 0; i < elems.size(); ++i)
      out.push_back(inner.create_value(i ? OpKind::Min : OpKind::Max, {l[i], rr[i]}, elems[i]));
    inner.create(OpKind::Yield, out, {});
  }

  void debug_and_hints() {
    at(50);
    b_.create(OpKind::Print, {x_, pid_}, {},
              {{"prefix", std::string("x = ")}, {"hex", int64_t{0}}});
    b_.create(OpKind::Print, {}, {});
    b_.create(OpKind::Assert, {mask_}, {}, {{"message", std::string("mask \"must\" hold\n")}});
    v(OpKind::MultipleOf, {range_}, ti(DType::i32), {{"values", std::vector<int64_t>{16}}});
    v(OpKind::MaxContiguous, {range_}, ti(DType::i32), {{"values", std::vector<int64_t>{16}}});
    b_.create(OpKind::Assume, {v(OpKind::CmpGt, {p_[2], c0_}, Type::scalar(DType::i1))}, {});
    b_.create(OpKind::DebugBarrier, {}, {});
  }

  void control_flow() {
    at(60);
    Op* loop = b_.create(OpKind::For, {c0_, p_[2], c16_, x_}, {x_->type});
    Region* body = b_.add_region(loop);
    m_.add_arg(body, i32());
    Value* acc = m_.add_arg(body, x_->type);
    Builder in(m_, body);
    in.set_loc(Location::make("/src/every_op.cpp", 61, 5));
    in.create(OpKind::Yield, {in.create_value(OpKind::Add, {acc, acc}, acc->type)}, {});

    Value* cond = v(OpKind::CmpLt, {pid_, p_[2]}, Type::scalar(DType::i1));
    Op* branch = b_.create(OpKind::If, {cond}, {x_->type});
    Builder then_b(m_, b_.add_region(branch));
    then_b.create(OpKind::Yield, {loop->result(0)}, {});
    Builder else_b(m_, b_.add_region(branch));
    else_b.create(OpKind::Yield, {y_}, {});

    Op* w = b_.create(OpKind::While, {pid_}, {i32()});
    Region* before = b_.add_region(w);
    Value* i = m_.add_arg(before, i32());
    Builder bb(m_, before);
    bb.create(OpKind::Condition,
              {bb.create_value(OpKind::CmpLt, {i, p_[2]}, Type::scalar(DType::i1)), i}, {});
    Region* after = b_.add_region(w);
    Value* j = m_.add_arg(after, i32());
    Builder ab(m_, after);
    ab.create(OpKind::Yield, {ab.create_value(OpKind::Add, {j, c16_}, i32())}, {});
  }

  Module& m_;
  Builder& b_;
  std::vector<Value*>& p_;
  Value *pid_ = nullptr, *c0_ = nullptr, *c16_ = nullptr, *range_ = nullptr, *splat_ = nullptr;
  Value *ptrs_ = nullptr, *mask_ = nullptr, *x_ = nullptr, *y_ = nullptr;
};

/// A SIMT function using every SIMT op kind (the matrix ops last), and print/assert with a rank.
void add_simt_function(Module& m) {
  Function* fn = m.add_function("every_simt_op", Location::make("/src/every_op.cpp", 70, 6));
  set_simt_attrs(*fn, 128, 32, "cuda-sm_90");
  add_shared_buffer(*fn, DType::f32, 4);
  add_shared_buffer(*fn, DType::i32, 3);
  const Type ptr = Type::pointer(DType::f32);
  const Type i1 = Type::scalar(DType::i1);
  for (const char* name : {"x", "n"}) {
    Value* arg = m.add_arg(fn->body, name[0] == 'x' ? ptr : i32());
    fn->params.push_back(Param{name, arg, {}});
  }
  Value* x = fn->params[0].value;
  Value* n = fn->params[1].value;
  Builder b(m, fn->body);
  b.set_loc(Location::make("/src/every_op.cpp", 71, 3));
  Value* lane = b.create_value(OpKind::LaneId, {}, i32());
  Value* sg = b.create_value(OpKind::SubgroupId, {}, i32());
  Value* c0 = b.constant_int(i32(), 0);
  Value* c16 = b.constant_int(i32(), 16);
  Value* pred = b.create_value(OpKind::CmpLt, {lane, n}, i1);
  Value* p = b.create_value(OpKind::PtrAdd, {x, lane}, ptr);
  Value* zero = b.constant_float(f32(), 0.0);
  Op* load =
      b.create(OpKind::GlobalLoad, {p, pred, zero, zero}, {f32(), f32()},
               {{"align", int64_t{8}}, {"cache", std::string(".ca")}, {"width", int64_t{2}}});
  Value* s = b.create_value(OpKind::Shuffle, {load->result(0), c16}, f32(),
                            {{"mode", std::string("xor")}});
  b.create(OpKind::SharedStore, {sg, s}, {}, {{"buffer", int64_t{0}}, {"width", int64_t{1}}});
  b.create(OpKind::Barrier, {}, {});
  Op* shared = b.create(OpKind::SharedLoad, {c0}, {f32(), f32(), f32(), f32()},
                        {{"buffer", int64_t{0}}, {"width", int64_t{4}}});
  b.create(OpKind::GlobalStore, {p, pred, shared->result(0), shared->result(1)}, {},
           {{"align", int64_t{8}}, {"width", int64_t{2}}});
  b.create(OpKind::Print, {lane, shared->result(2)}, {},
           {{"prefix", std::string("v ")}, {"rank", int64_t{1}}});
  b.create(OpKind::Assert, {lane, c0, pred}, {},
           {{"message", std::string("in range")}, {"rank", int64_t{2}}});
  b.create(OpKind::CpAsync, {c0, x, pred}, {}, {{"buffer", int64_t{0}}});
  b.create(OpKind::CpAsyncCommit, {}, {});
  b.create(OpKind::CpAsyncWait, {}, {}, {{"pending", int64_t{0}}});
  Value* frag = b.create_value(OpKind::LdMatrix, {c0}, f32(),
                               {{"buffer", int64_t{0}}, {"count", int64_t{1}}});
  b.create(OpKind::Mma,
           {frag, shared->result(0), shared->result(1), shared->result(2), shared->result(3), frag,
            zero, zero, zero, zero},
           {f32(), f32(), f32(), f32()},
           {{"a", std::string("tf32")}, {"shape", std::string("m16n8k8")}});
}

/// A SIMT function with the warpgroup matrix family (Hopper's wgmma: core/ir/wgmma.h), ending
/// in a warp_specialize of one role.
void add_wgmma_function(Module& m) {
  Function* fn = m.add_function("every_wgmma_op", Location::make("/src/every_op.cpp", 80, 6));
  set_simt_attrs(*fn, 128, 32, "cuda-sm_90a");
  fn->set_attr(attr::kMaxnreg, int64_t{232});  // setmaxnreg's launch count
  add_shared_buffer(*fn, DType::f16, 4096);
  Value* start = m.add_arg(fn->body, i32());
  fn->params.push_back(Param{"start", start, {}});
  Builder b(m, fn->body);
  b.set_loc(Location::make("/src/every_op.cpp", 81, 3));
  Value* zero = b.constant_float(f32(), 0.0);
  b.create(OpKind::SetMaxNReg, {}, {}, {{"inc", int64_t{1}}, {"registers", int64_t{232}}});
  b.create(OpKind::FenceAsyncShared, {}, {});
  b.create(OpKind::WgmmaFence, {}, {});
  const std::vector<int64_t> layout = {0, 128, 0, 1024, 0};
  Op* w =
      b.create(OpKind::Wgmma, {start, start, zero, zero, zero, zero}, {f32(), f32(), f32(), f32()},
               {{"a", std::string("f16")},
                {"a_smem", layout},
                {"b_smem", layout},
                {"shape", std::string("m64n8k16")}});
  b.create(OpKind::WgmmaCommit, {}, {});
  b.create(OpKind::WgmmaWait, std::vector<Value*>(w->results.begin(), w->results.end()),
           {f32(), f32(), f32(), f32()}, {{"pending", int64_t{0}}});
  // One role of the whole warpgroup.
  Op* roles = b.create(OpKind::WarpSpecialize, {}, {}, {{"roles", std::vector<int64_t>{128}}});
  Builder role(m, b.add_region(roles));
  role.set_loc(Location::make("/src/every_op.cpp", 90, 5));
  role.create(OpKind::Yield, {}, {});
}

/// A SIMT function with the TMA family: a tensor map, an mbarrier initialized, armed with the
/// box's bytes, a copy completing on it, and a wait; then the cluster ops.
void add_tma_function(Module& m) {
  Function* fn = m.add_function("every_tma_op", Location::make("/src/every_op.cpp", 100, 6));
  set_simt_attrs(*fn, 128, 32, "cuda-sm_90a");
  add_shared_buffer(*fn, DType::f16, 4096);
  add_shared_buffer(*fn, DType::i64, 1);
  Value* base = m.add_arg(fn->body, Type::pointer(DType::f16));
  fn->params.push_back(Param{"base", base, {{"divisibility", int64_t{16}}}});
  Value* rows = m.add_arg(fn->body, i32());
  fn->params.push_back(Param{"rows", rows, {}});
  TensorMapParam map;
  map.base_param = 0;
  map.dims = {{1, 0}, {-1, 64}};
  map.strides = {{-1, 64}, {-1, 1}};
  map.box = {64, 64};
  map.swizzle = 128;
  add_tensor_map(*fn, map);
  Builder b(m, fn->body);
  b.set_loc(Location::make("/src/every_op.cpp", 101, 3));
  Value* c0 = b.constant_int(i32(), 0);
  Value* c1 = b.constant_int(i32(), 1);
  Value* bytes = b.constant_int(i32(), 8192);
  const std::vector<Attribute> bar = {{"buffer", int64_t{1}}};
  b.create(OpKind::MbarrierInit, {c0, c1}, {}, bar);
  b.create(OpKind::MbarrierArriveTx, {c0, bytes}, {}, bar);
  b.create(OpKind::TmaLoad, {c0, c0, rows, c0}, {},
           {{"barrier", int64_t{1}}, {"buffer", int64_t{0}}, {"map", int64_t{0}}});
  b.create(OpKind::MbarrierWait, {c0, c0}, {}, bar);
  b.create(OpKind::MbarrierInval, {c0}, {}, bar);
  b.create(OpKind::TmaStore, {c0, rows, c0}, {}, {{"buffer", int64_t{0}}, {"map", int64_t{0}}});
  b.create(OpKind::TmaStoreCommit, {}, {});
  b.create(OpKind::TmaStoreWait, {}, {}, {{"pending", int64_t{0}}});
  // In a cluster of 2: the rank, the cluster's barrier, an arrival on the other program's
  // mbarrier and a copy multicast to both.
  fn->set_attr("cluster", int64_t{2});
  Value* rank = b.create(OpKind::ClusterRank, {}, {i32()})->results[0];
  b.create(OpKind::ClusterBarrier, {}, {});
  b.create(OpKind::MbarrierArriveTx, {c0, c0, rank}, {}, bar);
  Value* both = b.constant_int(i32(), 3);
  b.create(OpKind::TmaLoad, {c0, c0, rows, c0, both}, {},
           {{"barrier", int64_t{1}},
            {"buffer", int64_t{0}},
            {"map", int64_t{0}},
            {"multicast", int64_t{1}}});
}

/// A SIMT function with the cooperative-matrix family: a filled accumulator, A and B loaded from
/// shared memory, their product added and stored; a workgroup-scope A read from a global tensor.
void add_coopmat_function(Module& m) {
  Function* fn = m.add_function("every_coopmat_op", Location::make("/src/every_op.cpp", 90, 6));
  set_simt_attrs(*fn, 32, 32, "vulkan-nvidia");
  add_shared_buffer(*fn, DType::f16, 512);
  add_shared_buffer(*fn, DType::f32, 256);
  Value* start = m.add_arg(fn->body, i32());
  fn->params.push_back(Param{"start", start, {}});
  Builder b(m, fn->body);
  b.set_loc(Location::make("/src/every_op.cpp", 91, 3));
  Value* zero = b.constant_float(f32(), 0.0);
  const Type acc = Type::coopmat(DType::f32, 16, 16, MatUse::Acc);
  Value* c = b.create(OpKind::CoopMatFill, {zero}, {acc})->result();
  const std::vector<Attribute> in = {{"buffer", int64_t{0}}, {"stride", int64_t{16}}};
  Value* a =
      b.create(OpKind::CoopMatLoad, {start}, {Type::coopmat(DType::f16, 16, 16, MatUse::A)}, in)
          ->result();
  Value* bm =
      b.create(OpKind::CoopMatLoad, {start}, {Type::coopmat(DType::f16, 16, 16, MatUse::B)}, in)
          ->result();
  Value* d = b.create(OpKind::CoopMatMulAdd, {a, bm, c}, {acc})->result();
  b.create(OpKind::CoopMatStore, {start, d}, {}, {{"buffer", int64_t{1}}, {"stride", int64_t{16}}});
  Value* base = m.add_arg(fn->body, Type::pointer(DType::f16));
  fn->params.push_back(Param{"base", base, {}});
  b.create(OpKind::CoopMatLoadTensor, {base, start, start, start, start, start, start},
           {Type::coopmat(DType::f16, 32, 16, MatUse::A, true)}, {{"clamp_zero", int64_t{1}}});
}

/// A function with both inline-asm kinds (on scalars: the tile forms are in the golden files).
void add_inline_asm_function(Module& m) {
  Function* fn = m.add_function("every_inline_asm", Location::make("/src/every_op.cpp", 100, 6));
  Value* n = m.add_arg(fn->body, i32());
  fn->params.push_back(Param{"n", n, {}});
  Builder b(m, fn->body);
  b.set_loc(Location::make("/src/every_op.cpp", 101, 3));
  const std::vector<Attribute> attrs = {{"asm", std::string("add.s32 $0, $1, $1;")},
                                        {"constraints", std::string("=r,r")}};
  Value* twice = b.create(OpKind::InlineAsm, {n}, {i32()}, attrs)->result();
  b.create(OpKind::InlineAsmImpure, {twice}, {i32()}, attrs);
}

}  // namespace

FunctionBuilder::FunctionBuilder(const std::vector<Type>& param_types, Location loc)
    : fn(module->add_function("f", loc)), b(*module, fn->body) {
  b.set_loc(loc);
  for (size_t i = 0; i < param_types.size(); ++i) {
    params.push_back(module->add_arg(fn->body, param_types[i]));
    fn->params.push_back(Param{"p" + std::to_string(i), params.back(), {}});
  }
}

std::unique_ptr<Module> every_op_kind() {
  FunctionBuilder fb(
      {Type::pointer(DType::f32), Type::pointer(DType::f32), i32(), Type::pointer(DType::i32)},
      Location::make("/src/every_op.cpp", 9, 6));
  fb.fn->name = "every_op";
  fb.fn->params[0].name = "x";
  fb.fn->params[0].attrs = {{"divisibility", int64_t{16}}};
  fb.fn->params[2].name = "n";
  fb.fn->params[2].attrs = {{"divisibility", int64_t{16}}, {"equal_to", int64_t{1}}};
  KernelBuilder(fb).build();
  add_simt_function(*fb.module);
  add_wgmma_function(*fb.module);
  add_coopmat_function(*fb.module);
  add_inline_asm_function(*fb.module);
  add_tma_function(*fb.module);
  return std::move(fb.module);
}

std::unique_ptr<Module> every_attr_kind() {
  FunctionBuilder fb({});
  fb.fn->name = "attrs";
  const double inf = std::numeric_limits<double>::infinity();
  fb.b.create(OpKind::Print, {}, {},
              {{"int", int64_t{-3}},
               {"int_min", std::numeric_limits<int64_t>::min()},
               {"float", 0.1},
               {"neg", -2.5},
               {"whole", 3.0},
               {"neg_zero", -0.0},
               {"big", 1e300},
               {"tiny", 5e-324},
               {"inf", inf},
               {"ninf", -inf},
               {"nan", std::numeric_limits<double>::quiet_NaN()},
               {"str", std::string("a \"q\" \\ b\n\t\x01\x7f\xc3\xa9")},
               {"empty", std::string()},
               {"list", std::vector<int64_t>{1, -2, 3}},
               {"none", std::vector<int64_t>{}},
               {"scalar", Type::scalar(DType::bf16)},
               {"ptr", Type::pointer(DType::u8)},
               {"tile", Type::ptr_tile(DType::f16, {2, 4})},
               {"not an identifier", int64_t{1}}});
  return std::move(fb.module);
}

}  // namespace tessera::ir::samples
