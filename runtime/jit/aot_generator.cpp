/// \file The ahead-of-time generator (runtime/aot_generator.h): parses the plan, traces and
/// compiles every (kernel, specialization, target), and writes the embedded artifacts and the
/// launchers' header.
#include "runtime/aot_generator.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "core/ir/parser.h"
#include "core/ir/printer.h"
#include "core/support/error.h"
#include "core/target/target.h"
#include "runtime/aot.h"
#include "runtime/artifact_cache.h"

namespace tessera::aot {
namespace {

struct Plan {
  std::string ns = "aot";
  std::string header = "kernels.h";
  std::vector<std::string> sources;
  bool fallback = false;
  std::vector<std::string> targets;
  std::vector<std::pair<std::string, std::string>> specs;  // kernel, "NAME=VALUE ..."
};

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

Plan read_plan(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(ErrorKind::Argument, "cannot read the plan ", path);
  Plan plan;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find(' ');
    const std::string word = line.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : trim(line.substr(space + 1));
    if (word == "namespace")
      plan.ns = rest;
    else if (word == "header")
      plan.header = rest;
    else if (word == "source")
      plan.sources.push_back(rest);
    else if (word == "fallback")
      plan.fallback = rest == "1";
    else if (word == "target")
      plan.targets.push_back(rest);
    else if (word == "spec") {
      const size_t colon = rest.find(':');
      if (colon == std::string::npos)
        fail(ErrorKind::Argument, path, ":", number,
             ": a specialization is 'KERNEL: NAME=VALUE "
             "...', got '",
             rest, "'");
      plan.specs.emplace_back(trim(rest.substr(0, colon)), trim(rest.substr(colon + 1)));
    } else {
      fail(ErrorKind::Argument, path, ":", number, ": unknown line '", line, "'");
    }
  }
  return plan;
}

bool parse_int(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  *out = std::strtoll(text.c_str(), &end, 0);
  return *end == '\0';
}

/// The specialization `text` ("BLOCK=1024 n=i32:div16 num_warps=8") of `kernel`, into one
/// ArgSpec per parameter and the options.
void parse_spec(const GeneratorKernel& k, const std::string& text, std::vector<tl::ArgSpec>* specs,
                CompileOptions* options) {
  const std::vector<std::string>& names = k.kernel->param_names();
  const std::vector<tl::ParamDesc>& params = k.kernel->params();
  std::vector<bool> given(params.size()), unaligned(params.size());
  specs->assign(params.size(), tl::ArgSpec{});
  auto where = [&] {
    return "kernel '" + std::string(k.name) + "', specialization '" + text + "'";
  };
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos)
      fail(ErrorKind::Argument, where(), ": '", word, "' is not NAME=VALUE");
    const std::string name = word.substr(0, eq), value = word.substr(eq + 1);
    int64_t number = 0;
    if (find_option(name)) {
      if (!parse_int(value, &number))
        fail(ErrorKind::Argument, where(), ": ", name, " needs an integer");
      set_option(*options, name, number);
      continue;
    }
    size_t i = 0;
    while (i < names.size() && names[i] != name) ++i;
    if (i == names.size()) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      fail(ErrorKind::Argument, where(), ": no parameter '", name, "' (parameters: ", list,
           "; options: ", option_names(), ")");
    }
    tl::ArgSpec& s = (*specs)[i];
    const tl::ParamDesc& p = params[i];
    if (p.cls == tl::ParamClass::Constexpr) {
      given[i] = true;
      using CK = tl::ConstValue::Kind;
      s.value.kind = p.const_kind;
      bool ok = true;
      if (p.const_kind == CK::Int) {
        ok = parse_int(value, &s.value.i);
        s.value.f = static_cast<double>(s.value.i);
      } else if (p.const_kind == CK::Bool) {
        ok = value == "true" || value == "false" || value == "1" || value == "0";
        s.value.i = value == "true" || value == "1";
        s.value.f = static_cast<double>(s.value.i);
      } else if (p.const_kind == CK::Float) {
        char* end = nullptr;
        s.value.f = std::strtod(value.c_str(), &end);
        ok = !value.empty() && *end == '\0';
      } else {
        std::optional<ir::DType> t = ir::parse_dtype(value);
        ok = t.has_value();
        if (t) s.value.i = static_cast<int64_t>(*t);
      }
      if (!ok)
        fail(ErrorKind::Argument, where(), ": '", value, "' is no value of ", name, "'s type ",
             p.cpp_type);
      continue;
    }
    // A pointer or a scalar: its dtype and facts, separated by ':'.
    std::istringstream parts(value);
    std::string part;
    while (std::getline(parts, part, ':')) {
      if (std::optional<ir::DType> t = ir::parse_dtype(part)) {
        if (p.dtype && *p.dtype != *t)
          fail(ErrorKind::Argument, where(), ": ", name, " is a ", p.cpp_type, ", not ", part);
        s.dtype = *t;
        given[i] = true;
      } else if (p.cls == tl::ParamClass::Scalar && part == "div16") {
        s.divisible_by_16 = true;
      } else if (p.cls == tl::ParamClass::Scalar && part == "one") {
        s.equal_to_one = true;
      } else if (p.cls == tl::ParamClass::Pointer && part == "unaligned") {
        unaligned[i] = true;
      } else {
        fail(ErrorKind::Argument, where(), ": '", part, "' in ", name, "=", value,
             " is neither a dtype nor ",
             p.cls == tl::ParamClass::Pointer ? "'unaligned'" : "'div16' or 'one'");
      }
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    tl::ArgSpec& s = (*specs)[i];
    const tl::ParamDesc& p = params[i];
    if (p.cls == tl::ParamClass::Constexpr) {
      if (!given[i])
        fail(ErrorKind::Argument, where(), ": the constant ", names[i], " needs a value");
      continue;
    }
    if (!given[i] && !p.dtype)
      fail(ErrorKind::Argument, where(), ": ", names[i], " (", p.cpp_type, ") needs a dtype, e.g. ",
           names[i], "=f32");
    if (p.dtype) s.dtype = *p.dtype;
    // Buffers are 16-byte aligned unless the specialization says 'unaligned'.
    if (p.cls == tl::ParamClass::Pointer) s.divisible_by_16 = !unaligned[i];
  }
}

