// The orders table as `typeorm migration:generate -o` writes it from the
// entity (typeorm/order.js) against an empty database, with the extension
// its default needs created first, by hand: TypeORM knows nothing of it.
'use strict';

module.exports = class CreateOrders1796195554000 {
	name = 'CreateOrders1796195554000';

	async up(queryRunner) {
		await queryRunner.query('CREATE EXTENSION IF NOT EXISTS idgen');
		await queryRunner.query(`CREATE TABLE "orders" ("id" bigint NOT NULL DEFAULT idgen_next(), "name" text NOT NULL, CONSTRAINT "PK_710e2d4957aa5878dfe94e4ac2f" PRIMARY KEY ("id"))`);
	}

	async down(queryRunner) {
		await queryRunner.query('DROP TABLE "orders"');
	}
};
