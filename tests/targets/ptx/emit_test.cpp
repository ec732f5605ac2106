/// \file The PTX target end to end: the kernel ABI (PTX parameters laid out exactly as the packed
/// parameter block), the artifact's launch facts, the pinned PTX version, the sm targets, and
/// what the target refuses.
#include <regex>

#include "core/ir/abi.h"
#include "helpers.h"
#include "targets/ptx/fatal.h"

namespace ptx_test {
namespace {

const char* kVectorAdd = R"(
func @vector_add(%x: ptr<f32> {divisibility = 16}, %y: ptr<f32>, %out: ptr<f32>, %n: i32) attributes {stage = "simt", subgroup = 32, threads = 128} {
  %pid = program_id {axis = 0} : i32
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c32 = constant {value = 32} : i32
  %t0 = mul %sg, %c32 : i32
  %tid = add %t0, %lane : i32
  %c128 = constant {value = 128} : i32
  %base = mul %pid, %c128 : i32
  %i = add %base, %tid : i32
  %m = cmp_lt %i, %n : i1
  %px = ptr_add %x, %i : ptr<f32>
  %zero = constant {value = 0.0} : f32
  %a = global_load %px, %m, %zero {align = 4, width = 1} : f32
  %py = ptr_add %y, %i : ptr<f32>
  %b = global_load %py, %m, %zero {align = 4, width = 1} : f32
  %s = add %a, %b : f32
  %po = ptr_add %out, %i : ptr<f32>
  global_store %po, %m, %s {align = 4, width = 1}
}
)";

TEST_CASE("ptx: vector add assembles for sm_80 and sm_90 with the artifact's launch facts") {
  Emitted e = emit_both(kVectorAdd);
  CHECK(e.artifact.kernel == "vector_add");
  CHECK(e.artifact.isa == "ptx");
  CHECK(e.artifact.threads == 128);
  CHECK(e.artifact.subgroup == 32);
  CHECK(e.artifact.shared_bytes == 0);
  CHECK(e.artifact.grid_offset == -1);
  CHECK(e.artifact.param_bytes == 32);
  CHECK(e.artifact.target == profile("cuda-sm_90").str());
  CHECK(e.has(".visible .entry vector_add("));
  CHECK(e.has(".maxntid 128, 1, 1"));
  CHECK(e.has("%ctaid.x"));
  CHECK(e.count("ld.global.f32") == 2);
  CHECK(e.has("st.global.f32"));
  CHECK(e.has("add.rn.f32"));
}

TEST_CASE("ptx: the function's cluster attribute is the artifact's cluster (1 without it)") {
  // The runtime launches a kernel whose artifact says cluster > 1 as clusters (cuLaunchKernelEx).
  CHECK(tessera::ptx::emit(parse(kVectorAdd)->kernel(), profile("cuda-sm_90a")).cluster == 1);
  std::string clustered = kVectorAdd;
  const std::string attrs = "threads = 128}";
  clustered.replace(clustered.find(attrs), attrs.size(), "threads = 128, cluster = 4}");
  CHECK(tessera::ptx::emit(parse(clustered)->kernel(), profile("cuda-sm_90a")).cluster == 4);
}

TEST_CASE("ptx: a kernel name that is no PTX identifier becomes one, distinct per name") {
  using tessera::ptx::kernel_symbol;
  CHECK(kernel_symbol("vector_add") == "vector_add");  // identifiers stay as they are
  CHECK(kernel_symbol("$k_1") == "$k_1");
  const std::string t = kernel_symbol("scale<float>"), u = kernel_symbol("scale<double>");
  CHECK(t.starts_with("scale_float__t"));
  CHECK(t.size() == std::string("scale_float__t").size() + 8);
  CHECK(t != u);
  CHECK(t != kernel_symbol("scale(float)"));  // the same after replacement, not the same name
  CHECK(kernel_symbol("ns::k").starts_with("ns__k_t"));
  CHECK(kernel_symbol("1k").starts_with("_1k_t"));
  // The kernel's PTX entry is the symbol; the artifact keeps the name for messages.
  for (const char* name : {"scale<float>", "ns::vector_add", "f<float, 4>"}) {
    CAPTURE(name);
    auto m = parse(kVectorAdd);
    m->functions.front()->name = name;
    const tessera::target::Artifact a = tessera::ptx::emit(m->kernel(), profile("cuda-sm_90"));
    CHECK(a.kernel == name);
    CHECK(a.entry_symbol() == kernel_symbol(name));
    CHECK(a.ptx.find(".visible .entry " + kernel_symbol(name) + "(") != std::string::npos);
    Assembled as = assemble(a.ptx, "sm_90");
    if (as.ran) CHECK(as.ok);
  }
}

TEST_CASE("ptx: the version line is pinned to 8.0 and the target names the sm") {
  for (const char* p : {"cuda-sm_80", "cuda-sm_86", "cuda-sm_89", "cuda-sm_90", "cuda-sm_90a"}) {
    CAPTURE(p);
    Emitted e = emit(kVectorAdd, profile(p));
    CHECK(e.has(".version 8.0\n"));
    std::string sm = std::string(p).substr(5);
    CHECK(e.has(".target " + sm + "\n"));
    CHECK(e.has(".address_size 64"));
  }
}

/// The PTX parameters of the kernel, in order: (type, bytes). f16/bf16 are `.align 2 .b8 p[2]`.
std::vector<std::pair<std::string, uint32_t>> ptx_params(const std::string& ptx) {
  std::vector<std::pair<std::string, uint32_t>> out;
  std::regex param(
      R"(\.param (?:\.(u64|u32|u16|u8|f64|f32)|\.align (\d+) \.b8) \w+_param_\d+(\[\d+\])?)");
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), param), end; it != end; ++it) {
    std::string t = (*it)[1];
    if (t.empty()) {
      CHECK((*it)[3] == "[" + std::string((*it)[2]) + "]");  // .align N .b8 p[N]: N bytes
      out.push_back({"b8x" + std::string((*it)[2]), static_cast<uint32_t>(std::stoi((*it)[2]))});
    } else {
      out.push_back({t, static_cast<uint32_t>(std::stoi(t.substr(1)) / 8)});
    }
  }
  return out;
}

