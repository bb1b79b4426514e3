-- qpo.perf: what the built-in workloads share, so each of them stays a page long.
--
--  * perftest's options under perftest's names (size, iterations, duration, tx_depth,
--    rx_depth, post_list, cq_mod, inline, bidirectional, ...) with perftest's defaults,
--    checked in setup() so a typo fails `qpo validate`, not the run;
--  * the buffer layout both sides agree on without talking: in each side's MR,
--        [0, half)        inbound: what the peer writes or sends lands here (and what it reads)
--        [half, 2 half)   outbound: the source of this side's writes and sends
--    half = length / 2 rounded down to 64 bytes;
--  * perftest-style reports (the same columns and units: MB = 2^20 bytes, Mpps, usec).

local perf = {}

-- rate: false (as fast as the queue allows) or a software rate limit per worker, perftest's
-- --rate_limit (SW): "10Gb/s", "400MB/s", "0.5Mpps" (qpo.rate); burst: WRs per burst (perftest
-- --burst_size; 0 = post_list).
-- size, iterations and the depths come from qpo.workload_defaults, the one table of
-- defaults (README "Workload defaults").
local D = qpo.workload_defaults
local BW = {
  size = D.bandwidth.size, iterations = D.bandwidth.iterations, tx_depth = D.bandwidth.tx_depth,
  rx_depth = D.bandwidth.rx_depth, post_list = 1, cq_mod = 1,
  inline = 0, bidirectional = false, check = true, seed = 1, events = false, peak = true,
  rate = false, burst = 0,
}
-- clock: "host" (the TSC) or "device" (the send CQ's completion timestamps; qp:pingpong).
local LAT = {
  size = D.latency.size, iterations = D.latency.iterations, rx_depth = D.latency.rx_depth, inline = true, cq_mod = 1, check = true, seed = 1,
  histogram = false, unsorted = false, clock = "host",
}
perf.BW, perf.LAT = BW, LAT

-- Options every built-in takes besides its defaults.
local COMMON = {
  sizes = true, duration = true, local_mr = true, remote_mr = true, timeout = true, label = true,
}

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

-- "all" (perftest -a): 2 B .. 8 MiB in powers of two.
local function all_sizes()
  local s = {}
  local v = 2
  while v <= 8 * 1024 * 1024 do
    s[#s + 1] = v
    v = v * 2
  end
  return s
end

-- perf.setup(args, defaults [, extra]): fills defaults, rejects unknown options (with the
-- list of known ones), turns sizes into numbers. `extra` names workload-specific options.
function perf.setup(args, defaults, extra)
  args = args or {}
  local known = {}
  for k in pairs(defaults) do known[k] = true end
  for k in pairs(COMMON) do known[k] = true end
  for k in pairs(extra or {}) do known[k] = true end
  -- Sorted, so that with two typos the same one is reported every run (pairs() order varies).
  for _, k in ipairs(sorted_keys(args)) do
    if not known[k] then
      error(string.format("unknown option '%s' (options: %s)", tostring(k), table.concat(sorted_keys(known), " ")), 0)
    end
  end
  qpo.defaults(args, defaults)
  for k, v in pairs(extra or {}) do
    if args[k] == nil and v ~= true then args[k] = v end
  end
  args.size = qpo.size(args.size)
  if args.sizes == "all" then
    args.sizes = all_sizes()
  elseif type(args.sizes) == "table" then
    for i, v in ipairs(args.sizes) do args.sizes[i] = qpo.size(v) end
  elseif args.sizes ~= nil then
    error("sizes is \"all\" or a list of sizes", 0)
  end
  if args.duration ~= nil and (type(args.duration) ~= "number" or args.duration <= 0) then
    error("duration is a number of seconds > 0", 0)
  end
  if args.iterations then args.iterations = qpo.size(args.iterations) end
  -- The rate limit's mistakes fail setup(), so `qpo validate` reports them (Q701).
  if args.rate then
    qpo.rate(args.rate)
    if args.events then error("rate and events do not go together: a paced stream wakes at its rate", 0) end
  end
  if args.burst ~= nil and args.burst ~= 0 then
    if math.type(args.burst) ~= "integer" or args.burst < 0 then
      error("burst is a number of work requests >= 0 (0 = post_list)", 0)
    end
    if not args.rate then error("burst is the size of a rate limit's bursts: give rate too", 0) end
    if args.burst < (args.post_list or 1) then
      error(string.format("burst %d is smaller than post_list %d: a list is posted whole", args.burst, args.post_list), 0)
    end
  end
  if args.clock ~= nil and args.clock ~= "host" and args.clock ~= "device" then
    error("clock is \"host\" or \"device\" (the send CQ's completion timestamps)", 0)
  end
  -- setup() and report() both run in the control state: report_* read the options from here.
  perf.options = args
  return args
end

local function first_other(list, avoid)
  for _, name in ipairs(list) do
    if name ~= avoid then return name end
  end
  return list[1]
end

-- The initiator's MR (L) and the target's (R), computed the same way on both sides:
-- the args when given, else the first MR, avoiding the other side's when a PD is shared.
function perf.mr_names(w)
  local a, qp = w.args, w.qp
  local initiator = w.role ~= "target"
  local L = a.local_mr or (initiator and qp:mrs()[1] or qp:remotes()[1])
  local R = a.remote_mr or first_other(initiator and qp:remotes() or qp:mrs(), L)
  if initiator then return L, R end
  return R, L
end

-- This side's layout: {buf, mr, remote, inbound = 0, outbound = half, half}.
function perf.layout(w)
  local mine, peer = perf.mr_names(w)
  local buf = w.qp:mr(mine)
  local half = (buf.length // 2) // 64 * 64
  if half == 0 then error("MR '" .. buf.name .. "' is too small for a workload", 0) end
  return { buf = buf, mr = mine, remote = peer, inbound = 0, outbound = half, half = half }
end

-- The sizes to run on this side: args.sizes or {args.size}, those that fit the layout (the
-- rest are logged and skipped). UD payloads stop at 2048 bytes (any RoCE MTU holds them).
-- largest_first: tests that receive run a sweep from the largest size down. Receives a run
-- leaves posted stay posted for the next one, and a message larger than such a leftover
-- receive fails it (IBV_WC_LOC_LEN_ERR); a smaller one fits. Reports sort by size anyway.
function perf.sizes(w, lay, slots, largest_first)
  local a = w.args
  local want = a.sizes or { a.size }
  local cap = lay.half // (slots or 1)
  if w.qp.type == "UD" then cap = math.min(cap, 2048) end
  local out = {}
  for _, s in ipairs(want) do
    if s <= cap then
      out[#out + 1] = s
    elseif #want == 1 then
      error(string.format("size %d does not fit: MR '%s' is %d bytes and the workload needs %d x that",
        s, lay.mr, lay.buf.length, 2 * (slots or 1)), 0)
    end
  end
  if #out < #want then w:log("sizes above %d bytes skipped (MR '%s' is %d bytes)", cap, lay.mr, lay.buf.length) end
  if largest_first then table.sort(out, function(x, y) return x > y end) end
  return out
end

-- Extra QPs of this worker, as stream lanes (perftest -q: several QPs in one process).
function perf.extra_qps(w)
  local extra = {}
  for name, qp in pairs(w.qps) do
    if qp ~= w.qp then extra[#extra + 1] = qp end
  end
  table.sort(extra, function(x, y) return x.name < y.name end)
  return extra
end

-- Receive slots that fit the inbound half: a check needs one slot per posted receive.
-- Also bounded by the QP's max_recv_wr (an SRQ has its own limit, checked when posting).
function perf.rx_depth(w, lay, size)
  local a = w.args
  local depth = a.rx_depth
  if not w.qp.has_srq and w.qp.max_recv_wr then
    -- 0 is a full RQ (the executor's own receives take it all), not "no limit"
    if w.qp.max_recv_wr == 0 then
      error(string.format("QP '%s': its receive queue has no room left: receives the executor keeps posted fill max_recv_wr", w.qp.name), 0)
    end
    depth = math.min(depth, w.qp.max_recv_wr)
  end
  if not a.check then return depth end
  local slot = size + (w.qp.type == "UD" and 40 or 0)
  local fit = lay.half // slot
  if fit < 2 then error(string.format("checking %d-byte receives needs 2 slots; MR '%s' holds %d", size, lay.mr, fit), 0) end
  return math.min(depth, fit)
end

-- Every latency run keeps each iteration's time: the run's results carry them (the JSON's
-- latency histogram and CDF, the HTML report's plots), and perftest's -H (histogram, printed
-- sorted) and -U (unsorted, in iteration order) print them.
function perf.times(a) return true end

-- The rate limit in WRs per second for `size`-byte messages (qp:stream's rate), or nil.
function perf.wr_rate(a, size)
  if not a.rate then return nil end
  local r = qpo.rate(a.rate)
  return r.messages or r.bytes / size
end

-- inline: a byte threshold, true (whenever the QP allows), or 0/false.
function perf.inline(a)
  if a.inline == true or a.inline == false then return a.inline end
  return qpo.size(a.inline)
end

-- Fields that summarise several runs (a size sweep) into one result: the runs, plus the
-- largest size's numbers at top level (what scenario thresholds judge).
function perf.result(test, runs)
  local r = { test = test, runs = runs }
  local top = runs[#runs] or {}
  for _, run in ipairs(runs) do
    if (run.size or 0) > (top.size or 0) then top = run end
  end
  for k, v in pairs(top) do
    if type(v) ~= "table" then r[k] = v end
  end
  return r
end

---------------------------------------------------------------------------------------------
-- Reports

local function line(fmt, ...) return string.format(fmt, ...) end

local BW_HEAD = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"
local LAT_HEAD = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]" ..
                 "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]"

function perf.bw_text(runs)
  local t = { BW_HEAD }
  for _, r in ipairs(runs) do
    t[#t + 1] = line(" %-10d %-10d       %-10.2f         %-10.2f           %.6f", r.size, r.iterations,
      r.bw_peak or 0, r.bw_avg or 0, r.msg_rate or 0)
  end
  return table.concat(t, "\n")
end

-- Every iteration's time as perftest -U / -H print them: "#, usec", then "i, value" lines.
local function times_text(t, times, sorted)
  if sorted then
    times = table.move(times, 1, #times, 1, {})
    table.sort(times)
  end
  t[#t + 1] = "#, usec"
  for i, v in ipairs(times) do t[#t + 1] = string.format("%d, %g", i, v) end
end

-- a: the workload's options (unsorted/histogram), when the report has them.
function perf.lat_text(runs, a)
  local t = { LAT_HEAD }
  for _, r in ipairs(runs) do
    t[#t + 1] = line(" %-7d %-10d     %-10.2f     %-10.2f   %-10.2f       %-10.2f     %-10.2f      %-10.2f             %-10.2f",
      r.size, r.iterations, r.t_min or 0, r.t_max or 0, r.t_typical or 0, r.t_avg or 0, r.t_stdev or 0,
      r.p99 or 0, r.p999 or 0)
  end
  if runs[1] and runs[1].clock == "device" then
    t[#t + 1] = " times from the device's completion timestamps (clock = device)"
  end
  for _, r in ipairs(runs) do
    if r.times and a and a.unsorted then times_text(t, r.times, false) end
    if r.times and a and a.histogram then times_text(t, r.times, true) end
  end
  return table.concat(t, "\n")
end

local MB = 1048576  -- perftest's MB/sec

-- The aggregate peak of runs that ran at the same time (one size, several workers), in MB/sec.
-- Each run's timeline counts the bytes that completed per bucket (10 ms) of its host's clock;
-- the runs on one clock add up bucket by bucket, and the best bucket is the aggregate peak
-- there; hosts (separate clocks) add up. The sum of the workers' peaks is not the aggregate
-- peak: each worker may peak at another moment. The result stays within what the workers'
-- own peaks allow: at least the largest of them (the others add to that moment), at most
-- their sum. nil when a run has no timeline (peak = false, a hook, an older agent).
function perf.aggregate_peak(runs)
  local clocks, order = {}, {}
  local largest, sum = 0, 0
  for _, r in ipairs(runs) do
    local t = r.timeline
    if type(t) ~= "table" or type(t.bytes) ~= "table" or not t.bucket or t.bucket <= 0 then return nil end
    largest = math.max(largest, r.bw_peak or 0)
    sum = sum + (r.bw_peak or 0)
    local id = tostring(t.clock)
    local c = clocks[id]
    if not c then
      c = { bucket = t.bucket, bytes = {} }
      clocks[id] = c
      order[#order + 1] = id
    end
    for i, b in ipairs(t.bytes) do
      local k = (t.first or 0) + i - 1
      c.bytes[k] = (c.bytes[k] or 0) + b
    end
  end
  local peak = 0
  for _, id in ipairs(order) do
    local c, best = clocks[id], 0
    for _, b in pairs(c.bytes) do
      if b > best then best = b end
    end
    peak = peak + best / c.bucket / MB
  end
  if sum > 0 then peak = math.min(math.max(peak, largest), sum) end
  return peak
end

-- A run's bytes and seconds. qp:stream's runs carry both; a script's own run may give only
-- size, iterations and bw_avg: its bytes are size x iterations and its time what its average
-- says.
local function run_bytes_seconds(r)
  local bytes = r.bytes or (r.size or 0) * (r.iterations or 0)
  local seconds = r.seconds or ((r.bw_avg or 0) > 0 and bytes / (r.bw_avg * MB)) or 0
  return bytes, seconds
end

-- report(results) for bandwidth workloads: per size, every worker that sent (initiators, and
-- targets in bidirectional runs) together, like perftest's bidirectional totals: their bytes
-- over the longest one's time; the peak is the aggregate's (perf.aggregate_peak), never below
-- that average, and with several workers each one's peak and average are listed under the
-- table and in summary.workers.
function perf.report_bw(test, results)
  local by_size, sizes, notes, per_size = {}, {}, {}, {}
  local workers = {}
  for _, name in ipairs(sorted_keys(results)) do
    local res = results[name]
    local runs = res.ok and res.result and res.result.runs or {}
    for _, r in ipairs(runs) do
      for _, note in ipairs(r.notes or {}) do notes[#notes + 1] = "note: " .. note end
      if r.bw_avg then
        local s = by_size[r.size]
        if not s then
          s = { size = r.size, members = {} }
          by_size[r.size] = s
          sizes[#sizes + 1] = r.size
          per_size[r.size] = {}
        end
        local bytes, seconds = run_bytes_seconds(r)
        s.members[#s.members + 1] = { iterations = r.iterations, bytes = bytes, seconds = seconds }
        local list = per_size[r.size]
        list[#list + 1] = r
        workers[name] = workers[name] or {}
        workers[name][#workers[name] + 1] = { size = r.size, bw_peak = r.bw_peak or 0, bw_avg = r.bw_avg }
      end
    end
  end
  table.sort(sizes)
  local runs, several = {}, false
  for _, size in ipairs(sizes) do
    local s, list = by_size[size], per_size[size]
    -- The workers together: the bytes of all of them over the longest one's time (what an op
    -- workload on a QP group reports), never the sum of their averages.
    local t = qpo.together(s.members)
    s.members = nil
    s.iterations, s.bytes, s.seconds = t.iterations, t.bytes, t.seconds
    if #list == 1 then
      s.bw_peak, s.bw_avg, s.msg_rate = list[1].bw_peak or 0, list[1].bw_avg, list[1].msg_rate
    else
      several = true
      s.bw_avg, s.msg_rate = t.bw_avg, t.msg_rate
      s.bw_peak = perf.aggregate_peak(list) or 0
      if s.bw_peak == 0 then
        notes[#notes + 1] = string.format("note: %d-byte aggregate peak not measured (a worker's run has no timeline)", size)
      else
        -- The whole run is one of the windows a peak is the best of. A timeline's 10 ms
        -- buckets miss the peak of a run shorter than a few of them; the average does not.
        s.bw_peak = math.max(s.bw_peak, s.bw_avg)
      end
    end
    runs[#runs + 1] = s
  end
  local summary = perf.result(test, runs)
  summary.text = perf.bw_text(runs)
  if several then
    summary.workers = workers
    local lines = {}
    for _, name in ipairs(sorted_keys(workers)) do
      for _, w in ipairs(workers[name]) do
        lines[#lines + 1] = string.format(" worker %s: %d bytes, BW peak %.2f MB/sec, BW average %.2f MB/sec",
          name, w.size, w.bw_peak, w.bw_avg)
      end
    end
    summary.text = summary.text .. "\n" .. table.concat(lines, "\n")
  end
  -- A send queue the data path had to restart (dataplane/send_queue_nudge.h): the numbers
  -- stand, and the engineer learns the device needed the nudge.
  if #notes > 0 then summary.text = summary.text .. "\n" .. table.concat(notes, "\n") end
  return summary
end

-- report(results) for latency workloads: the initiators' numbers.
function perf.report_lat(test, results)
  local runs = {}
  for _, name in ipairs(sorted_keys(results)) do
    local res = results[name]
    if res.ok and res.role == "initiator" and res.result and res.result.runs then
      for _, r in ipairs(res.result.runs) do runs[#runs + 1] = r end
    end
  end
  table.sort(runs, function(x, y) return x.size < y.size end)
  local summary = perf.result(test, runs)
  summary.text = perf.lat_text(runs, perf.options)
  return summary
end

return perf
