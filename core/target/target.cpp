/// \file Target descriptions: profiles, text form and parsing.
#include "core/target/target.h"

#include <charconv>
#include <sstream>
#include <tuple>

namespace tessera::target {
namespace {

constexpr std::string_view kCapNames[] = {
#define X(name, text) text,
    TESSERA_CAPS(X)
#undef X
};
constexpr int kNumCaps = sizeof(kCapNames) / sizeof(kCapNames[0]);

constexpr std::string_view kQuirkNames[] = {
#define X(name, text) text,
    TESSERA_QUIRKS(X)
#undef X
};
constexpr int kNumQuirks = sizeof(kQuirkNames) / sizeof(kQuirkNames[0]);

Target make_cuda(int sm, bool arch_specific) {
  Target t;
  t.name = "cuda-sm_" + std::to_string(sm) + (arch_specific ? "a" : "");
  t.isa = "ptx";
  t.sm = sm;
  t.sm_arch_specific = arch_specific;
  t.subgroup_size = 32;
  t.max_threads = 1024;
  // Opt-in dynamic shared memory per block: 163 KiB on sm_80, 99 KiB on sm_86/89, 227 KiB on sm_90.
  t.max_shared_bytes = sm >= 90 ? 232448 : (sm == 80 ? 166912 : 101376);
  t.push_constant_bytes = 4096;
  t.max_grid[0] = 2147483647;
  t.max_grid[1] = 65535;
  t.max_grid[2] = 65535;
  for (Cap c : {Cap::Int64, Cap::Int8, Cap::Int16, Cap::Fp16, Cap::Fp64, Cap::SubgroupShuffle,
                Cap::FloatAtomicAdd, Cap::Int64Atomics, Cap::BufferDeviceAddress, Cap::MmaSync,
                Cap::CpAsync, Cap::FusedFma, Cap::NanMinMax})
    t.set(c);
  if (sm >= 90 && arch_specific) t.set(Cap::Wgmma);
  // The tensor memory accelerator (cp.async.bulk.tensor, mbarrier expect_tx): PTX ISA 8.0, sm_90.
  if (sm >= 90) t.set(Cap::Tma);
  // Programmatic dependent launch (griddepcontrol): PTX ISA 7.8, sm_90.
  if (sm >= 90) t.set(Cap::DependentLaunch);
  using ir::DType;
  t.matrix_shapes = {{16, 8, 16, DType::f16, DType::f16, DType::f32},
                     {16, 8, 16, DType::bf16, DType::bf16, DType::f32},
                     {16, 8, 8, DType::f32, DType::f32, DType::f32},
                     {16, 8, 32, DType::i8, DType::i8, DType::i32}};
  // ptxas negates 8/16-bit integers without wrapping them, as NVIDIA's Vulkan driver does: the
  // PTX `neg.s16` then `cvt.s32.s16` that LLVM writes for (-a).to(int32) gave 32768 for
  // a = -32768 (conformance driver/narrow_negate_widen on an H200, driver 580).
  t.set(Quirk::NarrowNegateUnwrapped);
  return t;
}

Target make_lavapipe() {
  Target t;
  t.name = "vulkan-lavapipe";
  t.isa = "spirv1.6";
  t.subgroup_size = 8;
  t.max_threads = 256;  // at most 32 subgroups per workgroup with a required subgroup size
  t.max_shared_bytes = 32768;
  t.push_constant_bytes = 128;
  t.max_grid[0] = t.max_grid[1] = t.max_grid[2] = 65535;
  for (Cap c :
       {Cap::Int64, Cap::Int8, Cap::Int16, Cap::Fp16, Cap::Fp64, Cap::SubgroupShuffle,
        Cap::FloatAtomicAdd, Cap::Int64Atomics, Cap::BufferDeviceAddress, Cap::InfNanPreserve})
    t.set(c);
  t.loop_limit = 65535;  // gallivm's LP_MAX_TGSI_LOOP_ITERATIONS
  t.set(Quirk::SpecialConstantFolding);
  t.set(Quirk::WideCompareFolding);
  t.set(Quirk::WideRoundUnrounded);
  return t;
}

Target make_vulkan_nvidia() {
  Target t;
  t.name = "vulkan-nvidia";
  t.isa = "spirv1.6";
  t.subgroup_size = 32;
  t.max_threads = 1024;
  t.max_shared_bytes = 49152;
  t.push_constant_bytes = 256;
  t.max_grid[0] = 2147483647;
  t.max_grid[1] = t.max_grid[2] = 65535;
  for (Cap c : {Cap::Int64, Cap::Int8, Cap::Int16, Cap::Fp16, Cap::Fp64, Cap::SubgroupShuffle,
                Cap::FloatAtomicAdd, Cap::Int64Atomics, Cap::BufferDeviceAddress,
                Cap::CooperativeMatrix, Cap::FusedFma, Cap::InfNanPreserve, Cap::IeeeMinMax})
    t.set(c);
  t.set(Quirk::NarrowNegateUnwrapped);
  t.set(Quirk::NarrowFloatUnrounded);
  using ir::DType;
  t.matrix_shapes = {{16, 16, 16, DType::f16, DType::f16, DType::f32},
                     {16, 8, 16, DType::f16, DType::f16, DType::f32},
                     {16, 16, 16, DType::bf16, DType::bf16, DType::f32},
                     {16, 16, 32, DType::i8, DType::i8, DType::i32}};
  return t;
}

/// The H200's Vulkan driver with VK_NV_cooperative_matrix2 enabled (TESSERA_COOPMAT2=1; driver
/// 580, measured, docs/design.md): 8192 of the 48 KiB of shared memory reserved for
/// workgroup-scope matrices; workgroup-scope granularities 16x16x16 at 32 and 64 invocations,
/// 32x16x16 at 128, 32x32x16 at 256, f16 and bf16 into f32 (the int8 and f16-accumulator shapes
/// are left out: no dot plan takes them).
Target make_vulkan_nvidia_coopmat2() {
  Target t = make_vulkan_nvidia();
  t.name = "vulkan-nvidia-coopmat2";
  t.max_shared_bytes = 49152 - 8192;
  t.set(Cap::CooperativeMatrix2);
  using ir::DType;
  for (DType in : {DType::f16, DType::bf16})
    for (const auto& [m, n, invocations] :
         {std::tuple{16, 16, 32}, {16, 16, 64}, {32, 16, 128}, {32, 32, 256}})
      t.workgroup_shapes.push_back({{m, n, 16, in, in, DType::f32}, invocations});
  return t;
}

Target make_host() {
  Target t;
  t.name = "host";
  t.isa = "none";
  t.subgroup_size = 32;
  t.max_shared_bytes = 0;
  for (int i = 0; i < kNumCaps; ++i) {
    Cap c = static_cast<Cap>(i);
    if (c != Cap::MmaSync && c != Cap::CpAsync && c != Cap::Wgmma && c != Cap::Tma &&
        c != Cap::CooperativeMatrix && c != Cap::CooperativeMatrix2 && c != Cap::DependentLaunch)
      t.set(c);
  }
  return t;
}

bool parse_int(std::string_view s, int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(sep, pos);
    if (end == std::string_view::npos) end = s.size();
    std::string_view part = s.substr(pos, end - pos);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty()) out.push_back(part);
    pos = end + 1;
  }
  return out;
}

