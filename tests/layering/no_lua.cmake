# cmake -DLIBS="a.a;b.a" -P no_lua.cmake: fails when any of the static libraries needs the Lua
# VM - an undefined lua_*/luaL_* symbol, or one of src/lua's entry points that run scripts
# (qpo::lua::check_workload, run_workload). Guards the layering: check and workload stay
# plain C++ (src/CMakeLists.txt), the setup() dry-run lives in src/validate.
find_program(NM nm REQUIRED)
set(bad "")
foreach(lib ${LIBS})
  execute_process(COMMAND ${NM} -C --undefined-only ${lib} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${lib}")
  endif()
  string(REGEX MATCHALL "U (luaL?_[A-Za-z_]+|qpo::lua::(check|run)_workload[^\n]*)" hits "${out}")
  if(hits)
    list(APPEND bad "${lib}: ${hits}")
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "needs the Lua VM:\n${bad}")
endif()
message(STATUS "no Lua VM symbols in: ${LIBS}")