TEST_CASE("ptx: kernel parameters, naturally aligned, lay out exactly as the parameter block") {
  std::string text = kernel(
      "%flag: i1, %p: ptr<f32>, %h: f16, %b: i8, %x: f64, %s: i16, %bf: bf16, %q: ptr<i8>, %u: "
      "u32, %f: f32, %l: i64, %last: u8",
      R"(  %c = constant {value = 0} : i32
  %t = constant {value = 1} : i1
  %h32 = cast %h : f32
  %bf32 = cast %bf : f32
  %x32 = cast %x : f32
  %sum0 = add %h32, %bf32 : f32
  %sum1 = add %sum0, %x32 : f32
  %sum = add %sum1, %f : f32
  %z = constant {value = 0.0} : f32
  %v = where %flag, %sum, %z : f32
  global_store %p, %t, %v {align = 4, width = 1}
  %b2 = cast %s : i8
  %b3 = add %b, %b2 : i8
  %b4 = cast %u : i8
  %b5 = add %b3, %b4 : i8
  %b6 = cast %l : i8
  %b7 = add %b5, %b6 : i8
  %b8 = cast %last : i8
  %b9 = add %b7, %b8 : i8
  global_store %q, %t, %b9 {align = 1, width = 1})");
  Emitted e = emit_both(text);
  auto params = ptx_params(e.ptx);
  const tessera::ir::ParamLayout& layout = e.artifact.params;
  REQUIRE(params.size() == layout.slots.size());
  uint32_t offset = 0;  // what the driver does: each parameter aligned to its size
  for (size_t i = 0; i < params.size(); ++i) {
    CAPTURE(i);
    uint32_t size = params[i].second;
    offset = (offset + size - 1) / size * size;
    CHECK(layout.slots[i].size == size);
    CHECK(layout.slots[i].offset == offset);
    offset += size;
  }
  CHECK(params[0].second == 1);  // i1 travels as a byte
  CHECK(params[1].first == "u64");
  CHECK(e.artifact.param_bytes == layout.size);
  CHECK(layout.size == 72);  // the u8 ends at 65
}

