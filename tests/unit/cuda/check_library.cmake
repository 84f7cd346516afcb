# check_library.cmake - libnnprof_cuda.so exports its entry points (InitializeInjection for
# CUDA_INJECTION64_PATH, the NCCL wrappers for LD_PRELOAD) and none of the core's internal
# nnp__ symbols, and needs libnnprof.so (found beside it, $ORIGIN). Run: cmake -DLIB=... -P.
execute_process(COMMAND nm -D --defined-only ${LIB} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIB}")
endif()
foreach(want InitializeInjection ncclAllReduce ncclAllGather ncclReduceScatter ncclBroadcast
        ncclReduce ncclSend ncclRecv ncclGroupStart ncclGroupEnd)
  if(NOT syms MATCHES " T ${want}\n")
    message(FATAL_ERROR "${LIB} does not export ${want}")
  endif()
endforeach()
if(syms MATCHES " nnp_")
  message(FATAL_ERROR "${LIB} exports nnprof symbols of its own:\n${syms}")
endif()
execute_process(COMMAND readelf -d ${LIB} OUTPUT_VARIABLE dyn)
if(NOT dyn MATCHES "libnnprof\\.so\\.0" OR NOT dyn MATCHES "libcupti")
  message(FATAL_ERROR "${LIB} must need libnnprof.so.0 and libcupti:\n${dyn}")
endif()
if(NOT dyn MATCHES "\\$ORIGIN")
  message(FATAL_ERROR "${LIB} has no $ORIGIN run path:\n${dyn}")
endif()
message(STATUS "libnnprof_cuda.so: exports and dependencies as expected")
