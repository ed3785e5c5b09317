--
-- idgen_partitions: time partitions of IDs.  idgen_span() gives the width
-- of a partition (pg_partman's integer p_interval and retention), and the
-- plain DDL with min_id_at() bounds puts each row in the partition of its
-- day, with queries on a day pruned to one partition.
--

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

SET TimeZone = 'UTC';

-- the default layout (epoch 2026-01-01 00:00 UTC, 22 low bits)
SELECT idgen_span('1 day') = (86400000::bigint << 22) AS one_day,
       idgen_span('1 hour') = (3600000::bigint << 22) AS one_hour,
       idgen_span('1 day') * 7 = idgen_span('1 week') AS a_week_is_seven_days,
       idgen_span('1 ms') AS one_ms;

-- the epoch is on a boundary of a day and of a week (2026-01-01 was a
-- Thursday, as 1970-01-01 was), not of 5 days: a warning says so
SELECT idgen_span('5 days') = 5 * idgen_span('1 day') AS five_days;

-- refused
SELECT idgen_span('1 month');
SELECT idgen_span('0');
SELECT idgen_span('-1 day');
SELECT idgen_span('0.5 ms');
SELECT idgen_span('100 years');

-- partitions one day of IDs wide, bounded by min_id_at()
CREATE TABLE events (id bigint NOT NULL DEFAULT idgen_next(), body text)
    PARTITION BY RANGE (id);
CREATE TABLE events_2026_03_01 PARTITION OF events
    FOR VALUES FROM (min_id_at('2026-03-01+00')) TO (min_id_at('2026-03-02+00'));
CREATE TABLE events_2026_03_02 PARTITION OF events
    FOR VALUES FROM (min_id_at('2026-03-02+00')) TO (min_id_at('2026-03-03+00'));
CREATE TABLE events_2026_03_03 PARTITION OF events
    FOR VALUES FROM (min_id_at('2026-03-03+00')) TO (min_id_at('2026-03-04+00'));
SELECT min_id_at('2026-03-02+00') - min_id_at('2026-03-01+00') = idgen_span('1 day')
       AS bounds_a_span_apart,
       min_id_at('2026-03-01+00') % idgen_span('1 day') = 0 AS bounds_on_whole_spans;

-- rows of each day, built with min_id_at: its first ID, one at noon, and
-- the last ID of its last millisecond (shard 4095, sequence 1023)
INSERT INTO events (id, body)
SELECT id, to_char(d, 'YYYY-MM-DD')
  FROM generate_series(timestamptz '2026-03-01+00', '2026-03-03+00', '1 day') AS d,
       LATERAL (VALUES (min_id_at(d)),
                       (min_id_at(d + interval '12 hours') | (42 << 10) | 7),
                       (min_id_at(d + interval '1 day' - interval '1 ms') | (4095 << 10) | 1023)) AS v(id);
SELECT tableoid::regclass AS partition, body AS day, count(*) AS rows,
       bool_and(id_to_timestamp(id)::date = body::date) AS decoded_day_matches
  FROM events GROUP BY 1, 2 ORDER BY 1;

-- a day's query reads one partition
EXPLAIN (COSTS OFF)
SELECT * FROM events
 WHERE id >= min_id_at('2026-03-02+00') AND id < min_id_at('2026-03-03+00');

DROP TABLE events;
RESET TimeZone;

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
