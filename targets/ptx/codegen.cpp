/// \file The PTX target's driver: checks what the target can run, builds the LLVM module
/// (emitter.cpp), runs a short LLVM pipeline (kPipeline) and NVPTX code generation for the
/// target's sm, and pins the PTX ISA version.
#include <cctype>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "core/ir/abi.h"
#include "core/ir/simt.h"
#include "core/support/error.h"
#include "targets/ptx/emitter.h"
#include "targets/ptx/fatal.h"
#include "targets/ptx/ptx.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#pragma GCC diagnostic pop

extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTarget();
extern "C" void LLVMInitializeNVPTXTargetMC();
extern "C" void LLVMInitializeNVPTXAsmPrinter();

namespace tessera::ptx {
namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";

/// The LLVM passes run before code generation. The SIMT IR arrives already folded, CSE'd and
/// free of dead code (core/passes), and ptxas optimizes again, so LLVM's O3 pipeline (about 8
/// InstCombine runs, loop and vectorizer passes) spent half the compile time of a matmul for
/// little: on the fp16 64x64x32 matmul O3 took 11.6 ms and codegen 8.8 ms; this pipeline takes
/// about 4.5 ms. What it keeps: inlining the math library's functions (math.cpp), the NVVM ranges
/// of the special registers (InstCombine then drops sign extensions of thread indices),
/// alignment inference (NVPTX's load/store vectorizer needs it to merge shared-memory accesses),
/// loop rotation (without it the H200 ran layer norm fp16 at 64.2 us instead of 53.5: loops
/// stayed top-tested), LICM and GVN. The samples' and layer norm's PTX then has O3's branches,
/// loads, stores and barriers in the same order, and within 4 % of its instructions (address
/// arithmetic).
constexpr const char* kPipeline =
    "cgscc(inline),globaldce,"
    "function(nvvm-intr-range,sroa,early-cse,infer-alignment,instcombine<no-verify-fixpoint>,"
    "simplifycfg,loop-mssa(loop-rotate,licm),gvn,instcombine<no-verify-fixpoint>,adce,"
    "simplifycfg)";

void check_supported(const ir::Function& fn, const target::Target& target) {
  if (!ir::is_simt(fn))
    fail(ErrorKind::Internal, "ptx::emit: function '", fn.name, "' is not a SIMT function");
  if (target.sm < 80)
    fail(ErrorKind::Unsupported, "kernel '", fn.name, "': the PTX target needs sm_80 or newer, ",
         "target '", target.name, "' has sm ", target.sm);
  if (ir::simt_subgroup(fn) != 32)
    fail(ErrorKind::Unsupported, "kernel '", fn.name, "' was lowered for subgroups of ",
         ir::simt_subgroup(fn), " lanes; CUDA warps have 32");
  if (ir::simt_threads(fn) > target.max_threads || ir::simt_threads(fn) % 32 != 0)
    fail(ErrorKind::Unsupported, "kernel '", fn.name, "' needs ", ir::simt_threads(fn),
         " threads per block; ", target.name, " allows multiples of 32 up to ", target.max_threads);
}

std::unique_ptr<llvm::TargetMachine> target_machine(const target::Target& target) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // Shared-memory pointers in 32 bits (the shared window is far below 4 GiB): address
    // arithmetic on them is 32-bit, as the hardware's shared-memory instructions take it.
    llvm::cl::Option* short_ptr = llvm::cl::getRegisteredOptions().lookup("nvptx-short-ptr");
    TESSERA_CHECK(short_ptr, "LLVM's NVPTX backend has no option nvptx-short-ptr");
    static_cast<llvm::cl::opt<bool>*>(short_ptr)->setValue(true);
  });
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(kTriple, error);
  TESSERA_CHECK(t, "LLVM has no NVPTX target: ", error);
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Strict;  // no contraction unless written (fma)
  std::string cpu = "sm_" + std::to_string(target.sm) + (target.sm_arch_specific ? "a" : "");
  std::string features =
      "+ptx" + std::to_string(kPtxVersionMajor) + std::to_string(kPtxVersionMinor);
  return std::unique_ptr<llvm::TargetMachine>(
      t->createTargetMachine(kTriple, cpu, features, options, std::nullopt, std::nullopt,
                             llvm::CodeGenOptLevel::Aggressive));
}

/// One kernel's LLVM objects, on the heap: after a fatal error of LLVM they may be half updated,
/// so they are kept, never destroyed (fatal.cpp says why throwing is safe enough). Members are
/// destroyed in the order the code before used (pass managers, then module, machine, context).
struct LlvmWork {
  /// The optimization pipeline's managers, dropped (in this order) when the pipeline is done.
  struct Optimizer {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb;
    llvm::ModulePassManager mpm;
    explicit Optimizer(llvm::TargetMachine* tm) : pb(tm) {}
  };

  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<Optimizer> optimizer;
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream ptx_os{ptx};  // NVPTX's streamer writes here until codegen is gone
  llvm::legacy::PassManager codegen;
};

