// \file Target descriptions (core/target/target.h) as values: every profile prints and parses back
// field by field, malformed text is refused with a message naming the problem, capabilities
// round-trip through their names, and the profiles answer dtype and capability questions.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "core/target/target.h"

namespace target = tessera::target;
using target::Cap;
using target::MatrixShape;
using target::Target;
using tessera::ir::DType;

namespace {

/// The first field where a and b differ, or "" (Target::operator== compares str(), which is
/// what is under test, so the fields are compared one by one).
std::string field_diff(const Target& a, const Target& b) {
  if (a.name != b.name) return "name";
  if (a.isa != b.isa) return "isa";
  if (a.sm != b.sm) return "sm";
  if (a.sm_arch_specific != b.sm_arch_specific) return "sm_arch_specific";
  if (a.subgroup_size != b.subgroup_size) return "subgroup_size";
  if (a.max_threads != b.max_threads) return "max_threads";
  if (a.max_shared_bytes != b.max_shared_bytes) return "max_shared_bytes";
  if (a.push_constant_bytes != b.push_constant_bytes) return "push_constant_bytes";
  for (int i = 0; i < 3; ++i)
    if (a.max_grid[i] != b.max_grid[i]) return "max_grid[" + std::to_string(i) + "]";
  if (a.caps != b.caps) return "caps";
  if (a.matrix_shapes != b.matrix_shapes) return "matrix_shapes";
  if (a.workgroup_shapes != b.workgroup_shapes) return "workgroup_shapes";
  if (a.loop_limit != b.loop_limit) return "loop_limit";
  if (a.quirks != b.quirks) return "quirks";
  return "";
}

std::vector<Cap> all_caps() {
  return {
#define X(name, text) Cap::name,
      TESSERA_CAPS(X)
#undef X
  };
}

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> dtypes = {
#define X(name, text, bits, is_float, is_signed) DType::name,
      TESSERA_DTYPES(X)
#undef X
  };
  return dtypes;
}

}  // namespace

TEST_CASE("target: every profile prints and parses back to an equal target") {
  const std::vector<std::string> names = target::profile_names();
  CHECK(names.size() == 9);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  for (const std::string& name : names) {
    CAPTURE(name);
    std::optional<Target> p = target::profile(name);
    REQUIRE(p);
    CHECK(p->name == name);
    const std::string text = p->str();
    std::string error;
    std::optional<Target> back = target::parse_target(text, &error);
    REQUIRE_MESSAGE(back, error);
    CHECK(field_diff(*back, *p) == "");
    CHECK(back->str() == text);
    CHECK(*back == *p);
    std::optional<Target> bare = target::parse_target(name);  // a bare profile name
    REQUIRE(bare);
    CHECK(field_diff(*bare, *p) == "");
  }
}

TEST_CASE("target: a hand-made description round-trips, including empty caps and matrix lists") {
  Target t;
  t.name = "custom";
  t.isa = "spirv1.6";
  t.sm = 75;
  t.sm_arch_specific = true;
  t.subgroup_size = 64;
  t.max_threads = 512;
  t.max_shared_bytes = 65536;
  t.push_constant_bytes = 0;
  t.max_grid[0] = 7;
  t.max_grid[1] = 8;
  t.max_grid[2] = 9;
  t.set(Cap::Wgmma);
  t.set(Cap::NanMinMax);
  t.matrix_shapes = {{16, 16, 16, DType::bf16, DType::bf16, DType::f32}};
  std::optional<Target> back = target::parse_target(t.str());
  REQUIRE(back);
  CHECK(field_diff(*back, t) == "");
  Target bare;
  bare.name = "bare";
  CHECK(bare.str().find("caps=, matrix=}") != std::string::npos);
  back = target::parse_target(bare.str());
  REQUIRE(back);
  CHECK(field_diff(*back, bare) == "");
}

