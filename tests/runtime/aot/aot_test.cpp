// \file Kernels compiled ahead of time (runtime/aot.h): the embedded entries' encoding and its
// checksum, the choice of the entry that serves a launch (constants, facts, targets), the errors
// of a launch that was not built and of a damaged entry, and the JIT fallback. The entries are
// built here as tessera_add_kernels' generator builds them (examples/aot runs the whole route).
#include <doctest/doctest.h>

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/printer.h"
#include "core/target/target.h"
#include "runtime/aot.h"
#include "runtime/artifact_cache.h"
#include "runtime/tessera.h"
#include "tests/support/errors.h"

namespace {

namespace tl = tessera::tl;
using tessera::AotKernel;
using tessera::ErrorKind;
using tessera::ir::DType;
using tessera::test::error_of;

constexpr int kBlock = 128;

void shift_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, int SHIFT) {
  auto offs = tl::program_id(0) * kBlock + tl::arange(0, kBlock);
  tl::store(out + offs, tl::load(x + offs, offs < n) + static_cast<float>(SHIFT), offs < n);
}

/// The same signature, another result: entries built from it show which entry a launch took.
void scale_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, int SHIFT) {
  auto offs = tl::program_id(0) * kBlock + tl::arange(0, kBlock);
  tl::store(out + offs, tl::load(x + offs, offs < n) * static_cast<float>(SHIFT), offs < n);
}

const auto shift_jit = TESSERA_KERNEL(shift_kernel, x, out, n, SHIFT);
const auto scale_jit = TESSERA_KERNEL(scale_kernel, x, out, n, SHIFT);

/// The specialization x, out: aligned f32 buffers; n: i32 (divisible by 16 if `div16`); SHIFT.
std::vector<tl::ArgSpec> specs(int shift, bool div16 = false) {
  std::vector<tl::ArgSpec> s(4);
  s[0].dtype = s[1].dtype = DType::f32;
  s[0].divisible_by_16 = s[1].divisible_by_16 = true;
  s[2].dtype = DType::i32;
  s[2].divisible_by_16 = div16;
  s[3].value.kind = tl::ConstValue::Kind::Int;
  s[3].value.i = shift;
  s[3].value.f = shift;
  return s;
}

/// Entries built as the generator builds them, kept alive for the kernels that point at them.
struct Entries {
  std::deque<std::string> bytes, labels;
  std::vector<tessera::aot::Entry> list;
  /// An entry of `jit` for `profile` ("host": the traced IR; else compiled).
  void add(const tessera::KernelBase& jit, const std::vector<tl::ArgSpec>& s, const char* profile,
           std::string label) {
    tessera::aot::Decoded d;
    d.specs = s;
    std::optional<tessera::target::Target> t = tessera::target::profile(profile);
    REQUIRE(t.has_value());
    d.target = t->str();
    auto traced = jit.traced_for_specs(s);
    d.is_ir = t->isa == "none";
    d.payload =
        d.is_ir ? tessera::ir::print(*traced)
                : tessera::rt::serialize_artifact(tessera::rt::jit_compile(*traced, *t, d.options));
    bytes.push_back(tessera::aot::encode_entry(d));
    labels.push_back(std::move(label));
  }
  /// The table (after every add).
  std::span<const tessera::aot::Entry> table() {
    list.clear();
    for (size_t i = 0; i < bytes.size(); ++i)
      list.push_back({"host", labels[i].c_str(),
                      reinterpret_cast<const unsigned char*>(bytes[i].data()), bytes[i].size()});
    return list;
  }
};

AotKernel make(Entries& e, const tessera::KernelBase* fallback = nullptr) {
  return AotKernel("shift", "x, out, n, SHIFT", shift_jit.params(), e.table(), fallback);
}

/// Runs `k` with SHIFT = `shift` over n elements 0, 1, ... on `dev`; the output.
std::vector<float> run(const AotKernel& k, const tessera::Device& dev, int n, int shift) {
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>(i);
  auto x = dev.upload(h);
  auto out = dev.alloc<float>(n);
  out.fill(-1.0f);
  k[{tessera::cdiv(n, kBlock)}](x, out, n, shift);
  return out.download();
}

