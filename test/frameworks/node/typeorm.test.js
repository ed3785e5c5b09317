// IDs minted by DEFAULT idgen_next() through TypeORM on node-postgres: idgen
// and the table made by a migration (migrationsRun, as `typeorm
// migration:run` runs it), to which synchronize finds nothing to add for
// the entity, inserts that return their IDs, a page by time with
// min_id_at() in a QueryBuilder, the entity as JSON, and parseInt8, the
// popular way to lose digits.
//
// Run with `node --test` in this directory, against a server with idgen
// preloaded; the connection comes from PGHOST, PGPORT, PGUSER and
// PGDATABASE, and the test makes a database of its own, without idgen: the
// migration creates it.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const pg = require('pg');
const { DataSource, In } = require('typeorm');
const { Order } = require('./typeorm/order');
const CreateOrders = require('./typeorm/migrations/1796195554000-CreateOrders');
const common = require('./common');

const database = common.databaseName('typeorm');
const statements = [];
let ds;
let orders;

// every statement TypeORM sends, to count them
const logger = {
	logQuery: (query) => statements.push(query),
	logQueryError() {},
	logQuerySlow() {},
	logSchemaBuild() {},
	logMigration() {},
	log() {},
};

function dataSource(options) {
	return new DataSource({
		type: 'postgres',
		host: process.env.PGHOST,
		port: process.env.PGPORT ? Number(process.env.PGPORT) : undefined,
		username: process.env.PGUSER,
		database,
		entities: [Order],
		logger,
		...options,
	});
}

before(async () => {
	await common.createDatabase(database);
	ds = dataSource({ migrations: [CreateOrders], migrationsRun: true });
	await ds.initialize();
	orders = ds.getRepository(Order);
});

after(async () => {
	if (ds?.isInitialized)
		await ds.destroy();
	await common.dropDatabase(database);
});

// N rows named LABEL 0, LABEL 1...: their IDs as the insert returned them
async function insertBatch(label, n = 50) {
	const rows = Array.from({ length: n }, (_, i) => ({ name: `${label} ${i}` }));
	const result = await orders.insert(rows);

	return result.identifiers.map((identifier) => identifier.id);
}

// what the server holds, as text, by name
async function serverDigits(label) {
	const rows = await ds.query(`SELECT id::text AS digits, name FROM orders WHERE name LIKE $1`,
		[`${label} %`]);

	return new Map(rows.map((row) => [row.name, row.digits]));
}

test('TypeORM: the migration creates idgen, then id bigint PRIMARY KEY DEFAULT idgen_next()', async () => {
	await common.assertExtensionCreated((q) => ds.query(q));
	assert.deepEqual((await ds.query('SELECT name FROM migrations')).map((row) => row.name),
		['CreateOrders1796195554000']);
	const [col] = await ds.query(`SELECT data_type, column_default, is_nullable
		FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'id'`);
	assert.deepEqual({ ...col }, { data_type: 'bigint', column_default: 'idgen_next()', is_nullable: 'NO' });
	const pk = await ds.query(`SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = 'orders'::regclass AND i.indisprimary`);
	assert.deepEqual(pk.map((row) => row.attname), ['id']);

	// synchronize (and migration:generate, which asks the same schema
	// builder) sees nothing to change: the migration is the entity's table,
	// and the default reads back as written
	const pending = await ds.driver.createSchemaBuilder().log();
	assert.deepEqual(pending.upQueries.map((q) => q.query), []);
});

test('TypeORM: save one entity: its ID comes back exact, as a string', async () => {
	const saved = await orders.save({ name: 'one' });
	const [server] = await ds.query(`SELECT id::text AS digits FROM orders WHERE name = 'one'`);

	assert.equal(typeof saved.id, 'string');
	assert.equal(saved.id, server.digits);
	assert.ok(BigInt(saved.id) > 2n ** 53n);
	const found = await orders.findOneBy({ id: saved.id });
	assert.equal(found.name, 'one');
});

test('TypeORM: insert 50 rows in one statement: each ID back exact, distinct, increasing', async () => {
	statements.length = 0;
	const ids = await insertBatch('many');
	const inserts = statements.filter((q) => /^INSERT/i.test(q));
	const server = await serverDigits('many');

	assert.equal(inserts.length, 1, statements.join('\n'));
	common.assertExactBatch(ids, server, 'many');
});

