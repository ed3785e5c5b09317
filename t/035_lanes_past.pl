
# Copyright (c) 2026, The idgen Authors
#
# What the backfill lanes know of their past, across restarts: a lane never
# mints where IDs of its shard may already be.
#
#  - the shards minted live are recorded before any lane exists, and such a
#    shard never becomes a lane;
#  - idgen_advance_past of an ID of a shard that is not yet a lane is kept,
#    and the lane, once named, mints above it;
#  - idgen_advance_past does not attest a lane new to the cluster, across a
#    restart either;
#  - a server started from a base backup refuses, and still refuses after
#    a restart, until attested;
#  - an asynchronous standby promoted mid-import refuses until attested,
#    and raised as the guide says, gives none of the IDs it replicated nor
#    those its old primary gave after it fell behind;
#  - a former lane may be minted live: the generator starts above its IDs;
#  - a block that two lanes give comes out ascending.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('lanes_past', allows_streaming => 1,
	conf => "include_if_exists = 'lanes.conf'");

sub lanes_conf
{
	my ($conf) = @_;
	write_conf($node->data_dir . '/lanes.conf', "$conf\n");
}

# The ID of a shard at a time, sequence 0.
sub id_of
{
	my ($shard, $t) = @_;
	return $node->safe_psql('postgres',
		"SELECT min_id_at('$t') + (${shard}::bigint << current_setting('idgen.sequence_bits')::int)");
}

# ---- the shards minted live, recorded before any lane ----

lanes_conf("idgen.shard_id = 7");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
# IDs a lane gives in one millisecond
my $cap = $node->safe_psql('postgres',
	"SELECT 1 << current_setting('idgen.sequence_bits')::int");
my $live = $node->safe_psql('postgres', 'SELECT idgen_next()');
ok( $node->poll_query_until('postgres',
		"SELECT (pg_stat_file('idgen.lanes', true)).size IS NOT NULL"),
	'with no lane, the worker records the live shard in the lanes file');
$node->stop;

lanes_conf("idgen.shard_id = 8\nidgen.backfill_shards = '7, 50'");
$node->start;
my ($ret, $stderr) = psql_fails($node, 'SELECT idgen_lanes_init()');
like($stderr, qr/shard 7 was minted live and cannot be a backfill lane/,
	'a shard minted live before lanes existed is refused as a lane');
like($stderr, qr/HINT:  Remove shard 7 from "idgen.backfill_shards"/,
	'the hint says what to do');
$node->stop;

# ---- a raise of a shard that is not a lane yet ----

lanes_conf("idgen.shard_id = 8\nidgen.backfill_shards = '50'");
$node->start;
is($node->safe_psql('postgres', 'SELECT idgen_lanes_init()'), 1, 'lane 50 attested');
my $raised_at = '2026-05-05 05:05:05.005+00';
my $raised = id_of(60, $raised_at);
$node->safe_psql('postgres', "SELECT idgen_advance_past($raised)");
$node->stop;

lanes_conf("idgen.shard_id = 8\nidgen.backfill_shards = '50, 60'");
$node->start;
is($node->safe_psql('postgres', "SELECT id_to_shard(idgen_next_at('$raised_at'))"),
	50, 'a lane named since the attestation is passed over: the others mint');
is($node->safe_psql('postgres', 'SELECT ready FROM idgen_lanes() WHERE shard = 60'),
	'f', 'idgen_lanes() shows it not ready');
($ret, $stderr) = psql_fails($node,
	"SELECT count(*) FROM idgen_next_at_n('$raised_at', $cap + 1)");
like($stderr,
	qr/no backfill lane can mint at 2026-05-05 05:05:05.005.*Of the 1 lane that mints here, 1 gave all.*1 more lane is passed over: lane 60 is new to this cluster.*HINT:.*idgen_lanes_init/s,
	'when the others are full at a time, the error says so, and names the lane passed over');

# the raise does not attest it, before a restart or after
my $raised2 = id_of(60, '2026-05-05 05:05:04+00');
$node->safe_psql('postgres', "SELECT idgen_advance_past($raised2)");
($ret, $stderr) = psql_fails($node, "SELECT idgen_next_at('$raised_at')");
like($stderr, qr/lane 60 is new to this cluster/,
	'idgen_advance_past does not attest a new lane');
$node->restart;
($ret, $stderr) = psql_fails($node, "SELECT idgen_next_at('$raised_at')");
like($stderr, qr/lane 60 is new to this cluster/,
	'nor does the restart after it');

is($node->safe_psql('postgres', 'SELECT idgen_lanes_init()'), 2, 'lanes 50 and 60 attested');
# lane 50 fills the millisecond; lane 60 must not give it: IDs of 60 exist there
($ret, $stderr) = psql_fails($node,
	"SELECT count(*) FROM idgen_next_at_n('$raised_at', $cap + 1)");
like($stderr, qr/no backfill lane can mint at 2026-05-05 05:05:05.005/,
	'the raised lane gives nothing at or below the IDs it was raised past');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM idgen_next_at_n('2026-05-05 05:05:10.001+00', $cap + 1) AS id
		  WHERE id_to_shard(id) = 60"),
	1,
	'and mints above them');

# ---- a block two lanes give: ascending ----

