
# Copyright (c) 2026, The idgen Authors
#
# A primary and a synchronous streaming standby, both preloaded, the
# standby's clock 5 seconds behind the primary's (libfaketime).
#
#  - The standby refuses to mint (SQLSTATE 25006) but decodes.
#  - The standby replays the primary's fence: it follows the primary's.
#  - After the primary crashes and the standby is promoted, every ID the
#    new primary mints is larger than every ID the old one minted, although
#    its clock is behind: it starts at the replayed fence.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

libfaketime();    # dies early without it

# The test names say which node minted.
sub mint_on
{
	my ($node, $n) = @_;
	return mint($node, $n, name => "minted $n IDs on " . $node->name);
}

sub max_of
{
	my $max;
	for (@_) { $max = $_ if !defined $max || $_ > $max; }
	return $max;
}

# --------------------------------------------------------------------------
# Primary and standby.

my $primary = idgen_node('primary', allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION idgen');
my @old = mint_on($primary, 1000);

$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);

my $clock = PostgreSQL::Test::Utils::tempdir() . '/standby_clock';
set_clock_offset($clock, -5);
start_with_clock($standby, $clock);

# The walreceiver's application_name is the standby's cluster_name.
$primary->safe_psql('postgres',
	"ALTER SYSTEM SET synchronous_standby_names = 'standby'");
$primary->reload;

# Wait until the standby is the primary's synchronous standby.
sub standby_is_sync
{
	my ($test_name) = @_;
	ok( $primary->poll_query_until(
			'postgres',
			"SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'",
			'sync'),
		$test_name);
	return;
}

standby_is_sync('the standby is a synchronous standby');

# The standby's clock really is behind.
{
	my $p = $primary->safe_psql('postgres',
		'SELECT extract(epoch FROM clock_timestamp())');
	my $s = $standby->safe_psql('postgres',
		'SELECT extract(epoch FROM clock_timestamp())');
	my $behind = $p - $s;
	ok($behind > 4 && $behind < 6.5,
		"the standby's clock is 5 s behind the primary's ($behind s)");
}

push @old, mint_on($primary, 1000);
$primary->wait_for_catchup($standby);

# --------------------------------------------------------------------------
# The standby refuses to mint, and decodes.

for my $call ('idgen_next()', 'idgen_next(0)')
{
	my ($ret, $stderr) = psql_fails($standby, "SELECT $call;");
	isnt($ret, 0, "$call fails on the standby");
	like($stderr, qr/ERROR:\s+25006:/, "$call on the standby: SQLSTATE 25006");
}

my $decode_sql =
  "SELECT idgen_decode($old[-1]), id_to_timestamp($old[-1]), "
  . "id_to_shard($old[-1]), id_to_sequence($old[-1]), "
  . "min_id_at(id_to_timestamp($old[-1]))";
is( $standby->safe_psql('postgres', $decode_sql),
	$primary->safe_psql('postgres', $decode_sql),
	'decoding on the standby gives what it gives on the primary');

is( $standby->safe_psql('postgres',
		'SELECT fence IS NOT NULL, minted FROM idgen_stats'),
	't|0',
	'idgen_stats is readable on the standby, which minted nothing');

# --------------------------------------------------------------------------
# The standby's fence follows the primary's.

