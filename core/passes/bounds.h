/// \file Debug mode's bounds checks: every global load, store and atomic of a kernel checked
/// against the buffer its pointer came from (CompileOptions::debug: TESSERA_DEBUG=1 or
/// `{.debug = true}` at a launch; the host and simt devices always check).
///
/// Each pointer parameter `p` gets two hidden u64 parameters at the end of the kernel's list,
/// `__base_p` and `__bytes_p`: the address and size of the buffer (or slice) the launch passes as
/// `p` (KernelBase::pack fills them). Before each access an `assert` checks every lane that the
/// mask lets through: its address lies in [base, base + bytes) and the whole element fits; the
/// access's mask then leaves out the lanes that fail, so that on a target whose assert does not
/// stop the kernel (Vulkan) nothing outside the buffers is touched (atomic_cas, which takes no
/// mask, excepted). A
/// failing lane is a DeviceFault "out-of-bounds store in kernel k at f.cpp:12: the pointer from
/// `y` is at byte 4096 of its buffer of 1024 bytes (address 0x...) (program (3, 0, 0), ...)".
///
/// Where a pointer comes from is read from the IR: back through ptr_add, the shape ops, the
/// hints, `where` and `cat` (both sides), bitcasts between pointers, and the values that loops
/// and branches carry, to the parameters it can reach. A pointer that can come from several
/// parameters passes when it lies in one of their buffers; one made from an integer (or loaded
/// from memory) is checked against all of the kernel's buffers.
#pragma once

#include "core/ir/ir.h"

namespace tessera::passes {

/// The hidden parameters' names for pointer parameter `name`.
std::string bounds_base_name(std::string_view name);
std::string bounds_bytes_name(std::string_view name);

/// Adds the hidden parameters and the checks to the module's kernel (once: a kernel that has
/// them is left alone). Returns true if it changed anything.
bool add_bounds_checks(ir::Module& m);

}  // namespace tessera::passes
