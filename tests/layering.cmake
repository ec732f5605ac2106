# \file Checks the one-way arrows of ARCHITECTURE.md section 1: core/ includes nothing from
# targets/ or runtime/, and targets/ nothing from runtime/.
add_test(NAME "layering: core includes no targets/ or runtime/ header"
         COMMAND sh -c "! grep -rnE '#include \"(targets|runtime)/' core"
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME "layering: targets include no runtime/ header"
         COMMAND sh -c "! grep -rnE '#include \"runtime/' targets"
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
