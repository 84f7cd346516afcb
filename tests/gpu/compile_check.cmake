# compile_check.cmake - compiles the CUDA programs meant for a GPU machine (tests/gpu/
# gpu_check.cu for scripts/gpu-check, bench/cuda_launch.cu) with nvcc, without running
# them, so CI catches a broken program before a GPU session does. Debian's nvcc 11.8 wants
# a host compiler older than gcc 12: when it refuses the default one, the check retries
# with the compiler nvcc suggests (clang-14, installed by scripts/bootstrap).
# Run: cmake -DNVCC=... -DSRC=<repo> -DOUT=<dir> -P compile_check.cmake
file(MAKE_DIRECTORY ${OUT})
set(arch --generate-code "arch=compute_75,code=[compute_75,sm_75]"
    --generate-code arch=compute_90,code=sm_90)
foreach(prog tests/gpu/gpu_check.cu bench/cuda_launch.cu)
  get_filename_component(name ${prog} NAME_WE)
  set(cmd ${NVCC} -O2 -I ${SRC}/include -o ${OUT}/${name} ${SRC}/${prog} ${arch})
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc EQUAL 0 AND "${o}${e}" MATCHES "Use 'nvcc -ccbin ([^']+)'")
    set(host ${CMAKE_MATCH_1})
    execute_process(COMMAND ${NVCC} -ccbin ${host} -O2 -I ${SRC}/include -o ${OUT}/${name}
                            ${SRC}/${prog} ${arch}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nvcc could not build ${prog}:\n${o}${e}")
  endif()
  message(STATUS "nvcc built ${prog} -> ${OUT}/${name}")
endforeach()
