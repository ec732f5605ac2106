/// \file The conformance runner: device facts, per-case seeds, SKIP/FAIL/PASS rules, the matrix,
/// the summary line and the JSON report.
#include "tools/conformance.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "core/support/filter.h"
#include "tests/conformance/catalogue.h"
#include "tools/conformance_exec.h"

namespace tessera::tools {
namespace {

using conformance::Case;

struct Options {
  std::vector<std::string> devices;
  std::vector<std::string> filters;
  std::string json;
  uint64_t seed = 0;
  bool seed_given = false;
  bool quick = false;
  bool list = false;
  bool verbose = false;
  bool isolate = true;
  double timeout_s = 300;
};

int usage() {
  std::fprintf(
      stderr,
      "usage: tessera conformance --device NAME [--device NAME ...] [--filter PATTERN]\n"
      "                           [--json FILE] [--seed S] [--quick] [--list] [--verbose]\n"
      "                           [--no-isolate] [--timeout SECONDS]\n");
  return 2;
}

void split_into(const std::string& s, std::vector<std::string>& out) {
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, ',');)
    if (!part.empty()) out.push_back(part);
}

bool parse_options(const std::vector<std::string>& args, Options& o) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--device" && has_value)
      split_into(args[++i], o.devices);
    else if (a == "--filter" && has_value)
      o.filters.push_back(args[++i]);
    else if (a == "--json" && has_value)
      o.json = args[++i];
    else if (a == "--seed" && has_value)
      o.seed = std::stoull(args[++i], nullptr, 0), o.seed_given = true;
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--list")
      o.list = true;
    else if (a == "--verbose" || a == "-v")
      o.verbose = true;
    else if (a == "--no-isolate")
      o.isolate = false;
    else if (a == "--timeout" && has_value)
      o.timeout_s = std::stod(args[++i]);
    else
      return false;
  }
  return true;
}

std::string cell(const Result& r) {
  char buf[64];
  switch (r.status) {
    case Status::Pass:
      return "PASS";
    case Status::Skip:
      return "SKIP (" + r.detail + ")";
    case Status::Fail:
      std::snprintf(buf, sizeof buf, "FAIL max_err=%.3g", r.max_err);
      return buf;
  }
  return "?";
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\', out += ch;
    else if (ch == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(ch) < 0x20)
      out += ' ';
    else
      out += ch;
  }
  return out;
}

const char* status_name(Status s) {
  return s == Status::Pass ? "pass" : s == Status::Fail ? "fail" : "skip";
}

struct Row {
  const Case* c;
  std::vector<Result> results;
};

void write_json(const std::string& path, const Options& o, const std::vector<Row>& rows,
                const int counts[3]) {
  std::ofstream os(path);
  if (!os) fail(ErrorKind::Runtime, "conformance: cannot write '", path, "'");
  os << "{\n  \"seed\": " << o.seed << ",\n  \"quick\": " << (o.quick ? "true" : "false")
     << ",\n  \"devices\": [";
  for (size_t d = 0; d < o.devices.size(); ++d)
    os << (d ? ", " : "") << '"' << json_escape(o.devices[d]) << '"';
  os << "],\n  \"summary\": {\"passed\": " << counts[0] << ", \"failed\": " << counts[1]
     << ", \"skipped\": " << counts[2] << "},\n  \"cases\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    os << "    {\"name\": \"" << json_escape(rows[i].c->name) << "\", \"results\": {";
    for (size_t d = 0; d < rows[i].results.size(); ++d) {
      const Result& r = rows[i].results[d];
      os << (d ? ", " : "") << '"' << json_escape(o.devices[d]) << "\": {\"status\": \""
         << status_name(r.status) << "\", \"max_err\": " << r.max_err << ", \"ms\": " << r.ms
         << ", \"detail\": \"" << json_escape(r.detail) << "\"}";
    }
    os << "}}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  os << "  ]\n}\n";
}

bool selected(const Case& c, const Options& o) {
  if (o.filters.empty()) return true;
  for (const std::string& f : o.filters)
    if (matches_filter(c.name, f)) return true;
  return false;
}

}  // namespace

void print_row(const Row& row, const Options& o) {
  std::printf("%-52s", row.c->name.c_str());
  for (const Result& r : row.results) {
    std::string text = cell(r);
    if (o.verbose && r.status != Status::Skip)
      text += " (" + std::to_string(static_cast<int>(r.ms)) + " ms)";
    std::printf(" | %-22s", text.c_str());
  }
  std::printf("\n");
  for (size_t d = 0; d < row.results.size(); ++d)
    if (row.results[d].status == Status::Fail)
      std::printf("    %s: %s\n", o.devices[d].c_str(), row.results[d].detail.c_str());
  std::fflush(stdout);
}

int conformance_main(const std::vector<std::string>& args) {
  Options o;
  if (!parse_options(args, o)) return usage();
  const auto& all = conformance::catalogue();
  std::vector<Row> rows;
  std::vector<const Case*> cases;
  for (const Case& c : all)
    if (selected(c, o)) rows.push_back({&c, {}}), cases.push_back(&c);
  if (o.list) {
    for (const Case* c : cases) std::printf("%s\n", c->name.c_str());
    return 0;
  }
  if (o.devices.empty()) return usage();
  if (!o.seed_given) o.seed = std::random_device{}();
  std::printf("conformance: %zu cases on %zu device(s), seed %" PRIu64 "%s\n", rows.size(),
              o.devices.size(), o.seed, o.quick ? ", quick sizes" : "");
  std::printf("%-52s", "case");
  for (const std::string& d : o.devices) std::printf(" | %-22s", d.c_str());
  std::printf("\n");
  std::fflush(stdout);
  const ExecOptions exec{o.seed, o.quick, o.isolate, o.timeout_s};
  for (Row& row : rows) row.results.resize(o.devices.size());
  for (size_t d = 0; d < o.devices.size(); ++d) {
    run_cases(o.devices[d], cases, exec, [&](size_t i, const Result& r) {
      rows[i].results[d] = r;
      if (d + 1 == o.devices.size())
        print_row(rows[i], o);  // complete once the last device reports
    });
  }
  int counts[3] = {0, 0, 0};
  for (const Row& row : rows)
    for (const Result& r : row.results) ++counts[static_cast<int>(r.status)];
  if (counts[1]) {
    std::printf("\nfailures (replay one with: tessera conformance --device NAME --seed %" PRIu64
                " --filter CASE):\n",
                o.seed);
    for (const Row& row : rows)
      for (size_t d = 0; d < o.devices.size(); ++d)
        if (row.results[d].status == Status::Fail)
          std::printf("  %s on %s: %s\n", row.c->name.c_str(), o.devices[d].c_str(),
                      row.results[d].detail.c_str());
    std::printf("seed %" PRIu64 "\n", o.seed);
  }
  if (!o.json.empty()) write_json(o.json, o, rows, counts);
  std::printf("%d passed, %d failed, %d skipped\n", counts[0], counts[1], counts[2]);
  return counts[1] ? 1 : 0;
}

}  // namespace tessera::tools
