-- A soak's mix of requests (scripts/soak): mostly hits, some new sizes, a few new sources.
-- TEMPLATE: a path with {name}, {w} and {v} (a source version: /v{v}/NAME is a new source);
-- NAMES: a file of image names, one a line; THREADS: wrk's -t.
-- Of every 100 requests: 85 hits (each name at w=256, source version 0), 12 new sizes of a known
-- source (w from 100 to 1 099, version 0: resized from what is cached, or decoded anew), 3 new
-- sources (a version no request asked before: a fetch and a decode).
local names = {}
for line in io.lines(os.getenv("NAMES")) do names[#names + 1] = line end
local template = os.getenv("TEMPLATE")
local threads = tonumber(os.getenv("THREADS") or "1")

local next_id = 0
function setup(thread)
    thread:set("id", next_id)
    next_id = next_id + 1
end

local counter = 0
function request()
    local n = counter * threads + (id or 0)
    counter = counter + 1
    local name = names[(n % #names) + 1]
    local kind = n % 100
    local w, v = 256, 0
    if kind >= 97 then
        v = n + 1  -- a new source
    elseif kind >= 85 then
        w = 100 + (n * 7919) % 1000  -- a size that may be new
    end
    local path = template:gsub("{name}", name):gsub("{w}", tostring(w)):gsub("{v}", tostring(v))
    return wrk.format("GET", path)
end
