/// \file The tile IR parser: a recursive descent over characters, so every error has a line:col.
#include "core/ir/parser.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <unordered_map>
#include <variant>

#include "core/ir/limits.h"
#include "core/support/error.h"

namespace tessera::ir {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c);
}

int hex_digit(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string plural(size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view source) : text_(text), source_(source) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::unique_ptr<Module> module() {
    auto module = std::make_unique<Module>();
    module_ = module.get();
    for (skip_space(); !at_end(); skip_space()) function();
    return module;
  }

 private:
  /// An operand whose name was not yet defined where it was used.
  struct PendingUse {
    Op* op;
    size_t index;
    std::string name;
    size_t pos;
  };
  using Number = std::variant<int64_t, double>;

  // --- characters ------------------------------------------------------------------------------

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void skip_space() {
    while (!at_end()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (text_.substr(pos_).starts_with("//")) {
        while (!at_end() && peek() != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  bool accept(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  void expect(char c, std::string_view context) {
    if (!accept(c)) expected(std::string("'") + c + "' " + std::string(context));
  }

  /// The identifier at the current position (after spaces), without consuming it.
  std::string_view peek_word() {
    skip_space();
    size_t end = pos_;
    while (end < text_.size() && is_ident_char(text_[end])) ++end;
    return text_.substr(pos_, end - pos_);
  }

  std::string_view word() {
    std::string_view w = peek_word();
    pos_ += w.size();
    return w;
  }

  bool accept_word(std::string_view w) {
    if (peek_word() != w) return false;
    pos_ += w.size();
    return true;
  }

  // --- errors ----------------------------------------------------------------------------------

  /// 1-based line and column of `pos` (a binary search over the line starts).
  std::pair<uint32_t, uint32_t> line_col(size_t pos) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), pos);
    size_t line = static_cast<size_t>(it - line_starts_.begin());
    return {static_cast<uint32_t>(line), static_cast<uint32_t>(pos - line_starts_[line - 1] + 1)};
  }

  [[noreturn]] void error(size_t pos, const std::string& message) const {
    auto [line, column] = line_col(pos);
    fail(ErrorKind::User, source_, ":", line, ":", column, ": error: ", message);
  }

  std::string describe_next() {
    skip_space();
    if (at_end()) return "end of input";
    std::string_view w = peek_word();
    if (!w.empty()) return "'" + std::string(w) + "'";
    return std::string("'") + peek() + "'";
  }

  [[noreturn]] void expected(const std::string& what) {
    std::string got = describe_next();
    error(pos_, "expected " + what + ", got " + got);
  }

  Location location_of(size_t pos) const {
    auto [line, column] = line_col(pos);
    return Location::make(source_, line, column);
  }

  // --- values ----------------------------------------------------------------------------------

  std::string value_name() {
    skip_space();
    if (peek() != '%') expected("a value name");
    ++pos_;
    size_t start = pos_;
    while (!at_end() && is_ident_char(peek())) ++pos_;
    if (pos_ == start) expected("a value name after '%'");
    return std::string(text_.substr(start, pos_ - start));
  }

  void define(Value* v, const std::string& name, size_t pos) {
    if (!values_.emplace(name, v).second) error(pos, "redefinition of value '%" + name + "'");
  }

  void resolve_pending() {
    for (const PendingUse& use : pending_) {
      auto it = values_.find(use.name);
      if (it == values_.end()) error(use.pos, "use of undefined value '%" + use.name + "'");
      use.op->operands[use.index] = it->second;
    }
    pending_.clear();
  }

  // --- literals --------------------------------------------------------------------------------

  std::string quoted() {
    skip_space();
    size_t start = pos_;
    if (peek() != '"') expected("a quoted string");
    ++pos_;
    std::string out;
    for (;;) {
      if (at_end() || peek() == '\n') error(start, "unterminated string");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      out += escape(pos_ - 1);
    }
  }

  char escape(size_t backslash) {
    char c = peek();
    ++pos_;
    if (c == '"' || c == '\\') return c;
    if (c == 'n') return '\n';
    if (c == 't') return '\t';
    int hi = hex_digit(c), lo = hex_digit(peek());
    if (hi < 0 || lo < 0) error(backslash, "invalid escape sequence in string");
    ++pos_;
    return static_cast<char>(hi * 16 + lo);
  }

  Number number() {
    skip_space();
    size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (!is_digit(peek())) expected("a number");
    bool is_float = false;
    while (is_digit(peek())) ++pos_;
    if (peek() == '.') {
      is_float = true;
      for (++pos_; is_digit(peek());) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      is_float = true;
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!is_digit(peek())) expected("an exponent");
      while (is_digit(peek())) ++pos_;
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    if (is_float) {
      double d = 0;
      auto [p, ec] = std::from_chars(first, last, d);
      if (ec != std::errc() || p != last) error(start, "float literal out of range");
      return d;
    }
    int64_t i = 0;
    auto [p, ec] = std::from_chars(first, last, i);
    if (ec != std::errc() || p != last) error(start, "integer literal out of range");
    return i;
  }

  int64_t integer(std::string_view what) {
    skip_space();
    size_t start = pos_;
    if (peek() != '-' && !is_digit(peek())) expected(std::string(what));
    Number n = number();
    if (!std::holds_alternative<int64_t>(n)) error(start, "expected " + std::string(what));
    return std::get<int64_t>(n);
  }

  uint32_t location_number(std::string_view what) {
    skip_space();
    size_t start = pos_;
    int64_t v = integer(what);
    if (v < 0 || v > std::numeric_limits<uint32_t>::max())
      error(start, std::string(what) + " out of range");
    return static_cast<uint32_t>(v);
  }

  // --- types and attributes --------------------------------------------------------------------

  Type type() {
    skip_space();
    size_t start = pos_;
    int depth = 0;
    while (!at_end()) {
      char c = peek();
      if (c == '<') {
        ++depth;
      } else if (c == '>' && depth > 0) {
        --depth;
      } else if (!is_ident_char(c)) {
        break;
      }
      ++pos_;
    }
    std::string_view text = text_.substr(start, pos_ - start);
    if (text.empty()) expected("a type");
    std::optional<Type> t = parse_type(text);
    if (!t) error(start, "invalid type '" + std::string(text) + "'");
    if (capped_elements(t->shape) > kMaxTileElements)
      error(start, "type '" + std::string(text) + "' is over the limit of " +
                       std::to_string(kMaxTileElements) + " (2^20) elements per tile");
    return *t;
  }

  AttrValue attr_value() {
    skip_space();
    char c = peek();
    if (c == '"') return quoted();
    if (c == '[') return int_list();
    if (text_.substr(pos_).starts_with("-inf") && !is_ident_char(peek_at(pos_ + 4))) {
      pos_ += 4;
      return -std::numeric_limits<double>::infinity();
    }
    if (c == '-' || is_digit(c)) return std::visit([](auto v) { return AttrValue(v); }, number());
    std::string_view w = peek_word();
    if (w == "inf" || w == "nan") {
      pos_ += 3;
      return w == "inf" ? std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::quiet_NaN();
    }
    if (!w.empty()) return type();
    expected("an attribute value");
  }

  char peek_at(size_t pos) const { return pos < text_.size() ? text_[pos] : '\0'; }

  std::vector<int64_t> int_list() {
    expect('[', "to begin a list");
    std::vector<int64_t> out;
    if (accept(']')) return out;
    do {
      out.push_back(integer("an integer"));
    } while (accept(','));
    expect(']', "to end the list");
    return out;
  }

  /// After `{`: `name = value, ...}`, sorted by name.
  std::vector<Attribute> attr_dict() {
    std::vector<Attribute> attrs;
    if (accept('}')) return attrs;
    do {
      skip_space();
      size_t start = pos_;
      std::string name = peek() == '"' ? quoted() : std::string(word());
      if (name.empty()) expected("an attribute name");
      for (const Attribute& a : attrs)
        if (a.name == name) error(start, "duplicate attribute '" + name + "'");
      expect('=', "after the attribute name");
      attrs.push_back(Attribute{name, attr_value()});
    } while (accept(','));
    expect('}', "to end the attributes");
    std::sort(attrs.begin(), attrs.end(),
              [](const Attribute& a, const Attribute& b) { return a.name < b.name; });
    return attrs;
  }

  /// `loc(...)` if present, else the location of the text at `start`.
  Location location_or(size_t start) {
    if (!accept_word("loc")) return location_of(start);
    expect('(', "after 'loc'");
    if (accept_word("unknown")) {
      expect(')', "to end the location");
      return {};
    }
    skip_space();
    if (peek() != '"') expected("'unknown' or a quoted file name");
    std::string file = quoted();
    expect(':', "after the file name");
    uint32_t line = location_number("a line number");
    expect(':', "after the line number");
    uint32_t column = location_number("a column number");
    expect(')', "to end the location");
    return Location::make(file, line, column);
  }

  // --- functions, ops and regions --------------------------------------------------------------

  void function() {
    skip_space();
    size_t start = pos_;
    if (!accept_word("func")) expected("'func'");
    expect('@', "before the function name");
    std::string name = peek() == '"' ? quoted() : std::string(word());
    if (name.empty()) expected("a function name");
    Function* fn = module_->add_function(name);
    values_.clear();
    expect('(', "to begin the parameters");
    if (!accept(')')) {
      do {
        param(fn);
      } while (accept(','));
      expect(')', "to end the parameters");
    }
    if (accept_word("attributes")) {
      expect('{', "to begin the function attributes");
      fn->attrs = attr_dict();
    }
    fn->loc = location_or(start);
    expect('{', "to begin the function body");
    ops_until_brace(fn->body, "the function body");
    resolve_pending();
  }

  void param(Function* fn) {
    skip_space();
    size_t start = pos_;
    std::string name = value_name();
    expect(':', "after the parameter name");
    Type t = type();
    std::vector<Attribute> attrs;
    if (accept('{')) attrs = attr_dict();
    Value* v = module_->add_arg(fn->body, t);
    define(v, name, start);
    fn->params.push_back(Param{name, v, std::move(attrs)});
  }

  void ops_until_brace(Region* region, std::string_view what) {
    for (;;) {
      skip_space();
      if (at_end()) expected("'}' to end " + std::string(what));
      if (accept('}')) return;
      op(region);
    }
  }

  void op(Region* region) {
    skip_space();
    size_t start = pos_;
    std::vector<std::pair<std::string, size_t>> results;
    if (peek() == '%') {
      results = name_list();
      expect('=', "after the op's results");
    }
    skip_space();
    size_t name_pos = pos_;
    std::string_view name = word();
    if (name.empty()) expected("an op name");
    OpKind kind;
    if (!parse_op_kind(name, &kind)) error(name_pos, "unknown op '" + std::string(name) + "'");
    if (++ops_ > kMaxOps)
      error(name_pos, "more than " + std::to_string(kMaxOps) + " ops, the limit of one module");
    Op* op = module_->new_op(kind, {}, {}, {}, Location{});
    op->parent = region;
    region->ops.push_back(op);
    operands(op);
    if (accept('{')) op->attrs = attr_dict();
    if (accept('(')) regions(op);
    result_types(op, results);
    op->loc = location_or(start);
  }

  std::vector<std::pair<std::string, size_t>> name_list() {
    std::vector<std::pair<std::string, size_t>> names;
    do {
      skip_space();
      size_t pos = pos_;
      names.emplace_back(value_name(), pos);
    } while (accept(','));
    return names;
  }

  void operands(Op* op) {
    skip_space();
    if (peek() != '%') return;
    size_t save = pos_;
    auto names = name_list();
    // `%a, %b =` after an op without operands and location starts the next op.
    if (accept('=')) {
      pos_ = save;
      return;
    }
    for (auto& [name, pos] : names) {
      auto it = values_.find(name);
      if (it == values_.end()) pending_.push_back({op, op->operands.size(), name, pos});
      op->operands.push_back(it == values_.end() ? nullptr : it->second);
    }
  }

  void result_types(Op* op, const std::vector<std::pair<std::string, size_t>>& results) {
    skip_space();
    size_t colon = pos_;
    std::vector<Type> types;
    if (accept(':')) {
      do {
        types.push_back(type());
      } while (accept(','));
    } else if (!results.empty()) {
      expected("':' and " + plural(results.size(), "result type"));
    }
    if (types.size() != results.size())
      error(colon, "expected " + plural(results.size(), "result type") + ", got " +
                       std::to_string(types.size()));
    for (size_t i = 0; i < types.size(); ++i) {
      Value* v = module_->new_value(types[i]);
      v->def = op;
      v->index = static_cast<uint32_t>(i);
      op->results.push_back(v);
      define(v, results[i].first, results[i].second);
    }
  }

  /// After `(`: `{...}, {...})`.
  void regions(Op* op) {
    do {
      region(op);
    } while (accept(','));
    expect(')', "to end the regions");
  }

  void region(Op* op) {
    skip_space();
    if (depth_ >= kMaxRegionDepth)
      error(pos_, "regions nested " + std::to_string(depth_ + 1) + " deep, over the limit of " +
                      std::to_string(kMaxRegionDepth));
    expect('{', "to begin a region");
    Region* r = module_->new_region(op);
    op->regions.push_back(r);
    if (accept('^')) {
      expect('(', "to begin the region arguments");
      if (!accept(')')) {
        do {
          region_arg(r);
        } while (accept(','));
        expect(')', "to end the region arguments");
      }
      expect(':', "after the region arguments");
    }
    depth_ += 1;
    ops_until_brace(r, "the region");
    depth_ -= 1;
  }

  void region_arg(Region* r) {
    skip_space();
    size_t start = pos_;
    std::string name = value_name();
    expect(':', "after the argument name");
    define(module_->add_arg(r, type()), name, start);
  }

  std::string_view text_;
  std::string source_;
  std::vector<size_t> line_starts_;  ///< offset of each line's first character
  size_t pos_ = 0;
  Module* module_ = nullptr;
  std::unordered_map<std::string, Value*> values_;  ///< this function's names
  std::vector<PendingUse> pending_;
  int depth_ = 0;    ///< regions open around the current op (ir::kMaxRegionDepth)
  int64_t ops_ = 0;  ///< ops parsed (ir::kMaxOps)
};

}  // namespace

std::unique_ptr<Module> parse(std::string_view text, std::string_view source_name) {
  return Parser(text, source_name).module();
}

}  // namespace tessera::ir
