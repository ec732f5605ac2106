// \file tessera_golden: runs hand-written golden IR files, this project's small FileCheck.
//
//   tessera_golden [--dump] FILE.tir...
//
// A file starts with `// RUN: <pipeline>`, a comma-separated list of steps:
//   verify      runs the verifier (every diagnostic is collected, see below);
//   roundtrip   print, parse, print: both prints must be identical;
//   <pass>      a pass from core/passes/pipeline.h, followed by the verifier;
//   lower <target> [num_warps=N] [num_stages=S] [coopmat2=1] (any launch option, name=value)
//               the pipeline's steps from `plan` on (plans, SIMT IR, its cleanup, the
//               verifier) for a target profile: the output is the SIMT IR;
//   grouped-launch  a matmul-like kernel's 2-D grid renamed to run in groups (grouped_launch.h);
//   single-trip     loops over one range that load the same tiles opened behind a test
//               (single_trip.h; without the cleanup that follows it in the pipeline);
//   descriptor-loads <target>
//               pointer loads feeding a loop's dot as descriptor loads (descriptor_loads.h);
//   plans <target> [name=value]... (launch options, as for lower)
//               the lowering plans as TESSERA_DUMP=layouts prints them (the last step).
// Cases are separated by `// -----` lines; each is parsed on its own (line numbers stay those
// of the file) and run through the pipeline, then its printed result is matched against its
//   // CHECK: text        text occurs after the previous match
//   // CHECK-NEXT: text   ... on the next line
//   // CHECK-SAME: text   ... on the same line
//   // CHECK-NOT: text    text does not occur between the previous and the next match
//   // CHECK-LABEL: text  found first; splits the output into blocks that the others stay in
//   // CHECK-EMPTY:       the next line is empty
// (plain substrings, no regular expressions). A case with
//   // expected-error {{message}}        (or expected-error@+N / @-N {{message}})
// must fail in parse, verify or a pass with a user error containing `message` (at the line of
// the annotation plus N when @ is given); every expected error must occur and no other error
// may. --dump prints each case's output (or its errors) instead of checking.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/ir/parser.h"
#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/support/error.h"

#include "core/passes/descriptor_loads.h"
#include "core/passes/grouped_launch.h"
#include "core/passes/pipeline.h"
#include "core/passes/single_trip.h"
#include "core/target/target.h"

namespace {

using tessera::Error;
using tessera::ErrorKind;

enum class CheckKind { Check, Next, Same, Not, Label, Empty };

struct Directive {
  CheckKind kind;
  std::string text;
  int line;  ///< 1-based line in the file
};

struct ExpectedError {
  std::string message;
  std::optional<int> line;  ///< the line the diagnostic must point at, when @+N/@-N is given
  int annotation_line;
};

struct Case {
  int first_line;
  std::string text;  ///< padded with newlines so that line numbers are those of the file
  std::vector<Directive> checks;
  std::vector<ExpectedError> errors;
};

struct Diagnostic {
  std::string message;
  bool user;  ///< an error an expected-error may match (not a crash or an internal error)
};

struct Outcome {
  std::vector<Diagnostic> diagnostics;  ///< empty on success
  std::string output;
};

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] != sep) continue;
    out.emplace_back(s.substr(start, i - start));
    start = i + 1;
  }
  return out;
}

/// The directive in `line` (a `// CHECK...:` comment), if any; a misspelled one is an error.
std::optional<Directive> parse_directive(const std::string& line, int number) {
  static const std::pair<std::string_view, CheckKind> kPrefixes[] = {
      {"CHECK-NEXT:", CheckKind::Next},   {"CHECK-SAME:", CheckKind::Same},
      {"CHECK-NOT:", CheckKind::Not},     {"CHECK-LABEL:", CheckKind::Label},
      {"CHECK-EMPTY:", CheckKind::Empty}, {"CHECK:", CheckKind::Check}};
  size_t comment = line.find("//");
  if (comment == std::string::npos) return std::nullopt;
  std::string body = trim(std::string_view(line).substr(comment + 2));
  for (const auto& [prefix, kind] : kPrefixes)
    if (body.starts_with(prefix)) return Directive{kind, trim(body.substr(prefix.size())), number};
  size_t word = body.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ-");
  if (body.starts_with("CHECK") && word != std::string::npos && body[word] == ':')
    throw std::runtime_error("line " + std::to_string(number) + ": unknown directive '" +
                             body.substr(0, word + 1) + "'");
  return std::nullopt;
}

