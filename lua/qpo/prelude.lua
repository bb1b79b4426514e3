-- Runs in every Lua state before the workload script (wrk's idea: defaults live in Lua, the
-- C++ side supplies primitives). Keep it small: everything here costs every state.

-- qpo.defaults(args, defaults): fills the missing fields of args from defaults and returns it.
function qpo.defaults(args, defaults)
  args = args or {}
  for k, v in pairs(defaults) do
    if args[k] == nil then args[k] = v end
  end
  return args
end
