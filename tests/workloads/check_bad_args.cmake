# A workload rejects bad arguments with a message on stderr and exit status 2,
# and answers --help with exit status 0.
#
#   cmake -DEXE=<program> -P check_bad_args.cmake
if(NOT EXE)
  message(FATAL_ERROR "EXE is not set")
endif()

set(cases
  "--alloc;bogus" "--alloc" "--alloc=" "--scale;0" "--scale;-1" "--scale;abc"
  "--scale;1e9" "--scale=2x" "--frobnicate" "extra" "--quick=1")
foreach(case IN LISTS cases)
  string(REPLACE ";" " " shown "${case}")
  execute_process(COMMAND ${EXE} ${case} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "'${shown}': exit status ${rc}, expected 2\n${out}${err}")
  endif()
  if(err STREQUAL "")
    message(FATAL_ERROR "'${shown}': nothing on stderr")
  endif()
  if(out MATCHES "checksum")
    message(FATAL_ERROR "'${shown}': ran anyway")
  endif()
endforeach()

execute_process(COMMAND ${EXE} --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "usage:")
  message(FATAL_ERROR "--help: exit status ${rc}\n${out}${err}")
endif()