/// `expected-error[@+N|@-N] {{message}}` in `line`, if any.
std::optional<ExpectedError> parse_expected(const std::string& line, int number) {
  size_t at = line.find("expected-error");
  if (at == std::string::npos || line.rfind("//", at) == std::string::npos) return std::nullopt;
  size_t pos = at + std::string_view("expected-error").size();
  ExpectedError e{"", std::nullopt, number};
  if (pos < line.size() && line[pos] == '@') {
    size_t end = line.find_first_of(" {", pos);
    e.line = number + std::stoi(line.substr(pos + 1, end - pos - 1));
  }
  size_t open = line.find("{{", pos), close = line.rfind("}}");
  if (open == std::string::npos || close == std::string::npos || close < open + 2)
    throw std::runtime_error("line " + std::to_string(number) +
                             ": expected-error needs a {{message}}");
  e.message = line.substr(open + 2, close - open - 2);
  return e;
}

std::vector<Case> split_cases(const std::vector<std::string>& lines) {
  std::vector<Case> cases(1, Case{1, "", {}, {}});
  for (size_t i = 0; i < lines.size(); ++i) {
    int number = static_cast<int>(i) + 1;
    if (trim(lines[i]) == "// -----") {
      cases.push_back(Case{number + 1, std::string(i + 1, '\n'), {}, {}});
      continue;
    }
    Case& c = cases.back();
    c.text += lines[i] + "\n";
    if (auto d = parse_directive(lines[i], number)) c.checks.push_back(*d);
    if (auto e = parse_expected(lines[i], number)) c.errors.push_back(*e);
  }
  return cases;
}

Outcome fail_with(std::vector<std::string> messages) {
  Outcome out;
  for (auto& m : messages) out.diagnostics.push_back({std::move(m), true});
  return out;
}

/// `lower` and `plans`: the target and options of `words` ("lower cuda-sm_90a num_warps=8").
struct LowerArgs {
  tessera::target::Target target;
  tessera::CompileOptions options;
};

LowerArgs lower_args(const std::vector<std::string>& words) {
  if (words.size() < 2) throw std::runtime_error(words[0] + " needs a target profile");
  std::string error;
  auto target = tessera::target::parse_target(words[1], &error);
  if (!target) throw std::runtime_error(words[0] + ": " + error);
  LowerArgs a{*target, {}};
  for (size_t i = 2; i < words.size(); ++i) {
    const std::string& w = words[i];
    const size_t eq = w.find('=');
    if (eq == std::string::npos ||
        !tessera::set_option(a.options, w.substr(0, eq), std::stoll(w.substr(eq + 1))))
      throw std::runtime_error(words[0] + ": unknown option '" + w + "'");
  }
  return a;
}

/// Runs one pipeline step on `m`; returns the diagnostics it produced. A step whose output is
/// not IR (`plans`) sets `text`.
std::vector<std::string> run_step(const std::string& step, std::unique_ptr<tessera::ir::Module>& m,
                                  const std::string& source, std::optional<std::string>& text) {
  namespace ir = tessera::ir;
  namespace passes = tessera::passes;
  if (text) throw std::runtime_error("a step after 'plans' (whose output is not IR)");
  std::vector<std::string> words;
  for (const std::string& w : split(step, ' '))
    if (!w.empty()) words.push_back(w);
  if (words[0] == "lower" || words[0] == "plans") {
    const LowerArgs a = lower_args(words);
    // The input must be valid tile IR, as the pipeline's `verify` step makes it before `plan`.
    if (std::vector<std::string> diags = ir::verify_all(*m); !diags.empty()) return diags;
    passes::Compiled c;
    c.tile = std::move(m);
    passes::lower(c, a.target, a.options, tessera::Dumps());
    if (words[0] == "plans") text = c.plan->str();
    m = words[0] == "plans" ? std::move(c.tile) : std::move(c.simt);
    return {};
  }
  if (words[0] == "descriptor-loads") {
    const LowerArgs a = lower_args(words);
    passes::pointer_loads_to_descriptors(*m, a.target);
    return ir::verify_all(*m);
  }
  if (step == "grouped-launch") {
    passes::group_launch_order(*m);
    return ir::verify_all(*m);
  }
  if (step == "single-trip") {
    passes::version_single_trips(*m);
    return ir::verify_all(*m);
  }
  if (step == "verify") return ir::verify_all(*m);
  if (step == "roundtrip") {
    std::string first = ir::print(*m);
    std::unique_ptr<ir::Module> again;
    try {
      again = ir::parse(first, source + " (printed)");
    } catch (const Error& e) {
      throw Error(
          ErrorKind::Internal,
          std::string("roundtrip: the printed module does not parse: ") + e.what() + "\n" + first);
    }
    std::string second = ir::print(*again);
    if (first != second)
      throw Error(ErrorKind::Internal, "roundtrip: print(parse(print(m))) differs:\n" + first +
                                           "--- reprinted ---\n" + second);
    m = std::move(again);
    return {};
  }
  if (const passes::PassInfo* pass = passes::find_pass(step)) {
    pass->run(*m);
    return ir::verify_all(*m);
  }
  throw Error(ErrorKind::Internal, "unknown pipeline step '" + step + "'");
}

