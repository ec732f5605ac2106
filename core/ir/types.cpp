/// \file Dtype properties and the text form of types.
#include "core/ir/types.h"

#include <charconv>

namespace tessera::ir {
namespace {

struct DTypeInfo {
  std::string_view text;
  int bits;
  bool is_float;
  bool is_signed;
};

constexpr DTypeInfo kInfo[] = {
#define X(name, text, bits, is_float, is_signed) {text, bits, is_float, is_signed},
    TESSERA_DTYPES(X)
#undef X
};

const DTypeInfo& info(DType t) {
  return kInfo[static_cast<int>(t)];
}

}  // namespace

std::string_view dtype_name(DType t) {
  return info(t).text;
}

std::optional<DType> parse_dtype(std::string_view text) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kInfo[i].text == text) return static_cast<DType>(i);
  return std::nullopt;
}

int dtype_bits(DType t) {
  return info(t).bits;
}
int dtype_bytes(DType t) {
  return t == DType::i1 ? 1 : info(t).bits / 8;
}
bool is_float(DType t) {
  return info(t).is_float;
}
bool is_int(DType t) {
  return !info(t).is_float;
}
bool is_signed_int(DType t) {
  return is_int(t) && info(t).is_signed;
}
bool is_unsigned_int(DType t) {
  return is_int(t) && !info(t).is_signed;
}
bool is_fp8(DType t) {
  return t == DType::f8e4m3 || t == DType::f8e5m2;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

int64_t num_elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string Type::str() const {
  std::string elem =
      is_ptr ? "ptr<" + std::string(dtype_name(dtype)) + ">" : std::string(dtype_name(dtype));
  if (shape.empty()) return elem;
  const std::string scope = workgroup ? "wgmat_" : "coopmat_";
  std::string out = mat == MatUse::None ? "tile<"
                    : mat == MatUse::A  ? scope + "a<"
                    : mat == MatUse::B  ? scope + "b<"
                                        : scope + "acc<";
  for (int64_t d : shape) out += std::to_string(d) + "x";
  return out + elem + ">";
}

std::optional<Type> parse_type(std::string_view text) {
  auto parse_elem = [](std::string_view e) -> std::optional<Type> {
    if (e.starts_with("ptr<") && e.ends_with(">")) {
      auto d = parse_dtype(e.substr(4, e.size() - 5));
      if (!d) return std::nullopt;
      return Type::pointer(*d);
    }
    auto d = parse_dtype(e);
    if (!d) return std::nullopt;
    return Type::scalar(*d);
  };
  MatUse mat = MatUse::None;
  size_t open = 5;
  if (text.starts_with("wgmat_")) {
    // The workgroup-scope names: coopmat_ with "wgmat_" in place of "coopmat_".
    std::optional<Type> t = parse_type(std::string("coopmat_") + std::string(text.substr(6)));
    if (!t || !t->is_mat()) return std::nullopt;
    t->workgroup = true;
    return t;
  }
  if (text.starts_with("coopmat_a<"))
    mat = MatUse::A, open = 10;
  else if (text.starts_with("coopmat_b<"))
    mat = MatUse::B, open = 10;
  else if (text.starts_with("coopmat_acc<"))
    mat = MatUse::Acc, open = 12;
  else if (!text.starts_with("tile<"))
    return parse_elem(text);
  if (!text.ends_with(">")) return std::nullopt;
  std::string_view body = text.substr(open, text.size() - open - 1);
  Shape shape;
  while (!body.empty() && body[0] >= '0' && body[0] <= '9') {
    int64_t d = 0;
    auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), d);
    if (ec != std::errc() || p == body.data() + body.size() || *p != 'x') return std::nullopt;
    shape.push_back(d);
    body.remove_prefix(static_cast<size_t>(p - body.data()) + 1);
  }
  if (shape.empty()) return std::nullopt;
  auto elem = parse_elem(body);
  if (!elem) return std::nullopt;
  if (mat != MatUse::None && (shape.size() != 2 || elem->is_ptr)) return std::nullopt;
  elem->shape = std::move(shape);
  elem->mat = mat;
  return elem;
}

}  // namespace tessera::ir
