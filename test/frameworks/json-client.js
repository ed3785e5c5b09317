// Shared by the tests of applications that are not written in JavaScript
// (java/, php/): their JSON read the way a browser reads it, with
// JavaScript's JSON.parse, and compared with the digits psql prints for the
// same rows.  Node's own test runner only: no npm package.
//
// The connection comes from PGHOST, PGPORT, PGUSER and PGDATABASE; each test
// file makes a database of its own, named after it and the process.
'use strict';

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');

// psql's rows of SQL in DATABASE, each an array of its columns' text
function psql(database, sql) {
	const out = execFileSync('psql', ['-X', '-q', '-A', '-t', '-F', '\t',
		'-v', 'ON_ERROR_STOP=1', '-d', database, '-c', sql], {
		encoding: 'utf8',
		env: { ...process.env, PGOPTIONS: '-c client_min_messages=warning' },
	});

	return out.split('\n').filter((line) => line !== '').map((line) => line.split('\t'));
}

function quote(s) {
	return `'${String(s).replaceAll("'", "''")}'`;
}

// A database with idgen and the orders table, as an application's
// migration would make them
function createDatabase(name) {
	psql('postgres', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
	psql('postgres', `CREATE DATABASE ${name}`);
	psql(name, 'CREATE EXTENSION IF NOT EXISTS idgen');
	psql(name, `CREATE TABLE orders (
		id   bigint PRIMARY KEY DEFAULT idgen_next(),
		name text NOT NULL)`);
}

function dropDatabase(name) {
	psql('postgres', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

// Not every integer above 2^53 is a double: such an ID, read as a Number,
// is another number.
function notADouble(id) {
	return BigInt(Number(BigInt(id))) !== BigInt(id);
}

// An ID whose Number also prints other digits (String() prints the shortest
// digits that read back as the same double, which can be the ID's own)
function printsOther(id) {
	return notADouble(id) && String(Number(BigInt(id))) !== String(id);
}

// Rows named LABEL 1 ... LABEL 13, minted by DEFAULT idgen_next(), 13 more
// at a time until at least WANT of them are IDs no double holds: the IDs a
// JSON number cannot carry.  Returns [{ id, name }], id as psql prints it,
// in the order of the IDs.
function mintUntilNotDoubles(database, label, want = 10) {
	for (let round = 0; round < 20; round++) {
		psql(database, `INSERT INTO orders (name)
			SELECT ${quote(label)} || ' ' || (${round * 13} + g) FROM generate_series(1, 13) g`);
		const rows = serverRows(database, label);

		if (rows.filter((row) => notADouble(row.id)).length >= want)
			return rows;
	}
	assert.fail(`no ${want} IDs that are not doubles`);
}

// The rows named LABEL ..., as psql prints them, in the order of the IDs
function serverRows(database, label) {
	return psql(database, `SELECT id::text, name FROM orders
		WHERE name LIKE ${quote(`${label} %`)} ORDER BY id`)
		.map(([id, name]) => ({ id, name }));
}

// What JSON.parse makes of a JSON array of orders: each one's id as it
// arrives (typeof, and the integer a number holds, BigInt(number): String()
// of a double prints the shortest digits that read back as it)
function parsedIds(json) {
	return JSON.parse(json).map((o) => ({
		type: typeof o.id,
		value: o.id,
		digits: typeof o.id === 'number' ? BigInt(o.id).toString() : String(o.id),
		name: o.name,
	}));
}

// The trap: JSON numbers.  Every ID no double holds arrives as another
// number; returns the figures (how many print other digits, how many hold
// another row's ID) for the test's diagnostic.
function assertNumbersLoseDigits(json, rows) {
	const parsed = parsedIds(json);
	const all = new Set(rows.map((row) => row.id));
	let changed = 0, printed = 0, others = 0;

	assert.deepEqual(parsed.map((p) => p.name), rows.map((row) => row.name));
	rows.forEach((row, i) => {
		const p = parsed[i];

		assert.equal(p.type, 'number', `${row.id} arrives as a JSON number`);
		assert.equal(p.digits, BigInt(Number(BigInt(row.id))).toString(), 'the nearest double');
		if (notADouble(row.id)) {
			assert.notEqual(p.digits, row.id);
			changed++;
			if (String(p.value) !== row.id)
				printed++;
			if (all.has(p.digits))
				others++;
		}
	});
	assert.ok(changed >= 10, `${changed} IDs changed`);
	assert.ok(printed >= 1, 'an ID prints other digits');
	return `${changed} of ${rows.length} IDs arrive as other numbers, ` +
		`${printed} print other digits, ${others} hold another row's ID`;
}

// The fix: strings, each the digits psql prints for its row
function assertStringsExact(json, rows) {
	const parsed = parsedIds(json);

	assert.equal(rows.filter((row) => notADouble(row.id)).length >= 10, true);
	assert.deepEqual(parsed.map((p) => p.type), rows.map(() => 'string'));
	assert.deepEqual(parsed.map((p) => p.value), rows.map((row) => row.id));
	assert.deepEqual(parsed.map((p) => p.name), rows.map((row) => row.name));
}

// The trap, sent back: the number JavaScript parsed, in a client's JSON
// body, finds another row or none.  orders(mode, arg) runs the program
// under test: mode 'find' looks rows up from the body given as arg.
function assertNumberSentBackMisses(database, orders, mode) {
	const rows = mintUntilNotDoubles(database, 'back');
	const parsed = parsedIds(orders(mode, 'back'));
	const i = rows.findIndex((row) => printsOther(row.id));

	assert.ok(i >= 0, 'an ID whose number prints other digits');
	const body = JSON.stringify({ id: parsed[i].value });
	const found = parsedIds(orders('find', body));

	assert.ok(!found.some((o) => o.name === rows[i].name), `${body} found ${JSON.stringify(found)}`);
	return `${rows[i].id} came back as ${body}, which found ` +
		`${found.length ? `another row, ${found[0].name}` : 'no row'}`;
}

// The fix, sent back: two IDs a number would have changed, sent back as
// the strings the fixed program printed, each find their own row.
function assertStringsSentBackFind(database, orders, mode) {
	const rows = mintUntilNotDoubles(database, 'string-back');
	const parsed = parsedIds(orders(mode, 'string-back'));
	const lost = rows.map((row, i) => [row, parsed[i]])
		.filter(([row]) => printsOther(row.id)).slice(0, 2);

	assert.equal(lost.length, 2);
	for (const [row, p] of lost) {
		const found = parsedIds(orders('find', JSON.stringify({ id: p.value })));

		assert.deepEqual(found.map((o) => [o.value, o.name]), [[row.id, row.name]]);
	}
}

module.exports = {
	assertNumberSentBackMisses,
	assertNumbersLoseDigits,
	assertStringsSentBackFind,
	assertStringsExact,
	createDatabase,
	dropDatabase,
	mintUntilNotDoubles,
	notADouble,
	parsedIds,
	printsOther,
	psql,
	serverRows,
};
