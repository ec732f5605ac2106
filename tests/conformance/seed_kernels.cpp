/// \file The seed's kernels (samples/kernels/) and their variants: vector add, GeLU, softmax, row
/// sum and the 2-D-grid matmul with ReLU on awkward shapes; a persistent kernel pulling tasks
/// from an atomic counter; block sizes chosen from the problem size; the seed's access
/// patterns (strided, chunked, aligned with hints); device_print and device_assert.
#include <cmath>
#include <set>
#include <sstream>

#include "core/support/float16.h"
#include "samples/kernels/gelu.h"
#include "samples/kernels/matmul_relu.h"
#include "samples/kernels/row_sum.h"
#include "samples/kernels/softmax.h"
#include "samples/kernels/vector_add.h"
#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

void persistent_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::ptr<int32_t> counter,
                       tl::ptr<int32_t> owner, tl::i32 n, tl::i32 num_tasks, int BLOCK) {
  tl::tensor task = tl::atomic_add(counter, 1);
  tl::while_([&] { return task < num_tasks; },
             [&] {
               auto offs = task * BLOCK + tl::arange(0, BLOCK);
               auto m = offs < n;
               tl::store(y + offs, tl::load(x + offs, m) * 2.0f + 1.0f, m);
               tl::store(owner + task, tl::program_id(0));
               task = tl::atomic_add(counter, 1);
             });
}

void chunked_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, tl::i32 stride, int CHUNK,
                    int BLOCK) {
  // The seed's access patterns: contiguous, strided, and chunks of CHUNK elements `stride` apart.
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto contiguous = tl::load(x + offs, m, 0.0f);
  auto strided = tl::load(x + offs * stride, m, 0.0f);
  auto chunked = tl::load(x + (offs / CHUNK) * stride + offs % CHUNK, m, 0.0f);
  tl::store(y + offs, contiguous + 10.0f * strided + 100.0f * chunked, m);
}

void aligned_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, int BLOCK) {
  auto base = tl::multiple_of(x, 16);  // buffers are 16-byte aligned
  auto start = tl::multiple_of(tl::program_id(0) * BLOCK, BLOCK);
  auto offs = tl::max_contiguous(start + tl::arange(0, BLOCK), BLOCK);
  auto m = offs < n;
  tl::store(y + offs, tl::load(base + offs, m) * 3.0f, m);
}

void print_kernel(tl::ptr<int32_t> x, int BLOCK) {
  auto v = tl::load(x + tl::program_id(0) * BLOCK + tl::arange(0, BLOCK));
  tl::device_print("conformance-print v=", {v});
}

void assert_kernel(tl::ptr<int32_t> x, tl::i32 limit, int BLOCK) {
  auto v = tl::load(x + tl::arange(0, BLOCK));
  tl::device_assert(v < limit, "conformance-assert: value out of range");
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body, std::string maybe = "") {
  out.push_back({"seed/" + std::move(name), std::move(needs), std::move(maybe), std::move(body)});
}

void vector_add_case(Context& ctx) {
  auto k = TESSERA_KERNEL(samples::vector_add_kernel, x, y, out, n, BLOCK);
  for (int n : {0, 1, 97, 1024, 4099}) {
    HostArray x = ctx.random(DType::f32, std::max(n, 1), -9, 9),
              y = ctx.random(DType::f32, std::max(n, 1), -9, 9);
    DevArray dx = ctx.upload(x), dy = ctx.upload(y), o = ctx.poisoned(DType::f32, std::max(n, 1));
    k[{cdiv(n, 1024)}](dx.buf, dy.buf, o.buf, n, 1024);
    if (n == 0) {
      ctx.check_untouched("empty grid", ctx.download(o), 0, 1);
      continue;
    }
    std::vector<double> want;
    for (int i = 0; i < n; ++i) want.push_back(x.f(i) + y.f(i));
    ctx.check_close("n " + std::to_string(n), ctx.download(o), want, tol::arith(DType::f32));
  }
}

void gelu_case(Context& ctx) {
  auto k = TESSERA_KERNEL(samples::gelu_kernel, x, y, n, BLOCK);
  const int n = 3001;
  HostArray x = ctx.random(DType::f32, n, -6, 6);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, n);
  k[{cdiv(n, 1024)}](dx.buf, o.buf, n, 1024);
  std::vector<double> want, scale;
  for (int i = 0; i < n; ++i) {
    const double v = x.f(i);
    want.push_back(0.5 * v * (1 + std::tanh(0.79788456 * (v + 0.044715 * v * v * v))));
    scale.push_back(std::fabs(v) + 1e-3);  // 1 + tanh cancels for negative x: error ~ |x| eps
  }
  ctx.check_close("gelu", ctx.download(o), want, tol::composite(DType::f32, 12), &scale);
}

