/// \file The register budget of a CUDA kernel as the driver sees it: registers, local memory
/// (spills and stack), shared memory and the block size limit, read with cuFuncGetAttribute when
/// a module is loaded, kept on the kernel (CompiledKernel::stats) and printed under
/// TESSERA_DUMP=ptxstats. A stats query reports a failure instead of throwing.
#include <ostream>

#include "core/support/dump.h"
#include "runtime/cuda/device.h"

namespace tessera::rt::cuda {

void CudaKernel::query_stats(CUfunction f) const {
  const Driver& d = device_->driver();
  struct Field {
    CUfunction_attribute attribute;
    const char* name;
    int KernelStats::* field;
  };
  static constexpr Field kFields[] = {
      {CU_FUNC_ATTRIBUTE_NUM_REGS, "NUM_REGS", &KernelStats::registers},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "LOCAL_SIZE_BYTES", &KernelStats::local_bytes},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES", &KernelStats::static_shared_bytes},
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK",
       &KernelStats::max_threads_per_block},
  };
  KernelStats stats;
  for (const Field& field : kFields) {
    if (CUresult r = d.cuFuncGetAttribute(&(stats.*field.field), field.attribute, f);
        r != CUDA_SUCCESS) {
      stats_.reset();
      stats_error_ = std::string("cuFuncGetAttribute(") + field.name + ") failed: " + error_name(r);
      return;
    }
  }
  stats_ = stats;
  stats_error_.clear();
}

std::optional<KernelStats> CudaKernel::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

std::string CudaKernel::stats_error() const {
  std::lock_guard lock(mutex_);
  if (!stats_ && stats_error_.empty()) return "the kernel's module is not loaded";
  return stats_error_;
}

void dump_stats(const CudaKernel& kernel, const CudaDevice& device) {
  Dumps dumps = Dumps::from_env();
  if (!dumps.has("ptxstats")) return;
  const target::Target& t = device.target();
  std::ostream& os = dumps.out();
  os << "// ptxstats " << kernel.who() << " on " << device.info().name << " (sm_" << t.sm
     << (t.sm_arch_specific ? "a" : "") << "): ";
  std::optional<KernelStats> s = kernel.stats();
  if (!s) {
    os << kernel.stats_error() << "\n";
    return;
  }
  os << s->registers << " registers, " << s->local_bytes << " bytes local (spills), "
     << s->static_shared_bytes + kernel.shared_bytes << " bytes shared (" << s->static_shared_bytes
     << " static, " << kernel.shared_bytes << " dynamic), " << kernel.threads_per_program
     << " threads, max " << s->max_threads_per_block << " threads per block";
  if (kernel.cluster > 1) os << ", clusters of " << kernel.cluster << " programs";
  os << "\n";
}

}  // namespace tessera::rt::cuda
