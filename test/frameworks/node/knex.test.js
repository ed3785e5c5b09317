// IDs minted by DEFAULT idgen_next() through knex on node-postgres: the
// table made by a knex migration, inserts that return their IDs, a page by
// time with min_id_at(), the row as JSON, and the popular ways to lose
// digits.
//
// Run with `node --test` in this directory, against a server with idgen
// preloaded; the connection comes from PGHOST, PGPORT, PGUSER and
// PGDATABASE, and the test makes a database of its own, without idgen: the
// migration creates it.
'use strict';

const path = require('node:path');
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { types } = require('pg');
const Knex = require('knex');
const common = require('./common');

const database = common.databaseName('knex');
let knex;

before(async () => {
	await common.createDatabase(database);
	knex = Knex({ client: 'pg', connection: { database } });
	await knex.migrate.latest({ directory: path.join(__dirname, 'knex', 'migrations') });
});

after(async () => {
	if (knex)
		await knex.destroy();
	await common.dropDatabase(database);
});

// N rows named LABEL 0, LABEL 1...: their IDs as the insert returned them
async function insertBatch(label, n = 50) {
	const rows = Array.from({ length: n }, (_, i) => ({ name: `${label} ${i}` }));
	const back = await knex('orders').insert(rows).returning(['id', 'name']);

	assert.deepEqual(back.map((row) => row.name), rows.map((row) => row.name));
	return back.map((row) => row.id);
}

// what the server holds, as text, by name
async function serverDigits(label) {
	const rows = await knex('orders').select(knex.raw('id::text AS digits'), 'name')
		.where('name', 'like', `${label} %`);

	return new Map(rows.map((row) => [row.name, row.digits]));
}

async function statementsOf(fn) {
	let n = 0;
	const count = () => n++;

	knex.on('query', count);
	try {
		return [await fn(), n];
	} finally {
		knex.removeListener('query', count);
	}
}

test('knex: the migration creates idgen, then id bigint PRIMARY KEY DEFAULT idgen_next()', async () => {
	await common.assertExtensionCreated(async (q) => (await knex.raw(q)).rows);
	const col = await knex('information_schema.columns')
		.first('data_type', 'column_default', 'is_nullable')
		.where({ table_name: 'orders', column_name: 'id' });
	assert.deepEqual({ ...col }, { data_type: 'bigint', column_default: 'idgen_next()', is_nullable: 'NO' });
	const pk = await knex.raw(`SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = 'orders'::regclass AND i.indisprimary`);
	assert.deepEqual(pk.rows.map((row) => row.attname), ['id']);
});

test('knex: insert one row: its ID comes back exact, as a string', async () => {
	const [row] = await knex('orders').insert({ name: 'one' }).returning('id');
	const server = await knex('orders').first(knex.raw('id::text AS digits')).where({ name: 'one' });

	assert.equal(typeof row.id, 'string');
	assert.equal(row.id, server.digits);
	assert.ok(BigInt(row.id) > 2n ** 53n);
});

test('knex: insert 50 rows in one statement: each ID back exact, distinct, increasing', async () => {
	const [ids, statements] = await statementsOf(() => insertBatch('many'));
	const server = await serverDigits('many');

	assert.equal(statements, 1);
	common.assertExactBatch(ids, server, 'many');
});

test('knex: a page by time: min_id_at() bounds read the primary key index', async () => {
	const { earlier, inside, later } =
		await common.threePageBatches((q) => knex.raw(q), insertBatch);

	const createdAt = async (id) =>
		(await knex.first(knex.raw('id_to_timestamp(?::bigint) AS at', [id]))).at;
	const from = await createdAt(inside[0]);
	const to = await createdAt(later[0]);
	assert.ok(from instanceof Date);
	assert.ok(await createdAt(earlier.at(-1)) < from, 'the batches have milliseconds of their own');
	assert.ok(await createdAt(inside.at(-1)) < to, 'the batches have milliseconds of their own');

	const page = knex('orders')
		.select('id', 'name', knex.raw('id_to_timestamp(id) AS created_at'))
		.where('id', '>=', knex.raw('min_id_at(?)', [from]))
		.andWhere('id', '<', knex.raw('min_id_at(?)', [to]))
		.orderBy('id');
	const rows = await page;
	assert.deepEqual(rows.map((row) => row.id), inside);
	for (const row of rows)
		assert.ok(row.created_at instanceof Date &&
			row.created_at >= from && row.created_at < to, `${row.created_at}`);

	const { sql, bindings } = page.toSQL();
	const plan = await knex.raw(`EXPLAIN ${sql}`, bindings);
	const pkey = (await knex.raw(common.pkeyIndexQuery('orders'))).rows[0].name;
	assert.equal(pkey, 'orders_pkey');
	common.assertIndexUsed(plan.rows.map((row) => row['QUERY PLAN']), pkey);
});

