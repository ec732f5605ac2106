/// \file `tessera fuzz`: generates programs, runs each on the device and on the reference
/// interpreter, compares, and prints a shrunk reproducer for every mismatch.
#include "tools/fuzz.h"

#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "core/interp/interpreter.h"
#include "core/ir/abi.h"
#include "core/ir/printer.h"
#include "core/support/float16.h"
#include "core/target/target.h"
#include "runtime/ir_kernel.h"
#include "tools/fuzz_run.h"

namespace tessera::tools {
namespace fuzz {
namespace {

/// The host buffers' address ranges, for the interpreter's bounds checks.
class HostMemory : public interp::MemoryMap {
 public:
  explicit HostMemory(const Buffers& b) {
    for (const auto& d : b.data)
      if (!d.empty()) ranges_.push_back({reinterpret_cast<uint64_t>(d.data()), d.size()});
  }
  bool contains(uint64_t address, uint64_t bytes) const override {
    for (auto [begin, size] : ranges_)
      if (address >= begin && bytes <= size && address - begin <= size - bytes) return true;
    return false;
  }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
};

void put(std::vector<std::byte>& v, size_t i, ir::DType t, uint64_t bits) {
  std::memcpy(v.data() + i * ir::dtype_bytes(t), &bits, ir::dtype_bytes(t));
}

uint64_t get(const std::vector<std::byte>& v, size_t i, ir::DType t) {
  uint64_t bits = 0;
  std::memcpy(&bits, v.data() + i * ir::dtype_bytes(t), ir::dtype_bytes(t));
  return bits;
}

uint64_t float_bits(ir::DType t, double x) {
  switch (t) {
    case ir::DType::f16:
      return f16_from_double(x);
    case ir::DType::bf16:
      return bf16_from_double(x);
    case ir::DType::f32:
      return std::bit_cast<uint32_t>(static_cast<float>(x));
    default:
      return std::bit_cast<uint64_t>(x);
  }
}

double float_value(ir::DType t, uint64_t b) {
  switch (t) {
    case ir::DType::f16:
      return f16_to_double(static_cast<uint16_t>(b));
    case ir::DType::bf16:
      return bf16_to_double(static_cast<uint16_t>(b));
    case ir::DType::f32:
      return std::bit_cast<float>(static_cast<uint32_t>(b));
    default:
      return std::bit_cast<double>(b);
  }
}

uint64_t random_element(std::mt19937_64& rng, ir::DType t, bool exact) {
  const int r = static_cast<int>(rng() % 100);
  if (t == ir::DType::i1) return rng() & 1;
  if (!ir::is_float(t)) {
    if (r < 50) return static_cast<uint64_t>(static_cast<int64_t>(rng() % 17) - 8);
    if (r < 85) return rng();
    const uint64_t edges[] = {0, 1, ~uint64_t{0}, uint64_t{1} << (ir::dtype_bits(t) - 1),
                              (uint64_t{1} << (ir::dtype_bits(t) - 1)) - 1};
    return edges[rng() % 5];
  }
  // [-4, 4) from 53 random bits (uniform_real_distribution's algorithm is the library's).
  if (r < 60) return float_bits(t, static_cast<double>(rng() >> 11) * 0x1p-50 - 4);
  if (r < 75) return float_bits(t, static_cast<double>(static_cast<int>(rng() % 17) - 8));
  const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-3, 65504.0, 1e30, 1e-40, 3e-8};
  return float_bits(t, specials[rng() % (exact ? 10 : 8)]);  // subnormals only when exact
}

uint64_t poison(ir::DType t) {
  return ir::is_float(t) ? float_bits(t, NAN) : 0xABABABABABABABABull;
}

std::string show(ir::DType t, uint64_t bits) {
  char buf[64];
  if (ir::is_float(t))
    std::snprintf(buf, sizeof buf, "%.9g", float_value(t, bits));
  else
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, bits);
  return buf;
}

/// Runs the unoptimized module with the interpreter; an error means the program is invalid.
std::optional<std::string> run_reference(const ir::Module& m, const Program& p, Buffers& b) {
  const ir::Function& fn = m.kernel();
  const ir::ParamLayout layout = ir::param_layout(fn);
  std::vector<std::byte> block(layout.size);
  for (size_t i = 0; i < p.params.size(); ++i) {
    const uint32_t off = layout.slots[i].offset;
    if (p.params[i].kind == ParamSpec::Kind::Count)
      std::memcpy(block.data() + off, &p.n, 4);
    else {
      const uint64_t addr = reinterpret_cast<uint64_t>(b.data[i].data());
      std::memcpy(block.data() + off, &addr, 8);
    }
  }
  try {
    interp::run(fn, block, interp::Grid{p.grid, 1, 1}, HostMemory(b));
  } catch (const Error& e) {
    return std::string(to_string(e.kind())) + ": " + e.what();
  }
  return std::nullopt;
}

/// Runs the module on the device through IrKernel (the optimizing pipeline). `exact`: compared
/// bitwise with the unoptimized reference, so nothing may be fused (CompileOptions::fp_fusion);
/// otherwise fused, so that contraction meets random programs.
Verdict run_device(const Device& dev, const ir::Module& m, const Program& p, Buffers& b,
                   bool exact) {
  try {
    IrKernel k(m.clone());
    std::vector<KernelArg> args;
    std::vector<BufferBase> bufs(p.params.size());
    for (size_t i = 0; i < p.params.size(); ++i) {
      const ParamSpec& s = p.params[i];
      if (s.kind == ParamSpec::Kind::Count) {
        args.push_back(KernelArg::from(p.n));
        continue;
      }
      bufs[i] = BufferBase::allocate(dev.impl(), b.data[i].size(), s.dtype);
      bufs[i].upload_bytes(b.data[i].data(), b.data[i].size(), 0, nullptr);
      args.push_back(KernelArg::from(bufs[i]));
    }
    LaunchOptions options;
    options.fp_fusion = !exact;
    k.launch(LaunchConfig(Grid(p.grid), options), args);
    for (size_t i = 0; i < p.params.size(); ++i)
      if (p.params[i].kind == ParamSpec::Kind::Output)
        bufs[i].download_bytes(b.data[i].data(), b.data[i].size(), 0, nullptr);
    dev.synchronize();
  } catch (const Error& e) {
    try {
      dev.synchronize();
    } catch (const Error&) {
    }
    const bool unsupported = e.kind() == ErrorKind::Unsupported && dev.info().kind != "host";
    return {unsupported ? Verdict::Kind::Unsupported : Verdict::Kind::DeviceError,
            std::string(to_string(e.kind())) + ": " + e.what()};
  }
  return {};
}

/// Whether the program computes any value in f16 or bf16: their rounding differences (a scan or
/// a reduction associating differently, within what ops.h allows) survive a later widening.
bool computes_narrow_floats(const ir::Module& module) {
  bool narrow = false;
  ir::walk(module.kernel().body, [&](const ir::Op* op) {
    for (const ir::Value* v : op->results)
      if (!v->type.is_ptr && (v->type.dtype == ir::DType::f16 || v->type.dtype == ir::DType::bf16))
        narrow = true;
  });
  return narrow;
}

/// Do two elements agree? Bitwise (any NaN matching any NaN) when exact, else within a relative
/// tolerance for floats (GPU math is not correctly rounded): 3e-2 for f16 and bf16 outputs and for
/// any output of a program that computes in them, else 2e-3.
bool agree(ir::DType t, uint64_t a, uint64_t b, bool exact, bool narrow_program) {
  if (a == b) return true;
  if (!ir::is_float(t)) return false;
  const double x = float_value(t, a), y = float_value(t, b);
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (exact || std::isinf(x) || std::isinf(y)) return false;
  // Relative to f32 even for f64 outputs: a value cast from a narrower dtype keeps its error.
  const bool narrow = narrow_program || t == ir::DType::f16 || t == ir::DType::bf16;
  const double rel = narrow ? 3e-2 : 2e-3;
  return std::fabs(x - y) <= rel * std::max(1.0, std::fabs(y));
}

}  // namespace

