/// \file Control flow: static (trace-time) and dynamic if/else with and without else, nested and
/// with side effects; data-dependent and nested while loops and early exit through a while; for
/// loops with negative and runtime steps, zero trips, 64-bit bounds, nesting with dependent
/// bounds, several carried variables (tiles, scalars, pointers) and ifs and loops inside each
/// other; trace-time unrolled loops.
#include <cmath>

#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

using tl::_;
using tl::None;

void static_if_kernel(tl::ptr<int32_t> x, tl::ptr<int32_t> out, int MODE, int BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  auto v = tl::load(x + offs);
  if (MODE == 0)
    v = v + 1;
  else if (MODE == 1)
    v = v * v;
  else
    v = -v;
  for (int i = 0; i < 3; ++i) v = v * 2 + i;  // unrolled while tracing (static_range)
  tl::store(out + offs, v);
}

void dynamic_if_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::ptr<int32_t> flags, int BLOCK) {
  auto pid = tl::program_id(0);
  auto offs = pid * BLOCK + tl::arange(0, BLOCK);
  auto v = tl::load(x + offs);
  auto flag = tl::load(flags + pid);
  auto r = tl::zeros<float>({BLOCK});
  auto count = tl::zeros<int32_t>({1});
  tl::if_(flag > 0, [&] { r = v * 2.0f; }, [&] { r = v - 100.0f; });
  tl::if_(flag == 2, [&] { r = r + 0.5f; });  // no else: r keeps its value
  tl::if_(flag >= 1, [&] {
    tl::if_(flag >= 3, [&] { count = count + 3; }, [&] { count = count + 1; });  // nested
  });
  tl::if_(
      tl::sum(v, 0) > 0.0f, [&] { tl::store(out + offs, r); },  // side effects
      [&] { tl::store(out + offs, r + count.to(tl::float32)); });
}

void collatz_kernel(tl::ptr<int64_t> x, tl::ptr<int32_t> steps) {
  auto pid = tl::program_id(0);
  auto v = tl::load(x + pid);
  auto count = tl::load(steps + pid) * 0;
  tl::while_([&] { return v != 1; },
             [&] {
               v = tl::where(v % 2 == 0, v / 2, 3 * v + 1);
               count = count + 1;
             });
  tl::store(steps + pid, count);
}

void nested_while_kernel(tl::ptr<int32_t> n, tl::ptr<int32_t> out) {
  auto pid = tl::program_id(0);
  auto limit = tl::load(n + pid);
  auto i = limit * 0;
  auto total = limit * 0;
  tl::while_([&] { return i < limit; },
             [&] {
               auto j = i * 0;
               tl::while_([&] { return j <= i; },
                          [&] {
                            total = total + j;
                            j = j + 1;
                          });
               i = i + 1;
             });
  tl::store(out + pid, total);
}

void search_kernel(tl::ptr<float> x, tl::ptr<int32_t> out, tl::i32 n, tl::f32 threshold,
                   int BLOCK) {
  // The first index whose value exceeds the threshold (n if none), scanning one tile at a time
  // and leaving the loop early.
  auto start = n * 0;
  // `auto found = n;` would have the handle type tl::i32, to which a tensor cannot be assigned.
  tl::tensor found = n;
  tl::while_([&] { return (start < n) & (found == n); },
             [&] {
               auto offs = start + tl::arange(0, BLOCK);
               auto hit = (offs < n) & (tl::load(x + offs, offs < n, 0.0f) > threshold);
               found = tl::min(tl::where(hit, offs, n), 0);
               start = start + BLOCK;
             });
  tl::store(out + tl::program_id(0), found);
  tl::store(out + 1 + tl::program_id(0), start);
}

void for_kernel(tl::ptr<int64_t> out, tl::i32 lo, tl::i32 hi, tl::i32 step) {
  auto sum = tl::zeros<int64_t>({1});
  auto count = lo * 0;
  for (auto i : tl::range(lo, hi, step)) {
    sum = sum + i.to(tl::int64) * (count + 1);
    count = count + 1;
  }
  tl::store(out + tl::arange(0, 1), sum);
  tl::store(out + 1, count.to(tl::int64));
}

