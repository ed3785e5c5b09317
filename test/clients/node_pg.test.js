// IDs minted by DEFAULT idgen_next() through node-postgres (pg): the text
// and binary protocols, query parameters, COPY, and JSON into JSON.parse.
//
// Run with `node --test` in this directory, against a server with idgen
// preloaded and CREATE EXTENSION idgen done; the connection comes from
// PGHOST, PGPORT, PGUSER and PGDATABASE.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { pipeline } = require('node:stream/promises');
const { Readable } = require('node:stream');
const { Client } = require('pg');
const copyStreams = require('pg-copy-streams');

const TWO_53 = 2n ** 53n;
const client = new Client();
let ids = [];					// as the text protocol returns them: strings

before(async () => {
	await client.connect();
	await client.query(`CREATE TEMP TABLE node_orders (
		id bigint PRIMARY KEY DEFAULT idgen_next(),
		name text)`);
	// one statement: IDs of one millisecond are consecutive, so some are
	// odd, and an odd integer above 2^53 is never a double
	const r = await client.query(`INSERT INTO node_orders (name)
		SELECT 'order ' || g FROM generate_series(1, 50) g RETURNING id`);
	ids = r.rows.map((row) => row.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
});

after(async () => {
	await client.end();
});

function oddIds() {
	const odd = ids.filter((id) => BigInt(id) % 2n === 1n);
	assert.ok(odd.length > 0, 'some minted ID is odd');
	return odd;
}

test('IDs are above 2^53, where a double cannot hold every integer', () => {
	assert.equal(ids.length, 50);
	for (const id of ids)
		assert.ok(BigInt(id) > TWO_53, `${id} > 2^53`);
	for (const id of oddIds())
		assert.notEqual(BigInt(Number(id)), BigInt(id));
});

test('text protocol: int8 is a string of the exact digits', async () => {
	const r = await client.query('SELECT id, id::text AS digits FROM node_orders ORDER BY id');
	assert.equal(r.rows.length, ids.length);
	r.rows.forEach((row, i) => {
		assert.equal(typeof row.id, 'string');
		assert.equal(row.id, row.digits);
		assert.equal(row.id, ids[i]);
	});
});

// node-postgres reads every field of a row as UTF-8 text and, for a binary
// column, turns that text back into bytes: any byte UTF-8 cannot carry
// (an ID's bytes of 0x80 and up) becomes EF BF BD.  What binary: true
// returns for int8 is that: a string of digits, of another number.
function mangledInt8(id) {
	const wire = Buffer.alloc(8);

	wire.writeBigInt64BE(BigInt(id));
	return Buffer.from(wire.toString('utf8')).readBigInt64BE(0).toString();
}

test('binary protocol (binary: true): int8 is a string of other digits', async () => {
	// binary: true applies to the extended protocol, a query with parameters
	const r = await client.query({
		text: 'SELECT id, id::text AS digits FROM node_orders WHERE id = ANY ($1::bigint[]) ORDER BY id',
		values: [ids],
		binary: true,
	});
	assert.equal(r.fields[0].format, 'binary');
	assert.equal(r.rows.length, ids.length);
	r.rows.forEach((row, i) => {
		assert.equal(typeof row.id, 'string');
		assert.equal(row.digits, ids[i]);
		assert.equal(row.id, mangledInt8(ids[i]));
	});
	assert.ok(r.rows.some((row, i) => row.id !== ids[i]), 'some ID came back as another');
	// without parameters the query goes as simple protocol: text, exact
	const s = await client.query({ text: `SELECT ${ids[0]}::bigint AS id`, binary: true });
	assert.equal(s.fields[0].format, 'text');
	assert.equal(s.rows[0].id, ids[0]);
});

test('parameters: the ID as a string or a BigInt finds its row', async () => {
	for (const id of ids) {
		for (const param of [id, BigInt(id)]) {
			const r = await client.query('SELECT id, $1::bigint AS echo FROM node_orders WHERE id = $1', [param]);
			assert.equal(r.rows.length, 1);
			assert.equal(r.rows[0].id, id);
			assert.equal(r.rows[0].echo, id);
		}
	}
});

test('parameters: the ID as a Number is another ID', async () => {
	for (const id of oddIds()) {
		const r = await client.query('SELECT $1::bigint::text AS sent', [Number(id)]);
		assert.notEqual(r.rows[0].sent, id);
	}
});

test('COPY TO STDOUT gives the exact digits', async () => {
	const chunks = [];
	const stream = client.query(copyStreams.to(
		'COPY (SELECT id FROM node_orders ORDER BY id) TO STDOUT'));
	for await (const chunk of stream)
		chunks.push(chunk);
	const lines = Buffer.concat(chunks).toString('utf8').split('\n').filter((l) => l !== '');
	assert.deepEqual(lines, ids);
});

test('COPY FROM STDIN stores the exact IDs', async () => {
	await client.query('CREATE TEMP TABLE node_copy (id bigint PRIMARY KEY, name text)');
	const input = ids.map((id) => `${id}\tcopied\n`).join('');
	await pipeline(Readable.from([input]),
		client.query(copyStreams.from('COPY node_copy (id, name) FROM STDIN')));
	const r = await client.query(`SELECT count(*)::int AS n,
		count(*) FILTER (WHERE id IN (SELECT id FROM node_orders))::int AS same
		FROM node_copy`);
	assert.deepEqual(r.rows[0], { n: ids.length, same: ids.length });
	const back = await client.query('SELECT id FROM node_copy ORDER BY id');
	assert.deepEqual(back.rows.map((row) => row.id), ids);
});

test('bigint, int8 arrays and idgen_next() by default: strings', async () => {
	const r = await client.query('SELECT idgen_next() AS minted, ARRAY[$1::bigint] AS arr', [ids[0]]);
	assert.equal(typeof r.rows[0].minted, 'string');
	assert.ok(BigInt(r.rows[0].minted) > BigInt(ids[ids.length - 1]));
	assert.deepEqual(r.rows[0].arr, [ids[0]]);
});

// The JSON the README recommends: every ID a JSON string, exact through
// JSON.parse.  Each query is run twice: as json/jsonb, which node-postgres
// itself hands to JSON.parse, and as text, parsed here.
const exactRoutes = {
	"json_build_object('id', id::text)":
		"SELECT json_agg(json_build_object('id', id::text, 'name', name) ORDER BY id) AS j FROM node_orders",
	"jsonb_build_object('id', id::text)":
		"SELECT jsonb_agg(jsonb_build_object('id', id::text, 'name', name) ORDER BY id) AS j FROM node_orders",
	'json_agg(idgen_row_to_json(t))':
		'SELECT json_agg(idgen_row_to_json(t) ORDER BY t.id) AS j FROM node_orders AS t',
	'json_agg(idgen_row_to_json(t)) of a subquery':
		'SELECT json_agg(idgen_row_to_json(t) ORDER BY t.id) AS j FROM (SELECT id, name FROM node_orders) AS t',
	'jsonb_agg(idgen_row_to_jsonb(t))':
		'SELECT jsonb_agg(idgen_row_to_jsonb(t) ORDER BY t.id) AS j FROM node_orders AS t',
	'idgen_row_to_json(t) per row':
		'SELECT json_agg(j ORDER BY id) AS j FROM (SELECT id, idgen_row_to_json(t) AS j FROM node_orders AS t) AS s',
	'idgen_row_to_jsonb(t) per row':
		'SELECT jsonb_agg(j ORDER BY id) AS j FROM (SELECT id, idgen_row_to_jsonb(t) AS j FROM node_orders AS t) AS s',
};

// What writes IDs as JSON numbers: JSON.parse rounds each to a double.
const losingRoutes = {
	'row_to_json(t)':
		'SELECT json_agg(row_to_json(t) ORDER BY t.id) AS j FROM node_orders AS t',
	'json_agg(t)':
		'SELECT json_agg(t ORDER BY t.id) AS j FROM node_orders AS t',
	'to_jsonb(t)':
		'SELECT jsonb_agg(to_jsonb(t) ORDER BY t.id) AS j FROM node_orders AS t',
	'jsonb_agg(t)':
		'SELECT jsonb_agg(t ORDER BY t.id) AS j FROM node_orders AS t',
	"json_build_object('id', id)":
		"SELECT json_agg(json_build_object('id', id, 'name', name) ORDER BY id) AS j FROM node_orders",
	'to_json(id)':
		'SELECT json_agg(to_json(id) ORDER BY id) AS j FROM node_orders',
};

async function parsedBothWays(query) {
	const asJson = await client.query(query);
	const asText = await client.query(`SELECT j::text AS j FROM (${query}) AS q`);
	assert.equal(typeof asText.rows[0].j, 'string');
	return [asJson.rows[0].j, JSON.parse(asText.rows[0].j)];
}

for (const [route, query] of Object.entries(exactRoutes)) {
	test(`JSON, exact: ${route}`, async () => {
		for (const parsed of await parsedBothWays(query)) {
			assert.equal(parsed.length, ids.length);
			parsed.forEach((obj, i) => {
				assert.equal(typeof obj.id, 'string');
				assert.equal(obj.id, ids[i]);
				assert.equal(BigInt(obj.id), BigInt(ids[i]));
				assert.match(obj.name, /^order \d+$/);
			});
		}
	});
}

for (const [route, query] of Object.entries(losingRoutes)) {
	test(`JSON, digits lost: ${route}`, async () => {
		for (const parsed of await parsedBothWays(query)) {
			assert.equal(parsed.length, ids.length);
			parsed.forEach((obj, i) => {
				const got = typeof obj === 'number' ? obj : obj.id;

				assert.equal(typeof got, 'number');
				// the nearest double, and for an odd ID another number
				assert.equal(BigInt(got), BigInt(Number(ids[i])));
				if (BigInt(ids[i]) % 2n === 1n)
					assert.notEqual(BigInt(got), BigInt(ids[i]));
			});
			assert.ok(parsed.some((obj, i) =>
				BigInt(typeof obj === 'number' ? obj : obj.id) !== BigInt(ids[i])),
				'some ID came back as another number');
		}
	});
}