/// Runs `f` on fresh LLVM objects with LLVM's fatal errors thrown as LlvmFatalError naming the
/// kernel; the objects of a compilation that LLVM gave up on are kept for the process's life.
void run_llvm(const ir::Function& fn, const std::function<void(LlvmWork&)>& f) {
  auto work = std::make_unique<LlvmWork>();
  try {
    guard_llvm(fn.name, [&] { f(*work); });
  } catch (const LlvmFatalError&) {
    static std::mutex mutex;
    static auto* kept = new std::vector<std::unique_ptr<LlvmWork>>();  // reachable, never freed
    std::lock_guard lock(mutex);
    kept->push_back(std::move(work));
    throw;
  }
}

/// The kernel as an optimized LLVM module, in w.module.
void build(LlvmWork& w, const ir::Function& fn, const target::Target& target) {
  w.tm = target_machine(target);
  w.module = std::make_unique<llvm::Module>(fn.name, w.ctx);
  llvm::Module& module = *w.module;
  module.setTargetTriple(kTriple);
  module.setDataLayout(w.tm->createDataLayout());
  Emitter emitter(module, fn, target);
  emitter.emit_kernel();
  std::string problems;
  llvm::raw_string_ostream os(problems);
  TESSERA_CHECK(!llvm::verifyModule(module, &os), "ptx: invalid LLVM IR for kernel '", fn.name,
                "': ", problems);

  w.optimizer = std::make_unique<LlvmWork::Optimizer>(w.tm.get());
  LlvmWork::Optimizer& o = *w.optimizer;
  o.pb.registerModuleAnalyses(o.mam);
  o.pb.registerCGSCCAnalyses(o.cam);
  o.pb.registerFunctionAnalyses(o.fam);
  o.pb.registerLoopAnalyses(o.lam);
  o.pb.crossRegisterProxies(o.lam, o.fam, o.cam, o.mam);
  if (llvm::Error error = o.pb.parsePassPipeline(o.mpm, kPipeline))
    fail(ErrorKind::Internal,
         "ptx: LLVM rejects the pass pipeline: ", llvm::toString(std::move(error)));
  o.mpm.run(module, o.mam);
  w.optimizer.reset();
}

/// The `.version` line says what this file needs; the driver JIT and ptxas accept it.
std::string pin_version(std::string ptx) {
  std::string want =
      ".version " + std::to_string(kPtxVersionMajor) + "." + std::to_string(kPtxVersionMinor);
  size_t at = ptx.find(".version ");
  TESSERA_CHECK(at != std::string::npos, "NVPTX wrote no .version line");
  size_t end = ptx.find('\n', at);
  ptx.replace(at, end - at, want);
  return ptx;
}

}  // namespace

std::string emit_llvm_ir(const ir::Function& fn, const target::Target& target) {
  check_supported(fn, target);
  std::string text;
  run_llvm(fn, [&](LlvmWork& w) {
    build(w, fn, target);
    llvm::raw_string_ostream os(text);
    w.module->print(os, nullptr);
  });
  return text;
}

target::Artifact emit(const ir::Function& fn, const target::Target& target, std::string* llvm_ir) {
  check_supported(fn, target);
  std::string ptx;
  run_llvm(fn, [&](LlvmWork& w) {
    build(w, fn, target);
    if (llvm_ir) {
      llvm::raw_string_ostream ir_os(*llvm_ir);
      w.module->print(ir_os, nullptr);
    }
    TESSERA_CHECK(!w.tm->addPassesToEmitFile(w.codegen, w.ptx_os, nullptr,
                                             llvm::CodeGenFileType::AssemblyFile),
                  "NVPTX cannot emit assembly");
    w.codegen.run(*w.module);
    ptx = std::string(w.ptx.str());
  });

  target::Artifact a;
  a.kernel = fn.name;
  a.symbol = kernel_symbol(fn.name);
  a.isa = "ptx";
  a.ptx = pin_version(std::move(ptx));
  a.target = target.str();
  // TMA tensor maps: encoded by the runtime at launch into slots after the user's parameters.
  a.tensor_maps = ir::tensor_maps(fn);
  std::vector<ir::Type> types;
  for (const ir::Param& p : fn.params) types.push_back(p.value->type);
  a.params = ir::param_layout(types, a.tensor_maps.size());
  a.param_bytes = a.params.size;
  a.threads = static_cast<uint32_t>(ir::simt_threads(fn));
  a.subgroup = static_cast<uint32_t>(ir::simt_subgroup(fn));
  a.shared_bytes = static_cast<uint64_t>(ir::shared_memory_bytes(fn));
  a.cluster = static_cast<uint32_t>(ir::simt_cluster(fn));
  a.dependent_launch = target.has(target::Cap::DependentLaunch);
  return a;
}

std::string kernel_symbol(std::string_view name) {
  auto head = [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$';
  };
  auto tail = [&](char c) { return head(c) || std::isdigit(static_cast<unsigned char>(c)); };
  bool valid = !name.empty() && head(name[0]);
  for (char c : name) valid = valid && tail(c);
  if (valid) return std::string(name);
  std::string out = name.empty() || !head(name[0]) ? "_" : "";
  for (char c : name) out += tail(c) ? c : '_';
  uint32_t h = 2166136261u;  // FNV-1a: the same symbol on every host and build
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", h);
  return out + "_t" + hex;
}

}  // namespace tessera::ptx
