/// \file The wgmma family's shapes, operand layouts and accumulator fragment (core/ir/wgmma.h).
#include "core/ir/wgmma.h"

#include <charconv>

#include "core/support/error.h"

namespace tessera::ir {
namespace {

struct OperandType {
  std::string_view a;
  int k;
  DType in, acc;
};

constexpr OperandType kTypes[] = {
    {"f16", 16, DType::f16, DType::f32},     {"bf16", 16, DType::bf16, DType::f32},
    {"tf32", 8, DType::f32, DType::f32},     {"i8", 32, DType::i8, DType::i32},
    {"e4m3", 32, DType::f8e4m3, DType::f32}, {"e5m2", 32, DType::f8e5m2, DType::f32},
};

bool valid_n(const OperandType& t, int n) {
  if (n < 8 || n > 256 || n % 8) return false;
  return t.in != DType::i8 || n <= 32 || n % 16 == 0;
}

std::optional<WgmmaShape> make(const OperandType& t, int n) {
  if (!valid_n(t, n)) return std::nullopt;
  return WgmmaShape{n, t.k, t.a, t.in, t.acc};
}

}  // namespace

std::string WgmmaShape::shape() const {
  return "m64n" + std::to_string(n) + "k" + std::to_string(k);
}

std::optional<WgmmaShape> find_wgmma_shape(std::string_view shape, std::string_view a) {
  // "m64n<N>k<K>"
  if (!shape.starts_with("m64n")) return std::nullopt;
  const size_t kpos = shape.find('k');
  if (kpos == std::string_view::npos) return std::nullopt;
  int n = 0, k = 0;
  const char* nb = shape.data() + 4;
  const char* ne = shape.data() + kpos;
  if (std::from_chars(nb, ne, n).ptr != ne) return std::nullopt;
  const char* ke = shape.data() + shape.size();
  if (std::from_chars(ne + 1, ke, k).ptr != ke) return std::nullopt;
  for (const OperandType& t : kTypes)
    if (t.a == a && t.k == k) return make(t, n);
  return std::nullopt;
}

std::optional<WgmmaShape> wgmma_shape_for(DType in, int n) {
  for (const OperandType& t : kTypes)
    if (t.in == in) return make(t, n);
  return std::nullopt;
}

int64_t WgmmaSmem::byte_of(int64_t start, int64_t r, int64_t k, int elem_bytes) const {
  const int64_t t = swizzle / elem_bytes;
  const int64_t x =
      trans ? start + (r / t) * lbo + (k / 8) * sbo + (k % 8) * swizzle + (r % t) * elem_bytes
            : start + (r / 8) * sbo + (r % 8) * swizzle + k * elem_bytes;
  return x ^ (((x >> 7) & (swizzle / 16 - 1)) << 4);
}

std::optional<WgmmaSmem> parse_wgmma_smem(const Op& op, std::string_view attr) {
  const AttrValue* v = op.find_attr(attr);
  if (!v || !std::holds_alternative<std::vector<int64_t>>(*v)) return std::nullopt;
  const auto& l = std::get<std::vector<int64_t>>(*v);
  if (l.size() != 5) return std::nullopt;
  return WgmmaSmem{l[0], l[1], l[2], l[3], l[4] != 0};
}

WgmmaCoord wgmma_acc_coord(int thread, int i) {
  const int w = thread / 32 % 4, l = thread % 32;
  return {16 * w + l / 4 + 8 * (i / 2 % 2), 8 * (i / 4) + 2 * (l % 4) + i % 2};
}

WgmmaCoord wgmma_a_coord(int thread, int j, int elem_bytes) {
  const int w = thread / 32 % 4, l = thread % 32, p = 4 / elem_bytes;
  return {16 * w + l / 4 + 8 * (j / p % 2), 4 * p * (j / (2 * p)) + p * (l % 4) + j % p};
}

WgmmaShape WgmmaOp::shape() const {
  auto s = find_wgmma_shape(op->str_attr_or(attr::kShape, ""), op->str_attr_or(attr::kA, ""));
  TESSERA_CHECK(s, "'wgmma' with an unsupported shape or operand type");
  return *s;
}

size_t WgmmaOp::a_count() const {
  if (!a_in_registers()) return 0;
  // (Safe on unverified IR: the verifier reads the operands' positions through it.)
  auto s = find_wgmma_shape(op->str_attr_or(attr::kShape, ""), op->str_attr_or(attr::kA, ""));
  return s ? static_cast<size_t>(s->k / 2) : 0;
}

WgmmaSmem WgmmaOp::a_smem() const {
  auto s = parse_wgmma_smem(*op, attr::kASmem);
  TESSERA_CHECK(s, "'wgmma' without a valid a_smem");
  return *s;
}

WgmmaSmem WgmmaOp::b_smem() const {
  auto s = parse_wgmma_smem(*op, attr::kBSmem);
  TESSERA_CHECK(s, "'wgmma' without a valid b_smem");
  return *s;
}

}  // namespace tessera::ir
