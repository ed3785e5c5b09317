// Shared by the framework tests: a database of each test file's own,
// without idgen (each framework's first migration creates the extension, as
// doc/frameworks.md says), and the checks that say whether an ID survives a
// double.
'use strict';

const assert = require('node:assert/strict');
const { Client } = require('pg');

// The connection comes from PGHOST, PGPORT, PGUSER and PGDATABASE; the
// database each file makes is named after the file and the process, so that
// two runs (node --test runs the files at once) never meet.
function databaseName(framework) {
	return `idgen_fw_${framework}_${process.pid}`;
}

async function withClient(config, fn) {
	const client = new Client(config);

	await client.connect();
	try {
		return await fn(client);
	} finally {
		await client.end();
	}
}

async function createDatabase(name) {
	await withClient({}, async (c) => {
		await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
		await c.query(`CREATE DATABASE ${name}`);
	});
	// idgen is not there yet (template1 has no extension): the migration
	// under test creates it, or fails
	const { rows } = await withClient({ database: name },
		(c) => c.query("SELECT extname FROM pg_extension WHERE extname = 'idgen'"));
	assert.deepEqual(rows, [], `idgen is already created in ${name}`);
}

// The migration made the extension: rowsOf(sql) runs SQL the framework's
// raw way and returns its rows
async function assertExtensionCreated(rowsOf) {
	const rows = await rowsOf("SELECT extname FROM pg_extension WHERE extname = 'idgen'");
	assert.deepEqual(rows.map((row) => row.extname), ['idgen'], 'the migration created idgen');
}

async function dropDatabase(name) {
	await withClient({}, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

// Not every integer above 2^53 is a double: such an ID, read as a Number,
// is another number.  Only these IDs can show a loss, so the tests that
// show one use only these, and never pass by luck.
function notADouble(id) {
	return BigInt(Number(BigInt(id))) !== BigInt(id);
}

// IDs of one millisecond differ in their low bits, so a batch of one
// statement holds some that are not doubles; an ID whose low bits are zero
// (the first of a millisecond, on shard 0) is one.  MINT is called until
// WANT of them are in hand.
async function untilNotDoubles(ids, mint, want = 2) {
	let all = [...ids];

	for (let round = 0; all.filter(notADouble).length < want; round++) {
		assert.ok(round < 20, `no ${want} IDs that are not doubles in ${all.length} minted`);
		all = all.concat(await mint());
	}
	return all;
}

// Two distinct IDs that read back as the same Number.
function sameDouble(ids) {
	const seen = new Map();

	for (const id of ids) {
		const n = Number(BigInt(id));

		if (seen.has(n) && seen.get(n) !== id)
			return [seen.get(n), id];
		seen.set(n, id);
	}
	return null;
}

function assertIncreasing(ids) {
	for (let i = 1; i < ids.length; i++)
		assert.ok(BigInt(ids[i - 1]) < BigInt(ids[i]), `${ids[i - 1]} < ${ids[i]}`);
	assert.equal(new Set(ids).size, ids.length, 'distinct');
}

// An ID that a Number neither holds nor prints: the shortest decimal that
// reads back as the same double (what String() gives, and what
// node-postgres sends for a Number parameter) can happen to be the ID's
// own digits when they end in zeros; a lookup by the Number of such an ID
// finds another row or none.
function printsOther(id) {
	return notADouble(id) && String(Number(BigInt(id))) !== String(id);
}

// The query for the name of TABLE's primary key index: TypeORM names it
// PK_<hash>, the others <table>_pkey.
function pkeyIndexQuery(table) {
	return `SELECT indexrelid::regclass::text AS name
		FROM pg_index WHERE indrelid = '${table}'::regclass AND indisprimary`;
}

// Whether a plan (EXPLAIN's lines) reads INDEX for its rows.
function assertIndexUsed(planLines, index) {
	const plan = planLines.join('\n');
	const quoted = index.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
	const re = new RegExp(`(Index Scan|Index Only Scan) using "?${quoted}"? on|Bitmap Index Scan on "?${quoted}"?`);

	assert.match(plan, re, `the plan reads ${index}:\n${plan}`);
	assert.doesNotMatch(plan, /Seq Scan/, plan);
}

function sleep(ms) {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

// Fifty IDs as the framework returned them: strings, each the digits the
// server has for its row's name (server: name -> id::text), increasing.
function assertExactBatch(ids, server, tag) {
	assert.equal(ids.length, 50);
	assert.equal(server.size, 50);
	ids.forEach((id, i) => {
		assert.equal(typeof id, 'string');
		assert.equal(id, server.get(`${tag} ${i}`));
	});
	assertIncreasing(ids);
}

// Three batches of 20 for a page by time, each in milliseconds of its own
// (a page's bounds are milliseconds), after enough filler rows, analyzed,
// that the planner itself prefers the index for a page to reading the
// whole table.  run(sql) executes SQL the framework's raw way.
async function threePageBatches(run, insertBatch) {
	await run("INSERT INTO orders (name) SELECT 'filler ' || g FROM generate_series(1, 10000) g");
	const earlier = await insertBatch('page-earlier', 20);
	await sleep(5);
	const inside = await insertBatch('page-inside', 20);
	await sleep(5);
	const later = await insertBatch('page-later', 20);
	await run('ANALYZE orders');
	return { earlier, inside, later };
}

module.exports = {
	assertExactBatch,
	assertExtensionCreated,
	assertIncreasing,
	assertIndexUsed,
	createDatabase,
	databaseName,
	dropDatabase,
	notADouble,
	pkeyIndexQuery,
	printsOther,
	sameDouble,
	sleep,
	threePageBatches,
	untilNotDoubles,
	withClient,
};
