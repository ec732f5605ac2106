/// \file A compiled kernel as a target produces it and a runtime backend consumes it: the binary,
/// the parameter ABI and the launch facts. Runtime backends never see the IR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../ir/abi.h"

namespace tessera::target {

/// Where a kernel of a target without a device trap (SPIR-V) leaves its fault for the runtime: a
/// device assert that failed, or a loop that reached the target's loop_limit. The first failing
/// invocation claims the record and fills it; the launch runs on (Vulkan has no trap), and the
/// runtime raises ErrorKind::DeviceFault naming the kernel and the fault when it next waits on
/// the stream. Little-endian u32 words in host-visible memory.
struct FaultWords {
  uint32_t claimed = 0;      ///< 0 until an invocation fails; then 1
  uint32_t code = 0;         ///< 1 + the index of the fault's text in Artifact::faults
  uint32_t launch = 0;       ///< the launch's tag (the word after the record's address)
  uint32_t program[3] = {};  ///< program id of the failing invocation
  uint32_t thread = 0;       ///< its index in the workgroup
  uint32_t rank = 0;         ///< how many of `index` are valid
  int32_t index[4] = {};     ///< the element's index in the tile (an assert)
  uint32_t num_values = 0;   ///< how many of `values` an assert reported
  uint32_t unused = 0;
  uint64_t values[3] = {};  ///< an assert's reported values (ir::AssertOp::values)
};

struct Artifact {
  std::string kernel;  ///< entry point name (the kernel function's name)
  /// The entry point's symbol in the binary where it differs from `kernel` (PTX: a kernel name
  /// that is no PTX identifier, made one: ptx::kernel_symbol); empty: `kernel`.
  std::string symbol;
  const std::string& entry_symbol() const { return symbol.empty() ? kernel : symbol; }
  std::string isa;              ///< "spirv" or "ptx"
  std::vector<uint32_t> spirv;  ///< SPIR-V words (isa "spirv")
  std::string ptx;              ///< PTX text (isa "ptx")
  std::string target;           ///< Target::str() of the target it was compiled for

  /// The packed parameter block (core/ir/abi.h) of the user's parameters, followed, when
  /// `grid_offset` is set, by three u32: the logical grid size (x, y, z). Backends whose hardware
  /// grid is smaller than the logical one (lavapipe: 65535 per dimension) dispatch a folded grid;
  /// the kernel rebuilds program ids from the linear workgroup index and the logical grid, and
  /// workgroups past the end return at once.
  ir::ParamLayout params;
  uint32_t param_bytes = 0;  ///< size of the whole block, hidden words included
  int64_t grid_offset = -1;  ///< byte offset of the logical grid in the block, or -1
  /// Hopper TMA (core/ir/abi.h): the tensor maps the kernel reads, encoded by the runtime at each
  /// launch from the block's values into the last `tensor_maps.size()` slots of `params` (128
  /// bytes each, 64-byte aligned, after the user's parameters). Empty for every other kernel.
  std::vector<ir::TensorMapParam> tensor_maps;
  /// The names of the kernel's parameters, in order (the user's), for the runtime's errors
  /// ("tensor map of parameter 'a'"); empty where unknown, and errors then number them.
  std::vector<std::string> param_names;
  /// Vulkan: the block did not fit in push constants; push only its 64-bit device address
  /// (a buffer the runtime fills per launch).
  bool params_by_address = false;
  /// The fault channel (SPIR-V kernels with asserts, or on a target with a loop_limit): the byte
  /// offset in the block of a u64, the device address of a FaultWords record (0: none, faults
  /// are then dropped), followed by a u32 tag the kernel copies into the record; -1: no channel.
  int64_t fault_offset = -1;
  /// What each fault code means: "<file:line>: <what happened>" (code = index + 1).
  std::vector<std::string> faults;
  /// The print channel (SPIR-V kernels with a `print`): the byte offset in the block of a u64,
  /// the device address of a print buffer (0: none, prints are dropped), a u32, the buffer's
  /// capacity in records, and a u32 tag the kernel copies into each record; -1: no channel. The
  /// buffer is a PrintHeader followed by PrintRecords; each print reserves a record with an atomic
  /// add on `count` and fills it, or, past the capacity, adds one to `dropped`.
  int64_t print_offset = -1;
  struct PrintHeader {
    uint32_t count = 0;    ///< records reserved (those past the capacity were dropped)
    uint32_t dropped = 0;  ///< records dropped because the buffer was full
  };
  struct PrintRecord {    ///< little-endian u32 words
    uint32_t code = 0;    ///< 1 + the index of the print's site in `prints`
    uint32_t launch = 0;  ///< the launch's tag
    uint32_t program[3] = {};
    uint32_t thread = 0;     ///< the invocation's index in the workgroup
    uint32_t pass = 0;       ///< loop passes this invocation had begun (orders the records)
    int32_t index[4] = {};   ///< the element's index in the printed tile (site's rank valid)
    uint32_t value[2] = {};  ///< the value's bits (low word first), zero-extended to 64
  };
  /// A print site (one SIMT `print` op): how its records are written out.
  struct PrintSite {
    std::string prefix;
    ir::DType dtype = ir::DType::i32;  ///< the value's dtype (a pointer's pointee)
    bool is_ptr = false;
    bool hex = false;
    int rank = 0;            ///< index words in use (0: a scalar)
    uint32_t statement = 0;  ///< the tile-level print it comes from: sites that share one
                             ///< print the elements of one tile, ordered by their index
  };
  std::vector<PrintSite> prints;  ///< by code - 1

  uint32_t threads = 0;       ///< threads per workgroup (x dimension only)
  uint32_t subgroup = 0;      ///< the subgroup size the code was lowered for (required)
  uint64_t shared_bytes = 0;  ///< static shared (workgroup) memory
  /// Programs per thread-block cluster along the grid's x (the SIMT function's `cluster`
  /// attribute, ir::simt_cluster): 1, 2, 4 or 8, above 1 only for PTX kernels of sm_90 and newer
  /// compiled with CompileOptions::cluster > 1, which must then be launched as clusters of that
  /// many programs (cuLaunchKernelEx) on a grid whose x is a multiple of it.
  uint32_t cluster = 1;
  /// The kernel waits at its entry for the grid before it in its stream and then lets the next
  /// one be scheduled (PTX `griddepcontrol`, Cap::DependentLaunch): it may be launched with
  /// programmatic stream serialization. False: it must be launched in plain stream order.
  bool dependent_launch = false;
};

}  // namespace tessera::target