TEST_CASE("target: workgroup-scope shapes print only when set and parse back") {
  const Target plain = *target::profile("vulkan-nvidia");
  CHECK(plain.workgroup_shapes.empty());
  CHECK(plain.str().find("wgmatrix") == std::string::npos);
  CHECK_FALSE(plain.has(Cap::CooperativeMatrix2));
  // The H200's driver with VK_NV_cooperative_matrix2 on: 8 KiB of the 48 reserved, and the
  // workgroup-scope granularities it reports.
  const Target t = *target::profile("vulkan-nvidia-coopmat2");
  CHECK(t.has(Cap::CooperativeMatrix2));
  CHECK(t.has(Cap::CooperativeMatrix));
  CHECK(t.max_shared_bytes == 40960);
  CHECK(t.matrix_shapes == plain.matrix_shapes);
  const std::string text = t.str();
  CHECK(text.find(", wgmatrix=16x16x16:f16*f16+f32@32|16x16x16:f16*f16+f32@64|"
                  "32x16x16:f16*f16+f32@128|32x32x16:f16*f16+f32@256|"
                  "16x16x16:bf16*bf16+f32@32|") != std::string::npos);
  CHECK(text.find("32x32x16:bf16*bf16+f32@256, quirks=") != std::string::npos);
  Target custom;
  custom.name = "custom";
  custom.workgroup_shapes = {{{32, 32, 32, DType::i8, DType::i8, DType::i32}, 256}};
  CHECK(custom.workgroup_shapes.front().str() == "32x32x32:i8*i8+i32@256");
  std::optional<Target> back = target::parse_target(custom.str());
  REQUIRE(back);
  CHECK(field_diff(*back, custom) == "");
}

TEST_CASE("target: fields left out keep their defaults and spaces around fields are ignored") {
  std::optional<Target> t = target::parse_target("x{ isa=ptx ,  subgroup=16 }");
  REQUIRE(t);
  Target want;
  want.name = "x";
  want.isa = "ptx";
  want.subgroup_size = 16;
  CHECK(field_diff(*t, want) == "");
}

TEST_CASE("target: parse_target refuses malformed text with a message naming the problem") {
  struct Bad {
    const char* text;
    const char* message;
  };
  const Bad cases[] = {
      {"host{isa=none, colour=red}", "unknown field 'colour'"},
      {"host{caps=int64+warp_magic}", "unknown capability 'warp_magic'"},
      {"host{subgroup=thirty}", "bad number in 'subgroup=thirty'"},
      {"host{threads=12x}", "bad number in 'threads=12x'"},
      {"host{shared=}", "bad number in 'shared='"},
      {"host{sm=9o}", "bad sm '9o'"},
      {"host{grid=1x2}", "grid needs three sizes"},
      {"host{grid=1x2xz}", "bad grid size"},
      {"host{isa=none", "must end with '}'"},
      {"host{", "must end with '}'"},
      {"host{isa}", "field 'isa' has no '='"},
      {"host{matrix=16x8:f16*f16+f32}", "bad matrix shape '16x8:f16*f16+f32'"},
      {"host{matrix=16x8x16:f16*f17+f32}", "bad matrix shape '16x8x16:f16*f17+f32'"},
      {"host{matrix=16x8x16}", "bad matrix shape '16x8x16'"},
      {"host{matrix=16x8x16:f16+f32}", "bad matrix shape"},
      {"host{wgmatrix=32x16x16:f16*f16+f32}", "bad workgroup matrix shape '32x16x16:f16*f16+f32'"},
      {"host{wgmatrix=32x16x16:f16*f16+f32@x}",
       "bad workgroup matrix shape '32x16x16:f16*f16+f32@x'"},
      {"host{wgmatrix=32x16x16:f16*f16+f32@0}",
       "bad workgroup matrix shape '32x16x16:f16*f16+f32@0'"},
      {"host{wgmatrix=32x16:f16*f16+f32@128}",
       "bad workgroup matrix shape '32x16:f16*f16+f32@128'"},
      {"cuda-sm_70", "unknown target profile 'cuda-sm_70'"},
      {"", "unknown target profile ''"},
  };
  for (const Bad& bad : cases) {
    CAPTURE(bad.text);
    std::string error;
    CHECK_FALSE(target::parse_target(bad.text, &error));
    CHECK_MESSAGE(error.find(bad.message) != std::string::npos, "message: " << error);
    CHECK_FALSE(target::parse_target(bad.text));  // no error string asked for
  }
}

