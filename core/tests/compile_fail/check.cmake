# One compile-failure case (ctest -P): compiles SOURCE with -DDIST_CASE=CASE against INCLUDE.
# EXPECT "compiles": the case must compile; otherwise it must fail and its errors contain EXPECT.
execute_process(
  COMMAND ${CXX} -std=c++20 -fsyntax-only -I${INCLUDE} -DDIST_CASE=${CASE} ${SOURCE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(EXPECT STREQUAL "compiles")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "case ${CASE} should compile and did not:\n${err}")
  endif()
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "case ${CASE} compiled: a write through a span of const elements was accepted")
endif()
string(FIND "${err}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "case ${CASE} failed without the message '${EXPECT}':\n${err}")
endif()
