
# Copyright (c) 2026, The idgen Authors
#
# Backfill lanes leased through the registry: a lane's row holds the
# milliseconds the lane used, and its fences are published only once the
# row holds them.
#
#  - a lane's row is marked lane and carries its ranges;
#  - a second server naming the same lane does not mint on it while the
#    first holds it;
#  - the first server's lease worker paused (its lease ends, the second
#    takes the lane): the second mints none of the milliseconds the first's
#    open range may still give, and the first, still minting below its
#    published fence, gives none of the second's IDs;
#  - resumed, the first finds the lane taken and stops opening ranges on it;
#  - a clean stop gives the lane back, in the registry transaction that
#    gives back the live shard; its ranges stay in the row;
#  - a live server never mints on a lane's row, a pool never claims one,
#    and a shard leased live never becomes a lane;
#  - the guard keeps a lane's row a lane, and its ranges.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenLease;

my ($registry, $conninfo) = lease_registry();
my $rdb = registry_db($registry);
my $lanes_conf = <<'EOC';
idgen.lease_duration = '2s'
idgen.max_wait = '3s'
idgen.backfill_shards = '100'
EOC

my $at = '2026-03-03 03:03:03.003+00';
my $later = '2026-03-03 03:03:03.008+00';    # inside the open range from $at
my $rows = 300;

sub lane_ready
{
	my ($node) = @_;
	return $node->poll_query_until('postgres',
		'SELECT ready FROM idgen_lanes() WHERE shard = 100');
}

