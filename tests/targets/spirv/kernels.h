/// \file Kernel text generators for the SPIR-V tests: kernels that load their inputs from memory
/// (so the optimizer cannot fold them), apply an op and store the result.
#pragma once

#include <string>
#include <vector>

#include "core/ir/types.h"
#include "helpers.h"

namespace spirv_test {

using tessera::ir::DType;

inline std::string name(DType d) {
  return std::string(tessera::ir::dtype_name(d));
}

/// A constant of `d` with value 0 or 1, spelled as the parser wants it.
inline std::string literal(DType d, int value) {
  return tessera::ir::is_float(d) ? std::to_string(value) + ".0" : std::to_string(value);
}

inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> all = {
      DType::i1,  DType::i8,  DType::i16, DType::i32,  DType::i64, DType::u8, DType::u16,
      DType::u32, DType::u64, DType::f16, DType::bf16, DType::f32, DType::f64};
  return all;
}

/// A kernel with one input pointer per entry of `inputs` (%in0, %in1, ...) whose first element
/// is loaded into %a0, %a1, ..., then `body` (which defines %r of dtype `out`), then a store of %r
/// to %out. `%t` is the constant true.
inline std::string value_kernel(const std::vector<DType>& inputs, std::string_view body, DType out,
                                std::string_view attrs = "") {
  std::string params, text = "  %t = constant {value = 1} : i1\n";
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string k = std::to_string(i), d = name(inputs[i]);
    params += "%in" + k + ": ptr<" + d + ">, ";
    text += "  %z" + k + " = constant {value = " + literal(inputs[i], 0) + "} : " + d + "\n";
    text += "  %a" + k + " = global_load %in" + k + ", %t, %z" + k +
            " {align = " + std::to_string(tessera::ir::dtype_bytes(inputs[i])) +
            ", width = 1} : " + d + "\n";
  }
  params += "%out: ptr<" + name(out) + ">";
  text += std::string(body) + "\n";
  text += "  global_store %out, %t, %r {align = " + std::to_string(tessera::ir::dtype_bytes(out)) +
          ", width = 1}";
  return kernel(params, text, attrs);
}

}  // namespace spirv_test
