/// \file Kernel plumbing: empty kernels, program ids and grid sizes on every axis, 2-D and 3-D
/// and empty grids, scalar arguments of every dtype, zero-strided, aliased and offset buffers,
/// specialization classes, num_warps.

#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

using tl::_;
using tl::None;

void empty_kernel(tl::pointer, tl::i32, int) {}

void pid_kernel(tl::ptr<int32_t> out, int AXIS) {
  auto linear = tl::program_id(0) +
                tl::num_programs(0) * (tl::program_id(1) + tl::num_programs(1) * tl::program_id(2));
  tl::store(out + linear, tl::program_id(AXIS));
}

void num_programs_kernel(tl::ptr<int32_t> out) {
  auto linear = tl::program_id(0) +
                tl::num_programs(0) * (tl::program_id(1) + tl::num_programs(1) * tl::program_id(2));
  auto offs = linear * 4 + tl::arange(0, 4);
  auto v = tl::where(tl::arange(0, 4) == 0, tl::num_programs(0),
                     tl::where(tl::arange(0, 4) == 1, tl::num_programs(1),
                               tl::where(tl::arange(0, 4) == 2, tl::num_programs(2), linear)));
  tl::store(out + offs, v);
}

void grid2d_kernel(tl::ptr<float> out, tl::i32 rows, tl::i32 cols, int BM, int BN) {
  auto r = tl::program_id(0) * BM + tl::arange(0, BM);
  auto c = tl::program_id(1) * BN + tl::arange(0, BN);
  auto mask = (r[{_, None}] < rows) & (c[{None, _}] < cols);
  auto v = (r[{_, None}] * 1000 + c[{None, _}]).to(tl::float32);
  tl::store(out + r[{_, None}] * cols + c[{None, _}], v, mask);
}

void grid3d_kernel(tl::ptr<int32_t> out, tl::i32 nx, tl::i32 ny, tl::i32 nz, int BX) {
  auto x = tl::program_id(0) * BX + tl::arange(0, BX);
  auto y = tl::program_id(1);
  auto z = tl::program_id(2);
  auto v = x * 7 + y * 131 + z * 1009;
  tl::store(out + (z * ny + y) * nx + x, v, x < nx);
  (void)nz;
}

void scalar_kernel(tl::scalar s, tl::pointer out) {
  tl::store(out + tl::program_id(0), s);
}

void mixed_scalars_kernel(tl::i8 a, tl::f64 b, tl::i1 c, tl::u16 d, tl::f32 e, tl::i64 f, tl::f16 g,
                          tl::u8 h, tl::ptr<double> out) {
  tl::store(out + 0, a.to(tl::float64));
  tl::store(out + 1, b);
  tl::store(out + 2, c.to(tl::float64));
  tl::store(out + 3, d.to(tl::float64));
  tl::store(out + 4, e.to(tl::float64));
  tl::store(out + 5, f.to(tl::float64));
  tl::store(out + 6, g.to(tl::float64));
  tl::store(out + 7, h.to(tl::float64));
}

void stride_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, tl::i32 stride, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(y + offs, tl::load(x + offs * stride, mask), mask);
}

void axpy_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, float A, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(y + offs, A * tl::load(x + offs, mask) + 1.0f, mask);
}

void row_sum_warps_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, int BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  auto v = tl::load(x + tl::program_id(0) * n + offs, offs < n, 0.0f);
  tl::store(out + tl::program_id(0), tl::sum(v * v, 0));
}

void constexpr_kernel(tl::pointer out, float F, bool NEGATE, tl::DType T, int BLOCK) {
  auto v = (tl::arange(0, BLOCK).to(tl::float32) * F).to(T);
  if (NEGATE) v = -v;
  tl::store(out + tl::arange(0, BLOCK), v);
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"plumbing/" + std::move(name), std::move(needs), "", std::move(body)});
}

void num_programs_case(Context& ctx) {
  auto k = TESSERA_KERNEL(num_programs_kernel, out);
  const uint32_t gx = 3, gy = 5, gz = 2;
  DevArray o = ctx.poisoned(DType::i32, 4 * gx * gy * gz);
  k[{Grid(gx, gy, gz)}](o.buf);
  std::vector<int64_t> want;
  for (uint32_t i = 0; i < gx * gy * gz; ++i) want.insert(want.end(), {gx, gy, gz, i});
  ctx.check_ints("num_programs", ctx.download(o), want);
}

