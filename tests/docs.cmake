# \file The API reference builds without a warning (cmake/TesseraDocs.cmake, docs/Doxyfile.in):
# every public class, function, member and enum value is documented. Without doxygen the test
# is still listed and skips, saying why. Not in a sanitizer build: the same headers, checked once.
# Not in a subproject either (cmake/TesseraDocs.cmake defines TESSERA_DOXYFILE at top level only).
if(DEFINED TESSERA_DOXYFILE AND NOT TESSERA_SANITIZE)
  set(docs_test "docs: API reference without warnings")
  if(TESSERA_DOXYGEN)
    add_test(NAME ${docs_test} COMMAND ${TESSERA_DOXYGEN} ${TESSERA_DOXYFILE})
  else()
    set(why "doxygen not found (Debian: doxygen; scripts/install-deps)")
    add_test(NAME ${docs_test} COMMAND sh -c "echo 'SKIP: ${why}'; exit 77")
    set_tests_properties(${docs_test} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endif()