std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out + "\"";
}

/// A C++ expression of the ParamDesc `p`.
std::string param_desc_cpp(const tl::ParamDesc& p) {
  std::string dtype =
      p.dtype ? "::tessera::ir::DType(" + std::to_string(static_cast<int>(*p.dtype)) + ")"
              : "std::nullopt";
  return "{::tessera::tl::ParamClass(" + std::to_string(static_cast<int>(p.cls)) + "), " + dtype +
         ", ::tessera::tl::ConstValue::Kind(" + std::to_string(static_cast<int>(p.const_kind)) +
         "), " + c_string(p.cpp_type) + "}";
}

}  // namespace

size_t generate(const std::string& plan_path, const std::string& out_cpp, const std::string& out_h,
                std::span<const GeneratorKernel> kernels) {
  const Plan plan = read_plan(plan_path);
  if (plan.targets.empty()) fail(ErrorKind::Argument, "the plan names no target");
  std::map<std::string, const GeneratorKernel*> by_name;
  for (const GeneratorKernel& k : kernels) by_name[k.name] = &k;
  std::map<std::string, std::vector<std::string>> specs_of;
  for (const auto& [kernel, text] : plan.specs) {
    if (!by_name.count(kernel))
      fail(ErrorKind::Argument, "specialization '", kernel, ": ", text,
           "' names no kernel listed in KERNELS");
    specs_of[kernel].push_back(text);
  }
  std::ostringstream cpp, h;
  cpp << "// Generated by tessera_add_kernels (runtime/aot_generator.h). Do not edit.\n"
      << "#include " << c_string(plan.header) << "\n\n";
  if (plan.fallback)
    for (const std::string& s : plan.sources) cpp << "#include " << c_string(s) << "\n";
  h << "// Generated by tessera_add_kernels (runtime/aot_generator.h). Do not edit.\n"
    << "#pragma once\n\n#include <tessera/tessera.h>\n\nnamespace " << plan.ns << " {\n";
  std::ostringstream launchers;
  int blob = 0;
  for (const GeneratorKernel& k : kernels) {
    const std::vector<std::string>& texts = specs_of[k.name];
    if (texts.empty())
      fail(ErrorKind::Argument, "kernel '", k.name, "' has no specialization (SPECIALIZATIONS \"",
           k.name, ": NAME=VALUE ...\")");
    std::string entries = "const ::tessera::aot::Entry " + std::string(k.name) + "_entries[] = {\n";
    std::string built;
    for (const std::string& text : texts) {
      Decoded d;
      parse_spec(k, text, &d.specs, &d.options);
      std::shared_ptr<const ir::Module> traced = k.kernel->traced_for_specs(d.specs);
      for (const std::string& profile : plan.targets) {
        std::optional<target::Target> t = target::profile(profile);
        if (!t) {
          std::string list;
          for (const std::string& n : target::profile_names()) list += " " + n;
          fail(ErrorKind::Argument, "unknown target '", profile, "' (profiles:", list, ")");
        }
        d.target = t->str();
        d.is_ir = t->isa == "none";
        if (d.is_ir) {
          d.payload = ir::print(*traced);
          // The interpreters parse it back at run time: prove here that it reads back the same.
          if (ir::print(*ir::parse(d.payload, k.name)) != d.payload)
            fail(ErrorKind::Internal, "kernel '", k.name, "': its tile IR does not print back");
        } else {
          d.payload = rt::serialize_artifact(rt::jit_compile(*traced, *t, d.options));
        }
        const std::string bytes = encode_entry(d);
        cpp << "static const unsigned char aot_blob_" << blob << "[] = {";
        for (size_t i = 0; i < bytes.size(); ++i)
          cpp << (i % 24 == 0 ? "\n  " : "")
              << static_cast<int>(static_cast<unsigned char>(bytes[i])) << ",";
        cpp << "\n};\n";
        entries += "    {" + c_string(profile) + ", " + c_string(text) + ", aot_blob_" +
                   std::to_string(blob) + ", sizeof aot_blob_" + std::to_string(blob) + "},\n";
        built += "///   " + profile + ": " + text + "\n";
        ++blob;
      }
    }
    cpp << "static " << entries << "};\n";
    std::string names;
    for (const std::string& n : k.kernel->param_names()) names += (names.empty() ? "" : ", ") + n;
    std::string fallback = "nullptr";
    if (plan.fallback) {
      cpp << "static const auto " << k.name << "_jit = ::tessera::Kernel(" << k.function << ", "
          << c_string(k.name) << ", " << c_string(names) << ");\n";
      fallback = "&" + std::string(k.name) + "_jit";
    }
    std::string descs;
    for (const tl::ParamDesc& p : k.kernel->params()) descs += "\n     " + param_desc_cpp(p) + ",";
    launchers << "const ::tessera::AotKernel " << k.name << "(" << c_string(k.name) << ", "
              << c_string(names) << ",\n    {" << descs << "},\n    " << k.name << "_entries, "
              << fallback << ");\n";
    h << "/// " << k.function << "(" << names << "), built ahead of time for:\n"
      << built << "extern const ::tessera::AotKernel " << k.name << ";\n";
  }
  cpp << "\nnamespace " << plan.ns << " {\n"
      << launchers.str() << "}  // namespace " << plan.ns << "\n";
  h << "}  // namespace " << plan.ns << "\n";
  for (auto [path, text] : {std::pair{out_cpp, cpp.str()}, std::pair{out_h, h.str()}}) {
    std::ofstream out(path);
    out << text;
    if (!out) fail(ErrorKind::Runtime, "cannot write ", path);
  }
  return static_cast<size_t>(blob);
}

int generator_main(int argc, char** argv, std::span<const GeneratorKernel> kernels) {
  try {
    if (argc != 4) fail(ErrorKind::Argument, "usage: ", argv[0], " PLAN OUT_CPP OUT_H");
    const size_t artifacts = generate(argv[1], argv[2], argv[3], kernels);
    std::printf("tessera_add_kernels: %zu kernel(s), %zu artifact(s) -> %s\n", kernels.size(),
                artifacts, argv[2]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera_add_kernels: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace tessera::aot