bool Verdict::same_failure(const Verdict& o) const {
  if (kind != o.kind || !failed()) return false;
  // Mismatches: the same output buffer; errors: the same message up to its first number.
  const char* stop = kind == Kind::Mismatch ? "[" : "0123456789[";
  auto head = [&](const std::string& s) {
    return s.substr(0, std::min(s.size(), s.find_first_of(stop) + 1));
  };
  return head(detail) == head(o.detail);
}

Buffers make_buffers(const Program& p, uint64_t seed, bool exact) {
  std::mt19937_64 rng(seed ^ 0x5eed5eed5eed5eedull);
  Buffers b;
  for (const ParamSpec& s : p.params) {
    std::vector<std::byte> d(s.count * ir::dtype_bytes(s.dtype));
    for (size_t i = 0; i < s.count; ++i)
      put(d, i, s.dtype,
          s.kind == ParamSpec::Kind::Input ? random_element(rng, s.dtype, exact) : poison(s.dtype));
    b.data.push_back(std::move(d));
  }
  return b;
}

Verdict check(const Device& dev, const ir::Module& module, const Program& p, const Buffers& inputs,
              bool exact) {
  Buffers ref = inputs, got = inputs;
  if (auto err = run_reference(module, p, ref)) return {Verdict::Kind::ReferenceError, *err};
  Verdict v = run_device(dev, module, p, got, exact);
  if (v.kind != Verdict::Kind::Agree) return v;
  const bool narrow = computes_narrow_floats(module);
  for (size_t i = 0; i < p.params.size(); ++i) {
    const ParamSpec& s = p.params[i];
    if (s.kind != ParamSpec::Kind::Output) continue;
    size_t bad = 0, first = 0;
    for (size_t e = 0; e < s.count; ++e)
      if (!agree(s.dtype, get(got.data[i], e, s.dtype), get(ref.data[i], e, s.dtype), exact,
                 narrow) &&
          bad++ == 0)
        first = e;
    if (!bad) continue;
    return {Verdict::Kind::Mismatch,
            "%" + module.kernel().params[i].name + "[" + std::to_string(first) + "] (" +
                std::string(ir::dtype_name(s.dtype)) + "): device " +
                show(s.dtype, get(got.data[i], first, s.dtype)) + ", reference " +
                show(s.dtype, get(ref.data[i], first, s.dtype)) +
                (bad > 1 ? " (and " + std::to_string(bad - 1) + " more)" : "")};
  }
  return {};
}

}  // namespace fuzz

