
# Copyright (c) 2026, The idgen Authors
#
# Shard leases: with idgen.lease_registry set, two servers never mint for
# one shard at once.  Three real clusters: a registry, and servers A and B,
# both configured with shard 5.
#
#  - A takes the lease, stamps nothing at or after its end, and renews it.
#  - A registry outage shorter than the lease does not stop minting; a
#    longer one does, with a clear error, until the registry is back.
#  - B, started with the shard A holds, refuses to mint for it.
#  - A frozen (SIGSTOP) past its lease: B takes the lease and mints above
#    A's IDs; A, resumed, does not mint for the shard again.
#  - The shard moves back to A, whose clock is now behind B's IDs: A's IDs
#    continue strictly above B's.
#  - A clean stop gives the lease back with its last millisecond.
#  - A's clock steps 20 s back while it holds the shard: B takes it once
#    A's lease ends, and A stops showing it held within a renewal period.

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

libfaketime();    # dies early without it

my ($registry, $registry_conninfo) = lease_registry(superuser => 1);

# A lease of 6 s, renewed every 2 s (the margin is for a loaded machine,
# where a worker may run late); a caller waits at most 2 s for one.  The
# clock check, which would stop a server 2 s off before it takes a lease
# (t/025), is off: here the fencing alone must hold while clocks disagree.
my $lease_conf = <<"EOC";
idgen.max_clock_offset = 0
idgen.lease_duration = '6s'
idgen.max_wait = '2s'
idgen.shard_id = 5
EOC

sub lease_row
{
	my ($shard) = @_;
	return $registry->safe_psql('postgres',
		"SELECT coalesce(owner, '-') || '|' || coalesce(owner_name, '-') || '|' || "
		  . "(extract(epoch FROM valid_until) * 1000)::bigint "
		  . "FROM idgen_lease WHERE shard = $shard");
}

# The last millisecond of an ID, since 1970 (the registry's unit here).
sub id_unix_ms
{
	my ($node, $id) = @_;
	return $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM id_to_timestamp($id)) * 1000)::bigint");
}

# What idgen_leases() shows for a shard: its state, and whether its
# valid_until is the registry's.
sub lease_state
{
	my ($node, $shard) = @_;
	return $node->safe_psql('postgres',
		"SELECT state FROM idgen_leases() WHERE shard = $shard");
}

# Poll $sql on $node until it succeeds, for up to $seconds.
sub eventually_mints
{
	my ($node, $sql, $seconds) = @_;
	my $deadline = time + $seconds;
	while (time < $deadline)
	{
		my ($ret, $out) = $node->psql('postgres', $sql);
		return $out if $ret == 0;
		usleep(100_000);
	}
	return undef;
}

# --------------------------------------------------------------------------
# A takes the lease on shard 5 and renews it.

my $a = lease_node('a', $registry_conninfo, conf => $lease_conf);
my $clock_a = PostgreSQL::Test::Utils::tempdir() . '/clock_a';
set_clock_offset($clock_a, 0);
start_with_clock($a, $clock_a);
$a->safe_psql('postgres', 'CREATE EXTENSION idgen');

my @a_ids = mint($a, 1000, name => 'A mints with the lease on shard 5');
is( $a->safe_psql('postgres',
		"SELECT count(*) FROM unnest('{" . join(',', @a_ids) . "}'::bigint[]) AS id "
		  . "WHERE id_to_shard(id) <> 5"),
	'0',
	'all of them for shard 5');

my ($owner_a, $name_a, $until_1) = split /\|/, lease_row(5);
like($owner_a, qr/^[0-9a-f]{32}$/, 'the registry names an owner token for shard 5');
like($name_a, qr/port ${\ $a->port}/, 'and says which server it is');
cmp_ok(id_unix_ms($a, max_id(\@a_ids)), '<=', $until_1,
	'no ID is stamped after the lease\'s valid_until');
is(lease_state($a, 5), 'held', 'idgen_leases() shows the lease held');
# the server's first: the registry's row only moves on, and may have been
# renewed since the row above was read
my $until_here = $a->safe_psql('postgres',
	"SELECT (extract(epoch FROM valid_until) * 1000)::bigint FROM idgen_leases() WHERE shard = 5");
my (undef, undef, $until_now) = split /\|/, lease_row(5);
cmp_ok($until_here, '<=', $until_now, 'with a valid_until no later than the registry\'s');

