/// \file The passes against the executable spec: random scalar programs over edge-case values
/// (wrapping integers, -0.0, inf, NaN, f16/bf16 rounding), run by the host interpreter before
/// and after optimize(); every stored result must keep its bits (any NaN matches any NaN).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/interp/interpreter.h"
#include "core/ir/abi.h"
#include "core/ir/printer.h"
#include "core/passes/pipeline.h"
#include "core/support/float16.h"
#include "pass_test_util.h"

namespace tessera::test {
namespace {

constexpr std::array kDTypes = {DType::i1,   DType::i8,  DType::i16, DType::i32, DType::i64,
                                DType::u8,   DType::u16, DType::u32, DType::u64, DType::f16,
                                DType::bf16, DType::f32, DType::f64};
constexpr int kSlots = 256;  ///< stored results per dtype
constexpr int kInputs = 8;   ///< loaded input values per dtype

class HostMemory : public interp::MemoryMap {
 public:
  void add(const void* p, size_t bytes) {
    const auto begin = reinterpret_cast<uint64_t>(p);
    ranges_.push_back({begin, begin + bytes});
  }
  bool contains(uint64_t address, uint64_t bytes) const override {
    for (const auto& [begin, end] : ranges_)
      if (address >= begin && bytes <= end - begin && address - begin <= end - begin - bytes)
        return true;
    return false;
  }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
};

std::vector<double> interesting_floats() {
  const double inf = std::numeric_limits<double>::infinity();
  return {0.0,  -0.0, 1.0,  -1.0,         0.5,     0.1,     3.0,    -7.25, 65504.0, 1e-5,
          1e30, inf,  -inf, std::nan(""), 0x1p-11, 0x1p-24, 2049.0, 1e10,  -3.7,    255.5};
}

std::vector<int64_t> interesting_ints() {
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();
  return {0,     1,      -1,         2,           7,          -7,     31,    32,
          63,    64,     100,        200,         255,        256,    -128,  127,
          32767, -32768, 2147483647, -2147483648, 4294967295, kMin64, kMax64};
}

/// One random program: inputs loaded from a buffer per dtype, constants, ops over both, and
/// every op result stored to an output buffer of its dtype.
class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  void build(Kernel& k, int num_ops) {
    for (DType t : kDTypes) {
      in_[t] = k.param(Type::pointer(t), "in_" + std::string(ir::dtype_name(t)));
      out_[t] = k.param(Type::pointer(t), "out_" + std::string(ir::dtype_name(t)));
    }
    for (DType t : kDTypes) seed_pool(k, t);
    emit(k, num_ops, 0);
  }

  /// The op whose result went to `slot` of the dtype's output.
  const ir::Op* stored(DType t, int slot) const { return stored_.at({t, slot}); }

 private:
  /// `n` random ops at the builder's insertion point, each result stored (loops and branches
  /// nest up to two levels; their stores happen inside them).
  void emit(Kernel& k, int n, int depth) {
    for (int i = 0; i < n; ++i) {
      const bool nest = depth < 2 && std::uniform_int_distribution<int>(0, 24)(rng_) == 0;
      Value* v = nest ? (choose({false, true}) ? loop(k, depth) : branch(k, depth)) : random_op(k);
      if (v) store(k, v);
    }
  }

  void store(Kernel& k, Value* v) {
    const DType t = v->type.dtype;
    pool_[t].push_back(v);
    if (slots_[t] >= kSlots) return;
    stored_[{t, slots_[t]}] = v->def;
    Value* at =
        k.op(OpKind::PtrAdd, {out_[t], k.cint(scalar(DType::i32), slots_[t]++)}, out_[t]->type);
    k.b.create(OpKind::Store, {at, v}, {});
  }

  std::vector<DType> random_dtypes(int n) {
    std::vector<DType> types;
    for (int i = 0; i < n; ++i) types.push_back(any_dtype());
    return types;
  }

  /// Fills `region` (whose arguments join the pool) with ops and a yield of `types`; the pool
  /// forgets the region's values afterwards.
  void fill(Kernel& k, ir::Region* region, const std::vector<DType>& types, int depth) {
    auto saved = pool_;
    for (Value* a : region->args) pool_[a->type.dtype].push_back(a);
    ir::Region* outer = k.b.region();
    k.b.set_insertion_end(region);
    emit(k, 8, depth + 1);
    std::vector<Value*> yields;
    for (DType t : types)
      yields.push_back(
          pool_[t][std::uniform_int_distribution<size_t>(0, pool_[t].size() - 1)(rng_)]);
    k.b.create(OpKind::Yield, yields, {});
    k.b.set_insertion_end(outer);
    pool_ = std::move(saved);
  }

