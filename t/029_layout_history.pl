
# Copyright (c) 2026, The idgen Authors
#
# A layout change with idgen.allow_layout_change = on (here 12 shard bits
# and 10 sequence bits to 13 and 9, the time field in place) begins a new
# version of the layout history; every ID keeps decoding by the layout that
# minted it, since the decoders are IMMUTABLE and stored generated columns
# and expression indexes hold what they said:
#
#  - old IDs decode exactly as before the change, and as layout A says;
#    new IDs as layout B says; new IDs are above old ones;
#  - stored generated columns still equal the decoders, and index scans on
#    id_to_shard(id) and id_to_timestamp(id) count what seq scans count;
#  - min_id_at() ranges across the cut-over hold the rows of the time range,
#    and time partitions premade before the change hold the rows of their
#    time, by their bounds as by the decoded time;
#  - the history survives a crash, the loss of idgen.state, and the loss of
#    idgen.layouts (which is written again);
#  - a standby configured for the new layout follows the primary's history;
#    one still configured for the old layout stops replay.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $epoch = '2026-01-01 00:00:00+00';
my $conf_a = "idgen.shard_id = 5\n";    # the default layout
my $conf_b = "idgen.shard_bits = 13\nidgen.sequence_bits = 9\nidgen.shard_id = 5000\n";
my $allow  = "idgen.allow_layout_change = on\n";

my $primary = idgen_node(
	'primary',
	allows_streaming => 1,
	conf => "include_if_exists = 'idgen_layout.conf'\n");

sub layout_conf { return $_[0]->data_dir . '/idgen_layout.conf'; }

# Insert $n rows minted under $layout ('a' or 'b'); keep their IDs.
sub insert_rows
{
	my ($node, $layout, $n) = @_;
	my @ids = split /\n/,
	  $node->safe_psql('postgres',
		"INSERT INTO items (layout) SELECT '$layout' FROM generate_series(1, $n) RETURNING id"
	  );
	is(scalar(@ids), $n, "inserted $n rows under layout $layout");
	push @all_ids, @ids;
	return @ids;
}

# Every decoder's answer for the rows of one layout, one line per row.
sub decodes
{
	my ($node, $layout) = @_;
	return $node->safe_psql(
		'postgres', qq{
SET TimeZone = 'UTC';
SELECT string_agg(format('%s %s %s %s %s', id, id_to_timestamp(id),
		id_to_shard(id), id_to_sequence(id), idgen_decode(id)), E'\\n' ORDER BY id)
  FROM items WHERE layout = '$layout'});
}

# --------------------------------------------------------------------------
# Layout A: the default, shard 5.

write_conf(layout_conf($primary), $conf_a);
$primary->start;
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION idgen;
CREATE TABLE items (
	id bigint PRIMARY KEY DEFAULT idgen_next(),
	layout text NOT NULL,
	ts timestamptz GENERATED ALWAYS AS (id_to_timestamp(id)) STORED,
	shard integer GENERATED ALWAYS AS (id_to_shard(id)) STORED);
CREATE INDEX items_shard_idx ON items (id_to_shard(id));
CREATE INDEX items_ts_idx ON items (id_to_timestamp(id));
});

my @old = insert_rows($primary, 'a', 2000);
usleep(50_000);
push @old, insert_rows($primary, 'a', 2000);

# Time partitions premade under layout A, 2 s each, for the two minutes
# around the change; rows minted on both sides of it go in.
$primary->safe_psql(
	'postgres', q{
CREATE TABLE parted (id bigint NOT NULL DEFAULT idgen_next()) PARTITION BY RANGE (id);
CREATE TABLE parted_from AS SELECT date_trunc('second', clock_timestamp()) - interval '10 s' AS t0;
DO $$
DECLARE
	t0 timestamptz := (SELECT t0 FROM parted_from);
BEGIN
	FOR k IN 0..59 LOOP
		EXECUTE format('CREATE TABLE parted_%s PARTITION OF parted FOR VALUES FROM (%s) TO (%s)',
					   k, min_id_at(t0 + k * interval '2 s'), min_id_at(t0 + (k + 1) * interval '2 s'));
	END LOOP;
END
$$;
INSERT INTO parted SELECT FROM generate_series(1, 500);
});