void for_i64_kernel(tl::ptr<int64_t> out, tl::i64 lo, tl::i64 hi) {
  auto acc = tl::zeros<int64_t>({2});
  for (auto i : tl::range(lo, hi, 3)) acc = acc + tl::where(tl::arange(0, 2) == 0, i, i - lo);
  tl::store(out + tl::arange(0, 2), acc);
}

void for_u32_kernel(tl::ptr<int64_t> out, tl::u32 lo, tl::u32 hi) {
  auto count = tl::zeros<int64_t>({1});
  auto last = tl::zeros<int64_t>({1});
  for (auto i : tl::range(lo, hi)) {
    count = count + 1;
    last = tl::zeros<int64_t>({1}) + i.to(tl::int64);
  }
  tl::store(out + tl::arange(0, 1), count);
  tl::store(out + 1 + tl::arange(0, 1), last);
}

void nested_for_kernel(tl::ptr<int32_t> out, tl::i32 n) {
  auto acc = tl::zeros<int32_t>({4});
  for (auto i : tl::range(0, n)) {
    for (auto j : tl::range(i, n, 2)) {  // inner bounds depend on the outer induction variable
      acc = acc + tl::where(tl::arange(0, 4) == (i + j) % 4, 1, 0);
    }
  }
  tl::store(out + tl::arange(0, 4), acc);
}

void carried_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::ptr<int32_t> iout, tl::i32 n,
                    int BLOCK) {
  auto acc = tl::zeros<float>({BLOCK});
  auto imax = tl::full({BLOCK}, -1, tl::int32);
  auto p = x;
  auto steps = n * 0;
  for (auto k : tl::range(0, n, BLOCK)) {
    auto offs = k + tl::arange(0, BLOCK);
    auto m = offs < n;
    auto v = tl::load(p + tl::arange(0, BLOCK), m, 0.0f);  // a temporary, not carried
    acc += v;
    imax = tl::maximum(imax, tl::where(m & (v > 0.5f), offs, -1));
    p += BLOCK;                                          // a pointer, carried
    steps = steps + 1;                                   // a scalar, carried
    tl::if_(steps % 2 == 0, [&] { acc = acc * 1.0f; });  // an if inside the loop
  }
  tl::store(out + tl::arange(0, BLOCK), acc);
  tl::store(iout + tl::arange(0, BLOCK), imax);
  tl::store(iout + BLOCK, steps);
}

void loop_in_if_kernel(tl::ptr<int32_t> out, tl::i32 n, tl::i32 flag) {
  auto total = n * 0;
  tl::if_(
      flag != 0,
      [&] {
        for (auto i : tl::range(0, n)) total = total + i;
      },
      [&] {
        for (auto i : tl::range(n, 0, -1)) total = total - i;
      });
  tl::store(out + tl::program_id(0), total);
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"control/" + std::move(name), std::move(needs), "", std::move(body)});
}

}  // namespace

