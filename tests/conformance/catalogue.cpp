/// \file The list of category files; each registers its cases (the order is the report's).
#include "tests/conformance/catalogue.h"

#include <set>

#include "core/support/error.h"

namespace tessera::conformance {

void register_plumbing(std::vector<Case>& out);
void register_binary(std::vector<Case>& out);
void register_bitwise(std::vector<Case>& out);
void register_compare(std::vector<Case>& out);
void register_unary(std::vector<Case>& out);
void register_math(std::vector<Case>& out);
void register_cast(std::vector<Case>& out);
void register_shape(std::vector<Case>& out);
void register_memory(std::vector<Case>& out);
void register_descriptors(std::vector<Case>& out);
void register_atomics(std::vector<Case>& out);
void register_reduce(std::vector<Case>& out);
void register_scan(std::vector<Case>& out);
void register_dot(std::vector<Case>& out);
void register_control(std::vector<Case>& out);
void register_seed_kernels(std::vector<Case>& out);
void register_drivers(std::vector<Case>& out);
void register_attention(std::vector<Case>& out);
void register_random(std::vector<Case>& out);
void register_join(std::vector<Case>& out);
void register_sort(std::vector<Case>& out);
void register_block_ptr(std::vector<Case>& out);
void register_early_return(std::vector<Case>& out);
void register_range_options(std::vector<Case>& out);
void register_keywords(std::vector<Case>& out);
void register_barrier(std::vector<Case>& out);
void register_hints(std::vector<Case>& out);
void register_rem_contiguity(std::vector<Case>& out);
void register_single_trip(std::vector<Case>& out);
void register_fp8(std::vector<Case>& out);
void register_inline_asm(std::vector<Case>& out);  // H20

namespace {

constexpr Registrar kCategories[] = {
    register_plumbing, register_binary,      register_bitwise,      register_compare,
    register_unary,    register_math,        register_cast,         register_shape,
    register_memory,   register_descriptors, register_atomics,      register_reduce,
    register_scan,     register_dot,         register_control,      register_seed_kernels,
    register_drivers,  register_attention,   register_random,       register_join,
    register_sort,     register_block_ptr,   register_early_return, register_range_options,
    register_keywords, register_barrier,     register_hints,        register_rem_contiguity,
    register_fp8,      register_inline_asm,  register_single_trip,
};

std::vector<Case> build() {
  std::vector<Case> all;
  for (Registrar r : kCategories) r(all);
  std::set<std::string> names;
  for (const Case& c : all)
    TESSERA_CHECK(names.insert(c.name).second, "two conformance cases are named '", c.name, "'");
  return all;
}

}  // namespace

const std::vector<Case>& catalogue() {
  static const std::vector<Case> all = build();
  return all;
}

}  // namespace tessera::conformance
