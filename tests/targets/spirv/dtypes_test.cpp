/// \file Every dtype through every op family: each kernel validates unoptimized and optimized on
/// both Vulkan profiles (lavapipe: subgroup 8, float atomic min/max; NVIDIA: subgroup 32, fp64).
#include "core/ir/op_table.h"
#include "kernels.h"

namespace spirv_test {
namespace {

using tessera::ir::is_float;
using tessera::ir::is_int;

/// Emits `text` (a kernel for subgroup 8) for lavapipe and, re-targeted to subgroup 32, NVIDIA.
void emit_everywhere(const std::string& text) {
  CAPTURE(text);
  emit_both(text, profile("vulkan-lavapipe"));
  std::string nvidia = text;
  size_t at = nvidia.find("subgroup = 8");
  REQUIRE(at != std::string::npos);
  nvidia.replace(at, 12, "subgroup = 32");
  emit_both(nvidia, profile("vulkan-nvidia"));
}

TEST_CASE("spirv: cast between every pair of dtypes") {
  for (DType from : all_dtypes())
    for (DType to : all_dtypes())
      emit_everywhere(value_kernel({from}, "  %r = cast %a0 : " + name(to), to));
}

TEST_CASE("spirv: bitcast between every pair of dtypes of one width") {
  for (DType from : all_dtypes())
    for (DType to : all_dtypes())
      if (tessera::ir::dtype_bits(from) == tessera::ir::dtype_bits(to))
        emit_everywhere(value_kernel({from}, "  %r = bitcast %a0 : " + name(to), to));
}

TEST_CASE("spirv: arithmetic, bitwise, compare and min/max ops on every dtype") {
  const char* any[] = {"add", "sub", "mul", "div", "rem", "min", "max"};
  const char* ints[] = {"and", "or", "xor", "shl", "shr"};
  const char* compares[] = {"cmp_eq", "cmp_ne", "cmp_lt", "cmp_le", "cmp_gt", "cmp_ge"};
  for (DType d : all_dtypes()) {
    std::string t = name(d);
    for (const char* op : any)
      emit_everywhere(value_kernel({d, d}, "  %r = " + std::string(op) + " %a0, %a1 : " + t, d));
    if (is_float(d)) {
      emit_everywhere(value_kernel({d, d}, "  %r = max %a0, %a1 {nan = \"ignore\"} : " + t, d));
      emit_everywhere(value_kernel({d, d, d}, "  %r = fma %a0, %a1, %a2 : " + t, d));
    } else {
      for (const char* op : ints)
        emit_everywhere(value_kernel({d, d}, "  %r = " + std::string(op) + " %a0, %a1 : " + t, d));
      emit_everywhere(value_kernel({d}, "  %r = not %a0 : " + t, d));
      // A constant divisor or shift count skips the guards.
      emit_everywhere(value_kernel(
          {d}, "  %c = constant {value = 1} : " + t + "\n  %r = div %a0, %c : " + t, d));
    }
    for (const char* op : compares)
      emit_everywhere(
          value_kernel({d, d}, "  %r = " + std::string(op) + " %a0, %a1 : i1", DType::i1));
    emit_everywhere(value_kernel({d}, "  %r = neg %a0 : " + t, d));
    emit_everywhere(value_kernel({d}, "  %r = abs %a0 : " + t, d));
    emit_everywhere(value_kernel({DType::i1, d, d}, "  %r = where %a0, %a1, %a2 : " + t, d));
  }
}

TEST_CASE("spirv: every math function on f16, bf16, f32 and f64") {
  using tessera::ir::kinds_where, tessera::ir::op_name;  // every math row of ops.def
  for (DType d : {DType::f16, DType::bf16, DType::f32, DType::f64})
    for (tessera::ir::OpKind k : kinds_where(tessera::ir::is_unary_math))
      emit_everywhere(
          value_kernel({d}, "  %r = " + std::string(op_name(k)) + " %a0 : " + name(d), d));
  for (DType d : {DType::f16, DType::bf16, DType::f32, DType::f64})
    for (tessera::ir::OpKind k : kinds_where(tessera::ir::is_binary_math))
      emit_everywhere(
          value_kernel({d, d}, "  %r = " + std::string(op_name(k)) + " %a0, %a1 : " + name(d), d));
}

TEST_CASE("spirv: global loads and stores of every dtype, width and alignment") {
  for (DType d : all_dtypes()) {
    int size = tessera::ir::dtype_bytes(d);
    for (int width : {1, 2, 4, 8, 16})
      for (int align : {1, 2, 4, 16, 32}) {
        if (align < size || (align == 32 && width < 16)) continue;
        for (bool predicated : {false, true}) {
          if (predicated && align != size) continue;  // predication does not depend on the plan
          std::string dt = name(d), results, others, types;
          for (int i = 0; i < width; ++i) {
            results += (i ? ", %v" : "%v") + std::to_string(i);
            others += ", %z";
            types += (i ? ", " : "") + dt;
          }
          std::string attrs =
              " {align = " + std::to_string(align) + ", width = " + std::to_string(width) + "}";
          std::string body =
              "  %t = constant {value = 1} : i1\n  %z = constant {value = " + literal(d, 0) +
              "} : " + dt + "\n  %lane = lane_id : i32\n" + "  %m = cmp_lt %lane, %n : i1\n";
          std::string pred = predicated ? "%m" : "%t";
          body += "  " + results + " = global_load %src, " + pred + others + attrs + " : " + types;
          body += "\n  global_store %dst, " + pred + ", " + results + attrs;
          emit_everywhere(kernel("%src: ptr<" + dt + ">, %dst: ptr<" + dt + ">, %n: i32", body));
        }
      }
  }
}

TEST_CASE("spirv: shared buffers of every dtype, scalar and vector accesses") {
  for (DType d : all_dtypes()) {
    std::string dt = name(d);
    for (int width : {1, 2, 4, 8}) {
      std::string results, types;
      for (int i = 0; i < width; ++i) {
        results += (i ? ", %v" : "%v") + std::to_string(i);
        types += (i ? ", " : "") + dt;
      }
      std::string body =
          "  %lane = lane_id : i32\n  %w = constant {value = " + std::to_string(width) +
          "} : i32\n  %i = mul %lane, %w : i32\n" + "  " + results +
          " = shared_load %i {buffer = 0, width = " + std::to_string(width) + "} : " + types +
          "\n  barrier\n" + "  shared_store %i, " + results +
          " {buffer = 1, width = " + std::to_string(width) + "}";
      std::string attrs = "shared_0 = tile<64x" + dt + ">, shared_1 = tile<64x" + dt + ">";
      Emitted e = emit(kernel("", body, attrs));
      if (tessera::ir::dtype_bytes(d) == 4 && width >= 2)
        CHECK(e.has(width >= 4 ? "OpTypeVector %" : "OpTypeVector"));
      emit_everywhere(kernel("", body, attrs));
    }
  }
}

TEST_CASE("spirv: shuffles of every dtype and pointers, in every mode") {
  for (const char* mode : {"xor", "idx", "up", "down"}) {
    for (DType d : all_dtypes())
      emit_everywhere(
          value_kernel({d},
                       "  %n = constant {value = 1} : i32\n  %r = shuffle %a0, %n {mode = \"" +
                           std::string(mode) + "\"} : " + name(d),
                       d));
    std::string body = "  %lane = lane_id : i32\n  %r = shuffle %p, %lane {mode = \"" +
                       std::string(mode) + "\"} : ptr<f32>\n  %t = constant {value = 1} : i1\n" +
                       "  %one = constant {value = 1.0} : f32\n" +
                       "  global_store %r, %t, %one {align = 4, width = 1}";
    emit_everywhere(kernel("%p: ptr<f32>", body));
  }
}

TEST_CASE("spirv: atomics of every dtype and op, masked and unmasked") {
  const char* ops[] = {"add", "max", "min", "and", "or", "xor", "xchg"};
  for (DType d : all_dtypes()) {
    for (const char* op : ops) {
      std::string o = op;
      if (is_float(d) && (o == "and" || o == "or" || o == "xor")) continue;
      // Every order and scope for one op; they do not change the instruction selection.
      std::vector<std::pair<const char*, const char*>> orders = {{"acq_rel", "gpu"}};
      if (o == "add")
        orders = {{"relaxed", "cta"}, {"acquire", "gpu"}, {"release", "sys"}, {"acq_rel", "gpu"}};
      for (auto [sem, scope] : orders) {
        std::string attrs =
            " {op = \"" + o + "\", scope = \"" + scope + "\", sem = \"" + sem + "\"} : " + name(d);
        emit_everywhere(value_kernel({d}, "  %r = atomic_rmw %in0, %a0" + attrs, d));
      }
      std::string masked = "  %lane = lane_id : i32\n  %c4 = constant {value = 4} : i32\n" +
                           std::string("  %m = cmp_lt %lane, %c4 : i1\n") +
                           "  %r = atomic_rmw %in0, %a0, %m {op = \"" + o + "\"} : " + name(d);
      emit_everywhere(value_kernel({d}, masked, d));
    }
    emit_everywhere(value_kernel(
        {d, d}, "  %r = atomic_cas %in0, %a0, %a1 {sem = \"acq_rel\"} : " + name(d), d));
  }
}

}  // namespace
}  // namespace spirv_test