bool all(const std::vector<float>& v, float (*expect)(int)) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != expect(static_cast<int>(i))) return false;
  return true;
}

}  // namespace

TEST_CASE("aot: an entry reads back whole, and a change to any one of its bytes is refused") {
  Entries e;
  e.add(shift_jit, specs(3, true), "host", "SHIFT=3");
  const std::string& bytes = e.bytes.front();
  std::optional<tessera::aot::Decoded> d = tessera::aot::decode_entry(bytes);
  REQUIRE(d.has_value());
  CHECK(d->is_ir);
  CHECK(d->specs == specs(3, true));
  CHECK(d->payload == tessera::ir::print(*shift_jit.traced_for_specs(specs(3, true))));
  int accepted = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x20);
    accepted += tessera::aot::decode_entry(damaged).has_value();
  }
  CHECK(accepted == 0);
  CHECK_FALSE(tessera::aot::decode_entry(bytes.substr(0, bytes.size() - 1)).has_value());
  CHECK_FALSE(tessera::aot::decode_entry(bytes + "x").has_value());
}

TEST_CASE(
    "aot: a launch takes the built entry of its constant, the most specialized that applies") {
  Entries e;
  e.add(shift_jit, specs(3), "host", "SHIFT=3");
  e.add(scale_jit, specs(3, true), "host", "SHIFT=3 n=div16");  // told apart by its results
  e.add(shift_jit, specs(5), "host", "SHIFT=5");
  const AotKernel k = make(e);
  auto dev = tessera::Device::open("host");
  CHECK(all(run(k, dev, 200, 3), [](int i) { return i + 3.0f; }));  // 200 % 16 != 0
  CHECK(all(run(k, dev, 208, 3), [](int i) { return i * 3.0f; }));  // 208 % 16 == 0: div16 entry
  CHECK(all(run(k, dev, 208, 5), [](int i) { return i + 5.0f; }));
  CHECK(k.built().size() == 3);
}

TEST_CASE("aot: a launch that was not built names the kernel, the launch and what was built") {
  Entries e;
  e.add(shift_jit, specs(3), "host", "SHIFT=3");
  e.add(shift_jit, specs(5, true), "host", "SHIFT=5 n=div16");
  const AotKernel k = make(e);
  auto dev = tessera::Device::open("host");
  std::string message = error_of([&] { run(k, dev, 100, 4); }, ErrorKind::Unsupported);
  CHECK(message.find("kernel 'shift' was not built ahead of time") != std::string::npos);
  CHECK(message.find("SHIFT=4") != std::string::npos);
  CHECK(message.find("x=f32 out=f32 n=i32 SHIFT=3") != std::string::npos);
  CHECK(message.find("n=i32:div16 SHIFT=5") != std::string::npos);
  // The entry for SHIFT=5 assumed n % 16 == 0: n = 100 is refused, never run with it.
  message = error_of([&] { run(k, dev, 100, 5); }, ErrorKind::Unsupported);
  CHECK(message.find("n=i32 SHIFT=5") != std::string::npos);
  // A wrong argument is the JIT kernel's own error.
  auto x = dev.alloc<float>(4);
  message = error_of([&] { k[{1}](x, x, 1.5, 3); }, ErrorKind::Argument);
  CHECK(message.find("'n'") != std::string::npos);
}

TEST_CASE("aot: a damaged embedded entry is an error at launch, never a result") {
  Entries e;
  e.add(shift_jit, specs(3), "host", "SHIFT=3");
  e.bytes.front()[e.bytes.front().size() / 2] ^= 1;
  const AotKernel k = make(e);
  auto dev = tessera::Device::open("host");
  const std::string message = error_of([&] { run(k, dev, 100, 3); }, ErrorKind::Runtime);
  CHECK(message.find("kernel 'shift': the embedded artifact for host (SHIFT=3) is damaged") !=
        std::string::npos);
}

TEST_CASE("aot: with a JIT fallback, a launch that was not built is compiled") {
  Entries e;
  e.add(scale_jit, specs(3), "host", "SHIFT=3");
  const AotKernel k = make(e, &shift_jit);
  auto dev = tessera::Device::open("host");
  CHECK(all(run(k, dev, 100, 3), [](int i) { return i * 3.0f; }));  // built (scale)
  CHECK(all(run(k, dev, 100, 7), [](int i) { return i + 7.0f; }));  // the fallback (shift)
}