Outcome run_pipeline(const std::vector<std::string>& steps, const Case& c,
                     const std::string& source) {
  try {
    auto m = tessera::ir::parse(c.text, source);
    std::optional<std::string> text;
    for (const std::string& step : steps) {
      std::vector<std::string> diags = run_step(step, m, source, text);
      if (!diags.empty()) return fail_with(std::move(diags));
    }
    return Outcome{{}, text ? *text : tessera::ir::print(*m)};
  } catch (const Error& e) {
    return Outcome{{{e.what(), e.kind() == ErrorKind::User}}, ""};
  } catch (const std::exception& e) {
    return Outcome{{{std::string("exception: ") + e.what(), false}}, ""};
  }
}

/// Matches the CHECK directives against `output`; on failure, says why in `why`.
class Checker {
 public:
  Checker(const std::string& output, const std::string& file) : out_(output), file_(file) {}

  bool run(const std::vector<Directive>& ds, std::string* why) {
    // Labels first: each starts a block that ends where the next label's match starts.
    std::vector<size_t> label_index;
    std::vector<std::pair<size_t, size_t>> label_match;
    size_t pos = 0;
    for (size_t i = 0; i < ds.size(); ++i) {
      if (ds[i].kind != CheckKind::Label) continue;
      size_t at = out_.find(ds[i].text, pos);
      if (at == std::string::npos) return fail(ds[i], "not found", why);
      label_index.push_back(i);
      label_match.emplace_back(at, at + ds[i].text.size());
      pos = at + ds[i].text.size();
    }
    size_t begin = 0, cursor = 0;
    for (size_t b = 0; b <= label_index.size(); ++b) {
      size_t end = b < label_index.size() ? label_match[b].first : out_.size();
      size_t last = b < label_index.size() ? label_index[b] : ds.size();
      if (!block(ds, begin, last, cursor, end, why)) return false;
      if (b == label_index.size()) break;
      begin = last + 1;
      cursor = label_match[b].second;
    }
    return true;
  }

 private:
  /// Directives [first, last) within the output range [cursor, end).
  bool block(const std::vector<Directive>& ds, size_t first, size_t last, size_t cursor, size_t end,
             std::string* why) {
    std::vector<const Directive*> nots;
    for (size_t i = first; i < last; ++i) {
      const Directive& d = ds[i];
      if (d.kind == CheckKind::Empty) {
        size_t nl = out_.find('\n', cursor);
        if (nl == std::string::npos || nl + 1 >= end || out_[nl + 1] != '\n')
          return fail(d, "the next line is not empty", why);
        if (!check_nots(nots, cursor, nl + 1, why)) return false;
        nots.clear();
        cursor = nl + 1;
        continue;
      }
      if (d.text.empty()) return fail(d, "has an empty pattern", why);
      if (d.kind == CheckKind::Not) {
        nots.push_back(&d);
        continue;
      }
      size_t at = out_.find(d.text, cursor);
      if (at == std::string::npos || at + d.text.size() > end) return fail(d, "not found", why);
      long lines = std::count(out_.begin() + static_cast<long>(cursor),
                              out_.begin() + static_cast<long>(at), '\n');
      if (d.kind == CheckKind::Next && lines != 1)
        return fail(d, "matched " + std::to_string(lines) + " lines after the previous match", why);
      if (d.kind == CheckKind::Same && lines != 0)
        return fail(d, "is not on the line of the previous match", why);
      if (!check_nots(nots, cursor, at, why)) return false;
      nots.clear();
      cursor = at + d.text.size();
    }
    return check_nots(nots, cursor, end, why);
  }