namespace {

void static_if_and_range_case(Context& ctx) {
  auto k = TESSERA_KERNEL(static_if_kernel, x, out, MODE, BLOCK);
  HostArray x = ctx.random(DType::i32, 32, -100, 100);
  DevArray dx = ctx.upload(x);
  for (int mode = 0; mode < 3; ++mode) {
    DevArray o = ctx.poisoned(DType::i32, 32);
    k[{1}](dx.buf, o.buf, mode, 32);
    std::vector<int64_t> want;
    for (int i = 0; i < 32; ++i) {
      int64_t v = mode == 0 ? x.i(i) + 1 : mode == 1 ? x.i(i) * x.i(i) : -x.i(i);
      for (int j = 0; j < 3; ++j) v = v * 2 + j;
      want.push_back(v);
    }
    ctx.check_ints("mode " + std::to_string(mode), ctx.download(o), want);
  }
}

void dynamic_if_case(Context& ctx) {
  auto k = TESSERA_KERNEL(dynamic_if_kernel, x, out, flags, BLOCK);
  const int programs = 8, BLOCK = 16;
  HostArray x = ctx.random(DType::f32, programs * BLOCK, -1, 1.2), flags(DType::i32, programs);
  for (int p = 0; p < programs; ++p) flags.set_int(p, p % 5 - 1);  // -1, 0, 1, 2, 3, ...
  DevArray dx = ctx.upload(x), df = ctx.upload(flags),
           o = ctx.poisoned(DType::f32, programs * BLOCK);
  k[{programs}](dx.buf, o.buf, df.buf, BLOCK);
  std::vector<double> want;
  for (int p = 0; p < programs; ++p) {
    const int64_t f = flags.i(p);
    double s = 0;
    for (int i = 0; i < BLOCK; ++i) s += static_cast<float>(x.f(p * BLOCK + i));
    const int count = f >= 1 ? (f >= 3 ? 3 : 1) : 0;
    for (int i = 0; i < BLOCK; ++i) {
      const float v = static_cast<float>(x.f(p * BLOCK + i));
      float r = f > 0 ? v * 2.0f : v - 100.0f;
      if (f == 2) r = r + 0.5f;
      want.push_back(s > 0 ? r : r + static_cast<float>(count));
    }
  }
  ctx.check_close("branch results", ctx.download(o), want, tol::arith(DType::f32));
}

void while_data_dependent_case(Context& ctx) {
  auto k = TESSERA_KERNEL(collatz_kernel, x, steps);
  const int programs = 40;
  HostArray x = ctx.random(DType::i64, programs, 1, 100000);
  DevArray dx = ctx.upload(x), o = ctx.upload(HostArray(DType::i32, programs));
  k[{programs}](dx.buf, o.buf);
  std::vector<int64_t> want;
  for (int p = 0; p < programs; ++p) {
    int64_t v = x.i(p), c = 0;
    while (v != 1) v = v % 2 == 0 ? v / 2 : 3 * v + 1, ++c;
    want.push_back(c);
  }
  ctx.check_ints("collatz steps", ctx.download(o), want);
}

void nested_while_case(Context& ctx) {
  auto k = TESSERA_KERNEL(nested_while_kernel, n, out);
  const int programs = 12;
  HostArray n = ctx.random(DType::i32, programs, 0, 30);
  DevArray dn = ctx.upload(n), o = ctx.poisoned(DType::i32, programs);
  k[{programs}](dn.buf, o.buf);
  std::vector<int64_t> want;
  for (int p = 0; p < programs; ++p) {
    int64_t t = 0;
    for (int64_t i = 0; i < n.i(p); ++i)
      for (int64_t j = 0; j <= i; ++j) t += j;
    want.push_back(t);
  }
  ctx.check_ints("triangular sums", ctx.download(o), want);
}

void early_exit_while_case(Context& ctx) {
  auto k = TESSERA_KERNEL(search_kernel, x, out, n, threshold, BLOCK);
  for (int n : {0, 5, 100, 301}) {
    HostArray x = ctx.random(DType::f32, std::max(n, 1), 0, 1);
    for (float thr : {0.9f, 0.99f, 2.0f}) {
      DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::i32, 2);
      k[{1}](dx.buf, o.buf, n, thr, 32);
      int64_t first = n;
      for (int i = 0; i < n && first == n; ++i)
        if (static_cast<float>(x.f(i)) > thr) first = i;
      const int64_t start = first == n ? (n + 31) / 32 * 32 : (first / 32 + 1) * 32;
      ctx.check_ints("first > " + std::to_string(thr) + " of " + std::to_string(n), ctx.download(o),
                     {first, start});
    }
  }
}

