
# Copyright (c) 2026, The idgen Authors
#
# The fence is published only once every synchronous standby has it.  A
# cancel of the idgen fence worker (pg_cancel_backend, which an operator
# may send to a session that pg_stat_activity shows stuck in SyncRep)
# would end that wait without error, and the fence would be published
# unreceived: after a failover the new primary could mint again IDs this
# server minted under it.  The worker takes no cancel; minting waits and
# fails after idgen.max_wait, and goes on once the standbys answer (here:
# once none is required).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('primary', conf => "idgen.fence_horizon = '100ms'\nwal_level = replica\nmax_wal_senders = 2\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');

# a synchronous standby that never comes
$node->safe_psql('postgres',
	"ALTER SYSTEM SET synchronous_standby_names = 'nosuchstandby'");
$node->reload;
$node->safe_psql('postgres', 'SELECT pg_sleep(0.5)');

my $moves = $node->safe_psql('postgres', 'SELECT fence_advances FROM idgen_stats');
my $log_offset = -s $node->logfile;

# a mint asks for a fence move, which waits for the standby ...
my ($out, $err) = ('', '');
my $mint = IPC::Run::start(
	[
		'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c',
		"SET idgen.max_wait = '4s'; SELECT idgen_next()"
	],
	'>', \$out, '2>', \$err);
ok( $node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'idgen fence' AND wait_event = 'SyncRep'"),
	'the fence worker waits for the synchronous standby');

# ... and a cancel does not end that wait
is( $node->safe_psql('postgres',
		"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE backend_type = 'idgen fence'"),
	't', 'the fence worker is sent a cancel');
$node->safe_psql('postgres', 'SELECT pg_sleep(1)');
is($node->safe_psql('postgres', 'SELECT fence_advances FROM idgen_stats'),
	$moves, 'no fence is published that the standby has not received');
$mint->finish;
like($err, qr/could not advance the idgen fence/,
	'the mint fails after idgen.max_wait instead');
unlike(slurp_file($node->logfile, $log_offset),
	qr/canceling wait for synchronous replication/, 'the wait was never cancelled');

# once no standby is required, the fence moves and minting goes on
$node->safe_psql('postgres', 'ALTER SYSTEM RESET synchronous_standby_names');
$node->reload;
like($node->safe_psql('postgres', 'SELECT idgen_next()'), qr/^\d+$/,
	'minting goes on once the standbys answer');

$node->stop;
done_testing();