TEST_CASE("ptx: a kernel without parameters") {
  Emitted e = emit_both(kernel("", "  barrier"));
  CHECK(e.artifact.params.slots.empty());
  CHECK(e.has(".entry k()"));
}

TEST_CASE("ptx: shared buffers form one 16-byte aligned dynamic arena") {
  Emitted e = emit_both(kernel("%p: ptr<f32>", R"(  %c0 = constant {value = 0} : i32
  %c4 = constant {value = 4} : i32
  %one = constant {value = 1.0} : f32
  %h = constant {value = 2.0} : f16
  shared_store %c0, %h {buffer = 0, width = 1}
  shared_store %c4, %one {buffer = 1, width = 1}
  barrier
  %v = shared_load %c4 {buffer = 1, width = 1} : f32
  %t = constant {value = 1} : i1
  global_store %p, %t, %v {align = 4, width = 1})",
                               "shared_0 = tile<3xf16>, shared_1 = tile<70000xf32>"));
  CHECK(e.artifact.shared_bytes == 16 + 280000);
  CHECK(e.has(".extern .shared .align 16 .b8 tessera_shared[];"));
  CHECK(e.has("st.shared.b16"));
  CHECK(e.has("[tessera_shared+32]"));  // element 4 of buffer 1 (at 16)
}

TEST_CASE("ptx: what the target refuses, with the reason") {
  auto [kind, what] = error_of([] {
    auto m = parse(kernel("", "  barrier", "", 64, 8));
    tessera::ptx::emit(m->kernel(), profile());
  });
  CHECK(kind == ErrorKind::Unsupported);
  CHECK(what == "kernel 'k' was lowered for subgroups of 8 lanes; CUDA warps have 32");

  Target old = profile("cuda-sm_80");
  old.sm = 75;
  std::tie(kind, what) = error_of([&] {
    auto m = parse(kernel("", "  barrier"));
    tessera::ptx::emit(m->kernel(), old);
  });
  CHECK(kind == ErrorKind::Unsupported);
  CHECK(what == "kernel 'k': the PTX target needs sm_80 or newer, target 'cuda-sm_80' has sm 75");

  std::tie(kind, what) = error_of([&] {
    auto m = parse(kernel("", "  barrier", "", 2048));
    tessera::ptx::emit(m->kernel(), profile());
  });
  CHECK(kind == ErrorKind::Unsupported);
  CHECK(what.find("needs 2048 threads per block") != std::string::npos);
}

TEST_CASE("ptx: the LLVM IR dump shows the kernel's calling convention and block size") {
  auto m = parse(kVectorAdd);
  std::string ir = tessera::ptx::emit_llvm_ir(m->kernel(), profile());
  CHECK(ir.find("define ptx_kernel void @vector_add(ptr addrspace(1)") != std::string::npos);
  CHECK(ir.find("!\"maxntidx\", i32 128") != std::string::npos);
  CHECK(ir.find("target triple = \"nvptx64-nvidia-cuda\"") != std::string::npos);
}

}  // namespace
}  // namespace ptx_test

namespace ptx_test {
namespace {

TEST_CASE(
    "ptx: an LLVM fatal error is an Internal error naming the kernel, and the process goes on") {
  // No input of the public API is known to reach one (kernel names are made safe by
  // kernel_symbol), so LLVM's report_fatal_error is called inside the guard emit() runs under.
  const std::string message = "Symbol name with unsupported characters";
  for (int round = 0; round < 2; ++round) {  // the handler stays installed and keeps working
    try {
      tessera::ptx::raise_llvm_fatal_error_for_test("my kernel<2>", message, false);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Internal);
      CHECK(std::string(e.what()) ==
            "ptx: LLVM fatal error while compiling kernel 'my kernel<2>': " + message);
    }
  }
  try {
    tessera::ptx::raise_llvm_fatal_error_for_test("k", "Allocation failed", true);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::OutOfMemory);
    CHECK(std::string(e.what()) ==
          "ptx: LLVM ran out of memory while compiling kernel 'k': Allocation failed");
  }
  // LLVM still compiles kernels afterwards.
  Emitted e = emit_both(kVectorAdd);
  CHECK(e.has(".visible .entry vector_add("));
}

}  // namespace
}  // namespace ptx_test