  /// A 3-trip `for` carrying three values; some results feed later ops, others are dead.
  Value* loop(Kernel& k, int depth) {
    const std::vector<DType> types = random_dtypes(3);
    std::vector<Value*> operands = {k.cint(scalar(DType::i32), 0), k.cint(scalar(DType::i32), 3),
                                    k.cint(scalar(DType::i32), 1)};
    std::vector<Type> result_types;
    for (DType t : types) {
      operands.push_back(pick(t));
      result_types.push_back(scalar(t));
    }
    ir::Op* op = k.b.create(OpKind::For, operands, result_types);
    ir::Region* body = k.b.add_region(op);
    k.m.add_arg(body, scalar(DType::i32));
    for (DType t : types) k.m.add_arg(body, scalar(t));
    fill(k, body, types, depth);
    for (size_t i = 1; i < op->results.size(); ++i)
      if (choose({false, true})) pool_[types[i]].push_back(op->result(i));
    return op->result(0);
  }

  /// An `if` on a runtime or constant condition with two results.
  Value* branch(Kernel& k, int depth) {
    const std::vector<DType> types = random_dtypes(2);
    std::vector<Type> result_types;
    for (DType t : types) result_types.push_back(scalar(t));
    ir::Op* op = k.b.create(OpKind::If, {pick(DType::i1)}, result_types);
    fill(k, k.b.add_region(op), types, depth);
    fill(k, k.b.add_region(op), types, depth);
    if (choose({false, true})) pool_[types[1]].push_back(op->result(1));
    return op->result(0);
  }

  void seed_pool(Kernel& k, DType t) {
    for (int i = 0; i < kInputs; ++i) {  // runtime values: the passes cannot see them
      Value* at = k.op(OpKind::PtrAdd, {in_[t], k.cint(scalar(DType::i32), i)}, in_[t]->type);
      inputs_[t].push_back(k.op(OpKind::Load, {at}, scalar(t)));
    }
    pool_[t] = inputs_[t];
    if (ir::is_float(t)) {
      for (double v : interesting_floats()) pool_[t].push_back(k.cfloat(scalar(t), v));
    } else {
      for (int64_t v : interesting_ints()) pool_[t].push_back(k.cint(scalar(t), v));
    }
  }

  /// A value of dtype `t`: half the time a runtime input, so that rewrites of `x op constant`
  /// meet -0.0, NaN, inf and wrapping values they cannot see.
  Value* pick(DType t) {
    auto& p = choose({false, true}) ? inputs_[t] : pool_[t];
    return p[std::uniform_int_distribution<size_t>(0, p.size() - 1)(rng_)];
  }
  template <class T>
  T choose(std::initializer_list<T> items) {
    auto it = items.begin();
    std::advance(it, std::uniform_int_distribution<size_t>(0, items.size() - 1)(rng_));
    return *it;
  }
  DType any_dtype() { return kDTypes[std::uniform_int_distribution<size_t>(0, 12)(rng_)]; }

  Value* random_op(Kernel& k) {
    const DType t = any_dtype();
    switch (std::uniform_int_distribution<int>(0, 6)(rng_)) {
      case 0:
        return binary(k, t);
      case 1:
        return with_identity(k, t);
      case 2:
        return unary(k, t);
      case 3:
        return k.op(OpKind::Cast, {pick(t)}, scalar(any_dtype()));
      case 4:
        return bitcast(k, t);
      default:
        return ternary(k, t);
    }
  }

  Value* binary(Kernel& k, DType t) {
    Value* a = pick(t);
    Value* b = std::uniform_int_distribution<int>(0, 7)(rng_) == 0 ? a : pick(t);
    const OpKind cmp = choose(
        {OpKind::CmpEq, OpKind::CmpNe, OpKind::CmpLt, OpKind::CmpLe, OpKind::CmpGt, OpKind::CmpGe});
    if (std::uniform_int_distribution<int>(0, 3)(rng_) == 0)
      return k.op(cmp, {a, b}, scalar(DType::i1));
    if (ir::is_float(t)) {
      const OpKind kind = choose({OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem,
                                  OpKind::Min, OpKind::Max});
      std::vector<ir::Attribute> attrs;
      if ((kind == OpKind::Min || kind == OpKind::Max) && choose({false, true}))
        attrs.push_back({"nan", std::string("ignore")});
      return k.op(kind, {a, b}, scalar(t), attrs);
    }
    const OpKind kind =
        choose({OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Min,
                OpKind::Max, OpKind::And, OpKind::Or, OpKind::Xor, OpKind::Shl, OpKind::Shr});
    return k.op(kind, {a, b}, scalar(t));
  }