void softmax_case(Context& ctx) {
  auto k = TESSERA_KERNEL(samples::softmax_kernel, x, y, x_row_stride, y_row_stride, num_cols,
                          BLOCK_SIZE);
  for (int cols : {1, 37, 781}) {
    const int rows = 5, xs = cols + 3, ys = cols + 1;  // padded rows
    HostArray x = ctx.random(DType::f32, rows * xs, -20, 20);
    DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, rows * ys);
    k[{rows}](dx.buf, o.buf, xs, ys, cols, 1024);
    HostArray got = ctx.download(o), body(DType::f32, rows * cols);
    std::vector<double> want;
    for (int r = 0; r < rows; ++r) {
      double mx = -INFINITY, s = 0;
      for (int c = 0; c < cols; ++c) mx = std::max(mx, x.f(r * xs + c));
      for (int c = 0; c < cols; ++c) s += std::exp(x.f(r * xs + c) - mx);
      for (int c = 0; c < cols; ++c) want.push_back(std::exp(x.f(r * xs + c) - mx) / s);
      for (int c = 0; c < cols; ++c) body.set_bits(r * cols + c, got.bits(r * ys + c));
      ctx.check_untouched("row padding", got, r * ys + cols, r * ys + ys);
    }
    ctx.check_close("softmax of " + std::to_string(cols) + " columns", body, want,
                    tol::composite(DType::f32, cols + 8));
  }
}

void row_sum_case(Context& ctx) {
  auto k = TESSERA_KERNEL(samples::row_sum_kernel, x, out, N, BLOCK_SIZE);
  for (int n : {1, 255, 1000}) {
    const int rows = 6;
    HostArray x = ctx.random(DType::f32, rows * n, -1, 1);
    DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, rows);
    k[{rows}](dx.buf, o.buf, n, 256);
    std::vector<double> want(rows, 0), scale(rows, 0);
    for (int i = 0; i < rows * n; ++i) want[i / n] += x.f(i), scale[i / n] += std::fabs(x.f(i));
    ctx.check_close("row sums of " + std::to_string(n), ctx.download(o), want,
                    tol::sum(DType::f32, DType::f32, n), &scale);
  }
}

void matmul_relu_2d_grid_case(Context& ctx) {
  auto k = TESSERA_KERNEL(samples::matmul_relu_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am,
                          stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M, BLOCK_N,
                          BLOCK_K);
  const int shapes[][3] = {{64, 64, 32}, {100, 37, 71}, {1, 130, 3}, {129, 1, 64}};
  for (const auto& s : shapes) {
    const int M = s[0], N = s[1], K = s[2];
    HostArray a = ctx.random(DType::f32, M * K, -1, 1), b = ctx.random(DType::f32, K * N, -1, 1);
    DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(DType::f32, M * N);
    k[{Grid(cdiv(M, 64), cdiv(N, 64))}](da.buf, db.buf, o.buf, M, N, K, K, 1, N, 1, N, 1, 64, 64,
                                        32);
    std::vector<double> want, scale;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0, mag = 0;
        for (int kk = 0; kk < K; ++kk) {
          const double p =
              double(round_to_tf32(float(a.f(i * K + kk)))) * round_to_tf32(float(b.f(kk * N + j)));
          acc += p, mag += std::fabs(p);
        }
        want.push_back(std::max(acc, 0.0)), scale.push_back(mag);
      }
    ctx.check_close(std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K),
                    ctx.download(o), want, tol::dot_tf32(K), &scale);
  }
}

void persistent_task_queue_case(Context& ctx) {
  auto k = TESSERA_KERNEL(persistent_kernel, x, y, counter, owner, n, num_tasks, BLOCK);
  const int n = 5000, BLOCK = 64, tasks = cdiv(n, BLOCK), programs = 7;
  HostArray x = ctx.random(DType::f32, n, -9, 9);
  DevArray dx = ctx.upload(x), y = ctx.poisoned(DType::f32, n),
           counter = ctx.upload(HostArray(DType::i32, 1));
  DevArray owner = ctx.poisoned(DType::i32, tasks);
  k[{programs}](dx.buf, y.buf, counter.buf, owner.buf, n, tasks, BLOCK);
  std::vector<double> want;
  for (int i = 0; i < n; ++i) want.push_back(static_cast<float>(x.f(i) * 2.0f) + 1.0);
  ctx.check_close("every task done once", ctx.download(y), want, tol::arith(DType::f32));
  ctx.check_ints("counter: tasks + one failed pull per program", ctx.download(counter),
                 {tasks + programs});
  HostArray own = ctx.download(owner);
  bool ok = true;
  for (int t = 0; t < tasks; ++t) ok = ok && own.i(t) >= 0 && own.i(t) < programs;
  ctx.expect(ok, "a task has no valid owner program");
}

