/// \file The op table's data, attribute access, and the module's arenas.
#include "core/ir/ir.h"

#include <algorithm>
#include <unordered_map>

#include "core/support/error.h"

namespace tessera::ir {
namespace {

constexpr OpInfo kOpInfo[] = {
#define OP(name, text, min_ops, max_ops, results, regions, traits) \
  {text, min_ops, max_ops, results, regions, static_cast<uint32_t>(traits)},
#include "core/ir/ops.def"
#undef OP
};
constexpr int kNumOps = sizeof(kOpInfo) / sizeof(kOpInfo[0]);

const AttrValue& get_attr(const Op& op, std::string_view name) {
  const AttrValue* v = op.find_attr(name);
  TESSERA_CHECK(v, "op '", op.name(), "' has no attribute '", name, "'");
  return *v;
}

template <class T>
const T& get_as(const Op& op, std::string_view name) {
  const AttrValue& v = get_attr(op, name);
  const T* p = std::get_if<T>(&v);
  TESSERA_CHECK(p, "attribute '", name, "' of op '", op.name(), "' has another kind");
  return *p;
}

}  // namespace

const OpInfo& op_info(OpKind kind) {
  return kOpInfo[static_cast<int>(kind)];
}
std::string_view op_name(OpKind kind) {
  return op_info(kind).name;
}
int num_op_kinds() {
  return kNumOps;
}

bool parse_op_kind(std::string_view name, OpKind* out) {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, OpKind>();
    for (int i = 0; i < kNumOps; ++i) t->emplace(kOpInfo[i].name, static_cast<OpKind>(i));
    return t;
  }();
  auto it = table->find(name);
  if (it == table->end()) return false;
  *out = it->second;
  return true;
}

Op* Region::terminator() const {
  if (ops.empty() || !ops.back()->has(kTerminator)) return nullptr;
  return ops.back();
}

const AttrValue* find_attr(const std::vector<Attribute>& attrs, std::string_view name) {
  for (const Attribute& a : attrs)
    if (a.name == name) return &a.value;
  return nullptr;
}

void set_attr(std::vector<Attribute>& attrs, std::string_view name, AttrValue value) {
  auto it = std::lower_bound(attrs.begin(), attrs.end(), name,
                             [](const Attribute& a, std::string_view n) { return a.name < n; });
  if (it != attrs.end() && it->name == name) {
    it->value = std::move(value);
    return;
  }
  attrs.insert(it, Attribute{std::string(name), std::move(value)});
}

const AttrValue* Op::find_attr(std::string_view name) const {
  return ir::find_attr(attrs, name);
}

void Op::set_attr(std::string_view name, AttrValue value) {
  ir::set_attr(attrs, name, std::move(value));
}

int64_t Function::int_attr_or(std::string_view name, int64_t fallback) const {
  const AttrValue* v = ir::find_attr(attrs, name);
  const int64_t* i = v ? std::get_if<int64_t>(v) : nullptr;
  return i ? *i : fallback;
}

std::string Function::str_attr_or(std::string_view name, std::string_view fallback) const {
  const AttrValue* v = ir::find_attr(attrs, name);
  const std::string* s = v ? std::get_if<std::string>(v) : nullptr;
  return s ? *s : std::string(fallback);
}

const std::vector<int64_t>* Function::ints_attr(std::string_view name) const {
  const AttrValue* v = ir::find_attr(attrs, name);
  return v ? std::get_if<std::vector<int64_t>>(v) : nullptr;
}

void Op::erase_attr(std::string_view name) {
  std::erase_if(attrs, [&](const Attribute& a) { return a.name == name; });
}

int64_t Op::int_attr(std::string_view name) const {
  return get_as<int64_t>(*this, name);
}
double Op::float_attr(std::string_view name) const {
  const AttrValue& v = get_attr(*this, name);
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return get_as<double>(*this, name);
}
const std::string& Op::str_attr(std::string_view name) const {
  return get_as<std::string>(*this, name);
}
const std::vector<int64_t>& Op::ints_attr(std::string_view name) const {
  return get_as<std::vector<int64_t>>(*this, name);
}
const Type& Op::type_attr(std::string_view name) const {
  return get_as<Type>(*this, name);
}

