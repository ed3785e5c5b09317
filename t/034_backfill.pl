
# Copyright (c) 2026, The idgen Authors
#
# Minting for a given time on the backfill lanes (idgen_next_at,
# idgen_next_at_n): every ID decodes to its time, and none equals another,
# live or backfilled:
#
#  - the lanes refuse until idgen_lanes_init() attests them;
#  - a millisecond the server minted live, backfilled: other shards;
#  - four sessions in two databases backfilling one millisecond at once,
#    more IDs than one lane holds in it;
#  - a block for one time past what the lanes hold: an error, then with
#    idgen.backfill_max_shift the nearest later milliseconds, counted;
#  - a late event beside a running import, and the order of times;
#  - a crash between minting and commit: the lanes restart above;
#  - the lanes file lost: the lanes refuse; idgen_advance_past of the
#    lanes' IDs, then idgen_lanes_init(), and no ID comes again;
#  - a synchronous standby promoted mid-backfill: refuses until attested,
#    a restart between included, then mints nothing its old primary gave.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $lanes = '100-115';    # 16 lanes: 16,384 IDs a millisecond
my $node  = idgen_node(
	'backfill',
	allows_streaming => 1,
	conf             => qq(
idgen.shard_id = 1
idgen.backfill_shards = '$lanes'
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE EXTENSION idgen');

my $t = '2026-06-01 12:00:00.123+00';
my %seen;    # every ID given, from any source: none may come twice

sub given
{
	my ($what, @ids) = @_;
	my $dups = 0;
	$dups += $seen{$_}++ ? 1 : 0 for @ids;
	is($dups, 0, "$what: none of " . scalar(@ids) . " IDs given before");
	return @ids;
}

# ---- attesting ----

my ($ret, $stderr) = psql_fails($node, "SELECT idgen_next_at('$t')");
like($stderr, qr/the backfill lanes' past is not known/,
	'with no lanes file, the lanes refuse');
like($stderr, qr/does not exist: the lanes are new, or the file was lost/,
	'the detail says why');
like($stderr, qr/idgen_lanes_init\(\)/, 'the hint names idgen_lanes_init()');
like( $node->safe_psql('postgres', 'SELECT DISTINCT not_ready_reason FROM idgen_lanes()'),
	qr/^no lanes file \(new, or lost\): run SELECT idgen_advance_past\(max\(id\)\) on the keys that may hold its IDs, one per shard, then SELECT idgen_lanes_init\(\)$/,
	'idgen_lanes() says why each lane waits, and what to run');

($ret, $stderr) = psql_fails($node,
	"CREATE ROLE someone; SET ROLE someone; SELECT idgen_lanes_init()");
like($stderr, qr/permission denied for function idgen_lanes_init/,
	'attesting is not for every role');
is($node->safe_psql('postgres', 'SELECT idgen_lanes_init()'),
	16, 'idgen_lanes_init() attests the 16 lanes');
ok(-f $node->data_dir . '/idgen.lanes', 'and writes the lanes file');

# ---- one ID for a time ----

my ($id, $at, $shard) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT id, id_to_timestamp(id) = date_trunc('milliseconds', '$t'::timestamptz), id_to_shard(id)
	   FROM idgen_next_at('$t') AS id");
given('one ID', $id);
is($at, 't', 'the ID decodes to the millisecond asked');
ok($shard >= 100 && $shard <= 115, "on a lane ($shard)");

($ret, $stderr) = psql_fails($node, "SELECT idgen_next_at('2025-12-31 23:59:59+00')");
like($stderr, qr/22008.*before the layout in force/, 'a time before the epoch is refused');
($ret, $stderr) = psql_fails($node,
	"SELECT idgen_next_at(clock_timestamp() + interval '1 hour')");
like($stderr, qr/22008.*ms ahead of the wall clock/, 'a time an hour ahead is refused');
($ret, $stderr) = psql_fails($node, "SELECT idgen_next_at('infinity')");
like($stderr, qr/infinite time/, 'infinity is refused');
($ret, $stderr) = psql_fails($node, "SELECT idgen_next(100)");
like($stderr, qr/shard 100 is not owned by this node/,
	'a lane is never minted live');

# ---- a millisecond minted live, backfilled ----

my ($live, $live_ms) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT id, id_to_timestamp(id) FROM idgen_next() AS id');
given('live', $live);
my @at_live = split /\n/,
  $node->safe_psql('postgres',
	"SELECT idgen_next_at_n('$live_ms', 3000)");
given('backfilled at the live millisecond', @at_live);
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM unnest('{" . join(',', @at_live) . "}'::bigint[]) AS id
		  WHERE id_to_timestamp(id) = '$live_ms' AND id_to_shard(id) BETWEEN 100 AND 115"),
	3000,
	'3,000 IDs at the live millisecond, on lanes (three lanes full)');

# ---- four sessions, two databases, one millisecond ----

my $busy = '2026-07-04 09:30:00.500+00';
my @harness;
my @out = ('', '', '', '');
for my $i (0 .. 3)
{
	my $db = $i % 2 ? 'other' : 'postgres';
	my $sql =
	  $i < 2
	  ? "SELECT idgen_next_at('$busy') FROM generate_series(1, 3000)"
	  : "SELECT idgen_next_at_n('$busy', 1500) FROM generate_series(1, 2)";
	push @harness,
	  IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $node->connstr($db), '-c', $sql ],
		'>', \$out[$i], '2>', \my $err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
}
$_->finish for @harness;
my @busy = map { split /\n/ } @out;
is(scalar(@busy), 12000, 'four sessions in two databases got 12,000 IDs at one millisecond');
given('one millisecond, four sessions', @busy);
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM unnest('{" . join(',', @busy) . "}'::bigint[]) AS id
		  WHERE id_to_timestamp(id) = date_trunc('milliseconds', '$busy'::timestamptz)"),
	12000,
	'every one of them decodes to that millisecond');

