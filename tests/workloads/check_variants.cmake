# Runs one workload every way it accepts (the --alloc values `--variants`
# prints: malloc, custom, reap, and where built emulator, talloc, apr, pmr)
# and checks that each exits with 0 and prints the same `checksum` line.
#
#   cmake -DEXE=<program> [-DARGS="--quick"] [-DFOOTPRINT=1] -P check_variants.cmake
#
# FOOTPRINT=1 also reads `footprint_peak_bytes N` from stderr and requires the
# custom (pool) variant to hold more than the reap variant: regions cannot
# reclaim what a producer-consumer module frees (reaps paper §7.5).
cmake_minimum_required(VERSION 3.16)
if(NOT EXE)
  message(FATAL_ERROR "EXE is not set")
endif()
if(NOT DEFINED ARGS)
  set(ARGS --quick)
endif()
separate_arguments(ARGS)

execute_process(COMMAND ${EXE} --variants RESULT_VARIABLE rc OUTPUT_VARIABLE variants ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--variants: exit status ${rc}\n${err}")
endif()
string(REGEX REPLACE "[ \t\r\n]+" ";" variants "${variants}")
list(FILTER variants EXCLUDE REGEX "^$")
foreach(required malloc custom)
  if(NOT required IN_LIST variants)
    message(FATAL_ERROR "--variants does not list ${required}: ${variants}")
  endif()
endforeach()
list(GET variants 0 first)
if(NOT first STREQUAL "malloc")
  message(FATAL_ERROR "--variants must list the naive variant (malloc) first: ${variants}")
endif()
message(STATUS "variants: ${variants}")

set(reference "")
set(reference_variant "")
foreach(variant ${variants})
  execute_process(COMMAND ${EXE} --alloc ${variant} ${ARGS}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${variant}: exit status ${rc}\n${out}\n${err}")
  endif()
  string(REGEX MATCH "checksum [0-9a-f]+" line "${out}")
  if(NOT line)
    message(FATAL_ERROR "${variant}: no checksum line in\n${out}")
  endif()
  message(STATUS "${variant}: ${line}")
  if(reference STREQUAL "")
    set(reference "${line}")
    set(reference_variant ${variant})
  elseif(NOT line STREQUAL reference)
    message(FATAL_ERROR "${variant} printed '${line}', ${reference_variant} printed '${reference}'")
  endif()
  if(FOOTPRINT)
    string(REGEX MATCH "footprint_peak_bytes ([0-9]+)" fp "${err}")
    if(NOT fp)
      message(FATAL_ERROR "${variant}: no footprint_peak_bytes line on stderr")
    endif()
    set(footprint_${variant} ${CMAKE_MATCH_1})
    message(STATUS "${variant}: footprint_peak_bytes ${CMAKE_MATCH_1}")
  endif()
endforeach()

if(FOOTPRINT AND NOT footprint_custom GREATER footprint_reap)
  message(FATAL_ERROR "pools held ${footprint_custom} bytes, reaps ${footprint_reap}: "
                      "expected the pools to hold more")
endif()
