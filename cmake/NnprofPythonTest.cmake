# cmake/NnprofPythonTest.cmake - nnp_add_python_test(NAME <test> DIR <folder> MODULE <module>
# ENV <var=value;...>): registers `python3 -m unittest -v <module>` run in <folder> as a
# ctest entry (600 s). These end-to-end tests start real processes that preload the
# library (nnprof run, mpirun, an install); an instrumented libnnprof.so cannot be preloaded
# into uninstrumented processes, so they are not registered under NNP_SANITIZE (the C
# unit tests cover those builds), nor without python3.
function(nnp_add_python_test)
  cmake_parse_arguments(T "" "NAME;DIR;MODULE" "ENV" ${ARGN})
  if(NNP_SANITIZE)
    message(STATUS "NNP_SANITIZE=${NNP_SANITIZE}: ${T_NAME} not registered")
    return()
  endif()
  find_package(Python3 COMPONENTS Interpreter)
  if(NOT Python3_Interpreter_FOUND)
    message(STATUS "python3 not found: ${T_NAME} not registered")
    return()
  endif()
  add_test(NAME ${T_NAME} COMMAND ${Python3_EXECUTABLE} -m unittest -v ${T_MODULE}
           WORKING_DIRECTORY ${T_DIR})
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT 600 ENVIRONMENT
                       "${T_ENV};PYTHONDONTWRITEBYTECODE=1")
endfunction()
