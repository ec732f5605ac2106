/// \file The lowering's entry point.
#include "core/lower/simt_lowering.h"

#include "core/lower/lowerer.h"

namespace tessera::lower {

std::unique_ptr<ir::Module> to_simt(const ir::Module& tile, const target::Target& target,
                                    const SimtOptions& options) {
  return detail::Lowerer(tile.kernel(), target, options).run();
}

}  // namespace tessera::lower
