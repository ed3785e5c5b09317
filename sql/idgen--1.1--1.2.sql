/* idgen--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.2'" to load this file. \quit

-- A row as JSON with its bigint columns (IDs) as strings, which JSON.parse
-- keeps exactly.  STABLE as row_to_json: output functions read settings.
CREATE FUNCTION idgen_row_to_json(record)
RETURNS json
AS 'MODULE_PATHNAME', 'idgen_row_to_json'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_row_to_json(record) IS
'row_to_json of the row, with each bigint column (and bigint array element) as a JSON string';

CREATE FUNCTION idgen_row_to_jsonb(record)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'idgen_row_to_jsonb'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_row_to_jsonb(record) IS
'to_jsonb of the row, with each bigint column (and bigint array element) as a JSON string';
