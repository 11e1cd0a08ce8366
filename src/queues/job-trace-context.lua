-- KEYS[1] job       the job's hash
-- KEYS[2] delayed   its queue's delayed set (same slot)
-- ARGV[1] jobId
-- ARGV[2] metadata  the trace context the job's run joins (BullMQ's `tm` job option)
-- Records the trace context a delayed job runs in, while it is still delayed; a job taken or
-- gone meanwhile is left alone. Returns 1 when recorded, 0 otherwise.
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
local raw = redis.call('HGET', KEYS[1], 'opts')
if not raw then return 0 end
local opts = cjson.decode(raw)
opts['tm'] = ARGV[2]
opts['omc'] = nil
redis.call('HSET', KEYS[1], 'opts', cjson.encode(opts))
return 1