# a millisecond full on lane 50, then one ID from lane 60: this session's
# next block starts on lane 60, and ends on the lower lane 50
my $t1 = '2026-06-06 06:06:06.006+00';
my $t2 = '2026-06-06 06:06:06.007+00';
my $sorted = $node->safe_psql('postgres',
	"SELECT count(*) FROM idgen_next_at_n('$t1', $cap);
	 SELECT idgen_next_at('$t1');
	 WITH b AS (SELECT id, row_number() OVER () AS n FROM idgen_next_at_n('$t2', $cap + 100) AS id)
	 SELECT count(DISTINCT id_to_shard(id)) || ' ' ||
	        bool_and(id > coalesce(prev, 0))
	   FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM b) s");
is((split /\n/, $sorted)[-1], '2 true', 'a block from two lanes comes out ascending');

# ---- a former lane minted live ----

my $lane_max = $node->safe_psql('postgres',
	"SELECT max(id) FROM idgen_next_at_n(clock_timestamp() + interval '500 ms', 100) AS id");
$node->stop;
lanes_conf("idgen.shard_id = 50");
$node->start;
cmp_ok($node->safe_psql('postgres', 'SELECT idgen_next()'), '>', $lane_max,
	'a former lane minted live starts above every ID it gave as a lane');

# ---- a server from a base backup ----

lanes_conf("idgen.shard_id = 8\nidgen.backfill_shards = '50, 60'");
$node->restart;
$node->backup('b');
my $copy = PostgreSQL::Test::Cluster->new('lanes_past_copy');
$copy->init_from_backup($node, 'b');
$copy->start;
($ret, $stderr) = psql_fails($copy, "SELECT idgen_next_at('$t2')");
like($stderr, qr/replayed WAL of another server/,
	'a server started from a base backup refuses');
$copy->restart;
($ret, $stderr) = psql_fails($copy, "SELECT idgen_next_at('$t2')");
like($stderr, qr/replayed WAL of another server/,
	'and still refuses after a restart');
$copy->stop;

# ---- an asynchronous standby promoted mid-import ----

# Replay brings the standby every range whose IDs reached it (a range's
# record precedes its IDs in WAL); the IDs its primary gave after the last
# WAL it received are not known to it, so it refuses until attested, and
# the guide has the operator raise it past the old primary's lane IDs when
# that data survives.
lanes_conf("idgen.shard_id = 8\nidgen.backfill_shards = '70, 71'");
$node->restart;
$node->safe_psql('postgres', 'SELECT idgen_lanes_init()');
$node->backup('s');
my $async = PostgreSQL::Test::Cluster->new('lanes_past_async');
$async->init_from_backup($node, 's', has_streaming => 1);
$async->start;
my $ta = '2026-07-07 07:07:07.007+00';
my $tb = '2026-07-08 07:07:07.007+00';    # a range the standby never hears of
my $lane_ids = q{SELECT string_agg(id::text, ',' ORDER BY id) FROM imported};
$node->safe_psql('postgres',
	"CREATE TABLE imported AS SELECT id FROM idgen_next_at_n('$ta', $cap + 10) AS id");
$node->wait_for_catchup($async);
my %replicated = map { ($_ => 1) } split /,/, $node->safe_psql('postgres', $lane_ids);
# the standby falls behind; the import goes on, a day later, and commits
# on the primary
$async->stop;
$node->safe_psql('postgres',
	"INSERT INTO imported SELECT id FROM idgen_next_at_n('$tb', 10) AS id");
my %lost = map { ($_ => 1) } grep { !$replicated{$_} } split /,/,
  $node->safe_psql('postgres', $lane_ids);
$node->stop('immediate');
$async->start;
$async->promote;
($ret, $stderr) = psql_fails($async, "SELECT idgen_next_at('$ta')");
like($stderr, qr/replayed WAL of another server/,
	'a promoted asynchronous standby refuses until attested');
is(scalar(keys %lost), 10, 'the old primary gave ten lane IDs after the standby fell behind');
is($async->safe_psql('postgres',
		q{SELECT count(*) FROM idgen_lanes() WHERE shard IN (70, 71) AND (open_from IS NOT NULL OR used_ranges > 0)}),
	'2', 'replay gave the standby both ranges whose IDs reached it');

# the guide: the lane IDs its own tables hold, and the old primary's, whose
# data survives here
my $largest = q{SELECT string_agg(m::text, ',')
				 FROM (SELECT max(id) AS m FROM imported
						WHERE id_to_shard(id) IN (70, 71) GROUP BY id_to_shard(id)) AS s};
$node->start;
my @old = split /,/, $node->safe_psql('postgres', $largest);
$node->stop;
$async->safe_psql('postgres', "SELECT idgen_advance_past($_)")
  for @old, split /,/, $async->safe_psql('postgres', $largest);
is($async->safe_psql('postgres', 'SELECT idgen_lanes_init()'), 2, 'raised, then attested');
($ret, $stderr) = psql_fails($async, "SELECT idgen_next_at('$ta')");
like($stderr, qr/no backfill lane can mint at/,
	'where both lanes gave the IDs it replicated, it gives none');
my @after = split /\n/,
  $async->safe_psql('postgres', "SELECT idgen_next_at_n('$tb', 10)");
is(scalar(grep { $lost{$_} } @after), 0,
	'nor, raised past the old primary\'s, any of the IDs it never received');
$async->stop;

done_testing();
