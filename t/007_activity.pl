
# Copyright (c) 2026, The idgen Authors
#
# What pg_stat_activity shows of idgen, on every version:
#
#  - The "idgen fence" worker is a row of pg_stat_activity, with its
#    backend_type, connected to no database.
#  - Its sleeps between fence moves, a mint waiting for the wall clock and a
#    mint waiting for the fence each report a wait event of type Extension:
#    named IdgenFenceWorkerMain, IdgenWallClock and IdgenFence from
#    PostgreSQL 17 (custom wait events), plain "Extension" before.
#  - The named events are listed in pg_wait_events (17 and later).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

libfaketime();    # dies early without it

my $node = idgen_node('activity');
my $clock = PostgreSQL::Test::Utils::tempdir() . '/clock';
set_clock_offset($clock, 0);
start_with_clock($node, $clock);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');

my $named = $node->safe_psql('postgres', 'SHOW server_version_num') >= 170000;

sub event
{
	my ($name) = @_;
	return $named ? $name : 'Extension';
}

sub idgen_wait_events
{
	return $node->safe_psql(
		'postgres', q{
SELECT string_agg(name, ',' ORDER BY name) FROM pg_wait_events
 WHERE type = 'Extension' AND name LIKE 'Idgen%'});
}

# --------------------------------------------------------------------------
# The fence worker is in pg_stat_activity, asleep between fence moves.

my $worker_pid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'idgen fence'");
like($worker_pid, qr/^\d+$/,
	'the idgen fence worker is one row of pg_stat_activity');
ok( $node->poll_query_until(
		'postgres', qq{
SELECT wait_event_type = 'Extension' AND wait_event = '@{[event('IdgenFenceWorkerMain')]}'
  FROM pg_stat_activity WHERE pid = $worker_pid}),
	'the worker sleeps in wait event ' . event('IdgenFenceWorkerMain'));
is( $node->safe_psql('postgres',
		"SELECT datname IS NULL FROM pg_stat_activity WHERE pid = $worker_pid"),
	't',
	'the worker is connected to no database');

SKIP:
{
	skip 'custom wait events arrived in PostgreSQL 17', 1 unless $named;
	is(idgen_wait_events(), 'IdgenFenceWorkerMain',
		'pg_wait_events lists the event registered so far');
}

# --------------------------------------------------------------------------
# A mint waiting for the wall clock: step it back beyond idgen.max_lead.

my $s = $node->background_psql('postgres');
my $pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe("SET idgen.max_wait = '60s'");
$s->query_safe('SELECT idgen_next()');
set_clock_offset($clock, -4);
$s->query_until(qr/minting/, "\\echo minting\nSELECT idgen_next() > 0;\n");
ok( $node->poll_query_until(
		'postgres', qq{
SELECT wait_event_type = 'Extension' AND wait_event = '@{[event('IdgenWallClock')]}'
  FROM pg_stat_activity WHERE pid = $pid}),
	'a mint waiting for the wall clock shows wait event '
	  . event('IdgenWallClock'));
set_clock_offset($clock, 0);
$s->quit;

# --------------------------------------------------------------------------
# A mint waiting for the fence: the worker is stopped, and minting runs into
# the fence it last published.

$s = $node->background_psql('postgres');
$pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe("SET idgen.max_wait = '60s'");
$s->query_safe('SELECT idgen_next()');
kill 'STOP', $worker_pid;
$s->query_until(qr/minting/,
	"\\echo minting\nSELECT count(*) FROM (SELECT idgen_next() FROM generate_series(1, 3000000)) AS s;\n"
);
my $fence_wait_seen = $node->poll_query_until(
	'postgres', qq{
SELECT wait_event_type = 'Extension' AND wait_event = '@{[event('IdgenFence')]}'
  FROM pg_stat_activity WHERE pid = $pid});
kill 'CONT', $worker_pid;
ok($fence_wait_seen,
	'a mint waiting for the fence shows wait event ' . event('IdgenFence'));
# Once the wait has ended (it is counted then), the rest of the 3,000,000
# is not wanted: under libfaketime every mint reads the clock file, and
# they would take 20 s.
$node->poll_query_until('postgres', 'SELECT fence_waits > 0 FROM idgen_stats');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
# the canceled query ends psql (ON_ERROR_STOP), which may be gone before
# quit writes to it: a broken pipe then, not a failure
eval { $s->quit; 1 } or note "the session had ended with its canceled query: $@";

is($node->safe_psql('postgres', 'SELECT fence_waits > 0 FROM idgen_stats'),
	't', 'idgen_stats counted the wait for the fence');

# A wait for the fence that ends in the idgen.max_wait error is counted as a
# wait too.
my $before = stats($node);
kill 'STOP', $worker_pid;
my ($ret, $stderr) = psql_fails($node,
	"SET idgen.max_wait = '300ms'; SELECT count(idgen_next()) FROM generate_series(1, 3000000)"
);
kill 'CONT', $worker_pid;
like($stderr, qr/55000: could not advance the idgen fence/,
	'minting past the stopped worker ends in the max_wait error');
my $after = stats($node);
is($after->{max_wait_errors} - $before->{max_wait_errors},
	1, 'the error is counted in max_wait_errors');
is($after->{fence_waits} - $before->{fence_waits},
	1, 'the wait that ended in it is counted in fence_waits');
cmp_ok($after->{waits} - $before->{waits},
	'>=', 1, 'and in waits');
cmp_ok($after->{wait_time_ms} - $before->{wait_time_ms},
	'>=', 250, 'and its time in wait_time_ms');

SKIP:
{
	skip 'custom wait events arrived in PostgreSQL 17', 1 unless $named;
	is(idgen_wait_events(), 'IdgenFence,IdgenFenceWorkerMain,IdgenWallClock',
		"pg_wait_events lists all three of idgen's wait events");
}

$node->stop;
done_testing();