test('knex: JSON: the rows as knex returns them, and idgen_row_to_json(), keep IDs exact', async () => {
	const ids = await common.untilNotDoubles(await insertBatch('json'), () => insertBatch('json'));
	const byId = (a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1);

	// what an API does with the rows: JSON.stringify, and the client's JSON.parse
	const rows = await knex('orders').select('id', 'name').whereIn('id', ids).orderBy('id');
	const parsed = JSON.parse(JSON.stringify(rows));
	assert.deepEqual(parsed.map((row) => row.id), ids);

	// the row written as JSON by the server: node-postgres parses a json
	// column with JSON.parse itself
	const asJson = await knex.select(knex.raw('idgen_row_to_json(o) AS body'))
		.from({ o: 'orders' }).whereIn('o.id', ids).orderBy('o.id');
	const bodies = asJson.map((row) => row.body).sort(byId);
	assert.deepEqual(bodies.map((body) => body.id), ids);
	for (const body of bodies)
		assert.equal(typeof body.id, 'string');

	const server = await knex('orders').select(knex.raw('id::text AS digits'))
		.whereIn('id', ids).orderBy('id');
	assert.deepEqual(server.map((row) => row.digits), ids);
});

test('knex: trap: types.setTypeParser(20, parseInt) reads IDs as other numbers', async (t) => {
	const ids = await common.untilNotDoubles(await insertBatch('parseint'), () => insertBatch('parseint'));
	const original = types.getTypeParser(20, 'text');
	let rows;

	// the parser is node-postgres's, one for the whole process: put back
	// whatever happens, so that the tests after this one read strings
	types.setTypeParser(20, parseInt);
	try {
		rows = await knex('orders').select('id', knex.raw('id::text AS digits'))
			.whereIn('id', ids).orderBy('id');
	} finally {
		types.setTypeParser(20, original);
	}

	let changed = 0;
	for (const row of rows) {
		assert.equal(typeof row.id, 'number');
		assert.equal(row.id, Number(row.digits));
		if (common.notADouble(row.digits)) {
			assert.notEqual(BigInt(row.id), BigInt(row.digits));
			changed++;
		}
	}
	assert.ok(changed >= 2);
	const distinct = new Set(rows.map((row) => row.id)).size;
	assert.ok(distinct < rows.length, 'distinct IDs read back as the same number');
	t.diagnostic(`parseInt: ${changed} of ${rows.length} IDs read as other numbers, ` +
		`the ${rows.length} as ${distinct} distinct numbers`);

	// a lookup by such a number finds another row, or none
	const lost = rows.find((row) => common.printsOther(row.digits));
	assert.ok(lost, 'an ID whose Number prints other digits');
	const found = await knex('orders').select(knex.raw('id::text AS digits')).where('id', lost.id);
	assert.ok(!found.some((row) => row.digits === lost.digits), `${lost.id} is not ${lost.digits}`);

	const again = await knex('orders').first('id').where('id', ids[0]);
	assert.equal(again.id, ids[0]);
});

test('knex: trap: row_to_json() writes IDs as JSON numbers, which JSON.parse rounds', async (t) => {
	const ids = await common.untilNotDoubles(await insertBatch('row_to_json'), () => insertBatch('row_to_json'));
	const rows = await knex.select(knex.raw('row_to_json(o) AS body'), knex.raw('o.id::text AS digits'))
		.from({ o: 'orders' }).whereIn('o.id', ids);
	let changed = 0;

	assert.equal(rows.length, ids.length);
	for (const row of rows) {
		assert.equal(typeof row.body.id, 'number');
		if (common.notADouble(row.digits)) {
			assert.notEqual(BigInt(row.body.id), BigInt(row.digits));
			changed++;
		}
	}
	assert.ok(changed >= 2);
	t.diagnostic(`row_to_json: ${changed} of ${rows.length} IDs parsed as other numbers`);
});