void for_steps_case(Context& ctx) {
  auto k = TESSERA_KERNEL(for_kernel, out, lo, hi, step);
  const int cases[][3] = {{0, 10, 1}, {10, 0, -1}, {7, -20, -3}, {5, 5, 1},
                          {5, 0, 1},  {0, 5, -1},  {-3, 40, 7},  {100, 99, -100}};
  for (const auto& c : cases) {
    DevArray o = ctx.poisoned(DType::i64, 2);
    k[{1}](o.buf, c[0], c[1], c[2]);
    int64_t sum = 0, count = 0;
    for (int64_t i = c[0]; c[2] > 0 ? i < c[1] : i > c[1]; i += c[2])
      sum += i * (count + 1), ++count;
    ctx.check_ints("range(" + std::to_string(c[0]) + ", " + std::to_string(c[1]) + ", " +
                       std::to_string(c[2]) + ")",
                   ctx.download(o), {sum, count});
  }
}

void for_i64_bounds_case(Context& ctx) {
  auto k = TESSERA_KERNEL(for_i64_kernel, out, lo, hi);
  const int64_t lo = (int64_t{1} << 33) - 5, hi = (int64_t{1} << 33) + 17;  // crosses 2^33
  DevArray o = ctx.poisoned(DType::i64, 2);
  k[{1}](o.buf, lo, hi);
  int64_t s0 = 0, s1 = 0;
  for (int64_t i = lo; i < hi; i += 3) s0 += i, s1 += i - lo;
  ctx.check_ints("sum of i and of i - lo", ctx.download(o), {s0, s1});
}

void for_u32_bounds_case(Context& ctx) {
  // Unsigned 32-bit bounds above 2^31: the loop must count in a type that holds them.
  auto k = TESSERA_KERNEL(for_u32_kernel, out, lo, hi);
  for (auto [lo, hi] : std::vector<std::pair<uint32_t, uint32_t>>{
           {5, 9}, {2147483640u, 2147483650u}, {4294967290u, 4294967295u}}) {
    DevArray o = ctx.poisoned(DType::i64, 2);
    k[{1}](o.buf, lo, hi);
    ctx.check_ints("range(" + std::to_string(lo) + ", " + std::to_string(hi) + ")", ctx.download(o),
                   {int64_t{hi} - lo, int64_t{hi} - 1});
  }
}

void nested_for_case(Context& ctx) {
  auto k = TESSERA_KERNEL(nested_for_kernel, out, n);
  for (int n : {0, 1, 9, 20}) {
    DevArray o = ctx.poisoned(DType::i32, 4);
    k[{1}](o.buf, n);
    std::vector<int64_t> want(4, 0);
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; j += 2) ++want[(i + j) % 4];
    ctx.check_ints("n " + std::to_string(n), ctx.download(o), want);
  }
}

void carried_variables_case(Context& ctx) {
  auto k = TESSERA_KERNEL(carried_kernel, x, out, iout, n, BLOCK);
  const int BLOCK = 32;
  for (int n : {1, 32, 77}) {
    HostArray x = ctx.random(DType::f32, n + BLOCK, 0, 1);
    DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, BLOCK),
             io = ctx.poisoned(DType::i32, BLOCK + 1);
    k[{1}](dx.buf, o.buf, io.buf, n, BLOCK);
    std::vector<double> acc(BLOCK, 0);
    std::vector<int64_t> imax(BLOCK, -1);
    int64_t steps = 0;
    for (int kk = 0; kk < n; kk += BLOCK, ++steps)
      for (int i = 0; i < BLOCK; ++i) {
        const int off = kk + i;
        const double v = off < n ? x.f(off) : 0.0;
        acc[i] = static_cast<float>(acc[i] + v);
        if (off < n && v > 0.5) imax[i] = std::max<int64_t>(imax[i], off);
      }
    imax.push_back(steps);
    ctx.check_close("carried tile, n " + std::to_string(n), ctx.download(o), acc,
                    tol::arith(DType::f32));
    ctx.check_ints("carried max index and scalar", ctx.download(io), imax);
  }
}

