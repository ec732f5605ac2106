/// \file The tile IR printer: the generic text form documented in printer.h.
#include "core/ir/printer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ostream>
#include <unordered_map>

namespace tessera::ir {
namespace {

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); });
}

/// `arg<digits>` is reserved for parameters whose own name cannot be printed.
bool is_reserved_arg_name(std::string_view s) {
  if (s.size() < 4 || !s.starts_with("arg")) return false;
  return std::all_of(s.begin() + 3, s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void append_quoted(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += '\\';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  out += '"';
}

std::string format_double(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  std::string s(buf, end);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

void append_attr_value(std::string& out, const AttrValue& value) {
  if (auto* i = std::get_if<int64_t>(&value)) {
    out += std::to_string(*i);
  } else if (auto* d = std::get_if<double>(&value)) {
    out += format_double(*d);
  } else if (auto* s = std::get_if<std::string>(&value)) {
    append_quoted(out, *s);
  } else if (auto* list = std::get_if<std::vector<int64_t>>(&value)) {
    out += '[';
    for (size_t k = 0; k < list->size(); ++k) {
      if (k) out += ", ";
      out += std::to_string((*list)[k]);
    }
    out += ']';
  } else {
    out += std::get<Type>(value).str();
  }
}

void append_attrs(std::string& out, const std::vector<Attribute>& attrs) {
  if (attrs.empty()) return;
  std::vector<const Attribute*> sorted;
  for (const Attribute& a : attrs) sorted.push_back(&a);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Attribute* a, const Attribute* b) { return a->name < b->name; });
  out += " {";
  for (size_t k = 0; k < sorted.size(); ++k) {
    if (k) out += ", ";
    if (is_identifier(sorted[k]->name)) {
      out += sorted[k]->name;
    } else {
      append_quoted(out, sorted[k]->name);
    }
    out += " = ";
    append_attr_value(out, sorted[k]->value);
  }
  out += '}';
}

void append_location(std::string& out, const Location& loc) {
  if (!loc.known()) {
    out += "loc(unknown)";
    return;
  }
  out += "loc(";
  append_quoted(out, loc.file);
  out += ':' + std::to_string(loc.line) + ':' + std::to_string(loc.column) + ')';
}

/// Prints one function (or one op) with a name for every value it can reach.
class Printer {
 public:
  explicit Printer(std::string& out, const PrintOptions& options = {})
      : out_(out), options_(options) {}

  /// Names every value of `fn` as function() prints it.
  void name_function(const Function& fn) {
    name_params(fn);
    number_region(*fn.body, /*number_args=*/false);
  }
  std::unordered_map<const Value*, std::string> take_names() { return std::move(names_); }

  void function(const Function& fn) {
    name_function(fn);
    out_ += "func @";
    if (is_identifier(fn.name)) {
      out_ += fn.name;
    } else {
      append_quoted(out_, fn.name);
    }
    out_ += '(';
    for (size_t i = 0; i < fn.params.size(); ++i) {
      if (i) out_ += ", ";
      const Param& p = fn.params[i];
      value(p.value);
      out_ += ": " + (p.value ? p.value->type.str() : std::string("<null>"));
      append_attrs(out_, p.attrs);
    }
    out_ += ')';
    if (!fn.attrs.empty()) {
      out_ += " attributes";
      append_attrs(out_, fn.attrs);
    }
    location(fn.loc);
    out_ += " {\n";
    for (const Op* op : fn.body->ops) this->op(*op, 1);
    out_ += "}\n";
  }

  /// One op for diagnostics: numbers the outermost region reachable from it.
  void single_op(const Op& op) {
    // Bounded: the IR under diagnosis may have parent pointers that form a cycle.
    const Region* root = op.parent;
    for (int depth = 0; depth < 1000 && root && root->parent && root->parent->parent; ++depth)
      root = root->parent->parent;
    if (root) {
      for (size_t i = 0; i < root->args.size(); ++i)
        names_[root->args[i]] = "arg" + std::to_string(i);
      number_region(*root, /*number_args=*/false);
    } else {
      number_op(op);
    }
    this->op(op, 0);
  }

 private:
  void name_params(const Function& fn) {
    std::unordered_map<std::string_view, int> uses;
    for (const Param& p : fn.params) uses[p.name] += 1;
    for (size_t i = 0; i < fn.params.size(); ++i) {
      const Param& p = fn.params[i];
      bool own = is_identifier(p.name) && !is_reserved_arg_name(p.name) && uses[p.name] == 1;
      names_[p.value] = own ? p.name : "arg" + std::to_string(i);
    }
  }

  void number_op(const Op& op) {
    for (const Value* r : op.results) names_[r] = std::to_string(next_++);
    for (const Region* r : op.regions) number_region(*r, /*number_args=*/true);
  }

  void number_region(const Region& region, bool number_args) {
    if (number_args)
      for (const Value* a : region.args) names_[a] = std::to_string(next_++);
    for (const Op* op : region.ops) number_op(*op);
  }

  void value(const Value* v) {
    auto it = names_.find(v);
    out_ += '%';
    out_ += it == names_.end() ? std::string("<undef>") : it->second;
  }

  void values(const std::vector<Value*>& vs) {
    for (size_t k = 0; k < vs.size(); ++k) {
      if (k) out_ += ", ";
      value(vs[k]);
    }
  }

  void location(const Location& loc) {
    if (!options_.locations) return;
    out_ += ' ';
    append_location(out_, loc);
  }

  void indent(int level) { out_.append(static_cast<size_t>(2 * level), ' '); }

  void op(const Op& op, int level) {
    indent(level);
    if (!op.results.empty()) {
      values(op.results);
      out_ += " = ";
    }
    out_ += op.name();
    if (!op.operands.empty()) {
      out_ += ' ';
      values(op.operands);
    }
    append_attrs(out_, op.attrs);
    if (!op.regions.empty()) {
      out_ += " (";
      for (size_t k = 0; k < op.regions.size(); ++k) {
        if (k) out_ += ", ";
        region(*op.regions[k], level);
      }
      out_ += ')';
    }
    if (!op.results.empty()) {
      out_ += " : ";
      for (size_t k = 0; k < op.results.size(); ++k) {
        if (k) out_ += ", ";
        out_ += op.results[k]->type.str();
      }
    }
    location(op.loc);
    out_ += '\n';
  }

  /// `{` ... `}` with the closing brace at `level`'s indentation and no newline after it.
  void region(const Region& region, int level) {
    out_ += "{\n";
    indent(level);
    out_ += "^(";
    for (size_t k = 0; k < region.args.size(); ++k) {
      if (k) out_ += ", ";
      value(region.args[k]);
      out_ += ": " + region.args[k]->type.str();
    }
    out_ += "):\n";
    for (const Op* op : region.ops) this->op(*op, level + 1);
    indent(level);
    out_ += '}';
  }

  std::string& out_;
  PrintOptions options_;
  std::unordered_map<const Value*, std::string> names_;
  int next_ = 0;
};

}  // namespace

std::string print(const Function& fn, const PrintOptions& options) {
  std::string out;
  Printer(out, options).function(fn);
  return out;
}

std::string print(const Module& module, const PrintOptions& options) {
  std::string out;
  for (size_t i = 0; i < module.functions.size(); ++i) {
    if (i) out += '\n';
    Printer(out, options).function(*module.functions[i]);
  }
  return out;
}

std::unordered_map<const Value*, std::string> value_names(const Function& fn) {
  std::string unused;
  Printer p(unused);
  p.name_function(fn);
  std::unordered_map<const Value*, std::string> names = p.take_names();
  for (auto& [v, n] : names) n = "%" + n;
  return names;
}

void print(std::ostream& os, const Module& module) {
  os << print(module);
}

std::string print_op(const Op& op) {
  std::string out;
  Printer(out).single_op(op);
  return out;
}

std::string print_attr_value(const AttrValue& value) {
  std::string out;
  append_attr_value(out, value);
  return out;
}

std::string print_location(const Location& loc) {
  std::string out;
  append_location(out, loc);
  return out;
}

}  // namespace tessera::ir
