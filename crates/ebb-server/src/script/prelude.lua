-- The scripting environment, built once per Lua state: the globals a
-- script sees (read-only, as in Redis 7.0), the `redis` library, and the
-- runner with its error handler. Chunk name "=[ebb]": the error handler
-- skips this file's frames when it reports where an error happened.
local G, S, native = ...
local dbg = debug
local error, type, tostring, select, setmetatable, rawset, pcall, xpcall =
  error, type, tostring, select, setmetatable, rawset, pcall, xpcall
local real_loadstring, real_load, setfenv = loadstring, load, setfenv

local readonly = {}
local function refuse() error('Attempt to modify a readonly table', 2) end
-- What getmetatable shows of a read-only table: an empty read-only table.
local shown = {}
setmetatable(shown, { __newindex = refuse, __metatable = shown })
readonly[shown] = {}
local function protect(t)
  local p = {}
  setmetatable(p, { __index = t, __newindex = refuse, __metatable = shown })
  readonly[p] = t
  return p
end

-- The environment scripts run in: a read-only view of G.
local env = protect(G)
setmetatable(G, { __index = function(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end })

for _, name in ipairs({ 'assert', 'collectgarbage', 'coroutine', 'error', 'gcinfo',
    'getmetatable', 'rawequal', 'rawget',
    'select', 'tonumber', 'tostring', 'type', 'unpack', 'xpcall', '_VERSION' }) do
  rawset(G, name, _G[name])
end
if native.deprecated_api then
  -- lua-enable-deprecated-api yes: Lua 5.1's environment functions too.
  for _, name in ipairs({ 'getfenv', 'setfenv', 'newproxy' }) do
    rawset(G, name, _G[name])
  end
end
rawset(G, '_G', env)
rawset(G, 'math', protect(math))
rawset(G, 'string', protect(string))
-- Strings' shared metatable is read-only too, and so is what it indexes
-- (as Redis protects the metatables of basic types): a script cannot
-- change how every other script's strings behave.
do
  local string_mt = getmetatable('')
  string_mt.__index = G.string
  string_mt.__metatable = protect(string_mt)
end
rawset(G, 'table', protect(table))
rawset(G, 'bit', protect(native.bit))
rawset(G, 'cjson', protect(native.cjson))
rawset(G, 'cmsgpack', protect(native.cmsgpack))
rawset(G, 'struct', protect(native.struct))
math.random = native.math.random
math.randomseed = native.math.randomseed
-- Iterating a read-only view walks the table behind it.
local next, pairs, ipairs = next, pairs, ipairs
rawset(G, 'next', function(t, k) return next(readonly[t] or t, k) end)
rawset(G, 'pairs', function(t) return pairs(readonly[t] or t) end)
rawset(G, 'ipairs', function(t) return ipairs(readonly[t] or t) end)
rawset(G, 'setmetatable', function(t, mt)
  if readonly[t] then error('Attempt to modify a readonly table', 0) end
  return setmetatable(t, mt)
end)
rawset(G, 'rawset', function(t, k, v)
  if readonly[t] then error('Attempt to modify a readonly table', 0) end
  return rawset(t, k, v)
end)
-- Chunks a script loads run in the scripts' environment too.
-- Precompiled (binary) chunks are never loaded, as in Redis, whose Lua
-- reads every chunk as text: one starting as a binary chunk (ESC) gets a
-- space before it, so the text parser refuses it with Redis's error. So
-- are chunks of 2 GB or more, whose long-bracket levels Lua 5.1's lexer
-- counts in an int. The chunk name stays referenced from this frame while
-- Lua parses (Lua 5.1's parser does not hold it, and a collection could
-- free it).
local LONGEST_CHUNK = 2147483647
rawset(G, 'loadstring', function(s, name)
  if type(s) == 'string' then
    if #s >= LONGEST_CHUNK then
      return nil, 'chunk too long'
    end
    if s:sub(1, 1) == '\27' then
      name = name or s
      s = ' ' .. s
    end
  end
  local anchored = name or s
  local f, e = real_loadstring(s, name)
  if f then setfenv(f, env) end
  return f, e, anchored and nil
end)
rawset(G, 'load', function(fn, name)
  local total = 0
  local first = true
  local reader = fn
  if type(fn) == 'function' then
    reader = function()
      local piece = fn()
      if type(piece) == 'string' then
        total = total + #piece
        if total >= LONGEST_CHUNK then error('chunk too long', 0) end
        if first and piece ~= '' then
          first = false
          if piece:sub(1, 1) == '\27' then piece = ' ' .. piece end
        end
      end
      return piece
    end
  end
  local anchored = name
  local f, e = real_load(reader, name)
  if f then setfenv(f, env) end
  return f, e, anchored and nil
end)

-- Lua 5.1's unpack counts its results in a C int whose overflow may let it
-- write past the stack for extreme bounds: the native one counts them
-- without overflow (raw.rs).
rawset(G, 'unpack', native.unpack)

-- An error raised by a native function arrives as an opaque value; what
-- it means (an error table, or a message with its position) waits in
-- S.pending.
local function lift(e)
  if type(e) == 'userdata' and S.pending ~= nil then
    e = S.pending
    S.pending = nil
  end
  return e
end

-- pcall hands back a failed command's error text, as Redis's does.
local function pcall_result(ok, ...)
  if ok then return true, ... end
  local e = lift((...))
  if type(e) == 'table' then
    local m = rawget(e, 'err')
    if type(m) == 'string' or type(m) == 'number' then e = m end
  end
  return false, e
end
rawset(G, 'pcall', function(...) return pcall_result(pcall(...)) end)
-- An xpcall handler, and whoever resumes a coroutine that failed, get a
-- failed command's error as its error table, as in Redis.
rawset(G, 'xpcall', function(f, h)
  return xpcall(f, function(e) return h(lift(e)) end)
end)
do
  local resume = coroutine.resume
  local function resume_result(ok, ...)
    if ok then return true, ... end
    return false, lift((...))
  end
  coroutine.resume = function(co, ...) return resume_result(resume(co, ...)) end
end

local redis = {}
redis.call = native.call
redis.pcall = native.pcall
local function wrong_args() return { err = 'ERR wrong number or type of arguments' } end
redis.error_reply = function(...)
  local e = ...
  if select('#', ...) ~= 1 or type(e) ~= 'string' then return wrong_args() end
  if e:sub(1, 1) ~= '-' then e = '-' .. e end
  local sp = e:find(' ', 1, true)
  local code, msg
  if sp then code, msg = e:sub(2, sp - 1), e:sub(sp + 1) else code, msg = 'ERR', e:sub(2) end
  msg = (msg:gsub('^[\r\n]+', ''))
  msg = (msg:gsub('[\r\n]+$', ''))
  return { err = code .. ' ' .. msg }
end
redis.status_reply = function(...)
  local s = ...
  if select('#', ...) ~= 1 or type(s) ~= 'string' then return wrong_args() end
  return { ok = s }
end
redis.sha1hex = native.sha1hex
redis.log = native.log
redis.setresp = native.setresp
redis.set_repl = native.set_repl
redis.acl_check_cmd = native.acl_check_cmd
redis.replicate_commands = function() return true end
redis.breakpoint = function() return false end
redis.debug = function() end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.REDIS_VERSION = native.version
redis.REDIS_VERSION_NUM = native.version_num
rawset(G, 'redis', protect(redis))

-- Where an error happened: the first frame that is neither the C function
-- that raised it nor a frame of this file.
local function handler(err)
  local lvl = 2
  local i = dbg.getinfo(lvl, 'nSl')
  if i and i.what == 'C' then lvl = lvl + 1; i = dbg.getinfo(lvl, 'nSl') end
  while i and i.source == '=[ebb]' do lvl = lvl + 1; i = dbg.getinfo(lvl, 'nSl') end
  err = lift(err)
  if type(err) ~= 'table' then err = { err = 'ERR ' .. tostring(err) } end
  if i then
    err.source = i.source
    err.line = i.currentline
  end
  return err
end
rawset(G, '__redis__err__handler', handler)

-- Runs a compiled script with the run's KEYS and ARGV: true and its
-- result, or false and the error table (err, source, line).
local script_args = native.script_args
local function run(f)
  local keys, argv = script_args()
  rawset(G, 'KEYS', keys)
  rawset(G, 'ARGV', argv)
  return xpcall(f, handler)
end

-- Chunk names Rust compiles scripts under, referenced for the state's
-- life so no collection frees them while Lua 5.1's parser uses them.
S.anchors = { '@user_script', '@user_function', '=[ebb]' }

-- What the function libraries' environment (functions.lua) builds on.
local internals = { G = G, protect = protect, refuse = refuse, shown = shown,
  handler = handler, native = native }

return env, run, internals
