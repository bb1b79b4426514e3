# cmake -DROOT=<source dir> -P threads.cmake: fails when a file in src/ or tests/ starts a
# thread other than through the two wrappers that keep an exception from leaving it:
# util::ThreadGroup (src/util/thread_group.*) and the tests' WorkerThread (tests/test_threads.h).
# An exception that leaves a std::thread's body ends the process (std::terminate: CI went red
# on "terminate called" from a test's bare std::thread); docs/architecture.md section 4.
cmake_minimum_required(VERSION 3.20)  # if(IN_LIST)
set(allowed "src/util/thread_group.h;src/util/thread_group.cpp;tests/test_threads.h")
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/src/*.h ${ROOT}/src/*.cpp ${ROOT}/tests/*.h ${ROOT}/tests/*.cpp)
include(${CMAKE_CURRENT_LIST_DIR}/forbid_lines.cmake)
# A thread object or a start: std::thread x(...), std::thread(...), vector<std::thread>,
# std::jthread, std::async, pthread_create. std::thread::native_handle_type and the like pass.
forbid_lines(ROOT ${ROOT} FILES ${files} ALLOWED ${allowed}
             MATCHES "std::j?thread([^:]|$)|std::async[ (]|pthread_create"
             WHAT "threads started outside util::ThreadGroup / WorkerThread")
list(LENGTH files count)
message(STATUS "every thread in ${count} files starts through util::ThreadGroup or WorkerThread")
