// IDs minted by DEFAULT idgen_next(), read by a PHP application through
// Debian's PDO (pdo_pgsql) and pgsql extensions and written as JSON by
// json_encode: orders.php, whose JSON JavaScript's JSON.parse reads here and
// compares with psql's digits.  PDO fetches a bigint as an int since PHP
// 8.1, which json_encode writes as a JSON number, and JSON_NUMERIC_CHECK
// turns the pgsql extension's strings into numbers; PDO::ATTR_STRINGIFY_FETCHES,
// the pgsql extension's strings, or idgen_row_to_json() on the server write
// strings.
//
// Run by ../run.sh: `node --test php.test.js` in this directory, against a
// server with idgen preloaded; the connection comes from PGHOST, PGPORT,
// PGUSER and PGDATABASE, and the test makes a database of its own.
'use strict';

const path = require('node:path');
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const client = require('../json-client');

const database = `idgen_fw_php_${process.pid}`;

// What orders.php prints in MODE
function orders(mode, arg) {
	return execFileSync('php', [path.join(__dirname, 'orders.php'), mode, database, arg],
		{ encoding: 'utf8' }).trim();
}

before(() => client.createDatabase(database));
after(() => client.dropDatabase(database));

test('PHP: trap: PDO fetches a bigint as an int, json_encode writes a number, JSON.parse reads another', (t) => {
	const rows = client.mintUntilNotDoubles(database, 'pdo');
	const json = orders('pdo', 'pdo');

	assert.match(json, /"id":\d+,/);
	t.diagnostic(`PDO and json_encode: ${client.assertNumbersLoseDigits(json, rows)}`);
});

test('PHP: trap: json_encode(..., JSON_NUMERIC_CHECK) turns the pgsql strings into numbers', (t) => {
	const rows = client.mintUntilNotDoubles(database, 'numeric-check');
	const json = orders('numeric-check', 'numeric-check');

	assert.match(json, /"id":\d+,/);
	t.diagnostic(`JSON_NUMERIC_CHECK: ${client.assertNumbersLoseDigits(json, rows)}`);
});

test('PHP: trap: an ID sent back through a JavaScript number finds another row, or none', (t) => {
	t.diagnostic(client.assertNumberSentBackMisses(database, orders, 'pdo'));
});

for (const [mode, how] of [
	['pdo-stringify', 'PDO::ATTR_STRINGIFY_FETCHES'],
	['pgsql', "the pgsql extension's strings"],
	['server', 'idgen_row_to_json() on the server'],
]) {
	test(`PHP: ${how}: JSON strings, exact through JSON.parse`, () => {
		const rows = client.mintUntilNotDoubles(database, mode);
		const json = orders(mode, mode);

		assert.match(json, /"id":"\d+"/);
		client.assertStringsExact(json, rows);
	});
}

test('PHP: the string a client sends back finds its row', () => {
	client.assertStringsSentBackFind(database, orders, 'pdo-stringify');
});
