-- Request paths for the proxy benchmark (scripts/proxy-benchmark).
-- TEMPLATE: a path with {name}, {w} and optionally {n} (a number no other request gets);
-- NAMES: a file of image names, one a line.
-- MODE=warm: cycle over the names at w=256 (the same variants again and again).
-- MODE=cold: every request a variant not asked before: each name at 256, then each at 257, ...
-- MODE=replay: the first LIMIT variants of the cold sequence, over and over.
-- MODE=mix (scripts/soak): of every 100 requests, 85 hits (each name at w=256, source version 0),
--   12 sizes that may be new (w from 100 to 1 099), 3 new sources (TEMPLATE's {v}, a version no
--   request asked for before, as in /v{v}/NAME).
-- THREADS: wrk's -t, so that threads interleave instead of repeating each other.
-- OFFSET: added to every request's number (0 by default): a run given an OFFSET past the numbers an
--   earlier run used asks for {n}s (and in MODE=cold, widths) that run did not (scripts/scaling-benchmark).
-- STATUSES=1: count the answers that are neither 2xx nor 304 by status in any mode, as MODE=mix does.
local names = {}
for line in io.lines(os.getenv("NAMES")) do names[#names + 1] = line end
local template = os.getenv("TEMPLATE")
local mode = os.getenv("MODE")
local cold = mode == "cold" or mode == "replay"
local limit = tonumber(os.getenv("LIMIT") or "0")
local threads = tonumber(os.getenv("THREADS") or "1")
local offset = tonumber(os.getenv("OFFSET") or "0")

local next_id = 0
local all_threads = {}
function setup(thread)
    thread:set("id", next_id)
    next_id = next_id + 1
    table.insert(all_threads, thread)
end

local counter = 0
function request()
    local n = offset + counter * threads + (id or 0)
    counter = counter + 1
    if mode == "replay" and limit > 0 then n = n % limit end
    local name = names[(n % #names) + 1]
    local w, v = 256, 0
    if cold then w = 256 + math.floor(n / #names) end
    if mode == "mix" then
        local kind = n % 100
        if kind >= 97 then v = n + 1 elseif kind >= 85 then w = 100 + (n * 7919) % 1000 end
    end
    local path = template:gsub("{name}", name)
    path = path:gsub("{w}", tostring(w))
    path = path:gsub("{n}", tostring(n))
    path = path:gsub("{v}", tostring(v))
    return wrk.format("GET", path)
end

-- MODE=mix (a soak), or STATUSES=1, also counts the answers that are neither 2xx nor 304 by status,
-- and prints them at the end as "status CODE: COUNT" lines.
if mode == "mix" or os.getenv("STATUSES") == "1" then
    statuses = {}
    function response(status, headers, body)
        if status >= 300 and status ~= 304 then statuses[status] = (statuses[status] or 0) + 1 end
    end
    function done(summary, latency, requests)
        local total = {}
        for _, thread in ipairs(all_threads) do
            for code, count in pairs(thread:get("statuses") or {}) do total[code] = (total[code] or 0) + count end
        end
        for code, count in pairs(total) do io.write(string.format("status %d: %d\n", code, count)) end
    end
end