# Independently of the server: every old ID has shard 5 in bits 10..21.
is(scalar(grep { (($_ >> 10) & 4095) != 5 } @old),
	0, 'layout A: every ID carries shard 5 in its 12 shard bits');
is(misdecoded($primary, "layout = 'a'", $epoch, 12, 10, 5), '0|4000',
	'layout A: every ID decodes by layout A');
my $decoded_a = decodes($primary, 'a');

# --------------------------------------------------------------------------
# Standbys, made before the change.  "follower" is then configured for
# layout B, with the override, and restarted; "laggard" keeps layout A.

$primary->backup('backup');
my $follower = PostgreSQL::Test::Cluster->new('follower');
$follower->init_from_backup($primary, 'backup', has_streaming => 1);
my $laggard = PostgreSQL::Test::Cluster->new('laggard');
$laggard->init_from_backup($primary, 'backup', has_streaming => 1);
$follower->start;
$laggard->start;
$primary->wait_for_catchup($follower);
$primary->wait_for_catchup($laggard);
is(decodes($follower, 'a'), $decoded_a,
	'a standby decodes the old IDs as the primary');

$follower->stop;
write_conf(layout_conf($follower), $conf_b . $allow);
my ($started, $log) = start_logged($follower);
ok($started, 'the standby starts configured for layout B');
is(decodes($follower, 'a'), $decoded_a,
	'configured for layout B, the standby still decodes old IDs by layout A');

# --------------------------------------------------------------------------
# Layout B, with the override.

$primary->stop;
write_conf(layout_conf($primary), $conf_b . $allow);
my $offset = -s $primary->logfile;
($started, $log) = start_logged($primary);
ok($started, 'the primary starts with layout B and the override');
like($log, qr/idgen layout changed from epoch .*shard_bits 12, sequence_bits 10/,
	'the log says the layout changed, from layout A');
ok(log_has($primary, $offset, qr/idgen layout version 2 begins at ID \d+/),
	'the log says where version 2 begins');
my ($cut) = slurp_file($primary->logfile, $offset) =~
  /idgen layout version 2 begins at ID (\d+)/;
$cut //= 0;
is($cut & ((1 << 22) - 1), 0, 'the cut-over is the first ID of a millisecond');
is( $primary->safe_psql(
		'postgres',
		"SELECT current_setting('idgen.shard_bits'), current_setting('idgen.sequence_bits')"),
	'13|9',
	'layout B is in effect');

my @new = insert_rows($primary, 'b', 2000);
usleep(50_000);
push @new, insert_rows($primary, 'b', 2000);

$primary->safe_psql('postgres', 'INSERT INTO parted SELECT FROM generate_series(1, 500)');
is( $primary->safe_psql(
		'postgres', q{
SELECT count(*),
	   count(*) FILTER (WHERE tableoid::regclass::text =
		   'parted_' || floor(extract(epoch FROM id_to_timestamp(id) - (SELECT t0 FROM parted_from)) / 2)::int),
	   count(*) FILTER (WHERE id_to_layout_version(id) = 2)
  FROM parted}),
	'1000|1000|500',
	'partitions premade under layout A hold the rows of their time, minted under A and B');
my $parted_range = q{(SELECT t0 + interval '8 s' FROM parted_from), (SELECT t0 + interval '100 s' FROM parted_from)};
$primary->safe_psql('postgres', "CREATE TABLE parted_range AS SELECT * FROM (VALUES ($parted_range)) AS r(a, b)");
my $pruned = $primary->safe_psql('postgres', q{
SELECT count(*) FROM parted
 WHERE id >= min_id_at((SELECT a FROM parted_range)) AND id < min_id_at((SELECT b FROM parted_range))});
my $scanned = $primary->safe_psql('postgres', q{
SELECT count(*) FROM parted
 WHERE id_to_timestamp(id) >= (SELECT a FROM parted_range) AND id_to_timestamp(id) < (SELECT b FROM parted_range)});
