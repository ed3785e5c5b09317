
# Copyright (c) 2026, The idgen Authors
#
# The lease worker's registry connection counts against the server's file
# descriptors, as postgres_fdw's do: it is reserved (AcquireExternalFD)
# before the worker connects and released (ReleaseExternalFD) when the
# session closes.  No setting makes one connection too many, so gdb uses
# up the worker's share of descriptors:
#
#  - with none to spare, the worker does not connect, and says why;
#  - with two freed (the socket's, and the wait's on it, which the server
#    counts the same way), it connects again;
#  - closing the session gives its descriptor back: the same worker
#    reconnects with no other to spare.
#
# Skipped without gdb, or where it cannot attach to the server's processes.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Temp qw(tempfile);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenLease;

plan skip_all => 'gdb is not installed'
  unless system('gdb --version >/dev/null 2>&1') == 0;

my ($registry, $registry_conninfo) = lease_registry(superuser => 1);

# Rounds every 2 s; a small share of descriptors, used up quickly.
my $a = lease_node('a', $registry_conninfo, conf => <<"EOC");
idgen.lease_duration = '6s'
idgen.shard_id = 5
max_files_per_process = 200
EOC
$a->start;
$a->safe_psql('postgres', 'CREATE EXTENSION idgen');
wait_held($a, 5);

my $worker = lease_worker_pid($a);

sub registry_session
{
	return $registry->safe_psql('postgres',
		"SELECT coalesce(string_agg(pid::text, ','), '') FROM pg_stat_activity "
		  . "WHERE application_name = 'idgen lease'");
}

# Run gdb commands in the lease worker; their output.
sub in_worker
{
	my ($commands) = @_;
	my ($fh, $file) = tempfile(UNLINK => 1);
	print $fh "set confirm off\n$commands\ndetach\n";
	close $fh;
	my ($stdout, $stderr) =
	  run_command([ 'gdb', '-nx', '-batch', '-p', $worker, '-x', $file ]);
	note "gdb: $stdout";
	return $stdout;
}

my $close = 'call ((void (*)(void)) idgen_registry_close)()';
my $exhaust = <<'EOG';
set $n = 0
while ((char (*)(void)) AcquireExternalFD)()
  set $n = $n + 1
end
printf "reserved %d\n", $n
EOG

# the session closed, and every descriptor left taken
my $session = registry_session();
my $log_offset = -s $a->logfile;
my $out = in_worker("$close\n$exhaust");
plan skip_all => 'gdb cannot call into the server\'s processes here'
  unless $out =~ /reserved (\d+)/ && $1 > 0;
note "gdb took the $1 descriptors left";

ok( $a->wait_for_log(
		qr/could not renew shard leases in the idgen lease registry: could not reserve a file descriptor for the connection: there are too many open files on this server/,
		$log_offset),
	'with no descriptor to spare, the worker does not connect');
like(
	slurp_file($a->logfile, $log_offset),
	qr/HINT:  Raise the server's "max_files_per_process" and\/or "ulimit -n" limits\./,
	'and says what to raise');
$registry->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'idgen lease'")
  or die 'the registry session did not close';
is(registry_session(), '', 'no registry session meanwhile');

# two freed: it connects again
$log_offset = -s $a->logfile;
in_worker("call ((void (*)(void)) ReleaseExternalFD)()\n"
	  . "call ((void (*)(void)) ReleaseExternalFD)()");
ok($a->wait_for_log(qr/reached the idgen lease registry again/, $log_offset),
	'with two descriptors freed, the worker connects again');
$registry->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'idgen lease'")
  or die 'no registry session';
$session = registry_session();

# the session's descriptor, given back at its close, is the one reused
$log_offset = -s $a->logfile;
in_worker($close);
ok( $registry->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'idgen lease' AND pid <> $session"
	),
	'a closed session gives its descriptor back: the worker reconnects');
unlike(
	slurp_file($a->logfile, $log_offset),
	qr/could not reserve a file descriptor|epoll_create1 failed/,
	'without running short');
is(lease_worker_pid($a), $worker, 'in the same worker');
is( $a->safe_psql(
		'postgres', "SELECT state FROM idgen_leases() WHERE shard = 5"),
	'held',
	'the lease is held');

$a->stop;
$registry->stop;
done_testing();
