
# Copyright (c) 2026, The idgen Authors
#
# idgen_rekey_column: a converted table's old keys rewritten as IDs for
# their rows' own time, in one transaction, with every column that
# references them:
#
#  - what it cannot do safely is refused, each with what to do: a column
#    named like a reference without a foreign key, a referencing column
#    too narrow, an update trigger, a row with no time, a NULL bound;
#  - a rolled-back rekey changes nothing;
#  - after it, each old key decodes to its row's millisecond, the keys
#    minted live are kept, every row finds the same parent and customer
#    through the new keys, the foreign keys are back as they were and
#    enforced, a time range on the key finds the old rows, and no key
#    equals another, nor an ID the lanes gave an import before.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node(
	'rekey',
	conf => qq(
idgen.shard_id = 1
idgen.backfill_shards = '100-107'
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
$node->safe_psql('postgres', 'SELECT idgen_lanes_init()');

sub sql { return $node->safe_psql('postgres', shift) }

# A shop with eleven months of history on serial keys; 2,000 orders share
# one time (a batch load), more than two lanes hold in one millisecond.
sql(q{
SET TimeZone = 'UTC';
CREATE TABLE customers (id serial PRIMARY KEY, name text UNIQUE NOT NULL,
						created_at timestamptz);
CREATE TABLE orders (id serial PRIMARY KEY,
					 customer_id integer NOT NULL REFERENCES customers ON DELETE CASCADE,
					 parent_id integer,
					 total numeric UNIQUE NOT NULL,
					 created_at timestamptz NOT NULL);
ALTER TABLE orders ADD CONSTRAINT orders_parent_fk FOREIGN KEY (parent_id)
	REFERENCES orders (id) DEFERRABLE INITIALLY DEFERRED;
COMMENT ON CONSTRAINT orders_parent_fk ON orders IS 'a reorder points at its first order';
CREATE TABLE order_notes (id bigserial PRIMARY KEY, order_id bigint NOT NULL, note text);
-- the order numbers of another shop: named like a reference, and not one
CREATE TABLE order_stats (id bigserial PRIMARY KEY, order_id bigint);
INSERT INTO order_stats (order_id) SELECT g FROM generate_series(1, 50) AS g;

INSERT INTO customers (name, created_at)
SELECT 'c' || i, '2026-01-05'::timestamptz + i * interval '1 day' + i * interval '1.234 ms'
  FROM generate_series(1, 200) AS i;
INSERT INTO orders (customer_id, total, created_at)
SELECT 1 + i % 200, i, '2026-01-06'::timestamptz + i * interval '1 hour 7 min' + i * interval '0.321 ms'
  FROM generate_series(1, 5000) AS i;
INSERT INTO orders (customer_id, total, created_at)
SELECT 1 + i % 200, 100000 + i, '2026-03-03 10:00:00.555+00'
  FROM generate_series(1, 2000) AS i;
UPDATE orders SET parent_id = id - 1 WHERE id % 10 = 0;
-- a key that includes the order's, referenced in turn
CREATE TABLE order_lines (order_id bigint REFERENCES orders, line_no int, PRIMARY KEY (order_id, line_no));
CREATE TABLE shipments (id bigserial PRIMARY KEY, order_id bigint, line_no int,
						FOREIGN KEY (order_id, line_no) REFERENCES order_lines ON UPDATE SET NULL);
INSERT INTO order_lines SELECT id, l FROM orders, generate_series(1, 2) AS l WHERE id % 10 = 1;
INSERT INTO shipments (order_id, line_no) SELECT order_id, line_no FROM order_lines;
INSERT INTO order_notes (order_id, note) SELECT id, 'note ' || id FROM orders WHERE id % 3 = 0;
});

# An import at the batch's millisecond before the rekey: the lanes gave it
# IDs there, and none may come again.
sql(q{CREATE TABLE imported AS
	   SELECT idgen_next_at('2026-03-03 10:00:00.555+00') AS id FROM generate_series(1, 3000)});

like(sql(q{SELECT idgen_convert_column('customers', 'id')}),
	qr/widened to bigint: public\.customers\.id, public\.orders\.customer_id/,
	'customers converted, orders.customer_id widened');
my ($first_live) = sql(q{SELECT idgen_convert_column('orders', 'id')}) =~ /new IDs start at (\d+)/;
ok($first_live, "orders converted; new IDs start at $first_live");

# rows minted live after the conversion keep their keys
sql(q{INSERT INTO orders (customer_id, total, created_at)
	  SELECT (SELECT min(id) FROM customers), 200000 + i, now() FROM generate_series(1, 20) AS i});
my $live_before = sql("SELECT string_agg(id::text, ',' ORDER BY id) FROM orders WHERE id >= $first_live");
my $keys_sql = q{SELECT md5(string_agg(id::text, ',' ORDER BY id))
				   FROM (SELECT id FROM orders UNION ALL SELECT id FROM customers) AS k};
my $keys_before = sql($keys_sql);

# what each row points at, by the rows' own names, not by key
my $shape_sql = q{
SELECT md5(string_agg(concat_ws('|', o.total, c.name, p.total, n.note), ',' ORDER BY o.total, n.note))
  FROM orders AS o JOIN customers AS c ON c.id = o.customer_id
  LEFT JOIN orders AS p ON p.id = o.parent_id
  LEFT JOIN order_notes AS n ON n.order_id = o.id}
  . q{ UNION ALL SELECT md5(string_agg(concat_ws('|', o.total, l.line_no), ',' ORDER BY o.total, l.line_no))
		FROM shipments AS h JOIN order_lines AS l USING (order_id, line_no) JOIN orders AS o ON o.id = l.order_id
	   ORDER BY 1};
my $shape_before = sql($shape_sql);
my $cons_sql = q{
SELECT string_agg(concat_ws('|', conrelid::regclass, conname, pg_get_constraintdef(oid), convalidated,
							obj_description(oid, 'pg_constraint')), E'\n' ORDER BY conrelid::regclass::text, conname)
  FROM pg_constraint WHERE conrelid IN ('orders'::regclass, 'customers'::regclass, 'order_notes'::regclass,
										 'order_lines'::regclass, 'shipments'::regclass)};
my $cons_before = sql($cons_sql);

# ---- refused, each with what to do ----

my ($ret, $stderr) = psql_fails($node, "SELECT idgen_rekey_column('orders', 'id', 'created_at', NULL)");
like($stderr, qr/below must not be null/, 'a NULL bound is refused');
like($stderr, qr/new IDs start at/, 'the hint says where the bound comes from');

($ret, $stderr) = psql_fails($node, "SELECT idgen_rekey_column('orders', 'id', 'created_at', $first_live)");
like($stderr, qr/cannot tell whether public\.order_notes\.order_id, public\.order_stats\.order_id hold keys of public\.orders/,
	'columns named like a reference, without a foreign key, are refused');
like($stderr, qr/DETAIL:  They are named for public\.orders\.id and have no foreign key/, 'the detail says why');
like($stderr, qr/follow => .*ignore =>/, 'the hint names follow and ignore');

($ret, $stderr) = psql_fails($node,
	"SELECT idgen_rekey_column('orders', 'id', 'created_at', $first_live, follow => '{nosuch.order_id}')");
like($stderr, qr/follow entry "nosuch.order_id" is not a column/, 'a follow entry that is no column is refused');

sql('CREATE TABLE legacy_refunds (order_id integer REFERENCES orders)');
($ret, $stderr) = psql_fails($node,
	"SELECT idgen_rekey_column('orders', 'id', 'created_at', $first_live, follow => '{order_notes.order_id}')");
like($stderr, qr/column "order_id" of public\.legacy_refunds holds keys of public\.orders\.id and is integer, not bigint/,
	'a referencing column too narrow for the new keys is refused');
like($stderr, qr/HINT:  Widen it first: ALTER TABLE public\.legacy_refunds ALTER COLUMN order_id TYPE bigint\./,
	'the hint names the statement that widens it');
sql('DROP TABLE legacy_refunds');

sql(q{UPDATE customers SET created_at = NULL WHERE name = 'c7'});
($ret, $stderr) = psql_fails($node, "SELECT idgen_rekey_column('customers', 'id', 'created_at', 1000000)");
like($stderr, qr/1 of the 200 keys below 1000000 have no time in "created_at"/, 'a row with no time is refused');
sql(q{UPDATE customers SET created_at = '2026-01-12 00:00:00.0086+00' WHERE name = 'c7'});

# a key not called id: its own name elsewhere is the likeliest reference
sql(q{CREATE TABLE billing (invoice_id bigint PRIMARY KEY, created_at timestamptz NOT NULL);
	  CREATE TABLE payments (id bigint PRIMARY KEY, invoice_id bigint);
	  INSERT INTO billing VALUES (1, '2026-02-01'), (2, '2026-02-02');
	  INSERT INTO payments VALUES (1, 2)});
($ret, $stderr) = psql_fails($node, "SELECT idgen_rekey_column('billing', 'invoice_id', 'created_at', 1000)");
like($stderr, qr/cannot tell whether public\.payments\.invoice_id holds keys of public\.billing/,
	'a column named as the key is, elsewhere, is refused');
like($stderr, qr/DETAIL:  It is named for public\.billing\.invoice_id and has no foreign key/,
	'the detail speaks of the one column');

# a snapshot older than the locks
($ret, $stderr) = psql_fails($node,
	"BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT idgen_rekey_column('customers', 'id', 'created_at', 1000000); COMMIT");
like($stderr, qr/idgen_rekey_column needs a READ COMMITTED transaction/,
	'a REPEATABLE READ transaction is refused');

# a partition, a view: not the table that holds the keys
sql(q{CREATE TABLE events (id bigint, region int, created_at timestamptz NOT NULL, PRIMARY KEY (id, region))
		PARTITION BY LIST (region);
	  CREATE TABLE events_1 PARTITION OF events FOR VALUES IN (1);
	  CREATE VIEW orders_view AS SELECT * FROM orders});
($ret, $stderr) = psql_fails($node, "SELECT idgen_rekey_column('events_1', 'id', 'created_at', 1000)");
like($stderr, qr/cannot rekey public\.events_1, a partition/, 'a partition is refused');
($ret, $stderr) = psql_fails($node, "SELECT idgen_rekey_column('orders_view', 'id', 'created_at', 1000)");
like($stderr, qr/public\.orders_view is not a table/, 'a view is refused');

# ---- one transaction ----

sql(q{BEGIN;
	  SELECT idgen_rekey_column('customers', 'id', 'created_at', 1000000);
	  ROLLBACK});
is(sql($keys_sql), $keys_before, 'a rolled-back rekey changes no key');

sql(q{CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END';
	  CREATE TRIGGER orders_touch BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION touch()});
($ret, $stderr) = psql_fails($node,
	"SELECT idgen_rekey_column('orders', 'id', 'created_at', $first_live, follow => '{order_notes.order_id}',
								ignore => '{order_stats.order_id}')");
like($stderr, qr/triggers would fire on the rewritten rows: orders_touch on public\.orders/,
	'an update trigger is refused');
like($stderr, qr/DISABLE TRIGGER/, 'the hint says how to let the rewrite skip it');

is(sql($keys_sql), $keys_before, 'the refusals change no key');

# ---- the rekey ----

# both tables in one transaction, the trigger skipped for it
my @summary = split /\n/, sql(qq{BEGIN;
	ALTER TABLE orders DISABLE TRIGGER orders_touch;
	SELECT idgen_rekey_column('customers', 'id', 'created_at', 1000000);
	SELECT idgen_rekey_column('orders', 'id', 'created_at', $first_live,
							  follow => '{order_notes.order_id}', ignore => '{order_stats.order_id}');
	ALTER TABLE orders ENABLE TRIGGER orders_touch;
	COMMIT});
like($summary[0],
	qr/^public\.customers\.id: 200 keys below 1000000 rewritten from created_at, .*; followed: public\.orders\.customer_id \(7020 rows\)$/,
	'customers rekeyed, orders.customer_id followed');
like($summary[1],
	qr/^public\.orders\.id: 7000 keys below $first_live rewritten from created_at, .*; followed: public\.order_notes\.order_id \(2333 rows\), public\.order_lines\.order_id \(1400 rows\), public\.orders\.parent_id \(700 rows\), public\.shipments\.order_id \(1400 rows\)$/,
	'orders rekeyed; notes and parents followed');
is(sql(q{SELECT tgenabled FROM pg_trigger WHERE tgname = 'orders_touch'}), 'O', 'the trigger is enabled again');

is(sql(q{SELECT string_agg(order_id::text, ',' ORDER BY id) FROM order_stats}), join(',', 1 .. 50),
	'a column said to hold something else is let be');
is(sql(q{SELECT count(*) FROM shipments WHERE order_id IS NULL}), '0',
	'a shipment of an order line, two foreign keys away, keeps its line');
my $keys_after = sql($keys_sql);
like(sql(qq{SELECT idgen_rekey_column('orders', 'id', 'created_at', $first_live)}),
	qr/^public\.orders\.id: 0 keys below $first_live rewritten from created_at; 7000 already for their time, kept$/,
	'run again, it keeps the keys already for their time');
is(sql($keys_sql), $keys_after, 'and changes none');
is(sql(q{SELECT count(*) FROM orders
		  WHERE id_to_timestamp(id) <> date_trunc('milliseconds', created_at) AND total < 200000}),
	'0', 'every old order decodes to its own millisecond');
is(sql(q{SELECT count(*) FROM customers WHERE id_to_timestamp(id) <> date_trunc('milliseconds', created_at)}),
	'0', 'every customer decodes to its own millisecond');
is(sql(q{SELECT count(*) FROM orders WHERE total < 200000 AND id_to_shard(id) NOT BETWEEN 100 AND 107}),
	'0', 'every old order is on a lane');
is(sql("SELECT string_agg(id::text, ',' ORDER BY id) FROM orders WHERE total >= 200000"),
	$live_before, 'the keys minted live are kept');
is(sql($shape_sql), $shape_before, 'every row finds the same customer, parent and notes');
is(sql($cons_sql), $cons_before, 'the foreign keys are back as they were, comment included');

($ret, $stderr) = psql_fails($node, 'INSERT INTO orders (customer_id, total, created_at) VALUES (42, -1, now())');
like($stderr, qr/violates foreign key constraint "orders_customer_id_fkey"/, 'and enforced');

is(sql(q{SELECT count(*) FROM orders WHERE id >= min_id_at('2026-03-01') AND id < min_id_at('2026-04-01')}),
	sql(q{SELECT count(*) FROM orders WHERE created_at >= '2026-03-01' AND created_at < '2026-04-01'}),
	'a time range on the key finds the old rows');
is(sql(q{SELECT count(*) FROM (SELECT created_at, lag(created_at) OVER (ORDER BY id) AS prev
								  FROM orders WHERE total < 200000) AS s
		  WHERE date_trunc('milliseconds', created_at) < date_trunc('milliseconds', prev)}),
	'0', 'old orders sort by time');
is(sql(q{SELECT count(*) - count(DISTINCT id)
		   FROM (SELECT id FROM orders UNION ALL SELECT id FROM customers UNION ALL SELECT id FROM imported) AS a}),
	'0', 'no key equals another, nor an ID the lanes gave the import');

# Each sweep kept to a lane of its own, and the batch's millisecond took
# what it needed: a third import over the same months still finds lanes.
is(sql(q{SELECT count(idgen_next_at(t))
		   FROM generate_series('2026-01-06 00:30:00+00'::timestamptz, '2026-08-26', interval '53 min') AS t}),
	sql(q{SELECT count(*) FROM generate_series('2026-01-06 00:30:00+00'::timestamptz, '2026-08-26', interval '53 min')}),
	'a third sweep over the same months mints');
note sql(q{SELECT string_agg(concat_ws(' ', shard, open_from, used_ranges, minted), E'\n') FROM idgen_lanes()});

# ---- a partitioned table, its time a timestamp ----

sql(q{CREATE TABLE visits (id bigint, region int, seen timestamp NOT NULL, PRIMARY KEY (id, region))
		PARTITION BY LIST (region);
	  CREATE TABLE visits_1 PARTITION OF visits FOR VALUES IN (1);
	  CREATE TABLE visits_2 PARTITION OF visits FOR VALUES IN (2);
	  CREATE TABLE visit_tags (visit_id bigint, region int, tag text,
							   FOREIGN KEY (visit_id, region) REFERENCES visits);
	  INSERT INTO visits SELECT i, 1 + i % 2, '2026-04-01 10:00'::timestamp + i * interval '1 min'
		FROM generate_series(1, 100) AS i;
	  INSERT INTO visit_tags SELECT id, region, 'tag ' || seen FROM visits});
like(sql(q{SET TimeZone = 'Asia/Tokyo'; SELECT idgen_rekey_column('visits', 'id', 'seen', 1000)}),
	qr/^public\.visits\.id: 100 keys below 1000 rewritten from seen, .*; followed: public\.visit_tags\.visit_id \(100 rows\)$/,
	'a partitioned table rekeyed, the tags referencing it followed');
is(sql(q{SET TimeZone = 'Asia/Tokyo';
		 SELECT count(*) FROM visits WHERE id_to_timestamp(id) <> seen::timestamptz}),
	'0', 'a timestamp column is read in the session\'s TimeZone');
is(sql(q{SELECT count(*) FROM visit_tags AS t JOIN visits AS v USING (region)
		  WHERE v.id = t.visit_id AND t.tag = 'tag ' || v.seen}),
	'100', 'every tag finds its visit');

# ---- what else it follows and refuses, and a date ----

# a foreign key that points at one partition, not at the partitioned table
sql(q{CREATE TABLE rides (id bigint, city int, created_at timestamptz NOT NULL, PRIMARY KEY (id, city))
		PARTITION BY LIST (city);
	  CREATE TABLE rides_1 PARTITION OF rides FOR VALUES IN (1);
	  CREATE TABLE rides_2 PARTITION OF rides FOR VALUES IN (2);
	  CREATE TABLE ride_receipts (ride_id bigint, city int, FOREIGN KEY (ride_id, city) REFERENCES rides_1 ON UPDATE SET NULL);
	  INSERT INTO rides SELECT i, 1 + i % 2, '2026-09-01'::timestamptz + i * interval '1 s' FROM generate_series(1, 40) AS i;
	  INSERT INTO ride_receipts SELECT id, city FROM rides WHERE city = 1});
like(sql(q{SELECT idgen_rekey_column('rides', 'id', 'created_at', 1000)}),
	qr/followed: public\.ride_receipts\.ride_id \(20 rows\)$/,
	'a foreign key to one partition is followed');
is(sql(q{SELECT count(*) FROM ride_receipts AS r JOIN rides AS d ON d.id = r.ride_id AND d.city = r.city}),
	'20', 'every receipt finds its ride, none set to NULL');

# inheritance: an UPDATE would reach the children unseen
sql(q{CREATE TABLE gadgets (id bigint PRIMARY KEY, created_at timestamptz NOT NULL);
	  CREATE TABLE gadgets_old () INHERITS (gadgets);
	  INSERT INTO gadgets VALUES (1, '2026-09-02')});
($ret, $stderr) = psql_fails($node, "SELECT idgen_rekey_column('gadgets', 'id', 'created_at', 1000)");
like($stderr, qr/cannot rekey through public\.gadgets, which has inheritance children/,
	'a table with inheritance children is refused');

# row security: a policy hiding rows from the owner fails the rewrite
sql(q{CREATE ROLE regress_rekey_owner;
	  CREATE TABLE gizmos (id bigint PRIMARY KEY, created_at timestamptz NOT NULL);
	  INSERT INTO gizmos SELECT i, '2026-09-03'::timestamptz + i * interval '1 s' FROM generate_series(1, 4) AS i;
	  ALTER TABLE gizmos OWNER TO regress_rekey_owner;
	  ALTER TABLE gizmos ENABLE ROW LEVEL SECURITY;
	  ALTER TABLE gizmos FORCE ROW LEVEL SECURITY;
	  CREATE POLICY even ON gizmos USING (id % 2 = 0)});
($ret, $stderr) = psql_fails($node,
	"SET ROLE regress_rekey_owner; SELECT idgen_rekey_column('gizmos', 'id', 'created_at', 1000)");
like($stderr, qr/query would be affected by row-level security policy for table "gizmos"/,
	'a policy that would hide rows fails the rewrite');
is(sql(q{SELECT string_agg(id::text, ',' ORDER BY id) FROM gizmos}), '1,2,3,4', 'and no key changed');

# the caller's own temporary table of the map's name
($ret, $stderr) = psql_fails($node,
	"CREATE TEMP TABLE idgen_rekey_map (x int); SELECT idgen_rekey_column('gadgets_old', 'id', 'created_at', 1000)");
like($stderr, qr/a temporary table idgen_rekey_map exists/, 'a temporary table of the map\'s name is not dropped');

# a key held twice, once by a row already for its time
sql(q{CREATE TABLE trips (id bigint, leg int, created_at timestamptz NOT NULL, PRIMARY KEY (id, leg));
	  INSERT INTO trips SELECT idgen_next_at('2026-09-04 10:00+00'), 1, '2026-09-04 10:00+00';
	  INSERT INTO trips SELECT id, 2, '2026-09-05 10:00+00' FROM trips});
($ret, $stderr) = psql_fails($node,
	"SELECT idgen_rekey_column('trips', 'id', 'created_at', 9223372036854775807)");
like($stderr, qr/column "id" of public\.trips holds a key more than once/,
	'a key held twice is refused, even when one of its rows is kept');

# a materialized view named like a reference
sql(q{CREATE TABLE widgets (id bigint PRIMARY KEY, made date NOT NULL);
	  INSERT INTO widgets SELECT i, date '2026-09-10' + i FROM generate_series(1, 5) AS i;
	  CREATE MATERIALIZED VIEW widget_sales AS SELECT id AS widget_id FROM widgets});
($ret, $stderr) = psql_fails($node, "SELECT idgen_rekey_column('widgets', 'id', 'made', 1000)");
like($stderr, qr/cannot tell whether public\.widget_sales\.widget_id holds keys of public\.widgets/,
	'a materialized view named like a reference is refused');
like(sql(q{SELECT idgen_rekey_column('widgets', 'id', 'made', 1000, ignore => '{widget_sales.widget_id}')}),
	qr/^public\.widgets\.id: 5 keys below 1000 rewritten from made, /,
	'and let be when ignored (to be refreshed)');
is(sql(q{SELECT count(*) FROM widgets WHERE id_to_timestamp(id) <> made::timestamptz}), '0',
	'a date column: each key decodes to its day\'s midnight');

done_testing();