# An error's text, or '' with what the statement answered.
sub error_of
{
	my ($node, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	return $ret == 0 ? "answered: $out" : $err;
}

my $a = lease_node('lane_a', $conninfo, conf => "idgen.shard_id = 1\n$lanes_conf");
$a->start;
$a->safe_psql('postgres', 'CREATE EXTENSION idgen');
$a->safe_psql('postgres', 'SELECT idgen_lanes_init()');
ok(lane_ready($a), 'A holds lane 100');
$a->safe_psql('postgres', "CREATE TABLE minted (id bigint)");
$a->safe_psql('postgres',
	"INSERT INTO minted SELECT idgen_next_at('$at') FROM generate_series(1, $rows)");
is( $registry->safe_psql($rdb,
		"SELECT lane, lane_ranges @> '$at'::timestamptz, lane_ranges @> '$later'::timestamptz "
		  . "FROM idgen_lease WHERE shard = 100"),
	't|t|t',
	"the lane's row is a lane's and holds the open range, up to its fence"
);

my $b = lease_node('lane_b', $conninfo, conf => "idgen.shard_id = 2\n$lanes_conf");
$b->start;
$b->safe_psql('postgres', 'CREATE EXTENSION idgen');
$b->safe_psql('postgres', 'SELECT idgen_lanes_init()');
$b->safe_psql('postgres', "CREATE TABLE minted (id bigint)");
ok(log_has($b, 0, qr/backfill lane 100 is leased to another server/),
	'B logs that A holds lane 100');
like(error_of($b, "SELECT idgen_next_at('2026-04-04 00:00:00+00')"),
	qr/no backfill lane of this server holds its lease/,
	'B does not mint on a lane A holds');

# A's lease worker paused: A cannot renew, B takes the lane when it ends
my $a_worker = lease_worker_pid($a);
kill 'STOP', $a_worker;
my $b_log = -s $b->logfile;
ok(log_has($b, $b_log, qr/idgen holds the lease on backfill lane 100/, 20),
	'B takes lane 100 once the paused holder\'s lease ends');
ok(lane_ready($b), 'B mints on lane 100');
like( error_of($b,
		"INSERT INTO minted SELECT idgen_next_at('$later') FROM generate_series(1, $rows)"),
	qr/no backfill lane can mint/,
	"B gives nothing inside A's open range, which A's row held");
$b->safe_psql('postgres',
	"INSERT INTO minted SELECT idgen_next_at('2026-03-04 00:00:00+00') FROM generate_series(1, $rows)");

# A, deposed but not knowing it, goes on below its published fence
$a->safe_psql('postgres',
	"INSERT INTO minted SELECT idgen_next_at('$later') FROM generate_series(1, $rows)");

# B stops cleanly before A's worker wakes: the row is free, with both
# servers' ranges, and A, which never saw it taken, takes it back with B's
$b->stop;
ok(log_has($b, 0, qr/idgen gave back the lease on backfill lane 100/),
	'a clean stop gives the lane back');
is( $registry->safe_psql($rdb,
		"SELECT count(DISTINCT xmin::text), bool_and(owner IS NULL) FROM idgen_lease WHERE shard IN (2, 100)"),
	'1|t',
	'its live shard and its lane are given back in one registry transaction');
is( $registry->safe_psql($rdb,
		"SELECT lane, lane_ranges @> '$at'::timestamptz, "
		  . "lane_ranges @> '2026-03-04 00:00:00+00'::timestamptz FROM idgen_lease WHERE shard = 100"),
	't|t|t',
	"the row keeps both servers' ranges");
my $a_log = -s $a->logfile;
kill 'CONT', $a_worker;
ok(log_has($a, $a_log, qr/idgen holds the lease on backfill lane 100/, 20),
	'A, resumed, takes the free row again');
like( error_of($a,
		"INSERT INTO minted SELECT idgen_next_at('2026-03-04 00:00:00+00') FROM generate_series(1, $rows)"),
	qr/no backfill lane can mint/,
	"A gives none of the millisecond B used while A was paused");

my %a_ids = map { $_ => 1 } split /\n/, $a->safe_psql('postgres', 'SELECT id FROM minted');
$b->start;
my @b_ids = split /\n/, $b->safe_psql('postgres', 'SELECT id FROM minted');
is(scalar(keys %a_ids), 2 * $rows, 'A minted its IDs, none twice');
cmp_ok(scalar(@b_ids), '>=', $rows, 'B minted its IDs');
is(scalar(grep { $a_ids{$_} } @b_ids), 0, 'no ID minted by both servers');

# a raise past restored IDs on the lane's holder reaches its row, for
# whoever holds it next
my $restored_at = '2026-02-02 02:02:02.002+00';
$a->safe_psql('postgres',
	"SELECT idgen_advance_past(min_id_at('$restored_at') + (100::bigint << current_setting('idgen.sequence_bits')::int))");
is( $registry->safe_psql($rdb,
		"SELECT lane_ranges @> '$restored_at'::timestamptz FROM idgen_lease WHERE shard = 100"),
	't', "the holder's raise past restored IDs is in the lane's row");

# A paused again, B takes the lane; A, resumed, finds it another's and
# opens no range on it
$a_worker = lease_worker_pid($a);
kill 'STOP', $a_worker;
$b_log = -s $b->logfile;
ok(log_has($b, $b_log, qr/idgen holds the lease on backfill lane 100/, 20),
	'B takes the lane while A is paused again');
$a_log = -s $a->logfile;
kill 'CONT', $a_worker;
ok(log_has($a, $a_log, qr/backfill lane 100 is leased to another server/, 20),
	'A, resumed, finds the lane taken');
like(error_of($a, "SELECT idgen_next_at('2026-05-05 00:00:00+00')"),
	qr/no backfill lane of this server holds its lease/,
	'A opens no range on a lane it lost');
$b->stop;

# the guard
like(error_of_registry("UPDATE idgen_lease SET lane = false WHERE shard = 100"),
	qr/shard 100 is a backfill lane in public.idgen_lease and stays one/,
	'a lane row stays a lane');
$registry->safe_psql($rdb, "UPDATE idgen_lease SET lane_ranges = '{}' WHERE shard = 100");
is( $registry->safe_psql($rdb,
		"SELECT lane_ranges @> '$at'::timestamptz FROM idgen_lease WHERE shard = 100"),
	't', "a lane's ranges are never forgotten");

# A range in the row past where this server's lanes would reach (another
# holder's clock or idgen.max_lead ahead; here, by hand): taken whole, so
# the lane never mints there once the clock gets there, and the live
# generator's floor is not held an hour ahead by it.
ok(lane_ready($a), 'A holds lane 100 again');
# the offset first: A's next round may take the row before psql returns
$a_log = -s $a->logfile;
$registry->safe_psql($rdb,
	"UPDATE idgen_lease SET lane_ranges = lane_ranges + "
	  . "tstzmultirange(tstzrange(clock_timestamp() + interval '3 s', clock_timestamp() + interval '1 h')), "
	  . "owner = NULL WHERE shard = 100");
ok(log_has($a, $a_log, qr/idgen holds the lease on backfill lane 100/, 20),
	'A takes the row again, with the far range');
sleep 5;
like( error_of($a,
		"INSERT INTO minted SELECT idgen_next_at(clock_timestamp() - interval '100 ms') FROM generate_series(1, 10)"),
	qr/no backfill lane can mint/,
	"the lane gives nothing in the far range, once the clock gets there");
$a->restart;
is( $a->safe_psql('postgres',
		"SELECT id_to_timestamp(idgen_next()) < clock_timestamp() + interval '1 min'"), 't',
	'after a restart, the live generator mints now, not past the far range');

sub error_of_registry
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $registry->psql($rdb, $sql);
	return $ret == 0 ? "answered: $out" : $err;
}

