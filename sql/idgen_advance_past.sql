--
-- idgen_advance_past: every new ID is above a given one, whatever the
-- clock says.  Properties only.
--

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

-- an ID half a second ahead of now (within idgen.max_lead: no wait), as a
-- restored table's largest ID could be
SELECT min_id_at(clock_timestamp() + interval '500 ms') + 1023 AS ahead \gset
SELECT idgen_advance_past(:ahead);
SELECT idgen_next() > :ahead AS next_is_above,
       min(id) > :ahead AS block_is_above
  FROM idgen_next_n(100) AS id;
SELECT bool_and(id > :ahead) AS other_shard_is_above
  FROM (SELECT idgen_next(7) AS id FROM generate_series(1, 10)) AS s;

-- an ID already below the generator changes nothing
SELECT idgen_next() AS current \gset
SELECT idgen_advance_past(1000);
SELECT idgen_next() > :current AS still_increasing;

-- refused
SELECT idgen_advance_past(-1);
SELECT idgen_advance_past(9223372036854775807);

-- superusers and the roles they grant it to only
CREATE ROLE regress_idgen_importer;
SET ROLE regress_idgen_importer;
SELECT idgen_advance_past(1000);
RESET ROLE;
GRANT EXECUTE ON FUNCTION idgen_advance_past(bigint) TO regress_idgen_importer;
SET ROLE regress_idgen_importer;
SELECT idgen_advance_past(1000);
RESET ROLE;
REVOKE EXECUTE ON FUNCTION idgen_advance_past(bigint) FROM regress_idgen_importer;
DROP ROLE regress_idgen_importer;

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
