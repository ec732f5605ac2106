# \file The `tessera dump` stages: every stage of a sample kernel prints what it names.
foreach(stage_check "ir;func @softmax_kernel" "simt;stage = \"simt\"" "spirv;OpEntryPoint GLCompute"
                    "ptx;mma.sync.aligned")
  list(GET stage_check 0 stage)
  list(GET stage_check 1 expect)
  set(kernel softmax_kernel)
  set(extra)
  if(stage STREQUAL "ptx")
    set(kernel matmul_relu_kernel)  # its f32 dot is TF32 mma.sync on sm_90
  endif()
  add_test(NAME "tool: tessera dump ${kernel} --stage ${stage}"
           COMMAND tessera_tool dump ${kernel} --stage ${stage})
  set_tests_properties("tool: tessera dump ${kernel} --stage ${stage}" PROPERTIES
                       PASS_REGULAR_EXPRESSION "${expect}")
endforeach()