int64_t Op::int_attr_or(std::string_view name, int64_t fallback) const {
  const AttrValue* v = find_attr(name);
  if (!v) return fallback;
  const int64_t* i = std::get_if<int64_t>(v);
  return i ? *i : fallback;
}

std::string Op::str_attr_or(std::string_view name, std::string_view fallback) const {
  const AttrValue* v = find_attr(name);
  if (!v) return std::string(fallback);
  const std::string* s = std::get_if<std::string>(v);
  return s ? *s : std::string(fallback);
}

Function* Module::add_function(std::string name, Location loc) {
  auto f = std::make_unique<Function>();
  f->name = std::move(name);
  f->loc = loc;
  f->body = new_region(nullptr);
  functions.push_back(std::move(f));
  return functions.back().get();
}

Function& Module::kernel() const {
  TESSERA_CHECK(!functions.empty(), "module has no function");
  return *functions.front();
}

Value* Module::new_value(Type type) {
  values_.emplace_back();
  values_.back().type = std::move(type);
  return &values_.back();
}

Region* Module::new_region(Op* parent) {
  regions_.emplace_back();
  regions_.back().parent = parent;
  return &regions_.back();
}

Value* Module::add_arg(Region* region, Type type) {
  Value* v = new_value(std::move(type));
  v->owner = region;
  v->index = static_cast<uint32_t>(region->args.size());
  region->args.push_back(v);
  return v;
}

Op* Module::new_op(OpKind kind, std::vector<Value*> operands, std::vector<Type> result_types,
                   std::vector<Attribute> attrs, Location loc) {
  ops_.emplace_back();
  Op* op = &ops_.back();
  op->kind = kind;
  op->loc = loc;
  op->operands = std::move(operands);
  std::sort(attrs.begin(), attrs.end(),
            [](const Attribute& a, const Attribute& b) { return a.name < b.name; });
  op->attrs = std::move(attrs);
  op->results.reserve(result_types.size());
  for (size_t i = 0; i < result_types.size(); ++i) {
    Value* v = new_value(std::move(result_types[i]));
    v->def = op;
    v->index = static_cast<uint32_t>(i);
    op->results.push_back(v);
  }
  return op;
}

namespace {

struct Cloner {
  Module& dst;
  std::unordered_map<const Value*, Value*> map;

  Value* lookup(Value* v) const {
    auto it = map.find(v);
    TESSERA_CHECK(it != map.end(), "clone: value used before its definition");
    return it->second;
  }

  void clone_region(const Region* src, Region* out) {
    for (Value* a : src->args) map[a] = dst.add_arg(out, a->type);
    for (const Op* op : src->ops) {
      std::vector<Value*> operands;
      operands.reserve(op->operands.size());
      for (Value* v : op->operands) operands.push_back(lookup(v));
      std::vector<Type> types;
      for (Value* r : op->results) types.push_back(r->type);
      Op* copy = dst.new_op(op->kind, std::move(operands), std::move(types), op->attrs, op->loc);
      copy->parent = out;
      for (size_t i = 0; i < op->results.size(); ++i) map[op->results[i]] = copy->results[i];
      for (const Region* r : op->regions) {
        Region* nr = dst.new_region(copy);
        copy->regions.push_back(nr);
        clone_region(r, nr);
      }
      out->ops.push_back(copy);
    }
  }
};

}  // namespace

std::unique_ptr<Module> Module::clone() const {
  auto out = std::make_unique<Module>();
  Cloner cloner{*out, {}};
  for (const auto& f : functions) {
    Function* nf = out->add_function(f->name, f->loc);
    nf->attrs = f->attrs;
    cloner.clone_region(f->body, nf->body);
    for (const Param& p : f->params) {
      Param np = p;
      np.value = cloner.lookup(p.value);
      nf->params.push_back(std::move(np));
    }
  }
  return out;
}

void replace_all_uses(Region* region, Value* from, Value* to) {
  walk(region, [&](Op* op) {
    for (Value*& v : op->operands)
      if (v == from) v = to;
  });
}

}  // namespace tessera::ir