TEST_CASE("target: cap_name and parse_cap round-trip every capability") {
  const std::vector<Cap> caps = all_caps();
  CHECK(caps.size() == 21);
  std::set<std::string> names;
  for (Cap c : caps) {
    const std::string name(target::cap_name(c));
    CAPTURE(name);
    CHECK_FALSE(name.empty());
    CHECK(names.insert(name).second);
    REQUIRE(target::parse_cap(name));
    CHECK(*target::parse_cap(name) == c);
    // set/has touch exactly this capability.
    Target t;
    t.set(c);
    for (Cap other : caps) CHECK(t.has(other) == (other == c));
    t.set(c, false);
    CHECK(t.caps == 0);
  }
  CHECK(target::cap_name(Cap::BufferDeviceAddress) == "bda");
  CHECK(target::cap_name(Cap::SubgroupShuffle) == "subgroup_shuffle");
  CHECK(target::cap_name(Cap::CooperativeMatrix) == "coopmat");
  CHECK_FALSE(target::parse_cap(""));
  CHECK_FALSE(target::parse_cap("Int64"));
  CHECK_FALSE(target::parse_cap("int64 "));
}

TEST_CASE("target: supports_dtype follows the capabilities, and bf16 is always storable") {
  auto expected = [](const Target& t, DType d) {
    switch (d) {
      case DType::i64:
      case DType::u64:
        return t.has(Cap::Int64);
      case DType::i8:
      case DType::u8:
        return t.has(Cap::Int8);
      case DType::i16:
      case DType::u16:
        return t.has(Cap::Int16);
      case DType::f16:
        return t.has(Cap::Fp16);
      case DType::f64:
        return t.has(Cap::Fp64);
      case DType::f8e4m3:  // PTX 8.0 converts fp8 from sm_90; SPIR-V has no fp8
      case DType::f8e5m2:
        return t.sm >= 90 || t.isa == "none";  // the interpreters convert in software
      default:
        return true;  // i1, i32, u32, f32, and bf16 (computed in f32 where not native)
    }
  };
  for (const std::string& name : target::profile_names()) {
    const Target t = *target::profile(name);
    for (DType d : all_dtypes()) {
      CAPTURE(name);
      CAPTURE(tessera::ir::dtype_name(d));
      CHECK(t.supports_dtype(d) == expected(t, d));
    }
  }
  const Target lavapipe = *target::profile("vulkan-lavapipe");
  CHECK(lavapipe.supports_dtype(DType::bf16));
  CHECK(lavapipe.has(Cap::Fp64));
  CHECK(lavapipe.supports_dtype(DType::f64));
  Target none;  // no capabilities at all
  CHECK_FALSE(none.supports_dtype(DType::f64));
  CHECK_FALSE(none.supports_dtype(DType::f16));
  CHECK_FALSE(none.supports_dtype(DType::i64));
  CHECK_FALSE(none.supports_dtype(DType::u8));
  CHECK_FALSE(none.supports_dtype(DType::i16));
  CHECK(none.supports_dtype(DType::bf16));
  CHECK(none.supports_dtype(DType::i32));
  CHECK(none.supports_dtype(DType::f32));
  CHECK(none.supports_dtype(DType::i1));
  CHECK(none.supports_dtype(DType::f8e4m3));  // the interpreters' target converts in software
  CHECK_FALSE(lavapipe.supports_dtype(DType::f8e4m3));
  CHECK_FALSE(lavapipe.supports_dtype(DType::f8e5m2));
  CHECK_FALSE(target::profile("cuda-sm_80")->supports_dtype(DType::f8e4m3));
  CHECK_FALSE(target::profile("cuda-sm_89")->supports_dtype(DType::f8e4m3));
  CHECK(target::profile("cuda-sm_90a")->supports_dtype(DType::f8e5m2));
  none.set(Cap::Fp64);
  CHECK(none.supports_dtype(DType::f64));
}

