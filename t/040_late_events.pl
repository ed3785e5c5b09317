
# Copyright (c) 2026, The idgen Authors

# Late events in the order they arrive, on the guide's 16 lanes
# (doc/backfill.md): 200,000 at random times within the last hour and
# 200,000 within the last 30 days, from four sessions at once, every one
# minted, each decoding to its own millisecond, none equal to another; then
# IDs minted in a transaction a kill -9 cuts off, and as many again after
# it at the same times, none equal to one of before.  A lane's cursor alone
# served some 380 such events, then failed.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node(
	'late',
	conf => qq(
idgen.backfill_shards = '4000-4015'
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
$node->safe_psql('postgres', 'SELECT idgen_lanes_init()');
$node->safe_psql('postgres',
	'CREATE TABLE events (id bigint PRIMARY KEY, at timestamptz NOT NULL)');

# Each session draws its own times (seeded) and mints them in that order.
sub late_sql
{
	my ($seed, $n, $span) = @_;
	return "SELECT setseed($seed);
	  INSERT INTO events
	  SELECT idgen_next_at(at), at
	    FROM (SELECT now() - random() * interval '$span' AS at, i
	            FROM generate_series(1, $n) AS i) AS e
	   ORDER BY i";
}

# Four sessions at once, each running its statements in turn.
sub four_sessions
{
	my (@sql) = @_;
	my (@harness, @err);
	for my $i (0 .. 3)
	{
		push @harness,
		  IPC::Run::start(
			[
				'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1',
				'-d', $node->connstr('postgres'),
				'-c', $sql[$i]
			],
			'>', \my $out, '2>', \$err[$i],
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	}
	my $failed = 0;
	for my $i (0 .. 3)
	{
		$harness[$i]->finish;
		if ($harness[$i]->result != 0)
		{
			diag("session $i: $err[$i]");
			$failed++;
		}
	}
	return $failed;
}

sub decoded_wrong
{
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM events
		  WHERE id_to_timestamp(id) <> date_trunc('milliseconds', at)
		     OR id_to_shard(id) NOT BETWEEN 4000 AND 4015");
}

# Four sessions at random times of the last hour, then four of the last
# 30 days, $each events a session; then every row of the table, counted
# and decoded.
sub late_round
{
	my ($what, $seed, $each, $total) = @_;
	my $n = 4 * $each;
	is(four_sessions(map { late_sql($seed * ($_ + 1), $each, '1 hour') } 0 .. 3),
		0, "$what, four sessions mint $n events of the last hour, in arrival order");
	is(four_sessions(map { late_sql(-$seed * ($_ + 1), $each, '30 days') } 0 .. 3),
		0, "$what, and $n of the last 30 days");
	is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM events'),
		"$total|$total", "$what, all $total minted, none equal to another");
	is(decoded_wrong(), 0, "$what, each decodes to its own millisecond, on a lane");
}

# ---- 400,000 late events, four sessions ----

late_round('before a crash', 0.1, 50000, 400000);

# ---- a kill -9 ----

my $open = $node->background_psql('postgres');
$open->query_safe('BEGIN');
$open->query_safe(
	"CREATE TEMP TABLE cut AS
	 SELECT idgen_next_at(now() - random() * interval '1 hour') AS id
	   FROM generate_series(1, 20000)");
my $cut = $open->query_safe('SELECT string_agg(id::text, \',\') FROM cut');
is(scalar(split /,/, $cut), 20000, '20,000 IDs minted in a transaction a crash cuts off');
$node->stop('immediate');
eval { $open->quit };
$node->start;

late_round('after the crash', 0.2, 25000, 600000);
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM events WHERE id = ANY ('{$cut}'::bigint[])"),
	0, 'none equal to one minted before the kill -9');

# ---- what it cost ----

my ($minted, $ready) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT sum(minted), count(*) FILTER (WHERE ready) FROM idgen_lanes()');
cmp_ok($minted, '>=', 200000, 'the lanes count what they minted since the restart');
is($ready, 16, 'every lane still ready');

# ---- a raise inside a window ----

# A lane raised past a copied row's ID ends its window there, even when
# the window joined an earlier raise's range: it never gives that ID.
my $r = idgen_node('raise', conf => "idgen.backfill_shards = '4000-4003'");
$r->start;
$r->safe_psql('postgres', 'CREATE EXTENSION idgen');
$r->safe_psql('postgres', 'SELECT idgen_lanes_init()');
my $base = $r->safe_psql('postgres',
	"SELECT date_trunc('second', now() - interval '2 hours')");
sub id_at
{
	my ($t, $shard) = @_;
	return $r->safe_psql('postgres',
		"SELECT min_id_at('$t'::timestamptz) + (${shard}::bigint << current_setting('idgen.sequence_bits')::int)");
}
$r->safe_psql('postgres', 'SELECT idgen_next_at(now())');    # a cursor above
$r->safe_psql('postgres', "SELECT idgen_advance_past(" . id_at($base, $_) . ")")
  for 4000 .. 4003;
my $window_shard = $r->safe_psql('postgres',
	"SELECT id_to_shard(idgen_next_at('$base'::timestamptz + interval '1 s'))");
my $copied = id_at($r->safe_psql('postgres', "SELECT '$base'::timestamptz + interval '2 s'"),
	$window_shard);
$r->safe_psql('postgres', "SELECT idgen_advance_past($copied)");
my @next = split /\n/, $r->safe_psql('postgres',
	"SELECT idgen_next_at('$base'::timestamptz + interval '2 s') FROM generate_series(1, 2000)");
is(scalar(grep { $_ == $copied } @next), 0,
	"the window's lane, raised past a copied ID in it, never gives that ID");

done_testing();
