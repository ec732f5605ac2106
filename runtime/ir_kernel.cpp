/// \file IrKernel: parameter descriptions from an IR function, specialization by cloning.
#include "runtime/ir_kernel.h"

#include "core/ir/builder.h"
#include "core/support/error.h"

namespace tessera {
namespace {

const ir::Function& kernel_of(const std::shared_ptr<const ir::Module>& m) {
  if (!m || m->functions.empty()) fail(ErrorKind::User, "IrKernel: the module has no function");
  return m->kernel();
}

std::vector<std::string> names_of(const ir::Function& fn) {
  std::vector<std::string> names;
  for (size_t i = 0; i < fn.params.size(); ++i)
    names.push_back(fn.params[i].name.empty() ? "arg" + std::to_string(i) : fn.params[i].name);
  return names;
}

std::vector<tl::ParamDesc> descs_of(const ir::Function& fn) {
  std::vector<tl::ParamDesc> descs;
  for (const ir::Param& p : fn.params) {
    const ir::Type& t = p.value->type;
    if (t.is_tile())
      fail(ErrorKind::User, "IrKernel: parameter '", p.name, "' of '", fn.name, "' is a tile (",
           t.str(), "); kernel parameters are scalars or pointers");
    tl::ParamDesc d;
    d.cls = t.is_ptr ? tl::ParamClass::Pointer : tl::ParamClass::Scalar;
    d.dtype = t.dtype;
    d.cpp_type = t.str();
    descs.push_back(d);
  }
  return descs;
}

}  // namespace

IrKernel::IrKernel(std::shared_ptr<const ir::Module> module)
    : KernelBase(kernel_of(module).name, names_of(kernel_of(module)), descs_of(kernel_of(module))),
      module_(std::move(module)) {}

std::unique_ptr<ir::Module> IrKernel::trace(const std::vector<tl::ArgSpec>& specs) const {
  std::unique_ptr<ir::Module> m = module_->clone();
  ir::Function& fn = m->kernel();
  TESSERA_CHECK(specs.size() == fn.params.size(), "IrKernel: ", specs.size(), " specs for ",
                fn.params.size(), " parameters");
  for (size_t i = 0; i < specs.size(); ++i) {
    ir::Param& p = fn.params[i];
    if (specs[i].divisible_by_16) ir::set_attr(p.attrs, attr::kDivisibility, int64_t{16});
    if (!specs[i].equal_to_one) continue;
    ir::set_attr(p.attrs, attr::kEqualTo, int64_t{1});
    ir::Builder b(*m);
    if (fn.body->ops.empty())
      b.set_insertion_end(fn.body);
    else
      b.set_insertion_before(fn.body->ops.front());
    b.set_loc(fn.loc);
    ir::Value* one = b.constant_int(p.value->type, 1);
    ir::replace_all_uses(fn.body, p.value, one);
  }
  return m;
}

}  // namespace tessera
