
# Copyright (c) 2026, The idgen Authors

# idgen on Citus, as a user relies on it: a coordinator and two workers,
# each preloading citus and idgen with a shard of its own.  The extension
# reaches every node; tables distributed by id, by tenant with (tenant, id)
# keys, and a reference table take inserts through every node at once, in
# every form, each ID minted by the node the statement entered; a shard
# moves under insert load and loses nothing; time ranges, with constant
# bounds and with now() in them, give the rows one node gives.

use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::RealBin/..", $FindBin::RealBin;
use IdgenTest;
use IdgenCitus;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

plan skip_all => 'Citus is not installed for this PostgreSQL (scripts/citus.sh)'
  unless citus_available();

my $c  = citus_node('coordinator', 1);
my $w1 = citus_node('worker1',     2);
my $w2 = citus_node('worker2',     3);
my %shard_of = (c => 1, w1 => 2, w2 => 3);
my %node_of  = (c => $c, w1 => $w1, w2 => $w2);

# ---- extension propagation ---------------------------------------------------
$c->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('127.0.0.1', " . $c->port . ')');
my ($ret, $err) = add_node($c, $w1);
is($ret, 0, 'worker 1 added') or diag $err;
$c->safe_psql('postgres', 'CREATE EXTENSION idgen');
# the control file's default, which the coordinator installed
my $version = $c->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'idgen'");
is($w1->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'idgen'"),
	$version, 'CREATE EXTENSION idgen on the coordinator creates it on worker 1');
($ret, $err) = add_node($c, $w2);
is($ret, 0, 'worker 2 added') or diag $err;
is($w2->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'idgen'"),
	$version, 'citus_add_node creates it on worker 2, added later');
is($c->safe_psql('postgres', 'SELECT count(*) FROM idgen_citus_check()'),
	'0', 'idgen_citus_check(): the three nodes agree');

# ---- the tables ----------------------------------------------------------------
$c->safe_psql(
	'postgres', q{
CREATE TABLE events (id bigint PRIMARY KEY DEFAULT idgen_next(), node text, body text);
SELECT create_distributed_table('events', 'id');
CREATE TABLE tenant_events (tenant integer, id bigint DEFAULT idgen_next(), node text,
                            PRIMARY KEY (tenant, id));
SELECT create_distributed_table('tenant_events', 'tenant');
CREATE TABLE kinds (id bigint PRIMARY KEY DEFAULT idgen_next(), node text);
SELECT create_reference_table('kinds');
});

# ---- inserts through every node at once ---------------------------------------
# Every form a client uses, per round: VALUES, multi-row VALUES, INSERT ...
# SELECT of generated rows, a prepared statement, and COPY.
my $rounds = 60;

sub workload
{
	my ($n) = @_;
	my $sql = "PREPARE ins_e AS INSERT INTO events (node, body) VALUES ('$n', 'prepared');\n"
	  . "PREPARE ins_t(integer) AS INSERT INTO tenant_events (tenant, node) VALUES (\$1, '$n');\n";
	for my $i (1 .. $rounds)
	{
		my $t = $i % 7;
		$sql .= <<"EOS";
INSERT INTO events (node, body) VALUES ('$n', 'values');
INSERT INTO events (node, body) VALUES ('$n', 'multi'), ('$n', 'multi'), ('$n', 'multi');
INSERT INTO events (node, body) SELECT '$n', 'select' FROM generate_series(1, 3);
EXECUTE ins_e;
INSERT INTO tenant_events (tenant, node) VALUES ($t, '$n');
INSERT INTO tenant_events (tenant, node) VALUES (1, '$n'), (2, '$n'), (3, '$n');
INSERT INTO tenant_events (tenant, node) SELECT g, '$n' FROM generate_series(4, 6) AS g;
EXECUTE ins_t($t);
INSERT INTO kinds (node) VALUES ('$n');
COPY events (node, body) FROM STDIN;
EOS
		$sql .= "$n\tcopy\n" x 10;
		$sql .= "\\.\nCOPY tenant_events (tenant, node) FROM STDIN;\n";
		$sql .= join('', map { "$_\t$n\n" } 1 .. 10);
		$sql .= "\\.\n";
	}
	return $sql;
}

my @load;
push @load, [ $_, run_sql_bg($node_of{$_}, workload($_)) ] for qw(c w1 w2);
for my $l (@load)
{
	my ($n, $h, $out, $err) = @$l;
	ok($h->finish, "inserts through $n: every statement succeeded")
	  or diag $$err;
}

my $per_node = $rounds * (1 + 3 + 3 + 1 + 10);
for my $n (qw(c w1 w2))
{
	is( $c->safe_psql(
			'postgres', "SELECT (SELECT count(*) FROM events WHERE node = '$n') || ',' ||
			 (SELECT count(*) FROM tenant_events WHERE node = '$n') || ',' ||
			 (SELECT count(*) FROM kinds WHERE node = '$n')"),
		"$per_node,$per_node,$rounds",
		"every row inserted through $n is stored");
}
my $all = q{(SELECT id, node FROM events UNION ALL SELECT id, node FROM tenant_events
             UNION ALL SELECT id, node FROM kinds) AS a};
is($c->safe_psql('postgres', "SELECT count(*) - count(DISTINCT id) FROM $all"),
	'0', 'no ID is stored twice, in the three tables together');
is( $c->safe_psql(
		'postgres',
		"SELECT count(*) FROM $all WHERE id_to_shard(id) <> CASE node WHEN 'c' THEN 1 WHEN 'w1' THEN 2 WHEN 'w2' THEN 3 END"
	),
	'0',
	'id_to_shard(id) names the node each statement entered, for every row');
is($w2->safe_psql('postgres', "SELECT count(*) FROM kinds WHERE node = 'w1'"),
	$rounds, 'the reference table holds the rows on every node');

# ---- the limits -----------------------------------------------------------------
# INSERT ... SELECT from a distributed table with a volatile DEFAULT is not
# pushed down: Citus repartitions, and the DEFAULT is evaluated where the
# source rows are read, the workers, not the node the statement entered.
like(
	$c->safe_psql(
		'postgres',
		'EXPLAIN (COSTS OFF) INSERT INTO tenant_events (tenant, node) SELECT tenant, node FROM tenant_events'
	),
	qr/INSERT\/SELECT method: repartition/,
	'INSERT ... SELECT between distributed tables repartitions');
$c->safe_psql('postgres',
	"INSERT INTO tenant_events (tenant, node) SELECT tenant, 'resharded' FROM tenant_events WHERE node = 'c'");
is( $c->safe_psql(
		'postgres',
		"SELECT string_agg(DISTINCT id_to_shard(id)::text, ',' ORDER BY id_to_shard(id)::text) FROM tenant_events WHERE node = 'resharded'"
	),
	'2,3',
	'its IDs are minted by the workers that read the rows, none by the coordinator');
my ($ret2, $stderr);
($ret2, $stderr) = psql_fails($c, 'UPDATE events SET id = idgen_next() WHERE false');
like($stderr, qr/functions used in UPDATE queries on distributed tables must not be VOLATILE/,
	'UPDATE ... SET id = idgen_next() is refused');

# Pruning: a (tenant, id) key with the tenant goes to one shard; a range of
# IDs on a table distributed by id goes to every shard.
like(
	$c->safe_psql(
		'postgres',
		"EXPLAIN (COSTS OFF) SELECT count(*) FROM tenant_events WHERE tenant = 3 AND id >= min_id_at(now() - interval '1 hour')"
	),
	qr/Task Count: 1\b/,
	'a time range of one tenant runs on one shard');
like(
	$c->safe_psql(
		'postgres',
		"EXPLAIN (COSTS OFF) SELECT count(*) FROM events WHERE id >= min_id_at(now() - interval '1 hour')"
	),
	qr/Task Count: 4\b/,
	'a time range of a table distributed by id runs on every shard');

# ---- a shard move under insert load -------------------------------------------
my $moving = 10000;    # each, enough to outlast the move on a fast machine
my @movers;
for my $n (qw(c w1))
{
	my $sql = '';
	$sql .= "INSERT INTO events (node, body) VALUES ('$n', 'during the move') RETURNING id;\n"
	  for 1 .. $moving;
	push @movers, [ $n, run_sql_bg($node_of{$n}, $sql) ];
}
my $before;
for (1 .. 100)
{
	$before = $c->safe_psql('postgres',
		"SELECT count(*) FROM events WHERE body = 'during the move'");
	last if $before > 100;
	Time::HiRes::usleep(50_000);
}
my ($shardid) = $c->safe_psql(
	'postgres', "SELECT shardid FROM citus_shards
	  WHERE table_name = 'events'::regclass AND nodeport = " . $w1->port . ' ORDER BY shardid LIMIT 1');
$c->safe_psql('postgres',
	    "SELECT citus_move_shard_placement($shardid, '127.0.0.1', "
	  . $w1->port
	  . ", '127.0.0.1', "
	  . $w2->port . ')');
my $after = $c->safe_psql('postgres',
	"SELECT count(*) FROM events WHERE body = 'during the move'");
my @returned;
for my $m (@movers)
{
	my ($n, $h, $out, $err) = @$m;
	ok($h->finish, "inserts through $n during the move: every one succeeded")
	  or diag $$err;
	push @returned, split /\n/, $$out;
}
note "rows of the load: $before when the move began, $after when it ended, "
  . scalar(@returned) . ' in all';
ok($before > 0 && $after < 2 * $moving, 'the move ran while rows were inserted');
is($c->safe_psql('postgres',
		"SELECT nodeport FROM citus_shards WHERE shardid = $shardid"),
	$w2->port, 'the shard is on worker 2');
is(scalar(@returned), 2 * $moving, 'every insert returned its ID');
is( $c->safe_psql(
		'postgres',
		"SELECT count(*) || ',' || count(DISTINCT id) FROM events WHERE body = 'during the move' AND id = ANY('{"
		  . join(',', @returned) . "}'::bigint[])"),
	(2 * $moving) . ',' . (2 * $moving),
	'every ID returned during the move is stored, once');

# ---- time ranges -------------------------------------------------------------
# Rows in two bursts 3 s apart.  A range starting in the middle of the gap
# holds the second burst, on the cluster as on one node (a copy of every
# ID in a temporary table of the coordinator): with a constant bound, and
# with now() in the bound, the interval back from now() to that middle
# reckoned by this script just before the query, so that the bound is
# still in the gap even on a loaded machine, where the query starts late.
sub burst
{
	my ($tag) = @_;
	for my $n (qw(c w1 w2))
	{
		$node_of{$n}->safe_psql('postgres',
			"INSERT INTO events (node, body) SELECT '$n', '$tag' FROM generate_series(1, 100);
			 INSERT INTO tenant_events (tenant, node) SELECT g % 5, '$n' FROM generate_series(1, 100) AS g");
	}
}
burst('burst 1');
Time::HiRes::sleep(1.5);
my ($between, $middle) = split /\|/,
  $c->safe_psql('postgres', 'SELECT now(), extract(epoch FROM now())');
Time::HiRes::sleep(1.5);
burst('burst 2');
my $burst2 = $c->safe_psql('postgres',
	"SELECT count(*) FROM events WHERE id >= min_id_at('$between')");
is($burst2, 300, 'the second burst is 300 rows of events');
$c->safe_psql(
	'postgres', q{
CREATE TABLE one_node AS SELECT id FROM events;
CREATE TABLE one_node_t AS SELECT tenant, id FROM tenant_events;
});
for my $what ('constant bounds', 'now() in the bounds')
{
	my $bound = "min_id_at('$between')";
	if ($what =~ /now/)
	{
		my $ago = sprintf('%.3f', Time::HiRes::time() - $middle);
		$bound = "min_id_at(now() - interval '$ago seconds')";
	}
	my $res = $c->safe_psql(
		'postgres', qq{
SELECT (SELECT count(*) || ' ' || md5(string_agg(id::text, ',' ORDER BY id)) FROM events WHERE id >= $bound)
       = (SELECT count(*) || ' ' || md5(string_agg(id::text, ',' ORDER BY id)) FROM one_node WHERE id >= $bound),
       (SELECT count(*) FROM events WHERE id >= $bound),
       (SELECT count(*) || ' ' || md5(string_agg(id::text, ',' ORDER BY id)) FROM tenant_events WHERE tenant = 3 AND id >= $bound)
       = (SELECT count(*) || ' ' || md5(string_agg(id::text, ',' ORDER BY id)) FROM one_node_t WHERE tenant = 3 AND id >= $bound)});
	is($res, "t|$burst2|t",
		"$what: the cluster returns the rows one node returns, by id and by (tenant, id)");
}

done_testing();
