// The orders table as a knex migration writes it, after the extension its
// default needs: knex has no column type for a function's default, so the
// default is raw SQL.
'use strict';

exports.up = (knex) => knex.schema
	.raw('CREATE EXTENSION IF NOT EXISTS idgen')
	.createTable('orders', (table) => {
		table.bigInteger('id').primary().defaultTo(knex.raw('idgen_next()'));
		table.text('name').notNullable();
	});

exports.down = (knex) => knex.schema.dropTable('orders');
