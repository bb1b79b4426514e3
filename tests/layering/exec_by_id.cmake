# cmake -DROOT=<source dir> -P exec_by_id.cmake: fails when src/exec looks an object up by its
# scenario name. exec runs the lowered plan: objects by id, groups and external peers by
# index, notes between hosts by plan id (issue 31; docs/architecture.md section 6). The
# plan's name lookups (Plan::id_of, qp_id, peer_id, external, mcast_group, window, its
# *_index tables, plan/buffer_key.h's buffer_key) are the planner's and the CLI's, called on
# any variable; a RunState lookup by name (`*_named`) has no place either.
cmake_minimum_required(VERSION 3.20)
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/src/exec/*.h ${ROOT}/src/exec/*.cpp)
set(bad "")
foreach(f ${files})
  file(STRINGS ${ROOT}/${f} lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    string(REGEX REPLACE "//.*$" "" code "${line}")  # a comment may name them
    if(code MATCHES "(->|\\.)(id_of|qp_id|peer_id|external|mcast_group|window)\\(|(window|mcast_group|workload)_index|buffer_key\\(|[a-z]_named\\(|scenario(->|\\.)")
      list(APPEND bad "${f}:${n}: ${line}")
    endif()
  endforeach()
endforeach()
if(bad)
  string(REPLACE ";" "\n" bad "${bad}")
  message(FATAL_ERROR "src/exec looks objects up by name (use the plan's ids):\n${bad}")
endif()
list(LENGTH files count)
message(STATUS "no name lookups in the ${count} files of src/exec")
