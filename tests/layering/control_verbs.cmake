# cmake -DDIR=<build>/src -P control_verbs.cmake: fails when a qpo static library other than
# qpo_verbs calls a libibverbs control verb (create, destroy, modify, query, alloc, reg, bind,
# attach, open, close...): those go through src/verbs (qp_control.h, resources.h), which
# return the errno and name the mask in words. The data path (post, poll, get_cq_event) is
# not a control verb and may stay inline. Verbs that verbs.h inlines (ibv_post_send,
# ibv_bind_mw) leave no symbol; ibv_query_device_ex leaves ibv_query_device, its fallback.
find_program(NM nm REQUIRED)
file(GLOB_RECURSE libs ${DIR}/libqpo_*.a)
list(FILTER libs EXCLUDE REGEX "/libqpo_verbs\\.a$")
if(NOT libs)
  message(FATAL_ERROR "no libqpo_*.a under ${DIR}: build first")
endif()
set(bad "")
foreach(lib ${libs})
  execute_process(COMMAND ${NM} --undefined-only ${lib} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${lib}")
  endif()
  string(REGEX MATCHALL
         "U _*ibv_(alloc|attach|bind|close|create|dealloc|dereg|destroy|detach|modify|open|query|reg|rereg)_[A-Za-z0-9_]*"
         hits "${out}")
  if(hits)
    list(TRANSFORM hits REPLACE "^U " "")
    list(REMOVE_DUPLICATES hits)
    list(JOIN hits ", " hits)
    list(APPEND bad "${lib}: ${hits}")
  endif()
endforeach()
if(bad)
  string(REPLACE ";" "\n" bad "${bad}")
  message(FATAL_ERROR "control verbs called outside src/verbs:\n${bad}")
endif()
list(LENGTH libs n)
message(STATUS "no control verbs outside src/verbs in ${n} libraries")