void grid_2d_case(Context& ctx) {
  auto k = TESSERA_KERNEL(grid2d_kernel, out, rows, cols, BM, BN);
  const int rows = 37, cols = 53, BM = 16, BN = 8;
  DevArray o = ctx.poisoned(DType::f32, rows * cols);
  k[{Grid(cdiv(rows, BM), cdiv(cols, BN))}](o.buf, rows, cols, BM, BN);
  std::vector<double> want;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) want.push_back(r * 1000.0 + c);
  ctx.check_close("out", ctx.download(o), want, tol::kExact);
}

void grid_3d_case(Context& ctx) {
  auto k = TESSERA_KERNEL(grid3d_kernel, out, nx, ny, nz, BX);
  const int nx = 19, ny = 6, nz = 5, BX = 8;
  DevArray o = ctx.poisoned(DType::i32, nx * ny * nz);
  k[{Grid(cdiv(nx, BX), ny, nz)}](o.buf, nx, ny, nz, BX);
  std::vector<int64_t> want;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) want.push_back(x * 7 + y * 131 + z * 1009);
  ctx.check_ints("out", ctx.download(o), want);
}

void empty_grid_case(Context& ctx) {
  auto k = TESSERA_KERNEL(pid_kernel, out, AXIS);
  DevArray o = ctx.poisoned(DType::i32, 16);
  k[{Grid(0)}](o.buf, 0);
  k[{Grid(4, 0)}](o.buf, 0);
  k[{Grid(2, 3, 0)}](o.buf, 0);
  ctx.check_untouched("out", ctx.download(o), 0, 16);
}

void empty_kernel_case(Context& ctx) {
  auto k = TESSERA_KERNEL(empty_kernel, x, n, BLOCK);
  HostArray h = ctx.random(DType::f32, 64, -1, 1);
  DevArray d = ctx.upload(h);
  k[{Grid(7)}](d.buf, 64, 128);
  ctx.check_exact("untouched input", ctx.download(d), h);
}

void large_grid_case(Context& ctx) {
  // More programs than lavapipe's 65535 per dimension: the runtime must fold the grid.
  auto k = TESSERA_KERNEL(pid_kernel, out, AXIS);
  const uint32_t n = static_cast<uint32_t>(ctx.size(70001, 70001));
  DevArray o = ctx.poisoned(DType::i32, n);
  k[{Grid(n)}](o.buf, 0);
  std::vector<int64_t> want(n);
  for (uint32_t i = 0; i < n; ++i) want[i] = i;
  ctx.check_ints("pid", ctx.download(o), want);
}

void constexpr_kinds_case(Context& ctx) {
  auto k = TESSERA_KERNEL(constexpr_kernel, out, F, NEGATE, T, BLOCK);
  DevArray a = ctx.poisoned(DType::i32, 16), b = ctx.poisoned(DType::f32, 16);
  k[{1}](a.buf, 2.5f, true, tl::int32, 16);
  k[{1}](b.buf, 0.25f, false, tl::float32, 16);
  std::vector<int64_t> wa;
  std::vector<double> wb;
  for (int i = 0; i < 16; ++i) wa.push_back(-static_cast<int64_t>(i * 2.5)), wb.push_back(i * 0.25);
  ctx.check_ints("int32, negated", ctx.download(a), wa);
  ctx.check_close("float32", ctx.download(b), wb, tol::kExact);
}

void zero_stride_case(Context& ctx) {
  auto k = TESSERA_KERNEL(stride_kernel, x, y, n, stride, BLOCK);
  HostArray x = ctx.random(DType::f32, 4, -5, 5);
  DevArray dx = ctx.upload(x), y = ctx.poisoned(DType::f32, 100);
  k[{cdiv(100, 32)}](dx.buf, y.buf, 100, 0, 32);
  ctx.check_close("broadcast of x[0]", ctx.download(y), std::vector<double>(100, x.f(0)),
                  tol::kExact);
}

void strided_prime_case(Context& ctx) {
  auto k = TESSERA_KERNEL(stride_kernel, x, y, n, stride, BLOCK);
  const int n = 97, stride = 7;
  HostArray x = ctx.random(DType::f32, n * stride, -5, 5);
  DevArray dx = ctx.upload(x), y = ctx.poisoned(DType::f32, n);
  k[{cdiv(n, 16)}](dx.buf, y.buf, n, stride, 16);
  std::vector<double> want;
  for (int i = 0; i < n; ++i) want.push_back(x.f(i * stride));
  ctx.check_close("y", ctx.download(y), want, tol::kExact);
}

void aliased_in_place_case(Context& ctx) {
  auto k = TESSERA_KERNEL(axpy_kernel, x, y, n, A, BLOCK);
  const int n = 1000;
  HostArray x = ctx.random(DType::f32, n, -4, 4);
  DevArray d = ctx.upload(x);
  k[{cdiv(n, 128)}](d.buf, d.buf, n, 3.0f, 128);
  std::vector<double> want;
  // A * x + y with two roundings (fp_fusion is off by default).
  for (int i = 0; i < n; ++i)
    want.push_back(static_cast<float>(3.0f * static_cast<float>(x.f(i))) + 1.0f);
  ctx.check_close("x after x = 3x + 1", ctx.download(d), want, tol::arith(DType::f32));
}