std::optional<MatrixShape> parse_matrix_shape(std::string_view s) {
  // "16x16x16:f16*f16+f32"
  auto colon = s.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto dims = split(s.substr(0, colon), 'x');
  std::string_view types = s.substr(colon + 1);
  auto star = types.find('*'), plus = types.find('+');
  if (dims.size() != 3 || star == std::string_view::npos || plus == std::string_view::npos)
    return std::nullopt;
  MatrixShape m;
  int64_t v[3];
  for (int i = 0; i < 3; ++i)
    if (!parse_int(dims[i], &v[i])) return std::nullopt;
  m.m = static_cast<int>(v[0]);
  m.n = static_cast<int>(v[1]);
  m.k = static_cast<int>(v[2]);
  auto a = ir::parse_dtype(types.substr(0, star));
  auto b = ir::parse_dtype(types.substr(star + 1, plus - star - 1));
  auto c = ir::parse_dtype(types.substr(plus + 1));
  if (!a || !b || !c) return std::nullopt;
  m.a = *a;
  m.b = *b;
  m.c = *c;
  return m;
}

/// "32x16x16:f16*f16+f32@128"
std::optional<WorkgroupShape> parse_workgroup_shape(std::string_view s) {
  const size_t at = s.rfind('@');
  int64_t invocations = 0;
  if (at == std::string_view::npos || !parse_int(s.substr(at + 1), &invocations) ||
      invocations <= 0)
    return std::nullopt;
  std::optional<MatrixShape> g = parse_matrix_shape(s.substr(0, at));
  if (!g) return std::nullopt;
  return WorkgroupShape{*g, static_cast<int>(invocations)};
}

}  // namespace

