/// \file The text forms, parsing and hash of CompileOptions, all walking kOptionFields.
#include "core/target/options.h"

#include <charconv>
#include <iterator>

namespace tessera {
namespace {

/// A member added to CompileOptions without a row in kOptionFields fails to build here.
[[maybe_unused]] void every_member_has_a_row(const CompileOptions& o) {
  [[maybe_unused]] const auto& [num_warps, num_stages, maxnreg, debug, fp_fusion, coopmat2,
                                grouped_launch, tma_store, cluster] = o;
  static_assert(std::size(kOptionFields) == 9, "CompileOptions and kOptionFields differ");
}

}  // namespace

int64_t option_value(const CompileOptions& o, const OptionField& f) {
  return f.integer ? int64_t{o.*f.integer} : int64_t{o.*f.flag ? 1 : 0};
}

void set_option(CompileOptions& o, const OptionField& f, int64_t value) {
  if (f.integer)
    o.*f.integer = static_cast<int>(value);
  else
    o.*f.flag = value != 0;
}

const OptionField* find_option(std::string_view name) {
  for (const OptionField& f : kOptionFields)
    if (f.name == name) return &f;
  return nullptr;
}

bool set_option(CompileOptions& o, std::string_view name, int64_t value) {
  const OptionField* f = find_option(name);
  if (f) set_option(o, *f, value);
  return f != nullptr;
}

std::string option_names() {
  std::string out;
  for (const OptionField& f : kOptionFields) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

std::string describe(const CompileOptions& o, OptionsText form) {
  static const CompileOptions kDefaults;
  std::string out;
  for (const OptionField& f : kOptionFields) {
    const int64_t v = option_value(o, f);
    if (form == OptionsText::Capture && !f.captured) continue;
    if (form != OptionsText::Every && !f.always_shown && v == option_value(kDefaults, f)) continue;
    out += (out.empty() ? "" : " ") + std::string(f.name) + "=" + std::to_string(v);
  }
  return out;
}

bool parse_options(std::string_view text, CompileOptions& o, std::string* error) {
  while (!text.empty()) {
    const size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = word.substr(0, eq), value = word.substr(eq + 1);
    const OptionField* f = find_option(name);
    if (!f) continue;
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc{} || end != value.data() + value.size()) {
      if (error) *error = std::string(name) + " needs an integer, got '" + std::string(value) + "'";
      return false;
    }
    set_option(o, *f, v);
  }
  return true;
}

uint64_t options_hash(const CompileOptions& o) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the values
  for (const OptionField& f : kOptionFields)
    h = (h ^ static_cast<uint64_t>(option_value(o, f))) * 1099511628211ull;
  return h;
}

}  // namespace tessera
