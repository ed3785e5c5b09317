CREATE TABLE "orders" (
	"id" bigint PRIMARY KEY DEFAULT idgen_next() NOT NULL,
	"name" text NOT NULL
);