ok($pruned > 500, 'a time range across the change holds rows of both layouts');
is($pruned, $scanned, 'by the partitions\' bounds as by the decoded time');

ok(max_id(\@old) < $cut, 'every old ID is below the cut-over');
ok(min_id(\@new) >= $cut, 'every new ID is at or above the cut-over');
check_ids(\@all_ids, 'across the change');
is(scalar(grep { (($_ >> 9) & 8191) != 5000 } @new),
	0, 'layout B: every new ID carries shard 5000 in its 13 shard bits');

# What must hold at every step from here: old IDs by A, new by B, the
# stored columns, and the indexes.
sub check_decoding
{
	my ($node, $what) = @_;
	is(decodes($node, 'a'), $decoded_a,
		"$what: old IDs decode exactly as before the change");
	is(misdecoded($node, "layout = 'a'", $epoch, 12, 10, 5), '0|' . scalar(@old),
		"$what: old IDs decode by layout A");
	my $n_new = () = grep { $_ >= $cut } @all_ids;
	is(misdecoded($node, "layout = 'b'", $epoch, 13, 9, 5000), "0|$n_new",
		"$what: new IDs decode by layout B");
	is( $node->safe_psql(
			'postgres',
			'SELECT count(*) FROM items
			  WHERE ts IS DISTINCT FROM id_to_timestamp(id)
				 OR shard IS DISTINCT FROM id_to_shard(id)'),
		'0',
		"$what: the stored generated columns equal the decoders");
	return;
}

check_decoding($primary, 'after the change');

# --------------------------------------------------------------------------
# Index scans against seq scans.

$primary->safe_psql('postgres', 'ANALYZE items');

my $by_index = q{SET enable_seqscan = off; SET enable_bitmapscan = on;
SET enable_indexscan = on; };
my $by_seq = q{SET enable_seqscan = on; SET enable_indexscan = off;
SET enable_bitmapscan = off; SET enable_indexonlyscan = off; };

# Count the rows of $where both ways, after checking the plans.
sub both_ways
{
	my ($node, $where, $index, $what) = @_;
	my $q = "SELECT count(*) FROM items WHERE $where";
	like($node->safe_psql('postgres', "$by_index EXPLAIN (COSTS OFF) $q"),
		qr/$index/, "$what: the plan with the index uses $index");
	unlike($node->safe_psql('postgres', "$by_seq EXPLAIN (COSTS OFF) $q"),
		qr/Index/, "$what: the plan without it scans the table");
	my $i = $node->safe_psql('postgres', "$by_index $q");
	my $s = $node->safe_psql('postgres', "$by_seq $q");
	is($i, $s, "$what: the index scan counts what the seq scan counts ($s)");
	return $s;
}

sub check_indexes
{
	my ($node, $what, $from, $to) = @_;
	is(both_ways($node, 'id_to_shard(id) = 5', 'items_shard_idx',
			"$what, shard 5"),
		scalar(@old), "$what: shard 5 has every old row");
	my $n_new = () = grep { $_ >= $cut } @all_ids;
	is(both_ways($node, 'id_to_shard(id) = 5000', 'items_shard_idx',
			"$what, shard 5000"),
		$n_new, "$what: shard 5000 has every new row");
	my $in_range = both_ways(
		$node,
		"id_to_timestamp(id) >= '$from' AND id_to_timestamp(id) < '$to'",
		'items_ts_idx', "$what, a time range across the cut-over");
	is( $node->safe_psql(
			'postgres',
			"SELECT count(*) FROM items WHERE id >= min_id_at('$from') AND id < min_id_at('$to')"
		),
		$in_range,
		"$what: min_id_at() bounds hold the rows of the time range");
	return;
}

# From the middle of the old rows to the middle of the new ones.
my @sorted_old = sort { $a <=> $b } @old;
my @sorted_new = sort { $a <=> $b } @new;
my ($ts_a, $ts_b, $cut_ts) = split /\|/,
  $primary->safe_psql(
	'postgres',
	"SET TimeZone = 'UTC';
	 SELECT id_to_timestamp($sorted_old[2000]), id_to_timestamp($sorted_new[2000]),
			id_to_timestamp($cut)");
is( $primary->safe_psql(
		'postgres',
		"SELECT min_id_at('$ts_a') < $cut, min_id_at('$ts_b') >= $cut,
				min_id_at('$cut_ts') = $cut,
				(SELECT count(*) FROM items WHERE id >= min_id_at('$ts_a') AND id < $cut) > 0,
				(SELECT count(*) FROM items WHERE id >= $cut AND id < min_id_at('$ts_b')) > 0"
	),
	't|t|t|t|t',
	'min_id_at(): before the cut-over below it, at it the cut-over, after it above; rows on both sides'
);

check_indexes($primary, 'after the change', $ts_a, $ts_b);

# --------------------------------------------------------------------------
# The standbys.

$primary->wait_for_catchup($follower);
check_decoding($follower, 'the standby configured for layout B');
is( $follower->safe_psql(
		'postgres',
		"SELECT min_id_at('$ts_a') < $cut, min_id_at('$cut_ts') = $cut"),
	't|t',
	'the standby configured for layout B: min_id_at() knows the cut-over');

# an ERROR in the startup process is FATAL: the standby shuts down
ok( log_has($laggard, 0,
		qr/(?:ERROR|FATAL):  idgen layout changed on the primary/),
	'the standby still configured for layout A stops replay');
like(slurp_file($laggard->logfile),
	qr/this server is configured with epoch .*shard_bits 12, sequence_bits 10/,
	'and says how it is configured');
ok(log_has($laggard, 0, qr/database system is shut down/),
	'and the whole standby shuts down, as the guide says');
$laggard->stop('immediate', fail_ok => 1);

# --------------------------------------------------------------------------
# Durability, without the override from here.

write_conf(layout_conf($primary), $conf_b);

sub restart_checks
{
	my ($what) = @_;
	insert_rows($primary, 'b', 1000);
	check_ids(\@all_ids, "$what: every ID so far");
	check_decoding($primary, $what);
	check_indexes($primary, $what, $ts_a, $ts_b);
	return;
}

# A crash.
$primary->stop('immediate');
$offset = -s $primary->logfile;
($started, $log) = start_logged($primary);
ok($started, 'after a crash the primary starts with layout B, no override');
unlike($log, qr/idgen layout changed/, 'after a crash: no layout change');
restart_checks('after a crash');

# idgen.state lost: the history comes from idgen.layouts.
my $state   = $primary->data_dir . '/idgen.state';
my $layouts = $primary->data_dir . '/idgen.layouts';
$primary->stop;
ok(-f $layouts, 'idgen.layouts exists');
unlink($state) or die "could not remove $state: $!";
($started, $log) = start_logged($primary);
ok($started, 'without idgen.state the primary starts');
like($log, qr/WARNING:  idgen state file "idgen.state" does not exist/,
	'without idgen.state: a WARNING');
unlike($log, qr/idgen layout changed/, 'without idgen.state: no layout change');
restart_checks('without idgen.state');

# idgen.layouts lost: the history comes from idgen.state, and the file is
# written again.
$primary->stop;
unlink($layouts) or die "could not remove $layouts: $!";
($started, $log) = start_logged($primary);
ok($started, 'without idgen.layouts the primary starts');
unlike($log, qr/idgen layout changed/,
	'without idgen.layouts: no layout change');
my $rewritten = 0;
foreach (1 .. 100)
{
	last if ($rewritten = -f $layouts);
	usleep(100_000);
}
ok($rewritten, 'idgen.layouts is written again');
restart_checks('without idgen.layouts');

# The standby follows all of it.
$primary->wait_for_catchup($follower);
check_decoding($follower, 'the standby, at the end');
check_indexes($follower, 'the standby, at the end', $ts_a, $ts_b);

$follower->stop;
$primary->stop;
done_testing();
