// IDs minted by DEFAULT idgen_next(), read by a Java service through JDBC
// (Debian's pgjdbc) and written as JSON by Jackson (Debian's
// jackson-databind): Orders.java, whose JSON JavaScript's JSON.parse reads
// here and compares with psql's digits.  A default ObjectMapper writes a
// long as a JSON number; ToStringSerializer on the id field,
// WRITE_NUMBERS_AS_STRINGS, or idgen_row_to_json() on the server write a
// string.
//
// Run by ../run.sh, with IDGEN_JAVA_CLASSPATH naming Orders.class's
// directory and the jars: `node --test java.test.js` in this directory,
// against a server with idgen preloaded that listens on 127.0.0.1 (pgjdbc
// has no unix sockets); the connection comes from PGHOST, PGPORT, PGUSER and
// PGDATABASE, and the test makes a database of its own.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const client = require('../json-client');

const database = `idgen_fw_java_${process.pid}`;
const url = `jdbc:postgresql://127.0.0.1:${process.env.PGPORT}/${database}` +
	`?user=${encodeURIComponent(process.env.PGUSER || 'postgres')}`;

// What Orders.java prints in MODE
function orders(mode, arg) {
	const classpath = process.env.IDGEN_JAVA_CLASSPATH;

	assert.ok(classpath, 'IDGEN_JAVA_CLASSPATH is set');
	return execFileSync('java', ['-cp', classpath, 'Orders', mode, url, arg],
		{ encoding: 'utf8' }).trim();
}

before(() => client.createDatabase(database));
after(() => client.dropDatabase(database));

test('Java: trap: Jackson writes a long as a JSON number, and JSON.parse reads other numbers', (t) => {
	const rows = client.mintUntilNotDoubles(database, 'plain');
	const json = orders('plain', 'plain');

	assert.match(json, /"id":\d+,/);
	t.diagnostic(`Jackson's default: ${client.assertNumbersLoseDigits(json, rows)}`);
});

test('Java: trap: an ID sent back through a JavaScript number finds another row, or none', (t) => {
	t.diagnostic(client.assertNumberSentBackMisses(database, orders, 'plain'));
});

for (const [mode, how] of [
	['tostring', '@JsonSerialize(using = ToStringSerializer.class) on the id field'],
	['feature', 'JsonWriteFeature.WRITE_NUMBERS_AS_STRINGS'],
	['generator', 'JsonGenerator.Feature.WRITE_NUMBERS_AS_STRINGS'],
	['server', 'idgen_row_to_json() on the server'],
]) {
	test(`Java: ${how}: JSON strings, exact through JSON.parse`, () => {
		const rows = client.mintUntilNotDoubles(database, mode);
		const json = orders(mode, mode);

		assert.match(json, /"id":"\d+"/);
		client.assertStringsExact(json, rows);
	});
}

test('Java: the string a client sends back is read into the long, and finds its row', () => {
	client.assertStringsSentBackFind(database, orders, 'tostring');
});