  /// A runtime input against 0, -0.0, 1 or all ones, in either order: what the algebraic
  /// rewrites look for.
  Value* with_identity(Kernel& k, DType t) {
    Value* x = inputs_[t][std::uniform_int_distribution<size_t>(0, kInputs - 1)(rng_)];
    Value* c = ir::is_float(t) ? k.cfloat(scalar(t), choose({0.0, -0.0, 1.0}))
                               : k.cint(scalar(t), choose<int64_t>({0, 1, -1}));
    const bool swap = choose({false, true});
    Value* a = swap ? c : x;
    Value* b = swap ? x : c;
    if (ir::is_float(t))
      return k.op(choose({OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div}), {a, b}, scalar(t));
    const OpKind kind = choose({OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::And,
                                OpKind::Or, OpKind::Xor, OpKind::Shl, OpKind::Shr});
    return k.op(kind, {a, b}, scalar(t));
  }

  Value* unary(Kernel& k, DType t) {
    if (!ir::is_float(t))
      return k.op(choose({OpKind::Neg, OpKind::Not, OpKind::Abs}), {pick(t)}, scalar(t));
    const OpKind kind = choose(
        {OpKind::Neg,   OpKind::Abs,   OpKind::Exp,  OpKind::Exp2,  OpKind::Log,   OpKind::Log2,
         OpKind::Sqrt,  OpKind::Rsqrt, OpKind::Sin,  OpKind::Cos,   OpKind::Tanh,  OpKind::Erf,
         OpKind::Log1p, OpKind::Floor, OpKind::Ceil, OpKind::Expm1, OpKind::Log10, OpKind::Sinh,
         OpKind::Cosh,  OpKind::Asin,  OpKind::Acos, OpKind::Atan,  OpKind::Cbrt});
    return k.op(kind, {pick(t)}, scalar(t));
  }

  Value* bitcast(Kernel& k, DType t) {
    std::vector<DType> same;
    for (DType d : kDTypes)
      if (d != t && ir::dtype_bits(d) == ir::dtype_bits(t)) same.push_back(d);
    if (same.empty()) return nullptr;
    const DType to = same[std::uniform_int_distribution<size_t>(0, same.size() - 1)(rng_)];
    return k.op(OpKind::Bitcast, {pick(t)}, scalar(to));
  }

  Value* ternary(Kernel& k, DType t) {
    if (ir::is_float(t) && choose({false, true}))
      return k.op(OpKind::Fma, {pick(t), pick(t), pick(t)}, scalar(t));
    Value* a = pick(t);
    return k.op(OpKind::Where, {pick(DType::i1), a, choose({false, true}) ? a : pick(t)},
                scalar(t));
  }

