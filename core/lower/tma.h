/// \file Can a tensor-descriptor load be copied by TMA (Hopper's tensor memory accelerator)? The
/// facts a tensor map needs, decided at compile time from the descriptor's operands and the
/// kernel's specialization facts, so that a launch whose arguments break them runs another
/// specialization (the masked-load expansion, core/passes/descriptors.h) rather than failing.
///
/// TMA copies a box of a tensor in global memory into shared memory, filling elements outside
/// the tensor with zeros (the descriptor's semantics). Its limits (CUDA driver API,
/// cuTensorMapEncodeTiled): rank 1 to 5; a base address aligned to 16 bytes; every stride but the
/// innermost (which is one element) a multiple of 16 bytes; box dimensions of 1 to 256 elements,
/// the innermost box 16-byte multiple; with a swizzle, the innermost box at most the swizzle's
/// span (32, 64 or 128 bytes), so that a wider block row takes several copies. Every number must
/// also be known to the host at launch: a kernel parameter or a constant.
#pragma once

#include <optional>
#include <string>

#include "core/ir/abi.h"
#include "core/ir/ir.h"
#include "core/target/target.h"

namespace tessera::lower {

/// The tensor map that copies the blocks of desc_load or desc_store `access` (an op of `fn`) by
/// TMA on `target`,
/// with the widest swizzle the innermost box fills (128 bytes for 64 f16 per row; none where the
/// row is not 32, 64 or 128 bytes); a row wider than 128 bytes (a multiple of 128) is copied as
/// several 128-byte boxes (TensorMapParam::copies), as wgmma reads it. nullopt, with the reason in
/// `*why` ("the base is not a kernel parameter known to be 16-byte aligned"), where TMA cannot copy
/// it.
std::optional<ir::TensorMapParam> plan_tma(const ir::Function& fn, const ir::Op& access,
                                           const target::Target& target, std::string* why);

/// The tensor map through which TMA stores desc_store `store`'s blocks: plan_tma's, for a rank-2
/// block (a row over 128 bytes in a multiple of 8 rows, so that each of its boxes starts at a
/// 1024-byte boundary). nullopt, with the reason in `*why`, where the store stays masked stores.
std::optional<ir::TensorMapParam> plan_tma_store(const ir::Function& fn, const ir::Op& store,
                                                 const target::Target& target, std::string* why);

/// Does desc_load `load` feed a `dot` of the loop whose body holds it (directly or through its
/// transpose), as the TMA ring needs?
bool feeds_loop_dot(const ir::Op& load);

/// One line per desc_load and desc_store of `fn` on a target with TMA: what TMA would copy, or
/// why the access stays masked loads (stores) ("// tma: desc_load at k.cpp:12:7: tensor_map(...)
/// feeding a loop's dot"); empty on other targets. TESSERA_DUMP=layouts prints it before planning
/// (the loads a ring does not take are then expanded as on other targets).
std::string tma_report(const ir::Function& fn, const target::Target& target);

}  // namespace tessera::lower
