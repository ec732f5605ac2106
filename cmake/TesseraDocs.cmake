# \file The API reference (Doxygen, docs/Doxyfile.in): target `docs` writes build/docs/html. Its
# input is the public headers, with README.md and the guide as pages; an undocumented public name
# is an error, so tests/docs.cmake runs it as a test. Without doxygen (Debian: doxygen) there is
# no target and the test skips.
# Top-level builds only: a caller's add_subdirectory gets no `docs` target to clash with its own.
if(NOT PROJECT_IS_TOP_LEVEL)
  return()
endif()
find_program(TESSERA_DOXYGEN doxygen)

# The public API: <tessera/tessera.h> and the headers it includes that users name.
set(TESSERA_DOCS_HEADERS
  include/tessera/tessera.h
  runtime/tessera.h runtime/buffer.h runtime/device.h runtime/kernel.h runtime/stream.h
  runtime/version.h runtime/aot.h
  core/lang/tl.h core/lang/tensor.h core/lang/params.h core/lang/control.h core/lang/range.h
  core/support/error.h core/support/float16.h)
# Pages: README.md is the reference's main page, the user guide a page beside it.
set(TESSERA_DOCS_PAGES README.md docs/guide.md)
set(TESSERA_DOCS_INPUT)
foreach(header ${TESSERA_DOCS_PAGES} ${TESSERA_DOCS_HEADERS})
  string(APPEND TESSERA_DOCS_INPUT " \"${PROJECT_SOURCE_DIR}/${header}\"")
endforeach()
set(TESSERA_DOCS_OUTPUT ${PROJECT_BINARY_DIR}/docs)
set(TESSERA_DOXYFILE ${PROJECT_BINARY_DIR}/docs/Doxyfile)
configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${TESSERA_DOXYFILE} @ONLY)

if(TESSERA_DOXYGEN)
  set(docs_depends ${TESSERA_DOCS_PAGES} ${TESSERA_DOCS_HEADERS})
  list(TRANSFORM docs_depends PREPEND ${PROJECT_SOURCE_DIR}/)
  add_custom_command(OUTPUT ${TESSERA_DOCS_OUTPUT}/html/index.html
    COMMAND ${TESSERA_DOXYGEN} ${TESSERA_DOXYFILE}
    DEPENDS ${TESSERA_DOXYFILE} ${docs_depends}
    COMMENT "API reference (Doxygen): ${TESSERA_DOCS_OUTPUT}/html/index.html" VERBATIM)
  add_custom_target(docs DEPENDS ${TESSERA_DOCS_OUTPUT}/html/index.html)
endif()