# ---- spill: past what the lanes hold in one millisecond ----

my $full = '2026-08-01 00:00:00+00';
$node->safe_psql('postgres', "SELECT count(*) FROM idgen_next_at_n('$full', 16000)");
($ret, $stderr) = psql_fails($node, "SELECT count(*) FROM idgen_next_at_n('$full', 1000)");
like($stderr, qr/54000.*no backfill lane can mint at 2026-08-01 00:00:00\+00/s,
	'a millisecond every lane has used: an error');
like($stderr, qr/idgen.backfill_max_shift/, 'the hint names the setting that allows a shift');
my ($n, $lo, $hi) = split /\|/,
  $node->safe_psql('postgres',
	"SET idgen.backfill_max_shift = 5;
	 SELECT count(*), min(id_to_timestamp(id)) - '$full', max(id_to_timestamp(id)) - '$full'
	   FROM idgen_next_at_n('$full', 1000) AS id");
is($n, 1000, 'with a shift allowed, the block is minted');
is($lo, '00:00:00.001', 'at the next millisecond');
cmp_ok($hi, 'le', '00:00:00.005', 'within the shift allowed');
my ($spilled, $largest) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT sum(spilled), max(largest_shift_ms) FROM idgen_lanes()');
cmp_ok($spilled, '>=', 1000, 'the statistics count the IDs spilled');
cmp_ok($largest, '>=', 1, 'and the largest shift');

# ---- a late event beside an import; order ----

my @order = split /\n/,
  $node->safe_psql('postgres',
	"SELECT idgen_next_at('2026-03-01 00:00:00+00');
	 SELECT idgen_next_at(now());
	 SELECT idgen_next_at('2026-03-01 00:00:01+00');
	 SELECT idgen_next_at('2026-02-01 00:00:00+00');");
given('an import and a late event', @order);
ok($order[3] < $order[0] && $order[0] < $order[2] && $order[2] < $order[1],
	'IDs sort by their times, whichever lane gave them');

# ---- a crash between minting and commit ----

$node->safe_psql('postgres', 'CREATE TABLE imported (id bigint PRIMARY KEY)');
my $crash = '2026-09-09 09:09:09.009+00';
my $open  = $node->background_psql('postgres');
$open->query_safe('BEGIN');
my @uncommitted = split /\n/,
  $open->query_safe(
	"INSERT INTO imported SELECT idgen_next_at('$crash') FROM generate_series(1, 500) RETURNING id"
  );
is(scalar(@uncommitted), 500, '500 IDs minted in a transaction not committed');
$node->stop('immediate');
eval { $open->quit };
$node->start;
given('before the crash', @uncommitted);
# every lane but the one the crash interrupted fills that millisecond: a
# lane that forgot what it gave would give it again
my @after = split /\n/,
  $node->safe_psql('postgres',
	"INSERT INTO imported SELECT idgen_next_at_n('$crash', 15000) RETURNING id");
given('after the crash, 15,000 more at the same time', @after);

# ---- the lanes file lost ----

# every lane full at one millisecond, then the file lost: a lane that
# started afresh would give that millisecond again
my $lost = '2026-09-30 00:00:00+00';
my @before_loss = split /\n/,
  $node->safe_psql('postgres', "SELECT idgen_next_at_n('$lost', 16384)");
given('every lane at one millisecond, before the file is lost', @before_loss);
$node->stop;
unlink $node->data_dir . '/idgen.lanes' or die "could not remove idgen.lanes: $!";
$node->start;
($ret, $stderr) = psql_fails($node, "SELECT idgen_next_at('$lost')");
like($stderr, qr/the backfill lanes' past is not known/,
	'with the lanes file lost, the lanes refuse');
$node->safe_psql('postgres',
	"SELECT idgen_advance_past(max(id)) FROM unnest('{" . join(',', keys %seen) . "}'::bigint[]) AS id
	  WHERE id_to_shard(id) BETWEEN 100 AND 115 GROUP BY id_to_shard(id)");
$node->safe_psql('postgres', 'SELECT idgen_lanes_init()');
($ret, $stderr) = psql_fails($node, "SELECT idgen_next_at('$lost')");
like($stderr, qr/no backfill lane can mint at 2026-09-30/,
	'advanced past the restored IDs, no lane gives that millisecond again');
my @again = split /\n/,
  $node->safe_psql('postgres',
	"SELECT idgen_next_at_n('$lost'::timestamptz + interval '1 ms', 500)");
given('the next millisecond, after the file was lost', @again);
is( $node->safe_psql('postgres',
		"SELECT bool_and(id_to_timestamp(id) = '$lost'::timestamptz + interval '1 ms')
		   FROM unnest('{" . join(',', @again) . "}'::bigint[]) AS id"),
	't',
	'and they decode to the time asked');

# ---- a synchronous standby promoted mid-backfill ----

$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('backfill_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;
$node->append_conf('postgresql.conf',
	"synchronous_standby_names = 'backfill_standby'");
$node->reload;
$node->poll_query_until('postgres',
	"SELECT sync_state = 'sync' FROM pg_stat_replication")
  or die 'the standby did not become synchronous';
my $promo = '2026-10-10 10:10:10.010+00';
my @primary = split /\n/,
  $node->safe_psql('postgres', "SELECT idgen_next_at_n('$promo', 3000)");
given('the primary, before the promotion', @primary);
$standby->promote;
($ret, $stderr) = psql_fails($standby, "SELECT idgen_next_at('$promo')");
like($stderr, qr/replayed WAL of another server/,
	'the promoted standby refuses until attested');
# the signal files are gone now: the refusal is kept in the lanes file
$standby->restart;
($ret, $stderr) = psql_fails($standby, "SELECT idgen_next_at('$promo')");
like($stderr, qr/replayed WAL of another server/,
	'and still refuses after a restart');
is($standby->safe_psql('postgres', 'SELECT idgen_lanes_init()'),
	16, 'attested: it was synchronous');
my @promoted = split /\n/,
  $standby->safe_psql('postgres', "SELECT idgen_next_at_n('$promo', 3000)");
given('the promoted standby, at the same time', @promoted);
# (a promoted standby and its old primary share their lanes, as they share
# their shard: only one of them may go on minting, as for live IDs.)
$standby->stop;
$node->stop;

# ---- settings that would put a lane beside live IDs ----

my $bad = idgen_node('backfill_bad');
for my $case (
	[ "idgen.shard_id = 101\nidgen.backfill_shards = '100-103'",
		qr/Shard 101 is a backfill lane|shard 101 is both a live shard and a backfill lane/,
		'a lane that is also idgen.shard_id' ],
	[ "idgen.shard_ids = '5-10'\nidgen.backfill_shards = '8'",
		qr/Shard 8 is a backfill lane|shard 8 is both a live shard and a backfill lane/,
		'a lane inside idgen.shard_ids' ],
	[ "idgen.shard_pool = '100-103'\nidgen.backfill_shards = '101'\nidgen.lease_registry = 'dbname=registry'",
		qr/invalid value for parameter "idgen.shard_pool".*\n.*Shard 101 is a backfill lane/,
		'a lane inside idgen.shard_pool' ])
{
	my ($conf, $message, $what) = @$case;
	write_conf($bad->data_dir . '/bad.conf', "$conf\n");
	$bad->append_conf('postgresql.conf', "include_if_exists = 'bad.conf'");
	my ($started, $log) = start_logged($bad);
	ok(!$started, "$what: the server does not start");
	like($log, $message, "$what: the log says why");
}

# a reload that would make a lane live is refused, the old value kept
write_conf($bad->data_dir . '/bad.conf', "idgen.backfill_shards = '100-103'\n");
$bad->start;
my $offset = -s $bad->logfile;
write_conf($bad->data_dir . '/bad.conf',
	"idgen.backfill_shards = '100-103'\nidgen.shard_ids = '102'\n");
$bad->reload;
ok( $bad->poll_query_until('postgres', "SELECT current_setting('idgen.shard_ids') = ''")
	  && log_has($bad, $offset, qr/Shard 102 is a backfill lane/),
	'a reload that makes a lane live is refused, the old value kept');
$bad->stop;
done_testing();
