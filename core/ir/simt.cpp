/// \file The SIMT function attributes (simt.h), read and written in one place so that the
/// lowering, the emitters and the SIMT interpreter agree on their names and forms.
#include "core/ir/simt.h"

#include <array>
#include <charconv>

#include "core/support/error.h"

namespace tessera::ir {
namespace {

constexpr std::array<std::string_view, 4> kShuffleModes = {"xor", "idx", "up", "down"};

int required_int(const Function& fn, std::string_view name) {
  const AttrValue* v = find_attr(fn.attrs, name);
  const int64_t* i = v ? std::get_if<int64_t>(v) : nullptr;
  TESSERA_CHECK(i, "SIMT function '", fn.name, "' has no integer attribute '", name, "'");
  return static_cast<int>(*i);
}

}  // namespace

bool is_simt(const Function& fn) {
  return fn.str_attr_or(attr::kStage, "") == "simt";
}

int simt_maxnreg(const Function& fn) {
  const AttrValue* v = find_attr(fn.attrs, attr::kMaxnreg);
  const int64_t* i = v ? std::get_if<int64_t>(v) : nullptr;
  return i ? static_cast<int>(*i) : 0;
}

int simt_cluster(const Function& fn) {
  const AttrValue* v = find_attr(fn.attrs, attr::kCluster);
  const int64_t* i = v ? std::get_if<int64_t>(v) : nullptr;
  return i ? static_cast<int>(*i) : 1;
}

int simt_threads(const Function& fn) {
  return required_int(fn, attr::kThreads);
}
int simt_subgroup(const Function& fn) {
  return required_int(fn, attr::kSubgroup);
}

int simt_num_subgroups(const Function& fn) {
  int s = simt_subgroup(fn);
  TESSERA_CHECK(s > 0, "SIMT function '", fn.name, "' has subgroup = ", s);
  return simt_threads(fn) / s;
}

std::string simt_target(const Function& fn) {
  return fn.str_attr_or(attr::kTarget, "");
}

std::string shared_buffer_attr(int64_t index) {
  return std::string(attr::kSharedPrefix) + std::to_string(index);
}

std::optional<int64_t> parse_shared_buffer_attr(std::string_view name) {
  if (!name.starts_with(attr::kSharedPrefix)) return std::nullopt;
  std::string_view digits = name.substr(attr::kSharedPrefix.size());
  if (digits.empty() || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  int64_t index = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size() || index < 0) return std::nullopt;
  return index;
}

std::vector<SharedBuffer> shared_buffers(const Function& fn) {
  std::vector<std::optional<SharedBuffer>> slots;
  for (const Attribute& a : fn.attrs) {
    std::optional<int64_t> index = parse_shared_buffer_attr(a.name);
    if (!index) continue;
    const Type* t = std::get_if<Type>(&a.value);
    TESSERA_CHECK(t && t->rank() == 1 && !t->is_ptr && t->shape[0] > 0, "function '", fn.name,
                  "': attribute '", a.name, "' is not a 1-D tile type of a non-pointer dtype");
    TESSERA_CHECK(*index < static_cast<int64_t>(fn.attrs.size()), "function '", fn.name,
                  "': shared buffers are not numbered densely ('", a.name, "')");
    if (slots.size() <= static_cast<size_t>(*index)) slots.resize(static_cast<size_t>(*index) + 1);
    slots[static_cast<size_t>(*index)] = SharedBuffer{t->dtype, t->shape[0]};
  }
  std::vector<SharedBuffer> out;
  for (size_t i = 0; i < slots.size(); ++i) {
    TESSERA_CHECK(slots[i], "function '", fn.name, "' has no attribute '",
                  shared_buffer_attr(static_cast<int64_t>(i)), "' (buffers numbered densely)");
    out.push_back(*slots[i]);
  }
  return out;
}

namespace {

int64_t round_up(int64_t x, int64_t to) {
  return (x + to - 1) / to * to;
}

}  // namespace

std::vector<int64_t> shared_offsets(const Function& fn) {
  std::vector<int64_t> out;
  int64_t end = 0;
  for (const SharedBuffer& b : shared_buffers(fn)) {
    const int64_t start = round_up(end, b.bytes() % 1024 == 0 ? 1024 : 16);
    out.push_back(start);
    end = start + b.bytes();
  }
  return out;
}

int64_t shared_memory_bytes(const Function& fn) {
  const std::vector<SharedBuffer> buffers = shared_buffers(fn);
  if (buffers.empty()) return 0;
  return round_up(shared_offsets(fn).back() + buffers.back().bytes(), 16);
}

void set_simt_attrs(Function& fn, int threads, int subgroup, std::string_view target) {
  fn.set_attr(attr::kStage, std::string("simt"));
  fn.set_attr(attr::kThreads, int64_t{threads});
  fn.set_attr(attr::kSubgroup, int64_t{subgroup});
  if (!target.empty()) fn.set_attr(attr::kTarget, std::string(target));
}

int64_t add_shared_buffer(Function& fn, DType dtype, int64_t count) {
  TESSERA_CHECK(count > 0, "shared buffer of ", count, " elements");
  int64_t index = static_cast<int64_t>(shared_buffers(fn).size());
  fn.set_attr(shared_buffer_attr(index), Type::tile(dtype, {count}));
  return index;
}

std::string_view to_string(ShuffleMode m) {
  return kShuffleModes[static_cast<size_t>(m)];
}

bool parse_shuffle_mode(std::string_view s, ShuffleMode* out) {
  for (size_t i = 0; i < kShuffleModes.size(); ++i) {
    if (kShuffleModes[i] != s) continue;
    *out = static_cast<ShuffleMode>(i);
    return true;
  }
  return false;
}

ShuffleMode ShuffleOp::mode() const {
  ShuffleMode m{};
  TESSERA_CHECK(parse_shuffle_mode(op->str_attr(attr::kMode), &m),
                "bad 'mode' attribute on 'shuffle'");
  return m;
}

namespace {

constexpr MmaShape kMmaShapes[] = {
    {"m16n8k16", "f16", 16, DType::f16, DType::f32},
    {"m16n8k16", "bf16", 16, DType::bf16, DType::f32},
    {"m16n8k8", "tf32", 8, DType::f32, DType::f32},
    {"m16n8k32", "i8", 32, DType::i8, DType::i32},
};

}  // namespace

std::span<const MmaShape> mma_shapes() {
  return kMmaShapes;
}

const MmaShape* find_mma_shape(std::string_view shape, std::string_view a) {
  for (const MmaShape& s : kMmaShapes)
    if (s.shape == shape && s.a == a) return &s;
  return nullptr;
}

const MmaShape* mma_shape_for(DType in) {
  for (const MmaShape& s : kMmaShapes)
    if (s.in == in) return &s;
  return nullptr;
}

MatrixCoord mma_a_coord(const MmaShape& s, int lane, int i) {
  const int g = lane >> 2, t = lane & 3, e = s.per_reg();
  return {g + 8 * ((i / e) % 2), t * e + i % e + 4 * e * (i / (2 * e))};
}

MatrixCoord mma_b_coord(const MmaShape& s, int lane, int i) {
  const int g = lane >> 2, t = lane & 3, e = s.per_reg();
  return {t * e + i % e + 4 * e * (i / e), g};
}

MatrixCoord mma_c_coord(int lane, int i) {
  return {(lane >> 2) + 8 * (i / 2), 2 * (lane & 3) + i % 2};
}

const MmaShape& MmaOp::shape() const {
  const MmaShape* s =
      find_mma_shape(op->str_attr_or(attr::kShape, ""), op->str_attr_or(attr::kA, ""));
  TESSERA_CHECK(s, "'mma' with an unsupported shape or operand type");
  return *s;
}

SimtDebugOp::SimtDebugOp(const Op* o) : op(o) {
  TESSERA_CHECK(
      o && (o->kind == OpKind::Print || o->kind == OpKind::Assert) && !o->operands.empty(),
      "expected a 'print' or 'assert' with operands");
}

}  // namespace tessera::ir
