# \file Golden tests: every tests/golden/**/*.tir runs through tessera_golden as one ctest
# ("golden: ir/roundtrip.tir"); a few generated files check that the runner itself fails when
# it must.
add_executable(tessera_golden ${CMAKE_CURRENT_SOURCE_DIR}/support/golden_runner.cpp)
target_compile_options(tessera_golden PRIVATE ${TESSERA_WARNINGS})
target_link_libraries(tessera_golden PRIVATE tessera)
target_include_directories(tessera_golden PRIVATE ${PROJECT_SOURCE_DIR})
set_target_properties(tessera_golden PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

file(GLOB_RECURSE golden_files CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/golden/*.tir)
foreach(file ${golden_files})
  file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR}/golden ${file})
  add_test(NAME "golden: ${rel}" COMMAND tessera_golden ${file}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endforeach()

# The runner's own failure modes: each input must make it fail with the given report.
set(selftest_dir ${CMAKE_CURRENT_BINARY_DIR}/golden_selftest)
set(ok_func "func @f(%a: i32) {\n  %0 = add %a, %a : i32\n  %1 = mul %0, %a : i32\n}\n")
function(golden_selftest name expect content)
  file(WRITE ${selftest_dir}/${name}.tir "${content}")
  add_test(NAME "golden: runner fails on ${name}"
           COMMAND tessera_golden ${selftest_dir}/${name}.tir)
  set_tests_properties("golden: runner fails on ${name}" PROPERTIES
                       PASS_REGULAR_EXPRESSION "${expect}")
endfunction()
golden_selftest(missing_check "CHECK: sub %a\n  not found"
                "// RUN: verify\n${ok_func}// CHECK: sub %a\n")
golden_selftest(check_next_not_next "CHECK-NEXT: mul %0\n  matched 2 lines"
                "// RUN: verify\n${ok_func}// CHECK: func @f\n// CHECK-NEXT: mul %0\n")
golden_selftest(check_same_other_line "CHECK-SAME: add\n  is not on the line"
                "// RUN: verify\n${ok_func}// CHECK: func @f\n// CHECK-SAME: add\n")
golden_selftest(check_not_present "CHECK-NOT: add\n  found where it must not be"
                "// RUN: verify\n${ok_func}// CHECK: func\n// CHECK-NOT: add\n// CHECK: mul\n")
golden_selftest(check_label_block "CHECK: add %a\n  not found"
                "// RUN: verify\n${ok_func}// CHECK-LABEL: %0 = add\n// CHECK: add %a\n")
golden_selftest(error_not_raised "expected an error, but the pipeline succeeded"
                "// RUN: verify\n${ok_func}// expected-error {{operand}}\n")
golden_selftest(error_other_message "expected error not produced: {{no such message}}"
                "// RUN: verify\nfunc @f() {\n  yield\n}\n// expected-error {{no such message}}\n")
golden_selftest(error_other_line "expected error not produced: {{top level}} at line 4"
                "// RUN: verify\nfunc @f() {\n  yield\n}\n// expected-error@-1 {{top level}}\n")
golden_selftest(unexpected_error "unexpected error:\n  .*'yield' op is not allowed"
                "// RUN: verify\nfunc @f() {\n  yield\n}\n")
golden_selftest(check_empty_not_empty "CHECK-EMPTY: \n  the next line is not empty"
                "// RUN: verify\n${ok_func}// CHECK: add\n// CHECK-EMPTY:\n")
golden_selftest(misspelled_directive "unknown directive 'CHECK-NXT:'"
                "// RUN: verify\n${ok_func}// CHECK-NXT: add\n")
golden_selftest(unknown_step "unknown pipeline step 'no-such-pass'"
                "// RUN: no-such-pass\n${ok_func}")
golden_selftest(second_case_fails "case at line 8"
                "// RUN: verify\n${ok_func}// CHECK: add\n// -----\nfunc @g() {\n}\n// CHECK: add\n")