void loop_in_if_case(Context& ctx) {
  auto k = TESSERA_KERNEL(loop_in_if_kernel, out, n, flag);
  for (int flag : {0, 1}) {
    DevArray o = ctx.poisoned(DType::i32, 3);
    k[{3}](o.buf, 13, flag);
    const int64_t v = flag ? 78 : -91;  // 0 + ... + 12, or -(13 + ... + 1)
    ctx.check_ints("flag " + std::to_string(flag), ctx.download(o), {v, v, v});
  }
}

/// One loop of `n` passes, `m` x `m` nested passes and a while loop of `w` passes.
void long_loops_kernel(tl::ptr<int32_t> out, tl::i32 n, tl::i32 m, tl::i32 w) {
  tl::tensor a = n * 0;
  for (auto i : tl::range(0, n)) {
    (void)i;
    a = a + 1;
  }
  tl::tensor b = n * 0;
  for (auto i : tl::range(0, m)) {
    (void)i;
    for (auto j : tl::range(0, m)) {
      (void)j;
      b = b + 1;
    }
  }
  tl::tensor c = n * 0;
  tl::while_([&] { return c < w; }, [&] { c = c + 1; });
  tl::store(out + tl::arange(0, 4),
            tl::where(tl::arange(0, 4) == 0, a, tl::where(tl::arange(0, 4) == 1, b, c)));
}

/// More than 65535 loop passes in one program (lavapipe ends every loop there): exact results,
/// or, on a target with a loop limit, a DeviceFault naming the loop and the limit.
void long_loops_case(Context& ctx) {
  auto k = TESSERA_KERNEL(long_loops_kernel, out, n, m, w);
  const int64_t limit = ctx.facts().target.loop_limit;
  struct Run {
    int n, m, w;
  };
  for (Run r : {Run{70000, 0, 0}, Run{0, 300, 0}, Run{0, 0, 70000}}) {
    const std::string what =
        "n " + std::to_string(r.n) + ", m " + std::to_string(r.m) + ", w " + std::to_string(r.w);
    DevArray o = ctx.poisoned(DType::i32, 4);
    std::string fault;
    bool device_fault = false;
    HostArray got;
    try {
      k[{1}](o.buf, r.n, r.m, r.w);
      got = ctx.download(o);
    } catch (const Error& e) {
      device_fault = e.kind() == ErrorKind::DeviceFault;
      fault = std::string(to_string(e.kind())) + ": " + e.what();
    }
    if (limit > 0) {
      ctx.expect(
          device_fault &&
              fault.find("kernel long_loops_kernel: the loop at ") != std::string::npos &&
              fault.find("reached the limit of " + std::to_string(limit)) != std::string::npos,
          what + ": past the target's loop limit, wanted a DeviceFault naming the loop, got: " +
              (fault.empty() ? "no error" : fault));
    } else {
      ctx.expect(fault.empty(), what + ": " + fault);
      if (fault.empty()) ctx.check_ints(what, got, {r.n, int64_t{r.m} * r.m, r.w, r.w});
    }
  }
}

}  // namespace

void register_control(std::vector<Case>& out) {
  add(out, "static_if_and_range", {}, static_if_and_range_case);
  add(out, "dynamic_if", {}, dynamic_if_case);
  add(out, "while_data_dependent", needs_of({DType::i64}), while_data_dependent_case);
  add(out, "nested_while", {}, nested_while_case);
  add(out, "early_exit_while", {}, early_exit_while_case);
  add(out, "for_steps", needs_of({DType::i64}), for_steps_case);
  add(out, "for_i64_bounds", needs_of({DType::i64}), for_i64_bounds_case);
  add(out, "for_u32_bounds", needs_of({DType::i64}), for_u32_bounds_case);
  add(out, "nested_for", {}, nested_for_case);
  add(out, "carried_variables", {}, carried_variables_case);
  add(out, "loop_in_if", {}, loop_in_if_case);
  add(out, "long_loops", {}, long_loops_case);
}

}  // namespace tessera::conformance
