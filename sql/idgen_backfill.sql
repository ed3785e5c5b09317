--
-- idgen_backfill: minting for a given time where no lane is configured
-- (test/idgen.conf names none).  The lanes themselves, their durability and
-- their concurrency are tested in t/034_backfill.pl.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

-- no lane: the error says which setting names them
SELECT idgen_next_at('2026-06-01 12:00:00+00');
SELECT count(*) FROM idgen_next_at_n('2026-06-01 12:00:00+00', 10);

-- times refused whatever the lanes
SELECT idgen_next_at('infinity');
SELECT idgen_next_at('2025-12-31 23:59:59.999+00');
-- (a day ahead: the time and the distance in the message vary, so masked)
DO $$
BEGIN
	PERFORM idgen_next_at(clock_timestamp() + interval '1 day');
EXCEPTION WHEN datetime_field_overflow THEN
	RAISE NOTICE 'refused: %', regexp_replace(SQLERRM, '[0-9][0-9 :.+-]*', 'N', 'g');
END
$$;
SELECT count(*) FROM idgen_next_at_n('2026-06-01 12:00:00+00', 0);
SELECT idgen_next_at(NULL) IS NULL AS strict;

-- nothing to show, nothing to attest
SELECT count(*) FROM idgen_lanes();
SELECT idgen_lanes_init();
SELECT count(*) FROM idgen_lanes();

-- attesting is for superusers and the roles they grant it to
CREATE ROLE regress_idgen_backfiller;
SET ROLE regress_idgen_backfiller;
SELECT idgen_lanes_init();
SELECT count(*) FROM idgen_lanes();
RESET ROLE;
DROP ROLE regress_idgen_backfiller;

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