# a live server on a lane's shard, a lane on a live shard, a pool
my $c = lease_node('live_c', $conninfo, conf => <<'EOC');
idgen.lease_duration = '2s'
idgen.max_wait = '2s'
idgen.shard_id = 100
idgen.backfill_shards = '1'
EOC
$c->start;
$c->safe_psql('postgres', 'CREATE EXTENSION idgen');
$c->safe_psql('postgres', 'SELECT idgen_lanes_init()');
ok(log_has($c, 0, qr/shard 100 is a backfill lane in the lease registry; this server does not mint for it/),
	'a live server refuses a lane row');
like(error_of($c, 'SELECT idgen_next()'), qr/this server holds no lease on shard 100/,
	'and does not mint for it');
ok(log_has($c, 0, qr/shard 1 was leased live and cannot be a backfill lane/),
	'a shard leased live does not become a lane');
like(error_of($c, "SELECT idgen_next_at('2026-04-04 00:00:00+00')"),
	qr/no backfill lane of this server holds its lease/,
	'and the lane does not mint');
$c->stop;

# a pool of a free lane row and a free live row, the lane row the one a
# claim would take first (ended earlier): the claim passes it over
$a->stop;
$registry->poll_query_until($rdb,
	"SELECT GREATEST(valid_until, stamped_until) < clock_timestamp() FROM idgen_lease WHERE shard = 100")
  or die 'the lane row did not end';
$registry->safe_psql($rdb,
	"INSERT INTO idgen_lease (shard, valid_until) VALUES (101, clock_timestamp())");
is( $registry->safe_psql($rdb,
		"SELECT (owner IS NULL OR valid_until < clock_timestamp()) AND lane "
		  . "AND GREATEST(valid_until, stamped_until) < "
		  . "(SELECT valid_until FROM idgen_lease WHERE shard = 101) FROM idgen_lease WHERE shard = 100"),
	't', 'the lane row is free, and would be claimed first');
my $d = lease_node('pool_d', $conninfo, conf => <<'EOC');
idgen.lease_duration = '2s'
idgen.max_wait = '5s'
idgen.shard_pool = '100-101'
EOC
$d->start;
$d->safe_psql('postgres', 'CREATE EXTENSION idgen');
is($d->safe_psql('postgres', 'SELECT id_to_shard(idgen_next())'), 101,
	'a pool claims no lane row');
$d->stop;

done_testing();