TEST_CASE("aot: Vulkan runs the SPIR-V built for its profile and refuses code built for others") {
  std::optional<tessera::Device> dev;
  for (const auto& info : tessera::Device::enumerate().devices)
    if (info.kind == "vulkan" && info.description.find("llvmpipe") != std::string::npos)
      dev = tessera::Device::open(info.name);
  if (!dev) {
    MESSAGE("SKIP: no lavapipe Vulkan device (vulkan-lavapipe is the profile built here)");
    return;
  }
  Entries others;
  others.add(shift_jit, specs(3), "host", "SHIFT=3");
  others.add(shift_jit, specs(3), "cuda-sm_80", "SHIFT=3");
  others.add(shift_jit, specs(3), "vulkan-nvidia", "SHIFT=3");  // subgroup 32, NVIDIA's quirks
  const AotKernel refused = make(others);
  const std::string message = error_of([&] { run(refused, *dev, 100, 3); }, ErrorKind::Unsupported);
  CHECK(message.find("was not built ahead of time for this launch on " + dev->info().name) !=
        std::string::npos);
  Entries built;
  built.add(shift_jit, specs(3), "vulkan-lavapipe", "SHIFT=3");
  const AotKernel k = make(built);
  CHECK(all(run(k, *dev, 300, 3), [](int i) { return i + 3.0f; }));
}

TEST_CASE("aot: TMA tensor maps survive an entry, and a device that cannot encode them refuses") {
  // The JIT names the artifact's parameters (the runtime's tensor-map errors use them); a map
  // added by hand to a lavapipe artifact reads back from the entry and is refused by name.
  std::optional<tessera::target::Target> t = tessera::target::profile("vulkan-lavapipe");
  REQUIRE(t.has_value());
  tessera::aot::Decoded d;
  d.specs = specs(3);
  d.target = t->str();
  tessera::target::Artifact a =
      tessera::rt::jit_compile(*shift_jit.traced_for_specs(d.specs), *t, d.options);
  CHECK(a.param_names == std::vector<std::string>{"x", "out", "n"});
  a.tensor_maps = {{.base_param = 0,
                    .dtype = DType::f32,
                    .dims = {{2, 0}},
                    .strides = {{-1, 1}},
                    .box = {128},
                    .swizzle = 0}};
  d.payload = tessera::rt::serialize_artifact(a);
  const std::string bytes = tessera::aot::encode_entry(d);
  std::optional<tessera::aot::Decoded> back = tessera::aot::decode_entry(bytes);
  REQUIRE(back.has_value());
  std::optional<tessera::target::Artifact> b = tessera::rt::deserialize_artifact(back->payload);
  REQUIRE(b.has_value());
  CHECK(b->tensor_maps == a.tensor_maps);
  CHECK(b->param_names == a.param_names);

  std::optional<tessera::Device> dev;
  for (const auto& info : tessera::Device::enumerate().devices)
    if (info.kind == "vulkan" && info.description.find("llvmpipe") != std::string::npos)
      dev = tessera::Device::open(info.name);
  if (!dev) {
    MESSAGE("SKIP: no lavapipe Vulkan device to refuse the tensor maps");
    return;
  }
  Entries e;
  e.bytes.push_back(bytes);
  e.labels.push_back("SHIFT=3 (with a tensor map)");
  const AotKernel k = make(e);
  const std::string message = error_of([&] { run(k, *dev, 100, 3); }, ErrorKind::Unsupported);
  CHECK(message.find("kernel 'shift_kernel' reads 1 TMA tensor map(s), which only CUDA devices "
                     "encode at launch; " +
                     dev->info().name + " (") == 0);
}