void aliased_slices_case(Context& ctx) {
  // Two arguments in one allocation: the first half is read, the second half written.
  auto k = TESSERA_KERNEL(axpy_kernel, x, y, n, A, BLOCK);
  const int n = 301;
  HostArray x = ctx.random(DType::f32, 2 * n, -4, 4);
  DevArray d = ctx.upload(x);
  Buffer<float> all(d.buf);
  k[{cdiv(n, 64)}](all.slice(0, n), all.slice(n, n), n, -0.5f, 64);
  HostArray got = ctx.download(d);
  HostArray first(DType::f32, n), second(DType::f32, n);
  std::vector<double> want;
  for (int i = 0; i < n; ++i) {
    first.set_bits(i, got.bits(i));
    second.set_bits(i, got.bits(n + i));
    want.push_back(static_cast<float>(-0.5f * static_cast<float>(x.f(i))) + 1.0);
  }
  HostArray x_first(DType::f32, n);
  for (int i = 0; i < n; ++i) x_first.set_bits(i, x.bits(i));
  ctx.check_exact("read half", first, x_first);
  ctx.check_close("written half", second, want, tol::arith(DType::f32));
}

void unaligned_slices_case(Context& ctx) {
  // Offsets of 1..5 elements: the pointers are not 16-byte aligned (a different
  // specialization than the aligned launch of the same kernel).
  auto k = TESSERA_KERNEL(stride_kernel, x, y, n, stride, BLOCK);
  const int n = 45;
  HostArray x = ctx.random(DType::f32, n + 8, -5, 5);
  DevArray dx = ctx.upload(x);
  Buffer<float> xb(dx.buf);
  for (int off = 0; off <= 5; ++off) {
    DevArray y = ctx.poisoned(DType::f32, n + 8);
    Buffer<float> yb(y.buf);
    k[{cdiv(n, 16)}](xb.slice(off, n), yb.slice(off + 1, n), n, 1, 16);
    HostArray got = ctx.download(y);
    std::vector<double> want;
    HostArray part(DType::f32, n);
    for (int i = 0; i < n; ++i)
      part.set_bits(i, got.bits(off + 1 + i)), want.push_back(x.f(off + i));
    ctx.check_close("offset " + std::to_string(off), part, want, tol::kExact);
    ctx.check_untouched("before the slice", got, 0, off + 1);
    ctx.check_untouched("after the slice", got, off + 1 + n, n + 8);
  }
}

void equal_to_one_stride_case(Context& ctx) {
  // stride == 1 is specialized (traced as the constant 1); 1, 2 and 1 again must all agree.
  auto k = TESSERA_KERNEL(stride_kernel, x, y, n, stride, BLOCK);
  const int n = 50;
  HostArray x = ctx.random(DType::f32, 3 * n, -5, 5);
  DevArray dx = ctx.upload(x);
  for (int stride : {1, 3, 1}) {
    DevArray y = ctx.poisoned(DType::f32, n);
    k[{cdiv(n, 32)}](dx.buf, y.buf, n, stride, 32);
    std::vector<double> want;
    for (int i = 0; i < n; ++i) want.push_back(x.f(i * stride));
    ctx.check_close("stride " + std::to_string(stride), ctx.download(y), want, tol::kExact);
  }
}

void register_pid_cases(std::vector<Case>& out) {
  struct GridCase {
    const char* name;
    uint32_t x, y, z;
    int axis;
  };
  for (GridCase g :
       {GridCase{"program_id/axis0", 1031, 1, 1, 0}, GridCase{"program_id/axis1", 2, 257, 1, 1},
        GridCase{"program_id/axis2", 3, 1, 131, 2}, GridCase{"program_id/3d_x", 5, 7, 11, 0},
        GridCase{"program_id/3d_y", 5, 7, 11, 1}, GridCase{"program_id/3d_z", 5, 7, 11, 2}}) {
    add(out, g.name, {}, [g](Context& ctx) {
      auto k = TESSERA_KERNEL(pid_kernel, out, AXIS);
      const size_t n = size_t{g.x} * g.y * g.z;
      DevArray o = ctx.poisoned(DType::i32, n);
      k[{Grid(g.x, g.y, g.z)}](o.buf, g.axis);
      std::vector<int64_t> want(n);
      for (uint32_t z = 0; z < g.z; ++z)
        for (uint32_t y = 0; y < g.y; ++y)
          for (uint32_t x = 0; x < g.x; ++x)
            want[(z * g.y + y) * g.x + x] = g.axis == 0 ? x : g.axis == 1 ? y : z;
      ctx.check_ints("pid", ctx.download(o), want);
    });
  }
  add(out, "num_programs", {}, num_programs_case);
}

