/// \file The TMA part of the SIMT IR (simt.h): tensor-map attributes and the mbarrier view.
#include <charconv>

#include "core/ir/simt.h"
#include "core/support/error.h"

namespace tessera::ir {

MbarrierOp::MbarrierOp(const Op* o) : op(o) {
  TESSERA_CHECK(o && (o->kind == OpKind::MbarrierInit || o->kind == OpKind::MbarrierArriveTx ||
                      o->kind == OpKind::MbarrierWait || o->kind == OpKind::MbarrierInval),
                "expected an mbarrier op");
}

std::string tensor_map_attr(int64_t index) {
  return std::string(attr::kTensorMapPrefix) + std::to_string(index);
}

std::optional<int64_t> parse_tensor_map_attr(std::string_view name) {
  if (!name.starts_with(attr::kTensorMapPrefix)) return std::nullopt;
  std::string_view digits = name.substr(attr::kTensorMapPrefix.size());
  if (digits.empty() || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  int64_t index = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size() || index < 0) return std::nullopt;
  return index;
}

std::vector<TensorMapParam> tensor_maps(const Function& fn) {
  std::vector<std::optional<TensorMapParam>> slots;
  for (const Attribute& a : fn.attrs) {
    std::optional<int64_t> index = parse_tensor_map_attr(a.name);
    if (!index) continue;
    const std::string* text = std::get_if<std::string>(&a.value);
    std::optional<TensorMapParam> map = text ? parse_tensor_map(*text) : std::nullopt;
    TESSERA_CHECK(map, "function '", fn.name, "': attribute '", a.name, "' is not a tensor map");
    TESSERA_CHECK(*index < static_cast<int64_t>(fn.attrs.size()), "function '", fn.name,
                  "': tensor maps are not numbered densely ('", a.name, "')");
    if (slots.size() <= static_cast<size_t>(*index)) slots.resize(static_cast<size_t>(*index) + 1);
    slots[static_cast<size_t>(*index)] = std::move(map);
  }
  std::vector<TensorMapParam> out;
  for (size_t i = 0; i < slots.size(); ++i) {
    TESSERA_CHECK(slots[i], "function '", fn.name, "' has no attribute '",
                  tensor_map_attr(static_cast<int64_t>(i)), "' (maps numbered densely)");
    out.push_back(*slots[i]);
  }
  return out;
}

int64_t add_tensor_map(Function& fn, const TensorMapParam& map) {
  const int64_t index = static_cast<int64_t>(tensor_maps(fn).size());
  fn.set_attr(tensor_map_attr(index), map.str());
  return index;
}

}  // namespace tessera::ir
