/* idgen--1.3--1.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.4'" to load this file. \quit

-- The layout history leaves the user's schema.  Each database carries the
-- versions its IDs were minted under as a stamp at the end of the
-- extension's comment, which pg_dump writes right after CREATE EXTENSION,
-- before any row; schema tools and publications see no table of idgen.
-- The stamp is the table's versions where they are not this server's (a
-- database restored from another server under 1.3, which then refuses to
-- decode until adopted), else the server's history.
CREATE FUNCTION idgen_layout_stamp_from_copy()
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_layout_stamp_from_copy'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

-- Without the preload there is no server history to compare the table
-- with: a fresh install (an empty table) is stamped by the "idgen stamps"
-- worker at the first start with it; a table with versions is not dropped
-- unread.
DO $$
BEGIN
	PERFORM idgen_layout_stamp_from_copy();
EXCEPTION WHEN object_not_in_prerequisite_state THEN
	IF EXISTS (SELECT FROM idgen_layout_versions) THEN
		RAISE EXCEPTION 'idgen must be loaded via "shared_preload_libraries" to update a database whose layout history is in idgen_layout_versions'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = 'Add idgen to "shared_preload_libraries", restart the server and run ALTER EXTENSION idgen UPDATE again: the update turns the table into the database''s stamp.';
	END IF;
END
$$;

DROP FUNCTION idgen_layout_stamp_from_copy();
-- out of the extension first, so that pg_extension.extconfig forgets it
ALTER EXTENSION idgen DROP TABLE idgen_layout_versions;
DROP TABLE idgen_layout_versions;
DROP FUNCTION idgen_layout_versions_restore();
DROP FUNCTION idgen_layout_versions_changed();
DROP FUNCTION idgen_layout_record();
DROP FUNCTION idgen_layout_adopt(bigint);

-- A database whose stamp is not the server's history refuses to decode and
-- mint.  This says that its IDs were minted under this server's layouts:
-- its stamp becomes the server's history.  Right for a dump this server
-- made before a layout change; wrong for IDs of another history, whose
-- place is a server with that history.
CREATE FUNCTION idgen_layout_adopt()
RETURNS text
AS 'MODULE_PATHNAME', 'idgen_layout_adopt_server'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_layout_adopt() IS
'stamp this database with the server''s layout history: its IDs were minted under this server''s layouts';

REVOKE ALL ON FUNCTION idgen_layout_adopt() FROM PUBLIC;

COMMENT ON FUNCTION idgen_layout_history() IS
'every layout this server has minted under: its version, fields, first ID and that ID''s time, when it ends, whether it was assumed for want of a recorded history, and whether this database''s stamp lists it';
