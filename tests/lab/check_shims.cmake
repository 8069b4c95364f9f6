# Runs PROG under the profile shim and checks the record, then under the
# litter shim with that record and checks its log. Invoked by ctest.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(out "${WORK}/profile.json")

execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${PROFILE_SO} ALLOCLAB_PROFILE_OUT=${out} ${PROG}
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout)
if(NOT rc EQUAL 0 OR NOT stdout STREQUAL "ok\n")
  message(FATAL_ERROR "program under the profile shim failed: ${rc} '${stdout}'")
endif()
file(READ "${out}" json)
foreach(check "allocations=1010" "max_live=1010" "max_live_bytes=74000" "ignored=10" "cutoff=4096"
              "bytes=74000" "live_at_exit=0" "unknown_frees=0")
  string(REPLACE "=" ";" kv "${check}")
  list(GET kv 0 key)
  list(GET kv 1 want)
  string(JSON got GET "${json}" ${key})
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "profile key ${key}: want ${want}, got ${got}\n${json}")
  endif()
endforeach()
string(JSON n24 GET "${json}" sizes 24)
string(JSON nsizes LENGTH "${json}" sizes)
if(NOT n24 EQUAL 1000 OR NOT nsizes EQUAL 1)
  message(FATAL_ERROR "sizes: want {\"24\": 1000}\n${json}")
endif()

set(log "${WORK}/litter.log")
execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${LITTER_SO} LITTER_PROFILE=${out}
                        LITTER_MULTIPLIER=3 LITTER_OCCUPANCY=0.66 LITTER_LOG=${log} ${PROG}
                RESULT_VARIABLE rc)
file(READ "${log}" line)
if(NOT rc EQUAL 0 OR NOT line MATCHES "objects=3030 freed=1030 live=2000 ")
  message(FATAL_ERROR "litter: status ${rc}, log '${line}'")
endif()

file(WRITE "${WORK}/bad.json" "{\"max_live\": 3}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${LITTER_SO} LITTER_PROFILE=${WORK}/bad.json ${PROG}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "litter: profile has no \"sizes\"")
  message(FATAL_ERROR "a bad profile must stop the program with status 2: ${rc} '${err}'")
endif()