sleep 7;    # longer than the lease
my @more = mint($a, 100, name => 'A still mints after longer than one lease');
push @a_ids, @more;
my (undef, undef, $until_2) = split /\|/, lease_row(5);
cmp_ok($until_2, '>', $until_1 + 5000, 'the lease was renewed');
cmp_ok(id_unix_ms($a, max_id(\@a_ids)), '<=', $until_2,
	'still nothing stamped after valid_until');

# --------------------------------------------------------------------------
# Registry outages.

my $log_offset = -s $a->logfile;
$registry->stop('immediate');
my $short_ok = 1;
my $outage_start = Time::HiRes::time();

# 2 s by the clock, shorter than the two thirds of a lease left: a count of
# calls would outlast the lease on a loaded machine, where psql is slow
while (Time::HiRes::time() - $outage_start < 2)
{
	my ($ret) = $a->psql('postgres', 'SELECT idgen_next()');
	$short_ok = 0 if $ret != 0;
	usleep(200_000);
}
$registry->start;
ok($short_ok, 'a registry outage shorter than the lease does not stop minting');

$registry->stop('immediate');
sleep 7;    # past the end of the lease
my ($ret, $stderr) = psql_fails($a, 'SELECT idgen_next()');
isnt($ret, 0, 'a registry outage longer than the lease stops minting');
like($stderr, qr/could not renew the lease on shard 5/, 'with the reason');
is(lease_state($a, 5), 'expired', 'idgen_leases() shows the lease expired');
like($stderr, qr/55000/, 'and SQLSTATE 55000 (object not in prerequisite state)');
ok( $a->log_contains('could not renew shard leases in the idgen lease registry', $log_offset),
	'the lease worker logged that it could not reach the registry');
$registry->start;
ok(defined eventually_mints($a, 'SELECT idgen_next()', 30),
	'minting resumes once the registry is back');
ok($a->log_contains('reached the idgen lease registry again', $log_offset),
	'and the lease worker logged that');
push @a_ids, mint($a, 100, name => 'A mints again');

# --------------------------------------------------------------------------
# B, configured with the shard A holds, refuses to mint for it.

my $b = lease_node('b', $registry_conninfo,
	conf => $lease_conf . "idgen.shard_ids = '6'\n");
$b->start;
$b->safe_psql('postgres', 'CREATE EXTENSION idgen');
($ret, $stderr) = psql_fails($b, 'SELECT idgen_next()');
isnt($ret, 0, 'B refuses to mint for shard 5, leased to A');
like($stderr, qr/this server holds no lease on shard 5/, 'with the reason');
is(lease_state($b, 5), 'not held', 'idgen_leases() on B shows shard 5 not held');
is(lease_state($b, 6), 'held', 'and shard 6 held');
my @b6 = mint($b, 100, call => 'idgen_next(6)',
	name => 'B mints for its own shard 6');
ok($b->wait_for_log(qr/shard 5 is leased to another server/),
	'B logged who holds shard 5');
is((split /\|/, lease_row(5))[0], $owner_a, 'A still owns shard 5');

# --------------------------------------------------------------------------
# A frozen past its lease: B takes over; A, resumed, does not mint again.

push @a_ids, mint($a, 1000, name => 'A mints before it is frozen');
my @frozen = server_pids($a);
kill 'STOP', @frozen;
note 'froze A: ' . join(' ', @frozen);

my $took = eventually_mints($b, 'SELECT idgen_next()', 30);
ok(defined $took, 'B takes the lease once A\'s has ended');
my @b_ids = mint($b, 1000, name => 'B mints for shard 5');
isnt((split /\|/, lease_row(5))[0], $owner_a, 'the registry names B');
cmp_ok(min_id(\@b_ids), '>', max_id(\@a_ids),
	'B\'s IDs of shard 5 are above every ID A stamped');

kill 'CONT', @frozen;
note 'resumed A';
($ret, $stderr) = psql_fails($a, 'SELECT idgen_next()');
isnt($ret, 0, 'A, resumed, does not mint for shard 5');
like($stderr, qr/this server holds no lease on shard 5/, 'with the reason');

# A stops asking for shard 5, so that it cannot take the shard back while B
# holds it should B renew late on a loaded machine.
$a->safe_psql('postgres', 'ALTER SYSTEM SET idgen.shard_id = 7');
$a->reload;
push @b_ids, mint($b, 1000, name => 'B goes on minting for shard 5');

