/* idgen--1.4--1.5.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.5'" to load this file. \quit

-- idgen_layout_dependents() is declared here and decided in C: the list of
-- functions whose results a layout change can make stale, and the catalog
-- walk that finds what holds them, live in the library
-- (src/layout_dependents.c), so that a release adding such a function adds
-- a line there instead of a new copy of this function's body here.  Same
-- signature, labels and answers as before; it still needs no preload.
CREATE OR REPLACE FUNCTION idgen_layout_dependents(
	OUT kind text,
	OUT object text,
	OUT action text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_layout_dependents'
LANGUAGE C STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