std::string_view cap_name(Cap c) {
  return kCapNames[static_cast<int>(c)];
}

std::optional<Cap> parse_cap(std::string_view text) {
  for (int i = 0; i < kNumCaps; ++i)
    if (kCapNames[i] == text) return static_cast<Cap>(i);
  return std::nullopt;
}

std::string_view quirk_name(Quirk q) {
  return kQuirkNames[static_cast<int>(q)];
}

std::optional<Quirk> parse_quirk(std::string_view text) {
  for (int i = 0; i < kNumQuirks; ++i)
    if (kQuirkNames[i] == text) return static_cast<Quirk>(i);
  return std::nullopt;
}

std::string MatrixShape::str() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + ":" +
         std::string(ir::dtype_name(a)) + "*" + std::string(ir::dtype_name(b)) + "+" +
         std::string(ir::dtype_name(c));
}

std::string WorkgroupShape::str() const {
  return granularity.str() + "@" + std::to_string(invocations);
}

void Target::set(Cap c, bool on) {
  uint64_t bit = uint64_t{1} << static_cast<int>(c);
  caps = on ? (caps | bit) : (caps & ~bit);
}

void Target::set(Quirk q, bool on) {
  uint64_t bit = uint64_t{1} << static_cast<int>(q);
  quirks = on ? (quirks | bit) : (quirks & ~bit);
}

bool Target::supports_dtype(ir::DType t) const {
  switch (t) {
    case ir::DType::i64:
    case ir::DType::u64:
      return has(Cap::Int64);
    case ir::DType::i8:
    case ir::DType::u8:
      return has(Cap::Int8);
    case ir::DType::i16:
    case ir::DType::u16:
      return has(Cap::Int16);
    case ir::DType::f16:
      return has(Cap::Fp16);
    case ir::DType::bf16:
      return true;  // stored as 16 bits, computed in f32 where not native
    case ir::DType::f64:
      return has(Cap::Fp64);
    case ir::DType::f8e4m3:  // cvt ... e4m3x2/e5m2x2: sm_90 in PTX 8.0 (sm_89 needs PTX 8.1)
    case ir::DType::f8e5m2:
      return sm >= 90 || isa == "none";  // the interpreters convert in software
    default:
      return true;
  }
}

std::string Target::str() const {
  std::ostringstream os;
  os << name << "{isa=" << isa;
  if (sm) os << ", sm=" << sm << (sm_arch_specific ? "a" : "");
  os << ", subgroup=" << subgroup_size << ", threads=" << max_threads
     << ", shared=" << max_shared_bytes << ", push=" << push_constant_bytes
     << ", grid=" << max_grid[0] << "x" << max_grid[1] << "x" << max_grid[2] << ", caps=";
  bool first = true;
  for (int i = 0; i < kNumCaps; ++i) {
    if (!has(static_cast<Cap>(i))) continue;
    os << (first ? "" : "+") << kCapNames[i];
    first = false;
  }
  os << ", matrix=";
  for (size_t i = 0; i < matrix_shapes.size(); ++i) os << (i ? "|" : "") << matrix_shapes[i].str();
  if (!workgroup_shapes.empty()) {
    os << ", wgmatrix=";
    for (size_t i = 0; i < workgroup_shapes.size(); ++i)
      os << (i ? "|" : "") << workgroup_shapes[i].str();
  }
  if (loop_limit) os << ", loops=" << loop_limit;
  if (quirks) {
    os << ", quirks=";
    first = true;
    for (int i = 0; i < kNumQuirks; ++i) {
      if (!has(static_cast<Quirk>(i))) continue;
      os << (first ? "" : "+") << kQuirkNames[i];
      first = false;
    }
  }
  os << "}";
  return os.str();
}

