// For drizzle-kit: `npx drizzle-kit generate` writes drizzle/migrations/
// from drizzle/schema.js, without a database.
'use strict';

module.exports = {
	dialect: 'postgresql',
	schema: './drizzle/schema.js',
	out: './drizzle/migrations',
};
