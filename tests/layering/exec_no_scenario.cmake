# cmake -DROOT=<source dir> -P exec_no_scenario.cmake: fails when src/exec reads the scenario.
# exec runs the lowered plan alone (issue 31; docs/architecture.md section 6): it names no
# scenario:: or check:: type, includes no scenario/ or check/ header, and is handed no
# Checked (its sessions take a plan::Plan). What it needs of the file the planner put in the
# plan, typed (plan::WorkloadParams, plan::McastGroup, util::Threshold, util::PeerValues).
cmake_minimum_required(VERSION 3.20)
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/src/exec/*.h ${ROOT}/src/exec/*.cpp)
include(${CMAKE_CURRENT_LIST_DIR}/forbid_lines.cmake)
forbid_lines(ROOT ${ROOT} FILES ${files}
             MATCHES "(scenario|check)::|#include \"(scenario|check)/|\\.model\\(\\)"
             WHAT "src/exec reads the scenario (the planner lowers what exec needs into the plan)")
list(LENGTH files count)
message(STATUS "no scenario in the ${count} files of src/exec")