  std::mt19937 rng_;
  std::map<DType, Value*> in_, out_;
  std::map<DType, std::vector<Value*>> inputs_, pool_;
  std::map<DType, int> slots_;
  std::map<std::pair<DType, int>, const ir::Op*> stored_;
};

/// Input values per dtype (bytes), the same for both runs.
std::vector<uint8_t> inputs(DType t, uint32_t seed) {
  const int bytes = ir::dtype_bytes(t);
  std::vector<uint8_t> data(kInputs * bytes);
  std::mt19937 rng(seed);
  for (int i = 0; i < kInputs; ++i) {
    uint64_t bits = 0;
    if (t == DType::i1) {
      bits = rng() & 1;
    } else if (ir::is_float(t)) {
      const auto values = interesting_floats();
      constexpr double kSpecial[] = {-0.0, std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::infinity(), 0.0};
      const double v = i < 4 ? kSpecial[i] : values[rng() % values.size()];
      if (t == DType::f16) bits = f16_from_double(v);
      if (t == DType::bf16) bits = bf16_from_double(v);
      if (t == DType::f32) bits = std::bit_cast<uint32_t>(static_cast<float>(v));
      if (t == DType::f64) bits = std::bit_cast<uint64_t>(v);
    } else {
      const auto values = interesting_ints();
      bits = static_cast<uint64_t>(values[rng() % values.size()]);
    }
    std::memcpy(data.data() + i * bytes, &bits, bytes);  // little-endian host
  }
  return data;
}

/// Runs `fn` on fresh buffers; returns the output buffers in kDTypes order.
std::vector<std::vector<uint8_t>> run(const ir::Function& fn, uint32_t seed) {
  HostMemory memory;
  std::vector<std::vector<uint8_t>> ins, outs;
  for (DType t : kDTypes) {
    ins.push_back(inputs(t, seed + static_cast<uint32_t>(t)));
    outs.emplace_back(kSlots * ir::dtype_bytes(t), 0xAB);
  }
  const ir::ParamLayout layout = ir::param_layout(fn);
  std::vector<std::byte> block(layout.size);
  for (size_t i = 0; i < kDTypes.size(); ++i) {
    for (int j = 0; j < 2; ++j) {
      const std::vector<uint8_t>& buffer = j == 0 ? ins[i] : outs[i];
      memory.add(buffer.data(), buffer.size());
      const uint64_t address = reinterpret_cast<uint64_t>(buffer.data());
      std::memcpy(block.data() + layout.slots[2 * i + j].offset, &address, 8);
    }
  }
  interp::run(fn, block, {}, memory);
  return outs;
}

bool is_nan_bits(DType t, uint64_t bits) {
  switch (t) {
    case DType::f16:
      return std::isnan(f16_to_double(static_cast<uint16_t>(bits)));
    case DType::bf16:
      return std::isnan(bf16_to_double(static_cast<uint16_t>(bits)));
    case DType::f32:
      return std::isnan(std::bit_cast<float>(static_cast<uint32_t>(bits)));
    case DType::f64:
      return std::isnan(std::bit_cast<double>(bits));
    default:
      return false;
  }
}

/// Results of `for` and `if` ops in `body`, and how many such ops there are.
std::pair<int, int> control_results(ir::Region* body) {
  int results = 0, ops = 0;
  ir::walk(body, [&](ir::Op* op) {
    if (op->kind != OpKind::For && op->kind != OpKind::If) return;
    results += static_cast<int>(op->results.size());
    ++ops;
  });
  return {results, ops};
}

TEST_CASE("passes: optimize keeps the interpreter's results of random programs") {
  std::pair<int, int> control_before, control_after;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    Kernel k;
    Generator gen(seed);
    gen.build(k, 400);
    k.verify();
    std::unique_ptr<ir::Module> optimized = k.m.clone();
    passes::optimize(*optimized, {.verify_each = true});
    // The passes did work (many stored values became constants) and every store stayed.
    int stores = 0, constant_stores = 0;
    ir::walk(optimized->kernel().body, [&](ir::Op* op) {
      if (op->kind != OpKind::Store) return;
      ++stores;
      constant_stores += passes::is_constant(op->operand(1));
    });
    CHECK(stores == k.count(OpKind::Store));
    CHECK(constant_stores > stores / 8);
    control_before.first += control_results(k.fn->body).first;
    control_before.second += control_results(k.fn->body).second;
    control_after.first += control_results(optimized->kernel().body).first;
    control_after.second += control_results(optimized->kernel().body).second;
    const auto before = run(k.m.kernel(), seed);
    const auto after = run(optimized->kernel(), seed);
    for (size_t i = 0; i < kDTypes.size(); ++i) {
      const DType t = kDTypes[i];
      const int bytes = ir::dtype_bytes(t);
      for (int slot = 0; slot < kSlots; ++slot) {
        uint64_t x = 0, y = 0;
        std::memcpy(&x, before[i].data() + slot * bytes, bytes);
        std::memcpy(&y, after[i].data() + slot * bytes, bytes);
        if (x == y || (is_nan_bits(t, x) && is_nan_bits(t, y))) continue;
        INFO("seed " << seed << ", " << ir::dtype_name(t) << " slot " << slot << ": " << x
                     << " became " << y << " for " << ir::print_op(*gen.stored(t, slot)));
        CHECK(x == y);
      }
    }
  }
  // Loops and branches were generated, and dead results of them were pruned.
  INFO("for/if results " << control_before.first << " -> " << control_after.first << ", ops "
                         << control_before.second << " -> " << control_after.second);
  CHECK(control_before.second > 40);
  CHECK(control_after.first < control_before.first);
}

}  // namespace
}  // namespace tessera::test
