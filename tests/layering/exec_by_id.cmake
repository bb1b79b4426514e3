# cmake -DROOT=<source dir> -P exec_by_id.cmake: fails when src/exec looks an object up by its
# scenario name. exec runs the lowered plan: objects by id, groups and external peers by
# index, notes between hosts by plan id (issue 31; docs/architecture.md section 6). The
# plan's name lookups (Plan::id_of, qp_id, peer_id, external, mcast_group, window, its
# *_index tables, plan/buffer_key.h's buffer_key) are the planner's and the CLI's, called on
# any variable; a RunState lookup by name (`*_named`) has no place either.
cmake_minimum_required(VERSION 3.20)
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/src/exec/*.h ${ROOT}/src/exec/*.cpp)
include(${CMAKE_CURRENT_LIST_DIR}/forbid_lines.cmake)
forbid_lines(ROOT ${ROOT} FILES ${files}
             MATCHES "(->|\\.)(id_of|qp_id|peer_id|external|mcast_group|window)\\(|(window|mcast_group|workload)_index|buffer_key\\(|[a-z]_named\\(|scenario(->|\\.)"
             WHAT "src/exec looks objects up by name (use the plan's ids)")
list(LENGTH files count)
message(STATUS "no name lookups in the ${count} files of src/exec")