  bool check_nots(const std::vector<const Directive*>& nots, size_t from, size_t to,
                  std::string* why) {
    for (const Directive* d : nots) {
      size_t at = out_.find(d->text, from);
      if (at != std::string::npos && at + d->text.size() <= to)
        return fail(*d, "found where it must not be", why);
    }
    return true;
  }

  bool fail(const Directive& d, const std::string& what, std::string* why) {
    static const char* kNames[] = {"CHECK",     "CHECK-NEXT",  "CHECK-SAME",
                                   "CHECK-NOT", "CHECK-LABEL", "CHECK-EMPTY"};
    *why = file_ + ":" + std::to_string(d.line) + ": " + kNames[static_cast<int>(d.kind)] + ": " +
           d.text + "\n  " + what;
    return false;
  }

  const std::string& out_;
  const std::string& file_;
};

bool diag_matches(const Diagnostic& d, const ExpectedError& e, const std::string& source) {
  if (!d.user || d.message.find(e.message) == std::string::npos) return false;
  return !e.line || d.message.starts_with(source + ":" + std::to_string(*e.line) + ":");
}

/// Empty if the case passed, else the report.
std::string check_case(const Case& c, const Outcome& o, const std::string& file) {
  std::ostringstream report;
  if (c.errors.empty()) {
    if (o.diagnostics.empty()) {
      std::string why;
      if (Checker(o.output, file).run(c.checks, &why)) return "";
      return why + "\n--- output ---\n" + o.output;
    }
    report << "unexpected error:\n";
    for (const Diagnostic& d : o.diagnostics) report << "  " << d.message << "\n";
    return report.str();
  }
  if (o.diagnostics.empty())
    return "expected an error, but the pipeline succeeded\n--- output ---\n" + o.output;
  std::vector<bool> used(o.diagnostics.size(), false);
  for (const ExpectedError& e : c.errors) {
    size_t k = 0;
    while (k < used.size() && (used[k] || !diag_matches(o.diagnostics[k], e, file))) ++k;
    if (k < used.size()) {
      used[k] = true;
      continue;
    }
    report << file << ":" << e.annotation_line << ": expected error not produced: {{" << e.message
           << "}}" << (e.line ? " at line " + std::to_string(*e.line) : "") << "\n";
  }
  for (size_t k = 0; k < used.size(); ++k)
    if (!used[k]) report << "unexpected error: " << o.diagnostics[k].message << "\n";
  return report.str();
}

std::vector<std::string> pipeline_of(const std::string& first_line) {
  const std::string prefix = "// RUN:";
  if (!first_line.starts_with(prefix))
    throw std::runtime_error("the first line must be '// RUN: <pipeline>'");
  std::vector<std::string> steps;
  for (const std::string& s : split(first_line.substr(prefix.size()), ',')) {
    std::string step = trim(s);
    if (step.empty()) throw std::runtime_error("empty step in the RUN pipeline");
    steps.push_back(step);
  }
  return steps;
}

/// Returns the number of failed cases.
int run_file(const std::string& file, bool dump) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::vector<std::string> lines = split(buffer.str(), '\n');
  if (lines.size() > 1 && lines.back().empty()) lines.pop_back();  // the file's final newline
  std::vector<std::string> steps = pipeline_of(lines.front());
  std::vector<Case> cases = split_cases(lines);
  int failed = 0;
  for (const Case& c : cases) {
    Outcome o = run_pipeline(steps, c, file);
    if (dump) {
      std::cout << "// ----- case at line " << c.first_line << "\n" << o.output;
      for (const Diagnostic& d : o.diagnostics) std::cout << d.message << "\n";
      continue;
    }
    std::string report = check_case(c, o, file);
    if (report.empty()) continue;
    ++failed;
    std::cout << "FAIL " << file << ": case at line " << c.first_line << "\n" << report << "\n";
  }
  if (!dump)
    std::cout << (failed ? "FAILED " : "PASSED ") << file << " (" << cases.size() - failed << "/"
              << cases.size() << " cases)\n";
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  bool dump = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--dump") {
      dump = true;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::cerr << "usage: tessera_golden [--dump] FILE.tir...\n";
    return 2;
  }
  int failed = 0;
  for (const std::string& f : files) {
    try {
      failed += run_file(f, dump);
    } catch (const std::exception& e) {
      std::cout << "FAIL " << f << ": " << e.what() << "\n";
      ++failed;
    }
  }
  return failed ? 1 : 0;
}
