-- The environment of function libraries (FUNCTION LOAD), built on the
-- scripting prelude of the same Lua state. A library's code and the
-- functions it defines share one read-only global table: while the code
-- loads, its names resolve to the library API alone (`redis` with
-- register_function, log and the version); when a function runs, to the
-- globals every script sees. Chunk name "=[ebb]", as the prelude's.
local I = ...
local G, protect, refuse, shown, handler, native =
  I.G, I.protect, I.refuse, I.shown, I.handler, I.native
local error, type, tostring, select, setmetatable, rawget, xpcall, next =
  error, type, tostring, select, setmetatable, rawget, xpcall, next
local lower, find = string.lower, string.find

local function missing(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end

-- The registrations of the library being loaded; nil at any other time.
local pending = nil

local function fail(msg) error({ err = 'ERR ' .. msg }, 0) end

-- A string or a number (as Lua's C API takes either for a string).
local function text(v)
  local t = type(v)
  if t == 'string' then return v end
  if t == 'number' then return tostring(v) end
  return nil
end

local KNOWN_FLAGS = { ['no-writes'] = true, ['allow-oom'] = true, ['allow-stale'] = true,
  ['no-cluster'] = true, ['allow-cross-slot-keys'] = true }

local function read_flags(t)
  local out, i = {}, 1
  while true do
    local f = t[i]
    if f == nil then return out end
    local s = text(f)
    if s == nil or not KNOWN_FLAGS[lower(s)] then return nil end
    out[#out + 1] = lower(s)
    i = i + 1
  end
end

local function register_function(...)
  if pending == nil then
    fail('redis.register_function can only be called on FUNCTION LOAD command')
  end
  local n = select('#', ...)
  if n < 1 or n > 2 then fail('wrong number of arguments to redis.register_function') end
  local name, desc, callback, flags
  if n == 1 then
    local t = ...
    if type(t) ~= 'table' then
      fail('calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).')
    end
    for k, v in next, t do
      if text(k) == nil then fail('named argument key given to redis.register_function is not a string') end
      local key = lower(text(k))
      if key == 'function_name' then
        name = text(v)
        if name == nil then fail('function_name argument given to redis.register_function must be a string') end
      elseif key == 'description' then
        desc = text(v)
        if desc == nil then fail('description argument given to redis.register_function must be a string') end
      elseif key == 'callback' then
        if type(v) ~= 'function' then fail('callback argument given to redis.register_function must be a function') end
        callback = v
      elseif key == 'flags' then
        if type(v) ~= 'table' then
          fail('flags argument to redis.register_function must be a table representing function flags')
        end
        flags = read_flags(v)
        if flags == nil then fail('unknown flag given') end
      else
        fail('unknown argument given to redis.register_function')
      end
    end
    if name == nil then fail('redis.register_function must get a function name argument') end
    if callback == nil then fail('redis.register_function must get a callback argument') end
  else
    local a, b = ...
    name = text(a)
    if name == nil then fail('first argument to redis.register_function must be a string') end
    if type(b) ~= 'function' then fail('second argument to redis.register_function must be a function') end
    callback = b
  end
  if not find(name, '^[%w_]+$') then
    fail('Library names can only contain letters, numbers, or underscores(_) and must be at least one character long')
  end
  if pending.names[name] then fail('Function already exists in the library') end
  pending.names[name] = true
  pending.list[#pending.list + 1] = { name = name, description = desc, callback = callback, flags = flags or {} }
end

-- The library API: what a library's code sees while it loads.
local libredis = {
  register_function = register_function,
  log = native.log,
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REDIS_VERSION = native.version,
  REDIS_VERSION_NUM = native.version_num,
}
setmetatable(libredis, { __index = missing })
local LIB = { redis = protect(libredis) }

local loading = false
local fenv = {}
setmetatable(fenv, {
  __index = function(_, k)
    local v = rawget(loading and LIB or G, k)
    if v == nil then
      error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
    end
    return v
  end,
  __newindex = refuse,
  __metatable = shown,
})

-- Runs a compiled library: true and its registrations, or false and the
-- error table.
local function load_library(chunk)
  pending = { list = {}, names = {} }
  loading = true
  local ok, e = xpcall(chunk, handler)
  loading = false
  local p = pending
  pending = nil
  if not ok then return false, e end
  return true, p.list
end

-- Runs a registered function with the run's keys and arguments: true and
-- its result, or false and the error table.
local script_args = native.script_args
local function call(f)
  return xpcall(function() return f(script_args()) end, handler)
end

return fenv, load_library, call