bool Target::operator==(const Target& o) const {
  return str() == o.str();
}

std::optional<Target> profile(std::string_view name) {
  if (name == "vulkan-lavapipe") return make_lavapipe();
  if (name == "vulkan-nvidia") return make_vulkan_nvidia();
  if (name == "vulkan-nvidia-coopmat2") return make_vulkan_nvidia_coopmat2();
  if (name == "host") return make_host();
  for (int sm : {80, 86, 89, 90}) {
    std::string base = "cuda-sm_" + std::to_string(sm);
    if (name == base) return make_cuda(sm, false);
    if (sm == 90 && name == base + "a") return make_cuda(sm, true);
  }
  return std::nullopt;
}

std::vector<std::string> profile_names() {
  return {"host",       "vulkan-lavapipe", "vulkan-nvidia", "vulkan-nvidia-coopmat2",
          "cuda-sm_80", "cuda-sm_86",      "cuda-sm_89",    "cuda-sm_90",
          "cuda-sm_90a"};
}

std::optional<Target> parse_target(std::string_view text, std::string* error) {
  auto err = [&](std::string msg) -> std::optional<Target> {
    if (error) *error = std::move(msg);
    return std::nullopt;
  };
  size_t brace = text.find('{');
  if (brace == std::string_view::npos) {
    auto p = profile(text);
    if (!p) return err("unknown target profile '" + std::string(text) + "'");
    return p;
  }
  if (text.back() != '}') return err("target description must end with '}'");
  Target t;
  t.name = std::string(text.substr(0, brace));
  for (std::string_view field : split(text.substr(brace + 1, text.size() - brace - 2), ',')) {
    size_t eq = field.find('=');
    if (eq == std::string_view::npos) return err("field '" + std::string(field) + "' has no '='");
    std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    int64_t n = 0;
    if (key == "isa") {
      t.isa = std::string(value);
    } else if (key == "sm") {
      t.sm_arch_specific = value.ends_with("a");
      if (t.sm_arch_specific) value.remove_suffix(1);
      if (!parse_int(value, &n)) return err("bad sm '" + std::string(value) + "'");
      t.sm = static_cast<int>(n);
    } else if (key == "subgroup" || key == "threads" || key == "shared" || key == "push" ||
               key == "loops") {
      if (!parse_int(value, &n)) return err("bad number in '" + std::string(field) + "'");
      if (key == "loops") t.loop_limit = n;
      if (key == "subgroup") t.subgroup_size = static_cast<int>(n);
      if (key == "threads") t.max_threads = static_cast<int>(n);
      if (key == "shared") t.max_shared_bytes = n;
      if (key == "push") t.push_constant_bytes = static_cast<int>(n);
    } else if (key == "grid") {
      auto dims = split(value, 'x');
      if (dims.size() != 3) return err("grid needs three sizes");
      for (int i = 0; i < 3; ++i)
        if (!parse_int(dims[i], &t.max_grid[i])) return err("bad grid size");
    } else if (key == "caps") {
      for (std::string_view c : split(value, '+')) {
        auto cap = parse_cap(c);
        if (!cap) return err("unknown capability '" + std::string(c) + "'");
        t.set(*cap);
      }
    } else if (key == "quirks") {
      for (std::string_view q : split(value, '+')) {
        auto quirk = parse_quirk(q);
        if (!quirk) return err("unknown quirk '" + std::string(q) + "'");
        t.set(*quirk);
      }
    } else if (key == "matrix") {
      for (std::string_view m : split(value, '|')) {
        auto shape = parse_matrix_shape(m);
        if (!shape) return err("bad matrix shape '" + std::string(m) + "'");
        t.matrix_shapes.push_back(*shape);
      }
    } else if (key == "wgmatrix") {
      for (std::string_view m : split(value, '|')) {
        auto shape = parse_workgroup_shape(m);
        if (!shape) return err("bad workgroup matrix shape '" + std::string(m) + "'");
        t.workgroup_shapes.push_back(*shape);
      }
    } else {
      return err("unknown field '" + std::string(key) + "'");
    }
  }
  return t;
}

}  // namespace tessera::target
