
# Copyright (c) 2026, The idgen Authors
#
# The wall clock steps back while the server runs (libfaketime, the offset
# in a file the server re-reads at each clock call).
#
#  - A step back of 10 s: minting goes on (callers wait for the clock, with
#    idgen.max_wait raised), no duplicate, every ID larger than the last.
#  - A step back within idgen.max_lead is absorbed without any wait.
#  - A step back of 30 s with the default idgen.max_wait (10 s): a clear
#    error, counted in max_wait_errors, and no ID is minted out of order.

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

my $node = idgen_node('clock');

my $clock = PostgreSQL::Test::Utils::tempdir() . '/clock';
set_clock_offset($clock, -100);
start_with_clock($node, $clock);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');

# The fake clock works: the server follows the file, the backends and the
# workers started with it alike.  The fence worker opened its first horizon
# at start from its own clock: 100 s ahead of the backends' if it read the
# real one.
{
	# the server's clock read first: psql's start adds, never takes away
	my $server = $node->safe_psql('postgres',
		'SELECT extract(epoch FROM clock_timestamp())');
	my $behind = time - $server;
	ok($behind > 95 && $behind < 105,
		"the server follows the fake clock ($behind s behind)");
	my $ahead = stats($node)->{fence_ahead_ms};
	ok($ahead < 50_000,
		"the idgen fence worker follows the fake clock (fence $ahead ms ahead)");
	workers_follow_clock($node, -100, 'at start');
}
set_clock_offset($clock, 0);

my $s1 = $node->background_psql('postgres');
my $s2 = $node->background_psql('postgres');
my $pid1 = $s1->query_safe('SELECT pg_backend_pid()');
$s1->query_safe("SET idgen.max_wait = '60s'");
$s2->query_safe("SET idgen.max_wait = '60s'");

mint($s1, 2000);
mint($s2, 2000);
my @before = mint($s1, 2000);
my $last_before = $before[-1];

# --------------------------------------------------------------------------
# Step back 10 s: callers wait for the clock, with no error.

my $st0 = stats($node);
set_clock_offset($clock, -10);
is( $s1->query_safe(
		"SELECT clock_timestamp() < id_to_timestamp($last_before) - interval '8 s'"
	),
	't',
	'the clock is now 10 s behind the last ID');

my $t0 = time;
my @after = mint($s1, 2000);
push @after, mint($s2, 2000);
my $waited = time - $t0;
note sprintf('minting after the 10 s step took %.1f s', $waited);

is(scalar(grep { $_ <= $last_before } @after),
	0, 'after the step back, every ID is larger than every ID before it');
check_ids(\@all_ids, 'across the 10 s step');

my $st1 = stats($node);
cmp_ok($st1->{clock_steps_back}, '>', $st0->{clock_steps_back},
	'idgen_stats counts the clock step back');
cmp_ok($st1->{clock_behind}, '>', $st0->{clock_behind},
	'idgen_stats counts mints with the clock behind');
cmp_ok($st1->{waits}, '>', $st0->{waits}, 'callers waited for the clock');
is($st1->{max_wait_errors}, 0, 'no caller gave up');
ok($waited > 5, 'minting waited for the clock to catch up (idgen.max_lead is 1 s)');
is( $node->safe_psql(
		'postgres',
		"SELECT clock_steps_back > 0, clock_behind > 0 FROM idgen_stats_backends WHERE pid = $pid1"
	),
	't|t',
	'idgen_stats_backends shows the step in the session that saw it');

# Invariant 3: once minting went on, an ID is at most idgen.max_lead ahead
# of the clock.
mint_checked(
	$s1,
	"id_to_timestamp(id) <= clock_timestamp() + interval '1.1 s'",
	'after the wait, IDs are within idgen.max_lead of the clock');

# --------------------------------------------------------------------------
# A step back within idgen.max_lead (500 ms < 1 s) is absorbed.

usleep(1_200_000);    # let the clock pass the last ID
push @all_ids, $s2->query_safe('SELECT idgen_next()');
my $st2 = stats($node);
set_clock_offset($clock, -10.5);
$t0 = time;
mint($s2, 3000);
mint($s1, 3000);
my $took = time - $t0;
my $st3 = stats($node);
is($st3->{waits}, $st2->{waits},
	'a step back within idgen.max_lead costs no wait');
cmp_ok($st3->{clock_behind}, '>', $st2->{clock_behind},
	'the generator kept its own clock over the small step');
note sprintf('minting over the small step took %.2f s', $took);
check_ids(\@all_ids, 'across the 500 ms step');

# --------------------------------------------------------------------------
# A step back of 30 s with the default idgen.max_wait (10 s): an error.

my $max_before_error = $all_ids[-1];
set_clock_offset($clock, -40.5);
$t0 = time;
my ($ret, $stderr) =
  psql_fails($node, "SHOW idgen.max_wait;\nSELECT idgen_next();");
my $failed_after = time - $t0;
note "error after a 30 s step: $stderr";
isnt($ret, 0, 'with the clock 30 s behind, idgen_next fails');
like($stderr, qr/ERROR:\s+55000:/, 'SQLSTATE 55000');
like($stderr, qr/lead|ahead|behind/i, 'the message speaks of the lead');
like($stderr, qr/idgen\.max_wait/, 'the error names idgen.max_wait');
ok($failed_after < 12,
	sprintf('the error came within idgen.max_wait (%.1f s)', $failed_after));
my $st4 = stats($node);
cmp_ok($st4->{max_wait_errors}, '>', $st3->{max_wait_errors},
	'max_wait_errors counts it');

# The sessions with a long max_wait still mint, larger than any before,
# once the clock comes back.
set_clock_offset($clock, 0);
mint($s1, 2000);
mint($s2, 2000);
ok($all_ids[-1] > $max_before_error, 'minting resumes after the error');
check_ids(\@all_ids, 'every ID of this test');

$s1->quit;
$s2->quit;
$node->stop;

done_testing();
