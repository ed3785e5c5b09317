
# Copyright (c) 2026, The idgen Authors
#
# Restarts with the clock behind (libfaketime): after each one, every ID is
# larger than every ID minted before, because the generator starts at the
# durable fence.  Each step first checks that the clock really is behind
# the last ID, so that a generator going by the clock alone would mint
# smaller IDs and fail the test.
#
#  1. stop('immediate') (a crash), restart with the clock 60 s behind;
#     idgen.max_lead absorbs the step, so no caller waits.
#  2. kill -9 of a backend, the clock stepped back 60 s: the postmaster
#     reinitialises shared memory and recovers.
#  3. A clean stop and start, the clock stepped back 60 s.
#  4. A crash, the clock stepped back 8 s, default idgen.max_lead: callers
#     wait for the clock (idgen.max_wait raised) instead of going back.
#  5. Quick clean restarts: no caller waits, since a clean shutdown
#     records the last millisecond minted as the fence.
#
# Before each step the clock is put right again and IDs are minted by it,
# so that each step is a step back from the last ID.

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

# After a restart: the clock is behind the last ID, yet new IDs are larger.
sub check_after_restart
{
	my ($node, $what, $n) = @_;
	my $max_before = $all_ids[-1];

	is( $node->safe_psql('postgres',
			"SELECT clock_timestamp() < id_to_timestamp($max_before)"),
		't',
		"$what: the clock is behind the last ID minted before");

	my $t0  = time;
	my @new = mint($node, $n);
	my $took = time - $t0;
	is(scalar(grep { $_ <= $max_before } @new),
		0, "$what: every new ID is larger than every ID before");
	check_ids(\@all_ids, "$what: every ID so far");
	return $took;
}

my $node = idgen_node(
	'restart', conf => qq(
restart_after_crash = on
idgen.max_wait = '120s'
include_if_exists = 'idgen_lead.conf'
));
my $lead_conf = $node->data_dir . '/idgen_lead.conf';

sub set_max_lead
{
	my ($value) = @_;
	write_conf($lead_conf,
		defined $value ? "idgen.max_lead = '$value'\n" : '');
	return;
}

my $clock = PostgreSQL::Test::Utils::tempdir() . '/clock';
set_clock_offset($clock, 0);

# Put the clock right and mint by it, so that the IDs catch up with it.
sub mint_on_time
{
	my ($node) = @_;
	set_clock_offset($clock, 0);
	usleep(1_100_000);
	mint($node, 3000);
	mint_checked(
		$node,
		'abs(extract(epoch FROM id_to_timestamp(id) - clock_timestamp())) < 0.5',
		'IDs follow the clock again');
	return;
}
set_max_lead('70s');
start_with_clock($node, $clock);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');

mint($node, 3000);
mint($node, 3000);
check_ids(\@all_ids, 'before any restart');

# --------------------------------------------------------------------------
# 1. Crash, restart with the clock 60 s behind.

$node->stop('immediate');
set_clock_offset($clock, -60);
start_with_clock($node, $clock);
workers_follow_clock($node, -60, 'after the crash');
my $took = check_after_restart($node, 'crash, clock 60 s behind', 3000);
my $st = stats($node);
is($st->{waits}, 0, 'idgen.max_lead (70 s) absorbed the step: no wait');
cmp_ok($st->{clock_behind}, '>', 0, 'the generator ran ahead of the clock');
ok($took < 5, sprintf('minting after the crash took %.1f s', $took));
mint_on_time($node);

# --------------------------------------------------------------------------
# 2. kill -9 of a backend, with the clock stepped back 60 s.

my $session = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $session->query_safe('SELECT pg_backend_pid()');
like($pid, qr/^\d+$/, "a backend to kill: $pid");
push @all_ids, split /,/,
  $session->query_safe(
	"SELECT string_agg(idgen_next()::text, ',') FROM generate_series(1, 1000)");

set_clock_offset($clock, -60);
my $log_offset = -s $node->logfile;
ok(kill('KILL', $pid), 'SIGKILL sent to the backend');
ok( $node->poll_query_until(
		'postgres', 'SELECT minted = 0 FROM idgen_stats'),
	'the server is back, with fresh shared memory');
like(
	slurp_file($node->logfile, $log_offset),
	qr/all server processes terminated; reinitializing/,
	'the postmaster reinitialised shared memory');
eval { $session->quit; };
workers_follow_clock($node, -60, 'after the backend was killed');
check_after_restart($node, 'backend killed, clock 60 s behind', 3000);
mint_on_time($node);

# --------------------------------------------------------------------------
# 3. Clean stop and start, the clock stepped back 60 s.

$node->stop('fast');
set_clock_offset($clock, -60);
start_with_clock($node, $clock);
workers_follow_clock($node, -60, 'after the clean restart');
check_after_restart($node, 'clean restart, clock 60 s behind', 3000);
mint_on_time($node);

# --------------------------------------------------------------------------
# 4. Crash, the clock stepped back 8 s, default idgen.max_lead (1 s):
# callers wait for the clock rather than mint smaller IDs.

$node->stop('immediate');
set_clock_offset($clock, -8);
set_max_lead(undef);
start_with_clock($node, $clock);
workers_follow_clock($node, -8, 'after the crash, 8 s behind', 2.5);
is($node->safe_psql('postgres', 'SHOW idgen.max_lead'),
	'1s', 'idgen.max_lead is back to its default');
$took = check_after_restart($node, 'crash, clock 8 s behind, max_lead 1 s',
	3000);
$st = stats($node);
cmp_ok($st->{waits}, '>', 0, 'callers waited for the clock');
is($st->{max_wait_errors}, 0, 'within idgen.max_wait');
ok($took > 1, sprintf('the wait was real: %.1f s', $took));
mint_checked(
	$node,
	"id_to_timestamp(id) <= clock_timestamp() + interval '1.1 s'",
	'after the wait, IDs are within idgen.max_lead of the clock');
check_ids(\@all_ids, 'every ID of this test, after the crashes');

# --------------------------------------------------------------------------
# 5. Quick clean restarts, the clock right, one mint each time: an
# ordinary restart never makes callers wait (doc/design/fence.md, "At a
# clean exit").  Were each start to begin at the last fence move, up to
# idgen.fence_horizon ahead of the clock, restarts quicker than the horizon
# would ratchet the start ahead of the clock until callers wait.  A clean
# shutdown records the exact last millisecond minted instead.

$node->stop;
set_clock_offset($clock, 0);
usleep(2_000_000);    # the clock passes every ID minted so far
$node->start;
for my $i (1 .. 4)
{
	mint($node, 1);
	$node->restart;
}
# timed by the server, not from here: psql's own start is no part of it,
# and takes longer than a mint on a machine busy with other tests
my ($first, $took_ms) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT idgen_next(), extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000");
push @all_ids, $first;
$st = stats($node);
is($st->{waits}, 0, 'after quick clean restarts, no caller waits');
ok($took_ms < 200, sprintf('the first mint took %.1f ms', $took_ms));
check_ids(\@all_ids, 'every ID of this test, quick restarts too');

$node->stop;

done_testing();