# --------------------------------------------------------------------------
# The shard moves back to A, whose clock is now 2 s behind B's IDs.

set_clock_offset($clock_a, -2);
workers_follow_clock($a, -2, 'A, its clock 2 s behind', 1.5);
$b->append_conf('postgresql.conf', "idgen.shard_id = 6\n");
$b->reload;
ok($b->wait_for_log(qr/idgen gave back the lease on shard 5/),
	'B gives shard 5 back when it drops it from its settings');
my ($owner_0, undef, $until_b) = split /\|/, lease_row(5);
is($owner_0, '-', 'the registry shows shard 5 without an owner');
my $b_last_ms = id_unix_ms($b, max_id(\@b_ids));
cmp_ok($until_b, '>=', $b_last_ms, 'with valid_until at or after B\'s last ID');

$a->safe_psql('postgres', 'ALTER SYSTEM SET idgen.shard_id = 5');
$a->safe_psql('postgres', "ALTER SYSTEM SET idgen.max_wait = '10s'");
$a->reload;
ok(defined eventually_mints($a, 'SELECT idgen_next()', 30),
	'A takes shard 5 back');
my @a_again = mint($a, 1000, name => 'A mints for shard 5 again');
cmp_ok(min_id(\@a_again), '>', max_id(\@b_ids),
	'above every ID B stamped, though A\'s clock is behind them');
cmp_ok(id_unix_ms($a, min_id(\@a_again)), '>', $until_b,
	'strictly above the valid_until B gave back');
check_ids([ @a_ids, @b_ids, @a_again ], 'shard 5 over both servers');

# --------------------------------------------------------------------------
# A clean stop gives the lease back with its last millisecond.

my $a_last_ms = id_unix_ms($a, max_id(\@a_again));
my (undef, undef, $held_until) = split /\|/, lease_row(5);
$a->stop;
my ($owner_1, undef, $until_a) = split /\|/, lease_row(5);
is($owner_1, '-', 'a clean stop gives the lease back');
cmp_ok($until_a, '>=', $a_last_ms, 'with valid_until at or after A\'s last ID');
cmp_ok($until_a, '<', $held_until, 'and before the end of the lease it held');

# --------------------------------------------------------------------------
# A's clock steps 20 s back while it holds the shard: its lease lapses at
# its end (A cannot renew it further with a clock that far behind), B takes
# the shard, and A stops saying it holds it within one renewal period (a
# third of the lease, 2 s): its worker's rounds follow the real passing of
# time, not its clock.

start_with_clock($a, $clock_a);
ok(defined eventually_mints($a, 'SELECT idgen_next()', 30),
	'A, restarted, takes shard 5 again');
my @a_last = mint($a, 100, name => 'A mints for shard 5 before its clock steps back');
set_clock_offset($clock_a, -22);
$b->append_conf('postgresql.conf', "idgen.shard_id = 5\n");
$b->reload;
my $b_held;
my $deadline = time + 30;
while (time < $deadline)
{
	if (lease_state($b, 5) eq 'held')
	{
		$b_held = time;
		last;
	}
	usleep(100_000);
}
ok(defined $b_held, 'B takes shard 5 once A\'s lease, no longer extended, has ended');
my $a_held_for;
$deadline = time + 40;
while (time < $deadline)
{
	if (lease_state($a, 5) ne 'held')
	{
		$a_held_for = time - $b_held;
		last;
	}
	usleep(100_000);
}
ok(defined $a_held_for, 'idgen_leases() on A stops showing shard 5 held');
note sprintf('A showed shard 5 held %.1f s after B held it', $a_held_for // -1);
cmp_ok($a_held_for // 99, '<', 2 + 3,
	'within one renewal period (2 s, plus 3 s of slack) of B holding it');
is(lease_state($a, 5), 'not held', 'A shows shard 5 not held');
($ret, $stderr) = psql_fails($a, 'SELECT idgen_next()');
isnt($ret, 0, 'and does not mint for it');
# its clock 20 s behind its generator may refuse first
like($stderr, qr/this server holds no lease on shard 5|idgen's clock is \d+ ms ahead of the wall clock/,
	'with a reason');
my @b_last = mint($b, 100, call => 'idgen_next(5)',
	name => 'B mints for shard 5');
cmp_ok(min_id(\@b_last), '>', max_id(\@a_last),
	'above every ID A stamped before its clock stepped back');

$a->stop;
$b->stop;
$registry->stop;
done_testing();
