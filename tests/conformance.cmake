# \file Conformance and differential fuzzing through the `tessera` tool: the catalogue of
# tests/conformance/ on every device CI has (one line per device; QUICK caps sizes for slow
# devices), and `fuzz: host`, a few hundred random programs optimized vs unoptimized.
function(tessera_conformance device)
  cmake_parse_arguments(ARG "QUICK" "" "" ${ARGN})
  set(quick)
  if(ARG_QUICK)
    set(quick --quick)
  endif()
  # Each run draws fresh inputs; a failure prints the seed that replays it (--seed S).
  add_test(NAME "conformance: ${device}" COMMAND tessera_tool conformance --device ${device} ${quick})
endfunction()

tessera_conformance(host)
tessera_conformance(simt:8 QUICK)
tessera_conformance(simt:32 QUICK)
tessera_conformance(simt:64 QUICK)
tessera_conformance(vulkan:0 QUICK)

add_test(NAME "fuzz: host" COMMAND tessera_tool fuzz --device host --count 300 --seed 1)
