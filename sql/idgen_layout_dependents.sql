-- idgen_layout_dependents(): what a change of layout could make stale in
-- this database, and what to do about each.  Since 1.3 every ID that exists
-- decodes by the layout that minted it, after any change: what uses only
-- the decoders of IDs is not listed; what was computed for a time (min_id_at,
-- idgen_span, partition bounds) is.

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

SELECT * FROM idgen_layout_dependents();	-- nothing yet

CREATE TABLE events (
    id bigint PRIMARY KEY DEFAULT idgen_next(),
    created_at timestamptz GENERATED ALWAYS AS (id_to_timestamp(id)) STORED,
    plain_default integer DEFAULT id_to_shard(4194309127),
    CONSTRAINT after_epoch CHECK (id >= min_id_at('2026-01-01 00:00:00+00'))
);
-- decoders of stored IDs: not listed since 1.3
CREATE INDEX events_by_time ON events (id_to_timestamp(id));
CREATE INDEX events_shard_7 ON events (id) WHERE id_to_shard(id) = 7;
CREATE INDEX events_plain ON events (id);	-- no decoder: not listed
CREATE MATERIALIZED VIEW events_per_shard AS
    SELECT id_to_shard(id) AS shard, count(*) FROM events GROUP BY 1;
CREATE VIEW events_recent AS		-- recomputed at each read: not listed
    SELECT * FROM events WHERE id_to_timestamp(id) > '2026-06-01+00';

CREATE TABLE orders (
    id bigint NOT NULL DEFAULT idgen_next(),
    body text
) PARTITION BY RANGE (id);
CREATE TABLE orders_2026_01 PARTITION OF orders
    FOR VALUES FROM (min_id_at('2026-01-01+00')) TO (min_id_at('2026-02-01+00'));
CREATE TABLE orders_2026_02 PARTITION OF orders
    FOR VALUES FROM (min_id_at('2026-02-01+00')) TO (min_id_at('2026-03-01+00'));
CREATE TABLE by_day (id bigint NOT NULL) PARTITION BY RANGE (id_to_timestamp(id));

-- idgen_span() measures by the server's current layout: listed
CREATE MATERIALIZED VIEW events_per_day AS
    SELECT id / idgen_span('1 day') AS day, count(*) FROM events GROUP BY 1;
CREATE TABLE spans (
    id bigint,
    CONSTRAINT within_a_year CHECK (id < idgen_span('365 days'))
);

-- the overloads with a layout argument do not depend on the server's
-- layout (the same name, another function): not listed
CREATE MATERIALIZED VIEW twitter_days AS
    SELECT (idgen_decode(id, 'twitter')).created_at::date AS day,
           id_to_timestamp(id, 'discord') AS discord_time
      FROM events;
CREATE TABLE imported (
    id bigint,
    at timestamptz,
    CONSTRAINT after_pgedge_epoch CHECK (id >= min_id_at('2023-01-01+00', 'pgedge'))
);
CREATE INDEX imported_by_time ON imported (id_to_timestamp(id, 'twitter'));

SELECT * FROM idgen_layout_dependents();

DROP TABLE imported;
DROP MATERIALIZED VIEW twitter_days;
DROP TABLE spans;
DROP MATERIALIZED VIEW events_per_day;
DROP TABLE by_day;
DROP TABLE orders;
DROP VIEW events_recent;
DROP MATERIALIZED VIEW events_per_shard;
DROP TABLE events;
SELECT count(*) AS left_over FROM idgen_layout_dependents();

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
