/// \file The tile IR's types: scalar dtypes, pointers to them, and tiles of static
/// power-of-two shapes whose elements are scalars or pointers.
///
///   i32                      a scalar
///   ptr<f32>                 a global-memory pointer to f32
///   tile<64x32xf16>          a 64x32 tile of f16
///   tile<128xptr<f32>>       a tile of pointers (what `x + offs` makes)
///   coopmat_acc<16x16xf32>   (SIMT IR only) a cooperative matrix owned by one subgroup: an
///                            opaque value whose elements are spread over the subgroup's lanes
///                            in a way only the target knows (core/ir/simt.h); _a, _b and _acc
///                            name its use (a product's left or right operand, or accumulator)
///   wgmat_acc<64x64xf32>     (SIMT IR only) the same owned by the whole workgroup (workgroup
///                            scope, VK_NV_cooperative_matrix2): wgmat_a, wgmat_b, wgmat_acc
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::ir {

/// One row per dtype: enum name, text, bit width, is float, is signed (for integers).
/// The fp8 rows (OCP e4m3fn and e5m2, core/support/float8.h) are storage and dot-operand
/// formats: the verifier allows them in memory, shape, select, cast and dot ops only.
#define TESSERA_DTYPES(X)            \
  X(i1, "i1", 1, false, false)       \
  X(i8, "i8", 8, false, true)        \
  X(i16, "i16", 16, false, true)     \
  X(i32, "i32", 32, false, true)     \
  X(i64, "i64", 64, false, true)     \
  X(u8, "u8", 8, false, false)       \
  X(u16, "u16", 16, false, false)    \
  X(u32, "u32", 32, false, false)    \
  X(u64, "u64", 64, false, false)    \
  X(f16, "f16", 16, true, true)      \
  X(bf16, "bf16", 16, true, true)    \
  X(f32, "f32", 32, true, true)      \
  X(f64, "f64", 64, true, true)      \
  X(f8e4m3, "f8e4m3", 8, true, true) \
  X(f8e5m2, "f8e5m2", 8, true, true)

enum class DType : uint8_t {
#define X(name, text, bits, is_float, is_signed) name,
  TESSERA_DTYPES(X)
#undef X
};
constexpr int kNumDTypes = 15;

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view text);
int dtype_bits(DType t);
/// Bytes one element occupies in memory (i1 is stored as one byte).
int dtype_bytes(DType t);
bool is_float(DType t);
bool is_int(DType t);  ///< i1 counts as an integer
bool is_signed_int(DType t);
bool is_unsigned_int(DType t);
/// f8e4m3 or f8e5m2: 8-bit floats that are only stored, moved, converted and multiplied in dot.
bool is_fp8(DType t);

/// Tile shapes: each dimension a power of two (a size-1 dimension is allowed).
using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& s);  ///< "[64, 32]"
int64_t num_elements(const Shape& s);

/// What a cooperative matrix is for (None: the type is not one).
enum class MatUse : uint8_t { None, A, B, Acc };

/// A value's type: a scalar, a pointer, a tile of either, or a cooperative matrix.
struct Type {
  DType dtype = DType::i32;
  bool is_ptr = false;        ///< a pointer to `dtype` in global memory
  Shape shape;                ///< empty for scalars and pointers; non-empty for tiles and matrices
  MatUse mat = MatUse::None;  ///< a cooperative matrix of `shape` [rows, cols] (not a tile)
  bool workgroup = false;     ///< a matrix owned by the whole workgroup, not one subgroup

  static Type scalar(DType t) { return Type{t, false, {}}; }
  static Type pointer(DType pointee) { return Type{pointee, true, {}}; }
  static Type tile(DType t, Shape shape) { return Type{t, false, std::move(shape)}; }
  static Type ptr_tile(DType pointee, Shape shape) { return Type{pointee, true, std::move(shape)}; }
  static Type coopmat(DType t, int64_t rows, int64_t cols, MatUse use, bool workgroup = false) {
    return Type{t, false, {rows, cols}, use, workgroup};
  }

  bool is_tile() const { return !shape.empty() && mat == MatUse::None; }
  bool is_mat() const { return mat != MatUse::None; }
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const { return num_elements(shape); }
  /// The type of one element: a scalar or a pointer.
  Type element() const { return Type{dtype, is_ptr, {}}; }
  Type with_shape(Shape s) const { return Type{dtype, is_ptr, std::move(s)}; }
  Type with_dtype(DType t) const { return Type{t, is_ptr, shape, mat, workgroup}; }
  bool is_float() const { return !is_ptr && tessera::ir::is_float(dtype); }
  bool is_int() const { return !is_ptr && tessera::ir::is_int(dtype); }
  bool is_bool() const { return !is_ptr && dtype == DType::i1; }

  bool operator==(const Type& o) const {
    return dtype == o.dtype && is_ptr == o.is_ptr && shape == o.shape && mat == o.mat &&
           workgroup == o.workgroup;
  }
  bool operator!=(const Type& o) const { return !(*this == o); }

  /// "i32", "ptr<f32>", "tile<64x32xf16>", "tile<128xptr<f32>>", "coopmat_a<16x16xf16>".
  std::string str() const;
};

/// Parses the text form of a type; nullopt if `text` is not exactly one type.
std::optional<Type> parse_type(std::string_view text);

}  // namespace tessera::ir