TEST_CASE(
    "aot: a clustered sm_90a artifact keeps its cluster and dependent launch in an entry, sm_80 neither") {
  // The lowering marks kernels of targets with clusters (sm_90+) only; the entry holds the option
  // and the artifact the attribute, which the CUDA runtime launches with (cuLaunchKernelEx).
  for (const char* profile : {"cuda-sm_90a", "cuda-sm_80"}) {
    CAPTURE(profile);
    std::optional<tessera::target::Target> t = tessera::target::profile(profile);
    REQUIRE(t.has_value());
    tessera::aot::Decoded d;
    d.specs = specs(3);
    d.target = t->str();
    d.options.cluster = 2;
    const tessera::target::Artifact a =
        tessera::rt::jit_compile(*shift_jit.traced_for_specs(d.specs), *t, d.options);
    const uint32_t want = t->sm >= 90 ? 2 : 1;
    CHECK(a.cluster == want);
    // sm_90+ kernels wait for their stream's previous grid at entry (griddepcontrol), so they
    // may launch overlapping it; sm_80 has no such instruction.
    CHECK(a.dependent_launch == (t->sm >= 90));
    CHECK((a.ptx.find("griddepcontrol.wait;") != std::string::npos) == (t->sm >= 90));
    d.payload = tessera::rt::serialize_artifact(a);
    std::optional<tessera::aot::Decoded> back =
        tessera::aot::decode_entry(tessera::aot::encode_entry(d));
    REQUIRE(back.has_value());
    CHECK(back->options.cluster == 2);
    std::optional<tessera::target::Artifact> b = tessera::rt::deserialize_artifact(back->payload);
    REQUIRE(b.has_value());
    CHECK(b->cluster == want);
    CHECK(b->dependent_launch == a.dependent_launch);
  }
}

TEST_CASE("aot: code built for sm_90a runs where the driver has no dependent launches") {
  // The wait at a kernel's entry is a no-op in plain stream order, so a device whose target
  // lost `dependent_launch` (a driver before CUDA 12.3, TESSERA_DEPENDENT_LAUNCH=0) still runs
  // what was built for the profile; a capability the code does use is still required.
  using tessera::target::Cap;
  const tessera::target::Target built = *tessera::target::profile("cuda-sm_90a");
  REQUIRE(built.has(Cap::DependentLaunch));
  tessera::target::Target device = built;
  CHECK(tessera::aot::target_runs_on(built, device));
  device.set(Cap::DependentLaunch, false);
  CHECK(tessera::aot::target_runs_on(built, device));
  device.set(Cap::Tma, false);
  CHECK_FALSE(tessera::aot::target_runs_on(built, device));
  CHECK_FALSE(tessera::aot::target_runs_on(built, *tessera::target::profile("cuda-sm_80")));
}

TEST_CASE("aot: an entry's options keep their layout, each integer then one word of flags") {
  // The layout entries had before kOptionFields: num_warps, num_stages, maxnreg as u64, then
  // debug in bit 0 and fp_fusion inverted in bit 1 (entries already built must still decode);
  // coopmat2, added later, in bit 2 (clear in the old entries, so they decode with it off);
  // grouped_launch, later still, inverted in bit 3 (clear in the old entries: they decode on);
  // cluster, an integer after maxnreg (the magic went from TSRAOT1 to TSRAOT2 with it).
  auto u64 = [](uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); };
  for (int flags = 0; flags < 16; ++flags) {
    tessera::aot::Decoded d;
    d.target = "t";
    d.is_ir = true;
    d.options = {.num_warps = 8,
                 .num_stages = 2,
                 .maxnreg = 64,
                 .debug = (flags & 1) != 0,
                 .fp_fusion = (flags & 2) != 0,
                 .coopmat2 = (flags & 4) != 0,
                 .grouped_launch = (flags & 8) != 0};
    d.payload = "p";
    const std::string bytes = tessera::aot::encode_entry(d);
    const std::string expected =
        u64(1) + "t" + u64(1) + u64(8) + u64(2) + u64(64) + u64(1) +
        u64((d.options.debug ? 1 : 0) | (d.options.fp_fusion ? 0 : 2) |
            (d.options.coopmat2 ? 4 : 0) | (d.options.grouped_launch ? 0 : 8));
    REQUIRE(bytes.size() > 32 + expected.size());
    CHECK(bytes.substr(32, expected.size()) == expected);  // after the magic and the checksum
    const std::optional<tessera::aot::Decoded> back = tessera::aot::decode_entry(bytes);
    REQUIRE(back.has_value());
    CHECK(back->options == d.options);
  }
}
