# cmake -DROOT=<source dir> -P threads.cmake: fails when a file in src/ or tests/ starts a
# thread other than through the two wrappers that keep an exception from leaving it:
# util::ThreadGroup (src/util/thread_group.*) and the tests' WorkerThread (tests/test_threads.h).
# An exception that leaves a std::thread's body ends the process (std::terminate: CI went red
# on "terminate called" from a test's bare std::thread); docs/architecture.md section 4.
cmake_minimum_required(VERSION 3.20)  # if(IN_LIST)
set(allowed "src/util/thread_group.h;src/util/thread_group.cpp;tests/test_threads.h")
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/src/*.h ${ROOT}/src/*.cpp ${ROOT}/tests/*.h ${ROOT}/tests/*.cpp)
set(bad "")
foreach(f ${files})
  if(f IN_LIST allowed)
    continue()
  endif()
  file(STRINGS ${ROOT}/${f} lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    string(REGEX REPLACE "//.*$" "" code "${line}")  # a comment may name them
    # A thread object or a start: std::thread x(...), std::thread(...), vector<std::thread>,
    # std::jthread, std::async, pthread_create. std::thread::native_handle_type and the like pass.
    if(code MATCHES "std::j?thread([^:]|$)|std::async[ (]|pthread_create")
      list(APPEND bad "${f}:${n}: ${line}")
    endif()
  endforeach()
endforeach()
if(bad)
  string(REPLACE ";" "\n" bad "${bad}")
  message(FATAL_ERROR "threads started outside util::ThreadGroup / WorkerThread:\n${bad}")
endif()
list(LENGTH files count)
message(STATUS "every thread in ${count} files starts through util::ThreadGroup or WorkerThread")
