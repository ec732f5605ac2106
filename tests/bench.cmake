# \file `tessera bench --quick` on the host interpreter: every workload checked against its
# reference, then timed at small sizes. It keeps bench/ working; it asserts no speed (speed is
# read from `tessera bench` on a GPU, see docs/performance.md).
add_test(NAME "bench: host --quick" COMMAND tessera_tool bench --device host --quick)
set_tests_properties("bench: host --quick" PROPERTIES TIMEOUT 600)