my $f0 = $standby->safe_psql('postgres', 'SELECT fence FROM idgen_stats');
# a fixed count, so the plan does not depend on the machine's speed; at
# least 2.4 s, more than two fence horizons
for (1 .. 12)
{
	push @old, mint_on($primary, 500);
	usleep(200_000);
}
my $fp = $primary->safe_psql('postgres', 'SELECT fence FROM idgen_stats');
is( $primary->safe_psql(
		'postgres',
		"SELECT '$fp'::timestamptz > '$f0'::timestamptz,
				'$fp'::timestamptz > id_to_timestamp(${\ max_of(@old)})"),
	't|t',
	"the primary's fence moved on while minting, and is above every ID");
ok( $standby->poll_query_until(
		'postgres', "SELECT fence >= '$fp' FROM idgen_stats"),
	"the standby's fence reaches the primary's");
is( $standby->safe_psql(
		'postgres',
		"SELECT fence > '$f0' AND fence > id_to_timestamp(${\ max_of(@old)}) FROM idgen_stats"
	),
	't',
	"the standby's fence moved on too, above every ID of the primary");

# --------------------------------------------------------------------------
# The fence is published only once the synchronous standby has it: with
# the standby down, minting stops at the fence (and gives up after
# idgen.max_wait) instead of going past what the standby knows.  Checked
# twice: with the defaults, and with synchronous_commit = local in the
# server's configuration (a common tuning, which turns commits
# asynchronous but must not make the fence so).
#
# A checkpoint first, replayed by the standby, so that its shutdown
# restartpoint lies past every fence record so far: at its next start the
# standby knows the fence from its state file alone.

sub standby_down
{
	my ($what) = @_;

	push @old, mint_on($primary, 1000);
	$primary->safe_psql('postgres', 'CHECKPOINT');
	$primary->wait_for_catchup($standby);
	my $fs = $standby->safe_psql('postgres', 'SELECT fence FROM idgen_stats');
	$standby->stop;
	# The fence moves on while the standby stops; what the primary has
	# published once it is down is what the standby last flushed.
	my $fp_down = $primary->safe_psql('postgres', 'SELECT fence FROM idgen_stats');

	my $t0 = time;
	my ($ret, $stderr) = psql_fails(
		$primary,
		"SET idgen.max_wait = '2s';
SELECT count(idgen_next()) FROM (SELECT pg_sleep(0.01) FROM generate_series(1, 400)) s;",
		timeout => 60);
	my $took = time - $t0;
	isnt($ret, 0,
		"$what: with the synchronous standby down, minting stops at the fence");
	like(
		$stderr,
		qr/ERROR:\s+55000:.*fence/,
		"$what: the error says the fence could not advance");
	like($stderr, qr/synchronous standbys/,
		"$what: the hint names synchronous standbys");
	ok($took < 20, sprintf("$what: the caller gave up after %.1f s", $took));
	is( $primary->safe_psql(
			'postgres',
			"SELECT max_wait_errors > 0, id_to_timestamp(last_id) < '$fp_down' FROM idgen_stats"
		),
		't|t',
		"$what: max_wait_errors counts it; no ID reached the standby's fence");

	start_with_clock($standby, $clock);
	is( $standby->safe_psql('postgres', "SELECT fence >= '$fs' FROM idgen_stats"),
		't',
		"$what: the restarted standby has the fence from its state file");
	ok( $standby->poll_query_until(
			'postgres', "SELECT fence >= '$fp_down' FROM idgen_stats"),
		"$what: and, once it has replayed its WAL, every fence the primary published");
	standby_is_sync("$what: the synchronous standby is back");
	push @old, mint_on($primary, 1000);
	ok( $standby->poll_query_until(
			'postgres',
			"SELECT fence > id_to_timestamp(${\ max_of(@old)}) FROM idgen_stats"),
		"$what: the standby's fence is above every ID again");
	return;
}

standby_down('defaults');

$primary->safe_psql('postgres',
	"ALTER SYSTEM SET synchronous_commit = 'local'");
$primary->reload;
standby_down('synchronous_commit = local');
$primary->safe_psql('postgres', 'ALTER SYSTEM RESET synchronous_commit');
$primary->reload;

# --------------------------------------------------------------------------
# The primary crashes just after minting; the standby is promoted.

push @old, mint_on($primary, 2000);
my $max_old = max_of(@old);
$primary->stop('immediate');

$standby->promote;
ok($standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'),
	'the standby is promoted');

# Without the fence, the new primary would mint by its clock, which is
# behind the old primary's last ID: smaller IDs.
is( $standby->safe_psql('postgres',
		"SELECT clock_timestamp() < id_to_timestamp($max_old)"),
	't',
	"the promoted standby's clock is behind the old primary's last ID");

my $t0  = time;
my @new = mint_on($standby, 1000);
my $elapsed = time - $t0;
note sprintf('first mint after promotion took %.1f s', $elapsed);
push @new, mint_on($standby, 1000);

my $smaller = grep { $_ <= $max_old } @new;
is($smaller, 0,
	'every ID minted after promotion is larger than every ID of the old primary'
);
check_ids(\@new, 'after promotion');

# The new primary waited for its clock rather than run far ahead of it.
is( $standby->safe_psql('postgres',
		"SELECT id_to_timestamp($new[-1]) <= clock_timestamp() + interval '2 s'"
	),
	't',
	"after the wait, IDs are within idgen.max_lead of the new primary's clock"
);
note 'idgen_stats after promotion: '
  . $standby->safe_psql('postgres', 'SELECT row(s.*) FROM idgen_stats s');
is( $standby->safe_psql(
		'postgres', 'SELECT waits > 0, max_wait_errors FROM idgen_stats'),
	't|0',
	'the new primary waited for its clock to come within idgen.max_lead');

check_ids(\@all_ids, 'every ID of this test, old primary then new');

$standby->stop;

done_testing();