void adaptive_block_size_case(Context& ctx) {
  auto k = TESSERA_KERNEL(samples::vector_add_kernel, x, y, out, n, BLOCK);
  for (int n : {1000, 8191, 8192, 20000}) {
    HostArray x = ctx.random(DType::f32, n, -9, 9), y = ctx.random(DType::f32, n, -9, 9);
    DevArray dx = ctx.upload(x), dy = ctx.upload(y);
    std::vector<double> want;
    for (int i = 0; i < n; ++i) want.push_back(x.f(i) + y.f(i));
    const int chosen = n < 8192 ? 128 : 256;  // the seed's rule
    for (int block : {chosen, 64, 512, 1024}) {
      DevArray o = ctx.poisoned(DType::f32, n);
      k[{cdiv(n, block)}](dx.buf, dy.buf, o.buf, n, block);
      ctx.check_close("n " + std::to_string(n) + " BLOCK " + std::to_string(block), ctx.download(o),
                      want, tol::arith(DType::f32));
    }
  }
}

void access_patterns_case(Context& ctx) {
  auto k = TESSERA_KERNEL(chunked_kernel, x, y, n, stride, CHUNK, BLOCK);
  const int n = 300, stride = 5, CHUNK = 4;
  HostArray x = ctx.random(DType::f32, n * stride, -1, 1);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, n);
  k[{cdiv(n, 128)}](dx.buf, o.buf, n, stride, CHUNK, 128);
  std::vector<double> want, scale;
  for (int i = 0; i < n; ++i) {
    const double c = x.f(i), s = x.f(i * stride), ch = x.f((i / CHUNK) * stride + i % CHUNK);
    want.push_back(c + 10 * s + 100 * ch),
        scale.push_back(std::fabs(c) + 10 * std::fabs(s) + 100 * std::fabs(ch));
  }
  ctx.check_close("contiguous + 10 strided + 100 chunked", ctx.download(o), want,
                  tol::composite(DType::f32, 4), &scale);
}

void aligned_hints_case(Context& ctx) {
  auto k = TESSERA_KERNEL(aligned_kernel, x, y, n, BLOCK);
  const int n = 1000;
  HostArray x = ctx.random(DType::f32, n, -9, 9);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, n);
  k[{cdiv(n, 256)}](dx.buf, o.buf, n, 256);
  std::vector<double> want;
  for (int i = 0; i < n; ++i) want.push_back(static_cast<float>(x.f(i) * 3.0f));
  ctx.check_close("3x", ctx.download(o), want, tol::arith(DType::f32));
}

void device_print_case(Context& ctx) {
  auto k = TESSERA_KERNEL(print_kernel, x, BLOCK);
  const int programs = 3, BLOCK = 4;
  HostArray x = ctx.random(DType::i32, programs * BLOCK, -100000, 100000);
  DevArray dx = ctx.upload(x);
  const std::string text = capture_stdout([&] {
    k[{programs}](dx.buf, BLOCK);
    ctx.dev().synchronize();
  });
  std::multiset<int64_t> want, got;
  for (int i = 0; i < programs * BLOCK; ++i) want.insert(x.i(i));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find("conformance-print v=");
    if (at != std::string::npos) got.insert(std::stoll(line.substr(at + 20)));
  }
  ctx.expect(got == want, "printed " + std::to_string(got.size()) + " values (of " +
                              std::to_string(want.size()) + " expected) or wrong ones; output:\n" +
                              text.substr(0, 400));
}

void device_assert_case(Context& ctx) {
  auto k = TESSERA_KERNEL(assert_kernel, x, limit, BLOCK);
  HostArray x = ctx.random(DType::i32, 16, 0, 99);
  x.set_int(5, 77);
  DevArray dx = ctx.upload(x);
  k[{2}](dx.buf, 100, 16);  // holds everywhere: no fault
  ctx.dev().synchronize();
  std::string fault = "no error";
  bool device_fault = false;
  try {
    k[{2}](dx.buf, 50, 16);  // 77 >= 50 fails
    ctx.dev().synchronize();
  } catch (const Error& e) {
    device_fault = e.kind() == ErrorKind::DeviceFault;
    fault = std::string(to_string(e.kind())) + ": " + e.what();
    if (device_fault) ctx.device_spent();
  }
  ctx.expect(device_fault && fault.find("conformance-assert") != std::string::npos,
             "a false device_assert must be a DeviceFault naming its message, got: " + fault);
}

void register_samples(std::vector<Case>& out) {
  add(out, "vector_add", {}, vector_add_case);
  add(out, "gelu", {}, gelu_case);
  add(out, "softmax", {}, softmax_case);
  add(out, "row_sum", {}, row_sum_case);
  add(out, "matmul_relu_2d_grid", {}, matmul_relu_2d_grid_case);
}

void register_variants(std::vector<Case>& out) {
  add(out, "persistent_task_queue", {}, persistent_task_queue_case);
  add(out, "adaptive_block_size", {}, adaptive_block_size_case);
  add(out, "access_patterns", {}, access_patterns_case);
  add(out, "aligned_hints", {}, aligned_hints_case);
}

void register_debug(std::vector<Case>& out) {
  add(out, "device_print", {Need::Print}, device_print_case);
  add(out, "device_assert", {Need::Assert}, device_assert_case);
}

}  // namespace

void register_seed_kernels(std::vector<Case>& out) {
  register_samples(out);
  register_variants(out);
  register_debug(out);
}

}  // namespace tessera::conformance
