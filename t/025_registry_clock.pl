
# Copyright (c) 2026, The idgen Authors
#
# Each lease round compares this server's clock with the registry's.
# idgen_clock() shows the last offset, its error and the largest seen.  A
# server whose clock is further off than idgen.max_clock_offset neither
# takes nor renews a lease, and says so naming both clocks: its lease
# ends and it stops minting; once the clocks agree again it resumes.
# libfaketime moves the server's clock; the registry keeps the real one.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenLease;

libfaketime();    # dies early without it

my ($registry, $conninfo) = lease_registry(superuser => 1);

# rounds every second; 2 s of offset allowed; B, later, is configured alike
my $conf = <<"EOC";
idgen.lease_duration = '3s'
idgen.max_clock_offset = '2s'
idgen.shard_id = 1
EOC
my $a = lease_node('a', $conninfo, conf => $conf);
my $clock = PostgreSQL::Test::Utils::tempdir() . '/clock';
set_clock_offset($clock, 0);
start_with_clock($a, $clock);
$a->safe_psql('postgres', 'CREATE EXTENSION idgen');

sub eventually
{
	my ($sql, $want, $seconds) = @_;
	my $got;
	foreach (1 .. $seconds * 10)
	{
		$got = $a->safe_psql('postgres', $sql);
		return 1 if $got eq $want;
		usleep(100_000);
	}
	note "last: $got";
	return 0;
}

sub offsets
{
	return split /\|/,
	  $a->safe_psql('postgres',
		'SELECT round(registry_offset_ms), registry_offset_error_ms >= 0, '
		  . 'round(registry_largest_offset_ms), registry_measured_at > now() - interval \'5 s\' '
		  . 'FROM idgen_clock()');
}

ok(eventually("SELECT state FROM idgen_leases() WHERE shard = 1", 'held', 30),
	'the server holds its lease');
$a->safe_psql('postgres', 'SELECT idgen_next()');
my ($offset, $error_ok, $largest, $fresh) = offsets();
cmp_ok(abs($offset), '<', 500, "one machine's clocks agree ($offset ms)");
is($error_ok, 't', 'with an error bound');
is($fresh, 't', 'measured at the last round');

# five seconds ahead: refused, said, and minting stops
my $log_offset = -s $a->logfile;
set_clock_offset($clock, 5);
ok( $a->wait_for_log(
		qr/this server's clock reads .* when the registry server's reads .* \(\d+\.\d ms ahead, give or take [\d.]+ ms\), further apart than "idgen.max_clock_offset" \(2000 ms\)/,
		$log_offset),
	'a server 5 s ahead of the registry says so, naming both clocks');
like(slurp_file($a->logfile, $log_offset), qr/HINT:  Check the time synchronisation/,
	'and what to check');
{
	my ($ours, $theirs) = slurp_file($a->logfile, $log_offset) =~
	  /this server's clock reads (.*?) when the registry server's reads (.*?) \(/;
	my ($ours_s, $theirs_s) = split /\|/,
	  $a->safe_psql('postgres',
		"SELECT extract(epoch FROM '$ours'::timestamptz), extract(epoch FROM '$theirs'::timestamptz)");
	cmp_ok($ours_s - $theirs_s, '>', 4, "the two clocks named are 5 s apart ($ours, $theirs)");
}
ok(eventually("SELECT state FROM idgen_leases() WHERE shard = 1", 'expired', 30),
	'it no longer renews its lease');
my ($ret, $stderr) = psql_fails($a, "SET idgen.max_wait = '500ms'; SELECT idgen_next()");
like($stderr, qr/could not renew the lease on shard 1/, 'and no longer mints');
($offset, undef, $largest) = offsets();
cmp_ok($offset, '>', 4000, "idgen_clock() shows the offset ($offset ms)");
cmp_ok($offset, '<', 6000, '5 s, give or take');

# back in step: it resumes
$log_offset = -s $a->logfile;
set_clock_offset($clock, 0);
ok( $a->wait_for_log(qr/reached the idgen lease registry again, and the clocks agree/,
		$log_offset),
	'once the clocks agree again, it says so');
ok(eventually("SELECT state FROM idgen_leases() WHERE shard = 1", 'held', 30),
	'and holds its lease again');
$a->safe_psql('postgres', 'SELECT idgen_next()');
pass('and mints again');
($offset, undef, $largest) = offsets();
cmp_ok(abs($offset), '<', 500, "the latest offset is small again ($offset ms)");
cmp_ok($largest, '>', 4000, "and the largest seen is kept ($largest ms)");

# A's clock steps 20 s back while it holds shard 1: it neither takes nor
# renews, B takes the shard once the lease ends by the registry's clock,
# and A, whose clock puts that end 20 s further off, still finds B in the
# row and stops showing (and minting for) the shard within a round.
set_clock_offset($clock, -20);
my $b = lease_node('b', $conninfo, conf => $conf);
$b->start;
$b->safe_psql('postgres', 'CREATE EXTENSION idgen');
ok( $b->poll_query_until('postgres',
		"SELECT state = 'held' FROM idgen_leases() WHERE shard = 1"),
	'B takes shard 1 once the lease of A, its clock 20 s back, ends');
ok(eventually("SELECT state <> 'held' FROM idgen_leases() WHERE shard = 1", 't', 3),
	'A stops showing the lease held within a round, not 20 s later');
($ret) = $a->psql('postgres', 'SELECT idgen_next()');
isnt($ret, 0, 'and does not mint for it');
$b->stop;
set_clock_offset($clock, 0);

$a->stop;
$registry->stop;
done_testing();
