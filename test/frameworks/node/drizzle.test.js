// IDs minted by DEFAULT idgen_next() through drizzle-orm on node-postgres:
// idgen created by a custom migration, then the table made by the
// migration drizzle-kit generated from drizzle/schema.js, inserts that
// return their IDs, a page by time with min_id_at() in a sql template, the
// row as JSON, and the bigint() modes that lose digits or refuse JSON.
//
// Run with `node --test` in this directory, against a server with idgen
// preloaded; the connection comes from PGHOST, PGPORT, PGUSER and
// PGDATABASE, and the test makes a database of its own, without idgen: the
// first migration creates it.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Pool } = require('pg');
const { and, eq, gte, inArray, like, lt, sql } = require('drizzle-orm');
const { bigint, pgTable, text } = require('drizzle-orm/pg-core');
const { drizzle } = require('drizzle-orm/node-postgres');
const { migrate } = require('drizzle-orm/node-postgres/migrator');
const { orders } = require('./drizzle/schema');
const common = require('./common');

const database = common.databaseName('drizzle');
const migrations = path.join(__dirname, 'drizzle', 'migrations');
const statements = [];
let pool;
let db;

// The same table as an application would declare it with bigint()'s modes
function ordersAs(mode) {
	return pgTable('orders', {
		id: bigint('id', { mode }).primaryKey().default(sql`idgen_next()`),
		name: text('name').notNull(),
	});
}

before(async () => {
	await common.createDatabase(database);
	pool = new Pool({ database });
	db = drizzle({ client: pool, logger: { logQuery: (query) => statements.push(query) } });
	await migrate(db, { migrationsFolder: migrations });
});

after(async () => {
	if (pool)
		await pool.end();
	await common.dropDatabase(database);
});

// N rows named LABEL 0, LABEL 1...: their IDs as the insert returned them
async function insertBatch(label, n = 50, table = orders) {
	const rows = Array.from({ length: n }, (_, i) => ({ name: `${label} ${i}` }));
	const back = await db.insert(table).values(rows).returning({ id: table.id, name: table.name });

	assert.deepEqual(back.map((row) => row.name), rows.map((row) => row.name));
	return back.map((row) => row.id);
}

// what the server holds, as text, by name
async function serverDigits(label) {
	const rows = await db.select({ digits: sql`${orders.id}::text`, name: orders.name })
		.from(orders).where(like(orders.name, `${label} %`));

	return new Map(rows.map((row) => [row.name, row.digits]));
}

test('drizzle: the custom migration creates idgen, the one drizzle-kit wrote makes id bigint PRIMARY KEY DEFAULT idgen_next()', async () => {
	await common.assertExtensionCreated(async (q) => (await pool.query(q)).rows);
	const { rows: [col] } = await pool.query(`SELECT data_type, column_default, is_nullable
		FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'id'`);
	assert.deepEqual({ ...col }, { data_type: 'bigint', column_default: 'idgen_next()', is_nullable: 'NO' });
	const { rows: pk } = await pool.query(`SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = 'orders'::regclass AND i.indisprimary`);
	assert.deepEqual(pk.map((row) => row.attname), ['id']);

	// the first migration is the one `drizzle-kit generate --custom` left
	// empty for SQL of one's own, with the extension written into it; the
	// second is what drizzle-kit generates from the schema today: `npx
	// drizzle-kit generate` would write it again
	const journal = JSON.parse(fs.readFileSync(path.join(migrations, 'meta', '_journal.json'), 'utf8'));
	const file = (entry) => fs.readFileSync(path.join(migrations, `${entry.tag}.sql`), 'utf8');
	assert.equal(journal.entries.length, 2);
	assert.match(file(journal.entries[0]), /^CREATE EXTENSION IF NOT EXISTS idgen;$/m);
	const kit = require('drizzle-kit/api');
	const generated = await kit.generateMigration(await kit.generateDrizzleJson({}),
		await kit.generateDrizzleJson({ orders }));
	const committed = file(journal.entries[1]).split('--> statement-breakpoint');
	assert.deepEqual(generated.map((s) => s.trim()), committed.map((s) => s.trim()));
	assert.match(generated.join('\n'), /"id" bigint PRIMARY KEY DEFAULT idgen_next\(\)/);
});

test('drizzle: insert one row: its ID comes back exact, as a string', async () => {
	const [row] = await db.insert(orders).values({ name: 'one' }).returning({ id: orders.id });
	const [server] = await db.select({ digits: sql`${orders.id}::text` }).from(orders)
		.where(eq(orders.name, 'one'));

	assert.equal(typeof row.id, 'string');
	assert.equal(row.id, server.digits);
	assert.ok(BigInt(row.id) > 2n ** 53n);
	const found = await db.select().from(orders).where(eq(orders.id, row.id));
	assert.deepEqual(found, [{ id: row.id, name: 'one' }]);
});

test('drizzle: insert 50 rows in one statement: each ID back exact, distinct, increasing', async () => {
	statements.length = 0;
	const ids = await insertBatch('many');
	const inserts = statements.filter((q) => /^insert/i.test(q));
	const server = await serverDigits('many');

	assert.equal(inserts.length, 1, statements.join('\n'));
	common.assertExactBatch(ids, server, 'many');
});