namespace {

struct Options {
  std::string device;
  int count = 100;
  uint64_t seed = 1;
  int ops = 24;
  int64_t only = -1;  ///< --program I: run only program I
  bool verbose = false;
  bool print = false;  ///< --print: print each generated program (to compare generators)
  int isolate = -1;    ///< check every program in a child process (default: unless on the host)
  double timeout_s = 120;
};

int usage() {
  std::fprintf(stderr,
               "usage: tessera fuzz --device NAME [--count N] [--seed S] [--ops N] [--program I]\n"
               "                    [--verbose] [--print] [--isolate | --no-isolate]\n"
               "                    [--timeout SECONDS]\n");
  return 2;
}

uint64_t program_seed(uint64_t seed, uint64_t i) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + i + 1;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void print_reproducer(const fuzz::Reduced& r, uint64_t i, const Options& o,
                      const fuzz::Verdict& v) {
  std::printf(
      "  reduced from %d to %d ops; grid (%u), n = %d; replay: tessera fuzz --device %s --seed "
      "%" PRIu64 " --program %" PRIu64 " --count %" PRIu64 "\n",
      r.ops_before, r.ops_after, r.program.grid, r.program.n, o.device.c_str(), o.seed, i, i + 1);
  std::printf("  %s\n", v.detail.c_str());
  const ir::Function& fn = r.program.module->kernel();
  for (size_t p = 0; p < r.program.params.size(); ++p) {
    const fuzz::ParamSpec& s = r.program.params[p];
    if (s.kind != fuzz::ParamSpec::Kind::Input) continue;
    std::printf("  %%%s (%s):", fn.params[p].name.c_str(),
                std::string(ir::dtype_name(s.dtype)).c_str());
    for (size_t e = 0; e < s.count && e < 32; ++e) {
      uint64_t bits = 0;
      std::memcpy(&bits, r.inputs.data[p].data() + e * ir::dtype_bytes(s.dtype),
                  ir::dtype_bytes(s.dtype));
      std::printf(" %s", fuzz::show(s.dtype, bits).c_str());
    }
    std::printf("%s\n", s.count > 32 ? " ..." : "");
  }
  std::printf("%s\n", ir::print(*r.program.module).c_str());
}

}  // namespace

