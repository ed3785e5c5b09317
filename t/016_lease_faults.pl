
# Copyright (c) 2026, The idgen Authors
#
# Shard leases when things go wrong between a server and its registry.
#
#  - A registry row locked by someone else holds up only its own shard;
#    the others are renewed, and no registry session is left behind.
#  - pg_terminate_backend() of the lease worker: it is started again, and
#    minting goes on.
#  - A take committed by the registry whose answer never reached the server
#    (its lease worker killed meanwhile, so the server restarts after a
#    crash, keeping its owner token): the server still starts the shard's
#    IDs above the previous owner's, which were stamped 20 s ahead.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenLease;

my ($registry, $registry_conninfo) = lease_registry(superuser => 1);

sub registry_sessions
{
	return $registry->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'idgen lease'"
	);
}

# --------------------------------------------------------------------------
# A locked row holds up its own shard only.

my $a = lease_node('a', $registry_conninfo, conf => <<"EOC");
idgen.lease_duration = '3s'
idgen.max_wait = '2s'
idgen.shard_id = 5
idgen.shard_ids = '6-9'
EOC
$a->start;
$a->safe_psql('postgres', 'CREATE EXTENSION idgen');
$a->poll_query_until('postgres',
	"SELECT count(*) = 5 FROM idgen_leases() WHERE state = 'held'")
  or die 'A did not take its leases';

my $locker = $registry->background_psql('postgres');
$locker->query_safe('BEGIN');
$locker->query_safe('SELECT * FROM idgen_lease WHERE shard = 9 FOR UPDATE');
sleep 5;    # past the end of the leases held when the row was locked
my $ok = 1;
for my $shard (5 .. 8)
{
	my ($ret) = $a->psql('postgres', "SELECT idgen_next($shard)");
	$ok = 0 if $ret != 0;
}
ok($ok, 'with shard 9\'s row locked, shards 5 to 8 are renewed and mint');
my ($ret, $stderr) = psql_fails($a, 'SELECT idgen_next(9)');
like($stderr, qr/could not renew the lease on shard 9/,
	'shard 9 stops when its lease ends');
cmp_ok(registry_sessions(), '<=', 1,
	'the server holds one registry session, none left behind');
$locker->query_safe('COMMIT');
$locker->quit;
ok( $a->poll_query_until('postgres',
		"SELECT count(*) = 5 FROM idgen_leases() WHERE state = 'held'"),
	'once the row is free, shard 9 is renewed too');

# --------------------------------------------------------------------------
# pg_terminate_backend() of the lease worker.

my $pid = lease_worker_pid($a);
$a->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok( $a->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'idgen lease' AND pid <> $pid"
	),
	'the lease worker is started again after pg_terminate_backend()');
ok( $a->poll_query_until('postgres',
		"SELECT count(*) = 5 FROM idgen_leases() WHERE state = 'held'"),
	'and holds the leases again');
($ret) = $a->psql('postgres', 'SELECT idgen_next()');
is($ret, 0, 'minting goes on');

# --------------------------------------------------------------------------
# A take whose answer was lost.

# A keeps shard 5 alone, and stamps its IDs 20 s ahead of the clock (as
# from a clock that runs ahead) before it gives the shard back.
$a->safe_psql('postgres', "ALTER SYSTEM SET idgen.shard_ids = ''");
$a->safe_psql('postgres', "ALTER SYSTEM SET idgen.max_lead = '40s'");
$a->reload;
$a->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM idgen_leases() WHERE state = 'held'")
  or die 'A did not give shards 6 to 9 back';
$a->safe_psql('postgres',
	"SELECT idgen_advance_past(min_id_at(now() + interval '20 s'))");
my @a_ids = split /,/,
  $a->safe_psql('postgres',
	"SELECT string_agg(idgen_next()::text, ',') FROM generate_series(1, 1000)");
my $a_max = $a_ids[-1];
my $log_offset = -s $a->logfile;
$a->safe_psql('postgres', 'ALTER SYSTEM SET idgen.shard_id = 10');
$a->reload;
ok($a->wait_for_log(qr/idgen gave back the lease on shard 5/, $log_offset),
	'A gives shard 5 back, stamped 20 s ahead');

# B's take of shard 5 sleeps 2 s in its COMMIT, on the registry's side.
my $b = lease_node('b', $registry_conninfo, conf => <<"EOC");
idgen.lease_duration = '30s'
idgen.max_wait = '30s'
idgen.max_lead = '40s'
idgen.shard_id = 5
restart_after_crash = on
EOC
slow_takes($registry, $b);
$b->start;

# While the registry commits, the lease worker dies: B restarts after a
# crash, with its owner token, and never heard that the take committed.
wait_slow_take($registry) or die 'B\'s take did not reach its COMMIT';
kill 'KILL', lease_worker_pid($b);
ok($b->wait_for_log(qr/all server processes terminated; reinitializing/),
	'B restarts after a crash while its take commits');
end_slow_takes($registry);
like(
	$registry->safe_psql('postgres',
		'SELECT owner IS NOT NULL FROM idgen_lease WHERE shard = 5'),
	qr/^t$/,
	'the registry committed the take');

$b->safe_psql('postgres', 'CREATE EXTENSION idgen');
my @b_ids = split /,/,
  $b->safe_psql('postgres',
	"SELECT string_agg(idgen_next()::text, ',') FROM generate_series(1, 1000)");
my $below = grep { $_ <= $a_max } @b_ids;
is($below, 0,
	'B\'s IDs of shard 5 are all above A\'s, though B never saw its take commit');

$b->stop;
$a->stop;
$registry->stop;
done_testing();
