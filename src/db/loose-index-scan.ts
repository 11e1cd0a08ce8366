/**
 * Distinct `group_id`s of a table by a loose index scan: a recursive query that skips from one
 * group id to the next through an index leading with group_id, so it costs one index probe per
 * group whatever the row count (a plain DISTINCT reads every row). `table` must be a fixed
 * identifier, never user input.
 */
export const distinctGroupIdsSql = (table: string) => `
  WITH RECURSIVE g AS (
    (SELECT group_id FROM ${table} ORDER BY group_id LIMIT 1)
    UNION ALL
    SELECT (SELECT t.group_id FROM ${table} t WHERE t.group_id > g.group_id ORDER BY t.group_id LIMIT 1)
    FROM g WHERE g.group_id IS NOT NULL
  )
  SELECT group_id FROM g WHERE group_id IS NOT NULL`;