namespace {

bool parse_options(const std::vector<std::string>& args, Options& o) {
  for (size_t i = 0; i < args.size(); ++i) {
    const bool v = i + 1 < args.size();
    if (args[i] == "--device" && v)
      o.device = args[++i];
    else if (args[i] == "--count" && v)
      o.count = std::stoi(args[++i]);
    else if (args[i] == "--seed" && v)
      o.seed = std::stoull(args[++i], nullptr, 0);
    else if (args[i] == "--ops" && v)
      o.ops = std::stoi(args[++i]);
    else if (args[i] == "--program" && v)
      o.only = std::stoll(args[++i]);
    else if (args[i] == "--verbose" || args[i] == "-v")
      o.verbose = true;
    else if (args[i] == "--print")
      o.print = true;
    else if (args[i] == "--isolate")
      o.isolate = 1;
    else if (args[i] == "--no-isolate")
      o.isolate = 0;
    else if (args[i] == "--timeout" && v)
      o.timeout_s = std::stod(args[++i]);
    else
      return false;
  }
  if (o.isolate < 0) o.isolate = o.device != "host";  // the host interpreter does not crash
  return !o.device.empty();
}

/// What the generator may use on the device: the dtypes its target computes in.
fuzz::GenOptions gen_options(const fuzz::DeviceDesc& dev, const Options& o) {
  std::optional<target::Target> tgt = target::parse_target(dev.target);
  if (!tgt) tgt = target::profile(dev.kind);
  fuzz::GenOptions gen;
  gen.ops = o.ops;
  gen.exact = dev.kind == "host";
  if (tgt && tgt->isa.starts_with("spirv")) gen.trig_range = 65536 * 2 * 3.14159265358979323846;
  for (int t = 0; t < ir::kNumDTypes; ++t)  // not fp8: it is only converted, never computed on
    if (!ir::is_fp8(static_cast<ir::DType>(t)) &&
        (!tgt || tgt->supports_dtype(static_cast<ir::DType>(t))))
      gen.dtypes.push_back(static_cast<ir::DType>(t));
  return gen;
}

/// Generates, runs and checks program `i`; prints a reduced reproducer if it fails.
fuzz::Verdict run_program(const fuzz::Checker& check, const fuzz::GenOptions& gen, const Options& o,
                          int64_t i) {
  const uint64_t s = program_seed(o.seed, static_cast<uint64_t>(i));
  fuzz::Program p = fuzz::generate(s, gen);
  if (o.print)
    std::printf("program %" PRId64 " (seed %#" PRIx64 "):\n%s\n", i, s,
                ir::print(*p.module).c_str());
  fuzz::Buffers in = fuzz::make_buffers(p, s, gen.exact);
  fuzz::Verdict v = check(*p.module, p, in);
  if (o.verbose)
    std::printf("program %" PRId64 ": %d ops, %s\n", i, fuzz::count_ops(*p.module),
                v.detail.empty() ? "agree" : v.detail.c_str());
  if (v.kind == fuzz::Verdict::Kind::ReferenceError) {
    std::printf("program %" PRId64
                ": the generator made a program the interpreter rejects (a fuzzer bug): %s\n%s\n",
                i, v.detail.c_str(), ir::print(*p.module).c_str());
  } else if (v.failed()) {
    std::printf("program %" PRId64 ": %s: %s\n", i,
                v.kind == fuzz::Verdict::Kind::Mismatch ? "MISMATCH" : "ERROR", v.detail.c_str());
    fuzz::Reduced r = fuzz::shrink(check, s, gen, std::move(p), std::move(in), gen.exact, v);
    print_reproducer(r, static_cast<uint64_t>(i), o, check(*r.program.module, r.program, r.inputs));
  }
  return v;
}

}  // namespace

int fuzz_main(const std::vector<std::string>& args) {
  Options o;
  if (!parse_options(args, o)) return usage();
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a crashing device still leaves the log
  const fuzz::DeviceDesc desc = fuzz::describe_device(o.device, o.isolate);
  const fuzz::GenOptions gen = gen_options(desc, o);
  std::optional<Device> dev;  // opened here only when not isolated
  fuzz::Checker check = fuzz::isolated_checker(o.device, gen.exact, o.timeout_s);
  if (!o.isolate) {
    dev = Device::open(o.device);
    check = [&](const ir::Module& m, const fuzz::Program& p, const fuzz::Buffers& in) {
      return fuzz::check(*dev, m, p, in, gen.exact);
    };
  }
  std::printf("fuzz: %d programs on %s (%s), seed %" PRIu64 "\n", o.count, o.device.c_str(),
              gen.exact ? "optimized vs unoptimized, bitwise"
                        : "device vs host interpreter, with float tolerance",
              o.seed);
  int agreed = 0, failed = 0, unsupported = 0;
  for (int64_t i = o.only >= 0 ? o.only : 0; i < o.count; ++i) {
    const fuzz::Verdict v = run_program(check, gen, o, i);
    if (v.kind == fuzz::Verdict::Kind::Agree)
      ++agreed;
    else if (v.kind == fuzz::Verdict::Kind::Unsupported)
      ++unsupported;
    else
      ++failed;
    if (o.only >= 0) break;
  }
  std::printf("%d agreed, %d failed, %d unsupported\n", agreed, failed, unsupported);
  return failed ? 1 : 0;
}

}  // namespace tessera::tools
