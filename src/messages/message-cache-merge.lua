-- KEYS[1] list  the session's list
-- ARGV[1] maxLength    LTRIM
-- ARGV[2] ttlSeconds
-- ARGV[3] complete     1 when the snapshot starts at the session's first message (the list gets the start marker)
-- ARGV[4] mode         'fill': after a read miss; skipped when the list already answers every read (marker, or full)
--                      'repair': after a failed cache write; only when the list exists
-- ARGV[5] startMarker
-- ARGV[6..] the snapshot, oldest first, as triples: seq, id, entry
-- Returns the number of messages merged, -1 when a repair found no list, -2 when a fill was not needed.
local key = KEYS[1]
local maxLen = tonumber(ARGV[1])
local marker = ARGV[5]
local current = redis.call('LRANGE', key, 0, -1)
if ARGV[4] == 'repair' and #current == 0 then return -1 end
if ARGV[4] == 'fill' and (current[1] == marker or #current >= maxLen) then return -2 end
local rows, seen = {}, {}
for i = 6, #ARGV, 3 do
  local id = ARGV[i + 1]
  if not seen[id] then
    seen[id] = true
    rows[#rows + 1] = { tonumber(ARGV[i]), id, ARGV[i + 2] }
  end
end
for _, entry in ipairs(current) do
  if entry ~= marker then
    local ok, m = pcall(cjson.decode, entry)
    if ok and type(m) == 'table' and type(m.id) == 'string' and not seen[m.id] then
      seen[m.id] = true
      rows[#rows + 1] = { tonumber(m.seq) or 0, m.id, entry }
    end
  end
end
table.sort(rows, function(a, b)
  if a[1] ~= b[1] then return a[1] < b[1] end
  return a[2] < b[2]
end)
local out = {}
if ARGV[3] == '1' then out[1] = marker end
for i = math.max(1, #rows - maxLen + 1), #rows do out[#out + 1] = rows[i][3] end
redis.call('DEL', key)
for i = 1, #out, 1000 do redis.call('RPUSH', key, unpack(out, i, math.min(i + 999, #out))) end
redis.call('LTRIM', key, -maxLen, -1)
redis.call('EXPIRE', key, ARGV[2])
return #rows
