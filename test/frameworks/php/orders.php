<?php
/*
 * orders.php -- idgen IDs through PHP's PDO (pdo_pgsql) and pgsql
 * extensions, written as JSON by json_encode, as a PHP application answers
 * a request: php.test.js runs it and reads what it prints with
 * JavaScript's JSON.parse.
 *
 *	php orders.php MODE DATABASE ARG
 *
 * The connection comes from PGHOST, PGPORT and PGUSER (libpq reads them).
 * MODE is one of
 *	pdo            the rows named ARG ... through PDO as it is (PHP 8.1 and
 *	               later fetch a bigint as an int), json_encode (the trap)
 *	pdo-stringify  the same with PDO::ATTR_STRINGIFY_FETCHES
 *	pgsql          the same rows through pg_query_params, which fetches every
 *	               column as a string, json_encode
 *	numeric-check  the rows of pgsql, json_encode(..., JSON_NUMERIC_CHECK)
 *	               (the trap: it turns the strings back into numbers)
 *	server         the rows as idgen_row_to_json() writes them on the
 *	               server, json_decode'd and json_encode'd again
 *	find           ARG is a JSON body a client sends, {"id": ...}: the row
 *	               of that id through PDO with PDO::ATTR_STRINGIFY_FETCHES
 *	               (a JSON array of it, or [] when there is none)
 */

const BY_NAME = "SELECT id, name FROM orders WHERE name LIKE $1 || ' %' ORDER BY id";

function pdo($database, $stringify)
{
	$pdo = new PDO("pgsql:dbname=$database", null, null,
		[PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
	if ($stringify)
		$pdo->setAttribute(PDO::ATTR_STRINGIFY_FETCHES, true);
	return $pdo;
}

function pdo_rows($pdo, $sql, $arg)
{
	$st = $pdo->prepare(str_replace('$1', '?', $sql));
	$st->execute([$arg]);
	return $st->fetchAll(PDO::FETCH_ASSOC);
}

function pgsql_rows($database, $sql, $arg)
{
	$conn = pg_connect("dbname=$database");
	if ($conn === false)
		throw new RuntimeException("could not connect to $database");
	$result = pg_query_params($conn, $sql, [$arg]);
	if ($result === false)
		throw new RuntimeException(pg_last_error($conn));
	return pg_fetch_all($result);
}

if ($argc != 4) {
	fwrite(STDERR, "usage: php orders.php MODE DATABASE ARG\n");
	exit(2);
}
[, $mode, $database, $arg] = $argv;

switch ($mode) {
	case 'pdo':
		$json = json_encode(pdo_rows(pdo($database, false), BY_NAME, $arg));
		break;
	case 'pdo-stringify':
		$json = json_encode(pdo_rows(pdo($database, true), BY_NAME, $arg));
		break;
	case 'pgsql':
		$json = json_encode(pgsql_rows($database, BY_NAME, $arg));
		break;
	case 'numeric-check':
		$json = json_encode(pgsql_rows($database, BY_NAME, $arg), JSON_NUMERIC_CHECK);
		break;
	case 'server':
		$rows = pgsql_rows($database,
			"SELECT idgen_row_to_json(o) AS body FROM orders AS o WHERE name LIKE $1 || ' %' ORDER BY id",
			$arg);
		$json = json_encode(array_map(fn ($row) => json_decode($row['body'], true), $rows));
		break;
	case 'find':
		$body = json_decode($arg, true, 512, JSON_THROW_ON_ERROR);
		$json = json_encode(pdo_rows(pdo($database, true),
			'SELECT id, name FROM orders WHERE id = $1', $body['id']));
		break;
	default:
		fwrite(STDERR, "unknown mode $mode\n");
		exit(2);
}
if ($json === false)
	throw new RuntimeException(json_last_error_msg());
echo $json, "\n";
