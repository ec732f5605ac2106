# \file Keeps the arrows between folders pointing one way (core/ includes nothing from targets/ or
# runtime/, a target no other target, a backend no other backend, bench/ and samples/ no backend,
# ...): scripts/check-layering holds the rules as one table and checks every `#include "..."`.
set(layering_check python3 ${PROJECT_SOURCE_DIR}/scripts/check-layering)
add_test(NAME "layering: every folder includes only what the table allows"
         COMMAND ${layering_check} ${PROJECT_SOURCE_DIR})

# The check's own test, so it cannot pass by seeing nothing: a tiny tree with one forbidden
# include (spelt relative to the includer), one folder the table lacks, one public header that
# includes another by a path from the root (not found once installed) and a build tree (skipped)
# must give exactly those three.
set(layering_tree ${CMAKE_CURRENT_BINARY_DIR}/layering-fixture)
file(REMOVE_RECURSE ${layering_tree})
file(WRITE ${layering_tree}/cmake/TesseraPackage.cmake
     "set(TESSERA_PUBLIC_HEADER_DIRS runtime core/support core/ir)\n")
file(WRITE ${layering_tree}/core/support/error.h "#pragma once\n")
file(WRITE ${layering_tree}/core/ir/ir.h "#include \"../support/error.h\"\n")
file(WRITE ${layering_tree}/core/ir/bad.cpp
     "#include \"core/ir/ir.h\"\n#include \"../../runtime/device.h\"\n")
file(WRITE ${layering_tree}/core/extra/x.h "#pragma once\n")
file(WRITE ${layering_tree}/runtime/device.h "#include \"core/ir/ir.h\"\n")
file(WRITE ${layering_tree}/out/CMakeCache.txt "")
file(WRITE ${layering_tree}/out/core/ir/skipped.cpp "#include \"runtime/device.h\"\n")
string(CONCAT layering_self "layering: the check reports a forbidden include, a folder the table "
                            "lacks and a public header's root-relative include")
add_test(NAME ${layering_self} COMMAND ${layering_check} ${layering_tree})
string(CONCAT layering_expected
       "^core/extra/x.h:1: folder core/extra is not in the layering table[^\n]*\n"
       "core/ir/bad.cpp:2: core/ir may not include runtime/device.h\n"
       "runtime/device.h:1: public header includes core/ir/ir.h by a path from the repository "
       "root[^\n]*\n"
       "3 layering violation")
set_tests_properties(${layering_self} PROPERTIES PASS_REGULAR_EXPRESSION "${layering_expected}")