test('TypeORM: a page by time: min_id_at() in a QueryBuilder reads the primary key index', async () => {
	const { earlier, inside, later } =
		await common.threePageBatches((q) => ds.query(q), insertBatch);

	const decoded = await orders.createQueryBuilder('o')
		.select('o.id', 'id')
		.addSelect('id_to_timestamp(o.id)', 'created_at')
		.where('o.id IN (:...ids)', { ids: [earlier.at(-1), inside[0], inside.at(-1), later[0]] })
		.orderBy('o.id')
		.getRawMany();
	const [lastEarlier, from, lastInside, to] = decoded.map((row) => row.created_at);
	assert.ok(from instanceof Date);
	assert.ok(lastEarlier < from && lastInside < to, 'the batches have milliseconds of their own');

	const page = orders.createQueryBuilder('o')
		.where('o.id >= min_id_at(:from)', { from })
		.andWhere('o.id < min_id_at(:to)', { to })
		.orderBy('o.id');
	const rows = await page.getMany();
	assert.deepEqual(rows.map((row) => row.id), inside);

	const [sql, params] = page.getQueryAndParameters();
	const plan = await ds.query(`EXPLAIN ${sql}`, params);
	const [{ name: pkey }] = await ds.query(common.pkeyIndexQuery('orders'));
	assert.match(pkey, /^"?PK_/);
	common.assertIndexUsed(plan.map((row) => row['QUERY PLAN']), pkey);
});

test('TypeORM: JSON: entities as TypeORM returns them, and idgen_row_to_json(), keep IDs exact', async () => {
	const ids = await common.untilNotDoubles(await insertBatch('json'), () => insertBatch('json'));

	// what an API does with the entities: JSON.stringify, and the client's JSON.parse
	const entities = await orders.find({ where: { id: In(ids) }, order: { id: 'ASC' } });
	const parsed = JSON.parse(JSON.stringify(entities));
	assert.deepEqual(parsed.map((row) => row.id), ids);

	// the row written as JSON by the server: node-postgres parses a json
	// column with JSON.parse itself
	const asJson = await orders.createQueryBuilder('o')
		.select('idgen_row_to_json(o)', 'body')
		.where('o.id IN (:...ids)', { ids })
		.orderBy('o.id')
		.getRawMany();
	assert.deepEqual(asJson.map((row) => row.body.id), ids);
	for (const row of asJson)
		assert.equal(typeof row.body.id, 'string');

	const server = await ds.query('SELECT id::text AS digits FROM orders WHERE id = ANY ($1) ORDER BY id', [ids]);
	assert.deepEqual(server.map((row) => row.digits), ids);
});

test('TypeORM: trap: parseInt8: true reads IDs as other numbers, in every pg client of the process', async (t) => {
	const ids = await common.untilNotDoubles(await insertBatch('parseint8'), () => insertBatch('parseint8'));
	const lost = ids.find(common.printsOther);
	assert.ok(lost, 'an ID whose Number prints other digits');
	// parseInt8 sets node-postgres's own parsers of int8 and int8[], one
	// pair for the whole process, and destroy() leaves them: put them back
	// whatever happens, so that the tests after this one read strings
	const saved = [pg.types.getTypeParser(20, 'text'), pg.types.getTypeParser(1016, 'text')];
	const rounding = dataSource({ parseInt8: true });
	const plain = new pg.Client({ database });
	let raw, entities, lookup, other, plainRow;

	try {
		await rounding.initialize();
		const repo = rounding.getRepository(Order);
		raw = await repo.createQueryBuilder('o')
			.select('o.id', 'id').addSelect('o.id::text', 'digits')
			.where('o.id IN (:...ids)', { ids }).orderBy('o.id').getRawMany();
		entities = await repo.find({ where: { id: In(ids) }, order: { id: 'ASC' } });
		lookup = await repo.findBy({ id: Number(lost) });
		// the DataSource without the option, and a plain client made after
		other = await orders.findOneBy({ id: lost });
		await plain.connect();
		plainRow = (await plain.query('SELECT id, ARRAY[id] AS ids FROM orders WHERE id = $1', [lost])).rows[0];
	} finally {
		await plain.end();
		if (rounding.isInitialized)
			await rounding.destroy();
		pg.types.setTypeParser(20, 'text', saved[0]);
		pg.types.setTypeParser(1016, 'text', saved[1]);
	}

	let changed = 0;
	assert.equal(raw.length, ids.length);
	for (const row of raw) {
		assert.equal(typeof row.id, 'number');
		assert.equal(row.id, Number(row.digits));
		if (common.notADouble(row.digits)) {
			assert.notEqual(BigInt(row.id), BigInt(row.digits));
			changed++;
		}
	}
	assert.ok(changed >= 2);
	const distinct = new Set(raw.map((row) => row.id)).size;
	assert.ok(distinct < raw.length, 'distinct IDs read back as the same number');
	// find() makes one entity per primary key it read: rows whose IDs
	// read as the same number become one entity, the others gone
	assert.equal(entities.length, distinct);
	t.diagnostic(`parseInt8: ${changed} of ${raw.length} IDs read as other numbers, ` +
		`the ${raw.length} as ${distinct} distinct numbers; find() returned ${entities.length} entities`);

	// the lookup by such a number finds another row, or none
	assert.ok(!lookup.some((o) => o.name === raw[ids.indexOf(lost)].name), JSON.stringify(lookup));

	for (const got of [other.id, plainRow.id, plainRow.ids[0]]) {
		assert.equal(typeof got, 'number');
		assert.notEqual(BigInt(got), BigInt(lost));
	}

	// put back: strings again, in the old DataSource and in a new client
	assert.equal((await orders.findOneBy({ id: lost })).id, lost);
	await common.withClient({ database }, async (c) => {
		const r = await c.query('SELECT id, ARRAY[id] AS ids FROM orders WHERE id = $1', [lost]);
		assert.equal(r.rows[0].id, lost);
		assert.deepEqual(r.rows[0].ids, [lost]);
	});
});