void register_grid_cases(std::vector<Case>& out) {
  add(out, "grid_2d", {}, grid_2d_case);
  add(out, "grid_3d", {}, grid_3d_case);
  add(out, "empty_grid", {}, empty_grid_case);
  add(out, "empty_kernel", {}, empty_kernel_case);
  add(out, "large_grid", {}, large_grid_case);
}

void register_scalar_cases(std::vector<Case>& out) {
  for (DType t : kAllDTypes) {
    add(out, "scalar_arg/" + dname(t), needs_of({t}), [t](Context& ctx) {
      auto k = TESSERA_KERNEL(scalar_kernel, s, out);
      HostArray vals = ctx.random_full(t, 6);
      if (t == DType::i1) vals.set_bits(0, 1), vals.set_bits(1, 0);
      DevArray o = ctx.poisoned(t, vals.size());
      for (size_t i = 0; i < vals.size(); ++i) {
        // One launch per value: program i writes element i.
        with_ctype(t, [&](auto tag) {
          using T = decltype(tag);
          auto slot = DevArray{o.buf.sub(i * ir::dtype_bytes(t), ir::dtype_bytes(t)), t, 1};
          k[{1}](host_value<T>(vals, i), slot.buf);
        });
      }
      ctx.check_exact("stored scalars", ctx.download(o), vals);
    });
  }
  add(out, "scalar_args_mixed",
      needs_of({DType::i8, DType::f64, DType::i16, DType::i64, DType::f16}), [](Context& ctx) {
        auto k = TESSERA_KERNEL(mixed_scalars_kernel, a, b, c, d, e, f, g, h, out);
        DevArray o = ctx.poisoned(DType::f64, 8);
        k[{1}](int8_t{-7}, 0.1, true, uint16_t{65000}, 2.5f, int64_t{-(int64_t{1} << 40)},
               half(0.333f), uint8_t{250}, o.buf);
        ctx.check_close(
            "out", ctx.download(o),
            {-7.0, 0.1, 1.0, 65000.0, 2.5, -0x1p40, round_to(DType::f16, 0.333f), 250.0},
            tol::kExact);
      });
  add(out, "constexpr_kinds", {}, constexpr_kinds_case);
}

void register_buffer_cases(std::vector<Case>& out) {
  add(out, "zero_stride", {}, zero_stride_case);
  add(out, "strided_prime", {}, strided_prime_case);
  add(out, "aliased_in_place", {}, aliased_in_place_case);
  add(out, "aliased_slices", {}, aliased_slices_case);
  add(out, "unaligned_slices", {}, unaligned_slices_case);
  add(out, "equal_to_one_stride", {}, equal_to_one_stride_case);
  // One case per num_warps, so that a device that cannot run one width SKIPs only that one: 16
  // warps are 512 threads, more than some devices take in one workgroup; 1 warp is 32 threads,
  // less than one subgroup of a 64-wide device.
  for (int warps : {1, 2, 4, 8, 16}) {
    const std::string maybe = warps == 16  ? "512 threads per program"
                              : warps == 1 ? "32 threads per program"
                                           : "";
    out.push_back({"plumbing/num_warps_" + std::to_string(warps), {}, maybe, [warps](Context& ctx) {
                     auto k = TESSERA_KERNEL(row_sum_warps_kernel, x, out, n, BLOCK);
                     const int rows = 5, n = 200;
                     HostArray x = ctx.random(DType::f32, rows * n, -1, 1);
                     DevArray dx = ctx.upload(x);
                     std::vector<double> want, scale;
                     for (int r = 0; r < rows; ++r) {
                       double s = 0;
                       for (int i = 0; i < n; ++i) s += x.f(r * n + i) * x.f(r * n + i);
                       want.push_back(s);
                       scale.push_back(s);
                     }
                     DevArray o = ctx.poisoned(DType::f32, rows);
                     k[{rows, {.num_warps = warps}}](dx.buf, o.buf, n, 256);
                     ctx.check_close("num_warps " + std::to_string(warps), ctx.download(o), want,
                                     tol::sum(DType::f32, DType::f32, 2 * n), &scale);
                   }});
  }
}

}  // namespace

void register_plumbing(std::vector<Case>& out) {
  register_pid_cases(out);
  register_grid_cases(out);
  register_scalar_cases(out);
  register_buffer_cases(out);
}

}  // namespace tessera::conformance
