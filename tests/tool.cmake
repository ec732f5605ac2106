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

# The plans as `tessera dump --stage layouts` prints them (the matmul's dot on sm_80 tensor cores).
add_test(NAME "tool: tessera dump matmul_relu_kernel --stage layouts"
         COMMAND tessera_tool dump matmul_relu_kernel --stage layouts --target cuda-sm_80)
set_tests_properties("tool: tessera dump matmul_relu_kernel --stage layouts" PROPERTIES
                     PASS_REGULAR_EXPRESSION "dot %[0-9]+: mma_sync m16n8k8.tf32, warps 2x2")

# An unknown TESSERA_DUMP word stops the compile with an error that lists the valid words.
add_test(NAME "tool: an unknown TESSERA_DUMP word is an error"
         COMMAND ${CMAKE_COMMAND} -E env TESSERA_DUMP=ir,layout
                 $<TARGET_FILE:tessera_tool> conformance --device simt:32 --filter plumbing/program_id/axis0)
set_tests_properties("tool: an unknown TESSERA_DUMP word is an error" PROPERTIES
                     PASS_REGULAR_EXPRESSION "unknown word 'layout' \\(valid: ir, passes, times, layouts")

# TESSERA_CAPTURE writes what a launch compiles; `tessera dump FILE` compiles it again.
if(TARGET sample_01_vector_add)
add_test(NAME "tool: a kernel captured from a launch dumps again"
         COMMAND sh -c "rm -rf capture && TESSERA_CAPTURE=capture \"$1\" --device host >/dev/null && \
                        \"$0\" dump capture/vector_add_kernel.*.tir --stage ptx --target cuda-sm_80"
                 $<TARGET_FILE:tessera_tool> $<TARGET_FILE:sample_01_vector_add>
         WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties("tool: a kernel captured from a launch dumps again" PROPERTIES
                     PASS_REGULAR_EXPRESSION "\\.entry vector_add_kernel")
endif()

# The command line itself (issue 15, item 6). tool_stdout runs `tessera ARGS` and shows stdout
# alone, tool_stderr stderr alone; both end with "exit N", so a regex checks the stream and the
# exit code together (PASS_REGULAR_EXPRESSION alone ignores the exit code).
function(tool_stdout name expect)
  add_test(NAME "tool: ${name}"
           COMMAND sh -c "\"$0\" \"$@\" 2>/dev/null; echo \"exit $?\"" $<TARGET_FILE:tessera_tool>
                   ${ARGN})
  set_tests_properties("tool: ${name}" PROPERTIES PASS_REGULAR_EXPRESSION "${expect}")
endfunction()
function(tool_stderr name expect)
  add_test(NAME "tool: ${name}"
           COMMAND sh -c "\"$0\" \"$@\" 2>&1 >/dev/null; echo \"exit $?\"" $<TARGET_FILE:tessera_tool>
                   ${ARGN})
  set_tests_properties("tool: ${name}" PROPERTIES PASS_REGULAR_EXPRESSION "${expect}")
endfunction()

# Help on stdout with exit code 0: tessera's, each command's (--help, -h, anywhere after the
# command, and `tessera help CMD`); no line of any help is wider than 80 columns.
tool_stdout("tessera --help" "^usage: tessera COMMAND.*commands:.*  devices .*  cache .*exit 0\n$"
            --help)
tool_stdout("tessera -h" "^usage: tessera COMMAND.*exit 0\n$" -h)
tool_stdout("tessera help" "^usage: tessera COMMAND.*exit 0\n$" help)
tool_stdout("tessera help dump" "^usage: tessera dump .*--device NAME.*exit 0\n$" help dump)
foreach(cmd devices dump cache conformance fuzz bench help)
  tool_stdout("tessera ${cmd} --help" "^usage: tessera ${cmd}.*exit 0\n$" ${cmd} --help)
endforeach()
tool_stdout("tessera dump -h" "^usage: tessera dump .*exit 0\n$" dump -h)
tool_stdout("tessera dump KERNEL --help" "^usage: tessera dump .*exit 0\n$"
            dump softmax_kernel --stage ptx --help)
add_test(NAME "tool: help lines fit in 80 columns"
         COMMAND sh -c "for c in '' devices dump cache conformance fuzz bench help; do \
                          \"$0\" help $c; done | awk 'length > 80 { print \"too long: \" $0 }'; \
                        echo checked" $<TARGET_FILE:tessera_tool>)
set_tests_properties("tool: help lines fit in 80 columns" PROPERTIES
                     PASS_REGULAR_EXPRESSION "^checked\n$")
# conformance, fuzz and bench keep their own short usage for bad arguments: every option it
# names must be in the help that tools/help.cpp holds for them, so the two cannot drift apart.
add_test(NAME "tool: the help names every option of the usage lines"
         COMMAND sh -c "for c in conformance fuzz bench; do                           \"$0\" $c --no-such-option 2>&1 >/dev/null | grep -o -- '--[a-z0-9-]*' |                           sort -u | while read o; do                             \"$0\" $c --help | grep -q -- \"$o\" || echo \"missing: $c $o\";                           done;                         done; echo checked" $<TARGET_FILE:tessera_tool>)
set_tests_properties("tool: the help names every option of the usage lines" PROPERTIES
                     PASS_REGULAR_EXPRESSION "^checked\n$")

# --version prints the project's version (tessera::version()).
tool_stdout("tessera --version" "^tessera ${PROJECT_VERSION}\nexit 0\n$" --version)

# Usage errors go to stderr with exit code 2: no command, an unknown command (named, with the
# commands listed and a close one suggested), an unknown option.
tool_stderr("tessera without a command" "^usage: tessera COMMAND.*exit 2\n$")
tool_stderr("an unknown command"
            "^tessera: unknown command 'frobnicate'\ncommands: devices, dump, cache, conformance, fuzz, bench, triton-diff, help \\(see `tessera --help`\\)\nexit 2\n$"
            frobnicate)
tool_stderr("a misspelt command" "unknown command 'devcies' \\(did you mean 'devices'\\?\\).*exit 2"
            devcies)
tool_stderr("an unknown option" "^tessera: unknown option '--frob' \\(see `tessera --help`\\)\nexit 2\n$"
            --frob)
tool_stderr("tessera devices --frob" "^tessera devices: unknown option '--frob'.*exit 2\n$"
            devices --frob)

# `tessera devices`: a table with a header and one short row per device (the host row exactly:
# its memory is the machine's RAM, the tile interpreter has no subgroup, no shared memory and no
# matrix units); --verbose adds the description and the full target text.
tool_stdout("tessera devices"
            "^name +kind +memory +subgroup +shared +matrix units +device\n(.*\n)?host +host +[0-9.]+ [GT]iB +- +- +none +Tessera host interpreter\n(.*\n)?simt:32 +simt +[0-9.]+ [GT]iB +32 +48 KiB +mma.sync \\(f16 bf16 tf32 i8\\) +SIMT interpreter\n.*exit 0\n$"
            devices)
tool_stdout("tessera devices --verbose"
            "\nhost +host .*\n    Tessera host interpreter \\(the reference semantics\\)\n    target: host\\{isa=none, .*exit 0\n$"
            devices --verbose)

# `tessera dump` of a kernel written by hand in tile IR: PTX and SPIR-V without a GPU. --device
# takes the device's own target: vulkan:0 (lavapipe, with its loop limit) makes SPIR-V that
# counts loop iterations, which the default vulkan-nvidia profile does not; simt:8 lowers for a
# subgroup of 8.
set(scale_tir ${CMAKE_CURRENT_SOURCE_DIR}/tool/scale.tir)
tool_stdout("tessera dump FILE.tir --stage ptx"
            "\\.target sm_90a\n.*\\.visible \\.entry scale_kernel\\(.*exit 0\n$"
            dump ${scale_tir} --stage ptx --target cuda-sm_90a)
tool_stdout("tessera dump FILE.tir --stage spirv"
            "OpEntryPoint GLCompute %scale_kernel \"scale_kernel\" %params %gl_WorkGroupID %gl_NumWorkGroups %SubgroupLocalInvocationId.*exit 0\n$"
            dump ${scale_tir} --stage spirv)
if(TESSERA_HAS_VULKAN)
  tool_stdout("tessera dump FILE.tir --device vulkan:0"
              "OpEntryPoint GLCompute %scale_kernel \"scale_kernel\" .*%loop_at_limit.*exit 0\n$"
              dump ${scale_tir} --stage spirv --device vulkan:0)
endif()
tool_stdout("tessera dump FILE.tir --device simt:8"
            "^func @scale_kernel\\(.*stage = \"simt\", subgroup = 8, .*exit 0\n$"
            dump ${scale_tir} --stage simt --device simt:8)
tool_stderr("tessera dump --device of another target"
            "^tessera dump: 'host' does not produce PTX \\(try --target cuda-sm_90\\).*exit 2\n$"
            dump ${scale_tir} --stage ptx --device host)
tool_stderr("tessera dump --device that does not exist"
            "^tessera: runtime error: no device named 'cuda:7' \\(devices: .*host.*\\)\nexit 1\n$"
            dump ${scale_tir} --device cuda:7)
tool_stderr("tessera dump --target and --device"
            "^tessera dump: --target and --device both name a target.*exit 2\n$"
            dump ${scale_tir} --target cuda-sm_80 --device host)
tool_stderr("tessera dump with an unknown option"
            "^tessera dump: unknown option '--stgae' \\(see `tessera dump --help`\\)\nexit 2\n$"
            dump ${scale_tir} --stgae ptx)
tool_stderr("tessera dump with a bad number"
            "^tessera dump: option --num-warps takes a positive integer, not 'four'.*exit 2\n$"
            dump ${scale_tir} --num-warps four)
tool_stderr("tessera dump of a missing file"
            "^tessera: argument error: cannot read missing\\.tir: No such file or directory\nexit 1\n$"
            dump missing.tir)

# `tessera cache` in a TESSERA_CACHE_DIR of its own: the folders, files and sizes of made-up
# entries (1023 bytes in two cuda files, one below a folder; 3000 in a vulkan file); --clear
# empties the folders and keeps them; `clear` is the same.
add_test(NAME "tool: tessera cache lists and clears the caches"
         COMMAND sh -c "d=$PWD/cache-test && rm -rf $d && mkdir -p $d/cuda/sub $d/vulkan && \
                        head -c 1000 /dev/zero >$d/cuda/a.cubin && \
                        head -c 23 /dev/zero >$d/cuda/sub/b && \
                        head -c 3000 /dev/zero >$d/vulkan/x.pipelines && \
                        export TESSERA_CACHE_DIR=$d && \"$0\" cache && \"$0\" cache --clear && \
                        echo left: $(find $d -type f | wc -l) && test -d $d/cuda && \
                        head -c 5 /dev/zero >$d/vulkan/y && \"$0\" cache clear && \
                        echo left: $(find $d -type f | wc -l); echo exit $?"
                 $<TARGET_FILE:tessera_tool>
         WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties("tool: tessera cache lists and clears the caches" PROPERTIES
                     PASS_REGULAR_EXPRESSION
                     "^cache root: [^\n]*/cache-test \\(TESSERA_CACHE_DIR\\)\ncache +files +size +folder\ncuda +2 +1023 B +[^\n]*/cache-test/cuda\nvulkan +1 +2\\.9 KiB +[^\n]*/cache-test/vulkan\nartifacts +0 +0 B +[^\n]*/cache-test/artifacts \\(missing\\)\nautotune +0 +0 B +[^\n]*/cache-test/autotune \\(missing\\)\ntotal +3 +3\\.9 KiB\n.*removed 3 files \\(3\\.9 KiB\\)\nleft: 0\n.*\nvulkan +1 +5 B .*removed 1 file \\(5 B\\)\nleft: 0\nexit 0\n$")
# The real thing: the pipeline cache and the artifacts that a run on vulkan:0 leaves.
if(TESSERA_HAS_VULKAN)
  add_test(NAME "tool: tessera cache shows the pipeline cache of a run on vulkan:0"
           COMMAND sh -c "d=$PWD/cache-test-vulkan && rm -rf $d && export TESSERA_CACHE_DIR=$d && \
                          \"$0\" conformance --device vulkan:0 --filter plumbing/program_id/axis0 \
                            --no-isolate >/dev/null && \"$0\" cache; echo exit $?"
                   $<TARGET_FILE:tessera_tool>
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties("tool: tessera cache shows the pipeline cache of a run on vulkan:0" PROPERTIES
                       PASS_REGULAR_EXPRESSION
                       "\ncuda +0 +0 B +[^\n]*/cuda \\(missing\\)\nvulkan +1 +[0-9.]+ [KMi]*B +[^\n]*/cache-test-vulkan/vulkan\nartifacts +[1-9][0-9]* +[0-9.]+ [KMi]*B +[^\n]*/cache-test-vulkan/artifacts\nautotune +0 +0 B +[^\n]*/cache-test-vulkan/autotune \\(missing\\)\ntotal +[2-9][0-9]* .*exit 0\n$")
endif()
tool_stderr("tessera cache with an unknown argument"
            "^tessera cache: unknown argument '--all' \\(see `tessera cache --help`\\)\nexit 2\n$"
            cache --all)

# `tessera triton-diff` writes the same inputs on every device and bench/peers/diff.py compares
# the outputs (against the host's here; against the Triton twins on a GPU machine: gpu-check's
# triton-diff step). Fails on a FAIL verdict or inputs that differ between devices.
set(triton_diff_dir ${CMAKE_CURRENT_BINARY_DIR}/triton-diff)
set(triton_diff_devices host simt:32)
if(TESSERA_HAS_VULKAN)
  list(APPEND triton_diff_devices vulkan:0)
endif()
set(triton_diff_script "rm -rf '${triton_diff_dir}'")
set(triton_diff_outs)
foreach(device ${triton_diff_devices})
  string(REPLACE ":" "" sub ${device})
  string(APPEND triton_diff_script
         " && $<TARGET_FILE:tessera_tool> triton-diff --device ${device} --out '${triton_diff_dir}/${sub}'")
  if(NOT device STREQUAL "host")
    list(APPEND triton_diff_outs "'${triton_diff_dir}/${sub}'")
  endif()
endforeach()
list(JOIN triton_diff_outs " " triton_diff_outs)
string(APPEND triton_diff_script " && python3 ${PROJECT_SOURCE_DIR}/bench/peers/diff.py "
       "${triton_diff_outs} --reference '${triton_diff_dir}/host'")
add_test(NAME "tool: tessera triton-diff on CPU devices, compared by bench/peers/diff.py"
         COMMAND sh -c "${triton_diff_script}")
set_tests_properties("tool: tessera triton-diff on CPU devices, compared by bench/peers/diff.py"
                     PROPERTIES PASS_REGULAR_EXPRESSION "36 cases x [0-9]+ devices against host: 0 FAIL")
