/// \file TESSERA_DUMP: which compile stages and driver reports to print, and where.
///
/// The variable is a comma-separated list of words (dump_words() lists them with what each
/// prints): `TESSERA_DUMP=ir,layouts,ptx`. An unknown word is an ErrorKind::Argument error that
/// names it and lists the valid ones. Tools print a stage on stdout with Dumps of their own.
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

/// One word TESSERA_DUMP accepts.
struct DumpWord {
  std::string_view name;
  std::string_view summary;
};
/// Every word, in the order of the stages they print.
std::span<const DumpWord> dump_words();

/// Which stages a compile prints, where, and with or without locations.
class Dumps {
 public:
  /// Prints nothing.
  Dumps() = default;
  /// The words of TESSERA_DUMP (read on every call: tests and tools set the variable as they run).
  static Dumps from_env();
  /// The words of `list` (comma-separated); `source` names it in errors ("TESSERA_DUMP").
  static Dumps parse(std::string_view list, std::string_view source);

  bool has(std::string_view word) const;
  /// Is any word but `word` given?
  bool has_other_than(std::string_view word) const;
  /// Printed IR keeps its locations unless the word `noloc` is given.
  bool locations() const { return !has("noloc"); }
  /// Where dumps go: std::cerr unless redirected.
  std::ostream& out() const;
  Dumps& redirect(std::ostream& os) {
    out_ = &os;
    return *this;
  }

 private:
  std::vector<std::string> words_;
  std::ostream* out_ = nullptr;
};

/// Is `word` in TESSERA_DUMP? (Dumps::from_env().has(word).)
bool dump_enabled(std::string_view word);

}  // namespace tessera
