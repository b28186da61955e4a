-- wrk: the paths of the file PATHS (one a line), over and over, each thread from its own place.
local paths = {}
for line in io.lines(os.getenv("PATHS")) do paths[#paths + 1] = line end
local next_id = 0
function setup(thread)
    thread:set("id", next_id)
    next_id = next_id + 1
end
local counter = 0
function request()
    counter = counter + 1
    return wrk.format("GET", paths[((counter + (id or 0) * 7919) % #paths) + 1])
end
