// The orders table as a TypeORM entity (an EntitySchema, which plain
// JavaScript can write without decorators; with decorators it is
// @PrimaryColumn({ type: 'bigint', default: () => 'idgen_next()' })).
// A default given as a function is SQL, written into the DDL as it is; a
// bigint column's value is node-postgres's string of the digits.
'use strict';

const { EntitySchema } = require('typeorm');

const Order = new EntitySchema({
	name: 'Order',
	tableName: 'orders',
	columns: {
		id: { type: 'bigint', primary: true, default: () => 'idgen_next()' },
		name: { type: 'text' },
	},
});

module.exports = { Order };
