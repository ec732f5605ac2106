/// \file The lowering's entry point.
#include "core/lower/simt_lowering.h"

#include "core/lower/lowerer.h"

namespace tessera::lower {

std::unique_ptr<ir::Module> to_simt(const LoweringPlan& plan) {
  return detail::Lowerer(plan).run();
}

}  // namespace tessera::lower
