# Runs one workload three ways (--alloc custom, reap, malloc) and checks that
# each exits with 0 and prints the same `checksum` line.
#
#   cmake -DEXE=<program> [-DARGS="--quick"] [-DFOOTPRINT=1] -P check_variants.cmake
#
# FOOTPRINT=1 also reads `footprint_peak_bytes N` from stderr and requires the
# custom (pool) variant to hold more than the reap variant: regions cannot
# reclaim what a producer-consumer module frees (reaps paper §7.5).
if(NOT EXE)
  message(FATAL_ERROR "EXE is not set")
endif()
if(NOT DEFINED ARGS)
  set(ARGS --quick)
endif()
separate_arguments(ARGS)

set(reference "")
foreach(variant custom reap malloc)
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
  elseif(NOT line STREQUAL reference)
    message(FATAL_ERROR "${variant} printed '${line}', custom printed '${reference}'")
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