TEST_CASE("target: the profiles' tensor-core capabilities") {
  const Target sm90 = *target::profile("cuda-sm_90"), sm90a = *target::profile("cuda-sm_90a");
  CHECK(sm90a.has(Cap::Wgmma));
  CHECK_FALSE(sm90.has(Cap::Wgmma));
  CHECK(sm90a.sm == 90);
  CHECK(sm90a.sm_arch_specific);
  CHECK(sm90.sm == 90);
  CHECK_FALSE(sm90.sm_arch_specific);
  CHECK(sm90a.str().find(", sm=90a,") != std::string::npos);
  for (const char* cuda : {"cuda-sm_80", "cuda-sm_86", "cuda-sm_89", "cuda-sm_90", "cuda-sm_90a"}) {
    CAPTURE(cuda);
    const Target t = *target::profile(cuda);
    CHECK(t.has(Cap::MmaSync));
    CHECK(t.has(Cap::CpAsync));
    CHECK(t.subgroup_size == 32);
    CHECK(t.matrix_shapes.front() == MatrixShape{16, 8, 16, DType::f16, DType::f16, DType::f32});
  }
  CHECK_FALSE(target::profile("cuda-sm_80")->has(Cap::Wgmma));
  CHECK(target::profile("vulkan-nvidia")->has(Cap::CooperativeMatrix));
  const Target host = *target::profile("host");
  for (Cap c : {Cap::MmaSync, Cap::CpAsync, Cap::Wgmma, Cap::CooperativeMatrix})
    CHECK_FALSE(host.has(c));
  CHECK(host.matrix_shapes.empty());
  CHECK_FALSE(target::profile("cuda-sm_86a"));
  CHECK_FALSE(target::profile("vulkan"));
}

TEST_CASE("target: dependent launches (griddepcontrol) on sm_90 and newer only") {
  for (const char* cuda : {"cuda-sm_90", "cuda-sm_90a"})
    CHECK(target::profile(cuda)->has(Cap::DependentLaunch));
  for (const char* other :
       {"cuda-sm_80", "cuda-sm_86", "cuda-sm_89", "vulkan-nvidia", "vulkan-lavapipe", "host"}) {
    CAPTURE(other);
    CHECK_FALSE(target::profile(other)->has(Cap::DependentLaunch));
  }
}

TEST_CASE("target: MatrixShape prints MxNxK:a*b+c and parses back in a description") {
  CHECK(MatrixShape{16, 8, 16, DType::f16, DType::f16, DType::f32}.str() == "16x8x16:f16*f16+f32");
  CHECK(MatrixShape{16, 16, 32, DType::i8, DType::i8, DType::i32}.str() == "16x16x32:i8*i8+i32");
  CHECK(MatrixShape{}.str() == "0x0x0:f16*f16+f32");
  std::optional<Target> t =
      target::parse_target("m{matrix=16x8x16:bf16*bf16+f32|32x8x4:f32*f16+f64}");
  REQUIRE(t);
  REQUIRE(t->matrix_shapes.size() == 2);
  CHECK(t->matrix_shapes[0] == MatrixShape{16, 8, 16, DType::bf16, DType::bf16, DType::f32});
  CHECK(t->matrix_shapes[1] == MatrixShape{32, 8, 4, DType::f32, DType::f16, DType::f64});
}

TEST_CASE("target: vulkan-lavapipe's text form, field by field") {
  CHECK(target::profile("vulkan-lavapipe")->str() ==
        "vulkan-lavapipe{isa=spirv1.6, subgroup=8, threads=256, shared=32768, push=128, "
        "grid=65535x65535x65535, caps=int64+int8+int16+fp16+fp64+subgroup_shuffle+"
        "float_atomic_add+int64_atomics+bda+inf_nan_preserve, matrix=, loops=65535, "
        "quirks=special_constant_folding+wide_compare_folding+wide_round_unrounded}");
}