test('drizzle: a page by time: min_id_at() in a sql template reads the primary key index', async () => {
	const { earlier, inside, later } =
		await common.threePageBatches((q) => db.execute(sql.raw(q)), insertBatch);

	// drizzle's node-postgres session hands timestamptz over as text, and
	// its own timestamp columns make a Date of it so
	const decoded = await db.select({
		id: orders.id,
		createdAt: sql`id_to_timestamp(${orders.id})`.mapWith((v) => new Date(v)),
	}).from(orders)
		.where(inArray(orders.id, [earlier.at(-1), inside[0], inside.at(-1), later[0]]))
		.orderBy(orders.id);
	const [lastEarlier, from, lastInside, to] = decoded.map((row) => row.createdAt);
	assert.ok(from instanceof Date && !Number.isNaN(from.getTime()));
	assert.ok(lastEarlier < from && lastInside < to, 'the batches have milliseconds of their own');

	const page = db.select().from(orders)
		.where(and(gte(orders.id, sql`min_id_at(${from})`), lt(orders.id, sql`min_id_at(${to})`)))
		.orderBy(orders.id);
	const rows = await page;
	assert.deepEqual(rows.map((row) => row.id), inside);

	const query = page.toSQL();
	const plan = await pool.query(`EXPLAIN ${query.sql}`, query.params);
	const { rows: [{ name: pkey }] } = await pool.query(common.pkeyIndexQuery('orders'));
	assert.equal(pkey, 'orders_pkey');
	common.assertIndexUsed(plan.rows.map((row) => row['QUERY PLAN']), pkey);
});

test('drizzle: JSON: rows of the string column, and idgen_row_to_json(), keep IDs exact', async () => {
	const ids = await common.untilNotDoubles(await insertBatch('json'), () => insertBatch('json'));

	// what an API does with the rows: JSON.stringify, and the client's JSON.parse
	const rows = await db.select().from(orders).where(inArray(orders.id, ids)).orderBy(orders.id);
	const parsed = JSON.parse(JSON.stringify(rows));
	assert.deepEqual(parsed.map((row) => row.id), ids);

	// the row written as JSON by the server: node-postgres parses a json
	// column with JSON.parse itself
	const asJson = await db.select({ body: sql`idgen_row_to_json(${orders})` })
		.from(orders).where(inArray(orders.id, ids)).orderBy(orders.id);
	assert.deepEqual(asJson.map((row) => row.body.id), ids);
	for (const row of asJson)
		assert.equal(typeof row.body.id, 'string');

	const server = await db.select({ digits: sql`${orders.id}::text` }).from(orders)
		.where(inArray(orders.id, ids)).orderBy(orders.id);
	assert.deepEqual(server.map((row) => row.digits), ids);
});

test("drizzle: trap: bigint({ mode: 'number' }) reads IDs as other numbers", async (t) => {
	const asNumber = ordersAs('number');
	// the application's own inserts, through the number column, until two
	// IDs share a double and one prints as other digits
	const back = [];
	let server;
	for (let round = 0; ; round++) {
		assert.ok(round < 20, 'no IDs that read as the same number');
		back.push(...await insertBatch(`mode-number ${round}`, 50, asNumber));
		server = await serverDigits('mode-number');
		if (common.sameDouble(server.values()) && [...server.values()].some(common.printsOther))
			break;
	}
	const rows = await db.select().from(asNumber).where(like(asNumber.name, 'mode-number %'));
	const byName = new Map(rows.map((row) => [row.name, row]));
	assert.equal(rows.length, server.size);
	assert.equal(back.length, server.size);

	let changed = 0;
	for (const [name, digits] of server) {
		const row = byName.get(name);

		assert.equal(typeof row.id, 'number');
		assert.equal(row.id, Number(digits));
		if (common.notADouble(digits)) {
			assert.notEqual(BigInt(row.id), BigInt(digits));
			changed++;
		}
	}
	assert.ok(changed >= 2);
	// what the insert returned is no better
	assert.deepEqual([...back].sort((x, y) => x - y), rows.map((row) => row.id).sort((x, y) => x - y));

	// two rows, one number
	const byDigits = new Map([...server].map(([name, digits]) => [digits, name]));
	const [a, b] = common.sameDouble(server.values());
	assert.notEqual(a, b);
	assert.equal(byName.get(byDigits.get(a)).id, byName.get(byDigits.get(b)).id);

	// the lookup by such a number finds another row, or none
	const lostName = byDigits.get([...server.values()].find(common.printsOther));
	const lostNumber = byName.get(lostName).id;
	const lookup = await db.select().from(asNumber).where(eq(asNumber.id, lostNumber));
	assert.ok(!lookup.some((row) => row.name === lostName), JSON.stringify(lookup));

	const distinct = new Set(rows.map((row) => row.id)).size;
	t.diagnostic(`mode 'number': ${changed} of ${rows.length} IDs read as other numbers, ` +
		`the ${rows.length} as ${distinct} distinct numbers; the lookup by ${lostNumber} ` +
		`found ${lookup.length} row(s), not the row it was read from`);
});

for (const mode of ['bigint', 'string']) {
	test(`drizzle: trap: bigint({ mode: '${mode}' }) gives BigInts, which JSON.stringify refuses`, async () => {
		const asBigint = ordersAs(mode);
		const label = `mode-${mode}`;
		const ids = await common.untilNotDoubles(await insertBatch(label), () => insertBatch(label));
		const rows = await db.select().from(asBigint).where(inArray(asBigint.id, ids)).orderBy(asBigint.id);

		assert.equal(rows.length, ids.length);
		rows.forEach((row, i) => {
			assert.equal(typeof row.id, 'bigint');
			assert.equal(row.id, BigInt(ids[i]));
		});
		assert.throws(() => JSON.stringify(rows), { name: 'TypeError', message: /BigInt/ });
		assert.throws(() => JSON.stringify(rows[0]), { name: 'TypeError', message: /BigInt/ });
	});
}
