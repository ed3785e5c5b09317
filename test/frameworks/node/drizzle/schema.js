// The orders table as drizzle-orm declares it.  drizzle-kit reads this file
// (drizzle.config.js) to write drizzle/migrations/; the tests apply those
// migrations with drizzle-orm's migrator.
'use strict';

const { sql } = require('drizzle-orm');
const { customType, pgTable, text } = require('drizzle-orm/pg-core');

// drizzle-orm 0.45's bigint() has only the modes 'number' (a double: odd IDs
// come back as other numbers) and 'bigint' (a BigInt, which JSON.stringify
// refuses); anything else, 'string' included, is taken as 'bigint'.  A
// custom type without fromDriver/toDriver keeps node-postgres's string of
// the exact digits, both ways.
const idgenId = customType({
	dataType() {
		return 'bigint';
	},
});

const orders = pgTable('orders', {
	id: idgenId('id').primaryKey().default(sql`idgen_next()`),
	name: text('name').notNull(),
});

module.exports = { idgenId, orders };
