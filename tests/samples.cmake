# \file Every sample is also a test: it must print PASS on the host interpreter.
if(TESSERA_BUILD_SAMPLES)
  file(GLOB sample_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/samples/[0-9][0-9]_*.cpp)
  foreach(src ${sample_sources})
    get_filename_component(name ${src} NAME_WE)
    add_test(NAME "sample: ${name} on host" COMMAND sample_${name} --device host)
    set_tests_properties("sample: ${name} on host" PROPERTIES PASS_REGULAR_EXPRESSION "^PASS ")
  endforeach()
endif()
