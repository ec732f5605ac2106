# \file Conformance and differential fuzzing through the `tessera` tool: the catalogue of
# tests/conformance/ on every device CI has (one line per device; QUICK caps sizes for slow
# devices), `fuzz: host`, a few hundred random programs optimized vs unoptimized, `fuzz:
# simt:32`, random programs through the SIMT lowering against the host interpreter, and `fuzz:
# vulkan:0`, the same through SPIR-V on lavapipe.
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
tessera_conformance(simt:32 QUICK)
# The other subgroup sizes run the same interpreter code as simt:32: under ASan+UBSan (CI's last
# stage, 5-8x slower) they add two minutes of CPU and no code, so only the Release suite has them.
if(NOT TESSERA_SANITIZE)
  tessera_conformance(simt:8 QUICK)
  tessera_conformance(simt:64 QUICK)
endif()
# The lowering Hopper gets (wgmma, its rings), in the SIMT interpreter.
tessera_conformance(simt:cuda-sm_90a QUICK)
# The lowering NVIDIA's Vulkan driver gets (cooperative matrices), in the SIMT interpreter.
tessera_conformance(simt:vulkan-nvidia QUICK)
# The same driver with VK_NV_cooperative_matrix2 on (TESSERA_COOPMAT2=1): 8 KiB less shared memory.
tessera_conformance(simt:vulkan-nvidia-coopmat2 QUICK)
if(TESSERA_HAS_VULKAN)  # a build without the Vulkan backend has no vulkan:0
  tessera_conformance(vulkan:0 QUICK)
endif()

add_test(NAME "fuzz: host" COMMAND tessera_tool fuzz --device host --count 300 --seed 1)
# The same generator against the SIMT lowering at subgroup 32 (device vs host interpreter).
add_test(NAME "fuzz: simt:32" COMMAND tessera_tool fuzz --device simt:32 --count 200 --seed 2)
# A bf16 reverse scan whose sum cancels: added in bf16 its value depended on the order, which is
# the layout's (ir::sum_accumulator). Program 276 of seed 7 alone (--count 277 names it).
add_test(NAME "fuzz: simt:32 seed 7 program 276"
         COMMAND tessera_tool fuzz --device simt:32 --seed 7 --count 277 --program 276)
# And against lavapipe (vulkan:0): SPIR-V, SPIRV-Tools and the driver (driver bugs are worked
# around by target quirks; sin/cos arguments stay where Vulkan specifies them).
if(TESSERA_HAS_VULKAN)
  add_test(NAME "fuzz: vulkan:0" COMMAND tessera_tool fuzz --device vulkan:0 --count 40 --seed 3)
endif()
