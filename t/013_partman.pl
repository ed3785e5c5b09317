
# Copyright (c) 2026, The idgen Authors
#
# Time partitions of IDs managed by pg_partman 5.2 or later, in its integer
# mode, with the create_parent() call and part_config settings
# doc/partitioning.md documents: partitions idgen_span('1 day') wide,
# started at min_id_at(now()).  The node's clock is moved with libfaketime,
# starting at 2026-03-01 10:00 UTC, so that its now() and the IDs it mints
# fall on known days.
#
#  - create_parent() makes one partition per day from now() on, each
#    named for and bounded by min_id_at() of its day and of the next.
#  - Rows of several days land in the partition of their day: IDs built
#    with min_id_at() (the first ID of a day, and the last ID of its last
#    millisecond, so that a span one millisecond off fails) and IDs minted
#    across midnights.
#  - run_maintenance() makes partitions ahead of the newest ID (premake),
#    not ahead of the clock, and drops the old ones (retention in ID
#    units, retention_keep_table off): the dropped tables are gone.
#  - A query on one day's min_id_at() range reads one partition.
#  - The limits doc/partitioning.md states: pg_partman reads the newest ID
#    in double precision, so the last ID of a day counts as the next
#    day's; an ID past the premade partitions lands in the default
#    partition, and the maintenance that must make its partition fails
#    until it is moved out; without p_start_partition, today's rows get no
#    partition.
#
# pg_partman needs no shared_preload_libraries: only its background worker
# does, and run_maintenance() is called here instead.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use Time::Local qw(timegm);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('partman', conf => "timezone = 'UTC'\n");

# Debian packages pg_partman 5.x from PostgreSQL 17 on (15's is 4.7):
# scripts/setup.sh installs it only there.
my $control =
  $node->config_data('--sharedir') . '/extension/pg_partman.control';
my $partman_version;
($partman_version) = slurp_file($control) =~ /^default_version\s*=\s*'([^']+)'/m
  if -f $control;
if (!defined $partman_version
	|| $partman_version !~ /^(\d+)\.(\d+)/
	|| $1 < 5
	|| ($1 == 5 && $2 < 2))
{
	plan skip_all => 'pg_partman 5.2 or later is not installed for PostgreSQL '
	  . $node->pg_version
	  . (defined $partman_version ? " (found $partman_version)" : '');
}
note "pg_partman $partman_version";

libfaketime();    # dies early without it

my $clock = PostgreSQL::Test::Utils::tempdir() . '/clock';

# Move the node's clock to a time, given as an SQL expression.
sub clock_at
{
	my ($when) = @_;
	my $t = $node->safe_psql('postgres', "SELECT extract(epoch FROM $when)");
	set_clock_offset($clock, $t - time);
	return;
}

# The first start after initdb has no idgen bound: the clock may begin in
# the past.
set_clock_offset($clock, timegm(0, 0, 10, 1, 2, 2026) - time);    # 03-01 10:00
start_with_clock($node, $clock);

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION idgen;
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
CREATE TABLE events (id bigint NOT NULL DEFAULT idgen_next(), body text)
    PARTITION BY RANGE (id);

-- the partitions of each table, with their bounds
CREATE VIEW children AS
SELECT i.inhparent::regclass::text AS parent,
       c.relname AS name,
       substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \(\D*(\d+)')::bigint AS lo,
       substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(\D*(\d+)')::bigint AS hi,
       pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT' AS is_default
  FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid;
});
is( $node->safe_psql('postgres',
		"SELECT now() >= '2026-03-01 10:00+00' AND now() < '2026-03-01 10:01+00'"),
	't',
	'the node runs on the fake clock');

# As doc/partitioning.md documents it.
my ($ret, $stdout, $stderr) = $node->psql(
	'postgres', q{
SELECT partman.create_parent(
    p_parent_table := 'public.events',
    p_control := 'id',
    p_interval := idgen_span('1 day')::text,
    p_start_partition := min_id_at(now())::text,
    p_premake := 4);
UPDATE partman.part_config
   SET retention = idgen_span('3 days')::text,
       retention_keep_table = false
 WHERE parent_table = 'public.events';
});
is($ret, 0, 'create_parent and the part_config settings');
unlike($stderr, qr/WARNING/, 'no warning: the epoch is a midnight');

# The days of a table's partitions (events by default), and how many
# partitions of events are not one day of IDs from a midnight to the next,
# named for their lower bound.
sub partition_days
{
	my ($parent) = @_;
	$parent //= 'events';
	return $node->safe_psql(
		'postgres', qq{
SELECT string_agg(to_char(id_to_timestamp(lo), 'MM-DD'), ' ' ORDER BY lo)
  FROM children WHERE parent = '$parent' AND NOT is_default});
}

sub misshapen_partitions
{
	return $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM children
 WHERE parent = 'events' AND NOT is_default
   AND NOT coalesce(name = 'events_p' || lo
                    AND lo = min_id_at(date_trunc('day', id_to_timestamp(lo)))
                    AND hi = min_id_at(date_trunc('day', id_to_timestamp(lo)) + interval '1 day'),
                    false)});
}

# How many rows, and how many are not in the partition of their day.
sub misplaced_rows
{
	return $node->safe_psql(
		'postgres', q{
SELECT count(*),
       count(*) FILTER (WHERE tableoid::regclass::text <>
                        'events_p' || min_id_at(date_trunc('day', id_to_timestamp(id))))
  FROM events});
}

is(partition_days(), '03-01 03-02 03-03 03-04 03-05',
	'create_parent: the day of now() and 4 days ahead');
is(misshapen_partitions(), 0,
	'each partition runs from min_id_at() of a midnight to the next, named for it');
is( $node->safe_psql('postgres',
		"SELECT name FROM children WHERE parent = 'events' AND is_default"),
	'events_default',
	'and a default partition');

# --------------------------------------------------------------------------
# Rows of several days.

# Built with min_id_at(): a day's first ID, one at noon, and the last ID of
# its last millisecond (shard 4095, sequence 1023).
$node->safe_psql(
	'postgres', q{
INSERT INTO events (id, body)
SELECT id, 'built'
  FROM generate_series(timestamptz '2026-03-01+00', '2026-03-03+00', '1 day') AS d,
       LATERAL (VALUES (min_id_at(d)),
                       (min_id_at(d + interval '12 hours') | (42 << 10) | 7),
                       (min_id_at(d + interval '1 day' - interval '1 ms') | (4095 << 10) | 1023)) AS v(id);
});
is(misplaced_rows(), '9|0',
	"built IDs: each in its day's partition, first and last ones included");
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM events
 WHERE tableoid = 'events_default'::regclass
    OR id = min_id_at('2026-03-02+00') - 1 AND tableoid::regclass::text <> 'events_p' || min_id_at('2026-03-01+00')
    OR id = min_id_at('2026-03-02+00') AND tableoid::regclass::text <> 'events_p' || min_id_at('2026-03-02+00')}
	),
	0,
	'the IDs on either side of a midnight are in the partitions on either side');

# Minted by the node while its clock passes a midnight: from 1 s before it
# to 0.3 s after, one ID every 10 ms.
sub mint_across
{
	my ($midnight) = @_;
	clock_at("timestamptz '$midnight' - interval '1 s'");
	$node->safe_psql(
		'postgres', qq{
DO \$\$
BEGIN
    FOR i IN 1..1000 LOOP
        EXIT WHEN clock_timestamp() > timestamptz '$midnight' + interval '300 ms';
        INSERT INTO events (body) VALUES ('minted');
        PERFORM pg_sleep(0.01);
    END LOOP;
END
\$\$;
});
	return $node->safe_psql(
		'postgres', qq{
SELECT count(*) FILTER (WHERE id < min_id_at('$midnight')) > 0,
       count(*) FILTER (WHERE id >= min_id_at('$midnight')) > 0
  FROM events
 WHERE body = 'minted'
   AND id >= min_id_at(timestamptz '$midnight' - interval '2 s')
   AND id < min_id_at(timestamptz '$midnight' + interval '2 s')});
}

is(mint_across('2026-03-02 00:00+00'),
	't|t', 'the node minted IDs on both sides of 03-02 00:00');
is(mint_across('2026-03-04 00:00+00'),
	't|t', 'the node minted IDs on both sides of 03-04 00:00');
my ($rows, $misplaced) = split /\|/, misplaced_rows();
cmp_ok($rows, '>', 9, "minted IDs: $rows rows in all");
is($misplaced, 0, "minted IDs: each in its day's partition");

# --------------------------------------------------------------------------
# run_maintenance() counts from the newest ID, minted just after 03-04
# 00:00: partitions up to 4 days after its day (premake), and none dropped,
# as 03-01 ends less than 3 days of IDs before it (retention).

$node->safe_psql('postgres', 'SELECT partman.run_maintenance()');
is(partition_days(), '03-01 03-02 03-03 03-04 03-05 03-06 03-07 03-08',
	'run_maintenance: partitions up to 4 days after the newest ID');
is(misshapen_partitions(), 0, 'the new partitions are days too');

# Ahead of the newest ID, not of the clock.
clock_at("timestamptz '2026-03-07 12:00+00'");
$node->safe_psql('postgres', 'SELECT partman.run_maintenance()');
is(partition_days(), '03-01 03-02 03-03 03-04 03-05 03-06 03-07 03-08',
	'with the clock at 03-07 12:00 and no new row, nothing changes');

# The newest ID now just after 03-08 00:00: 03-09 to 03-12 made, and the
# days that end 3 days of IDs or more before it dropped, 03-01 to 03-04.
is(mint_across('2026-03-08 00:00+00'),
	't|t', 'the node minted IDs on both sides of 03-08 00:00');
$node->safe_psql('postgres', 'SELECT partman.run_maintenance()');
is(partition_days(), '03-05 03-06 03-07 03-08 03-09 03-10 03-11 03-12',
	'run_maintenance: 03-09 to 03-12 made, 03-01 to 03-04 dropped');
is(misshapen_partitions(), 0, 'still days');
($rows, $misplaced) = split /\|/, misplaced_rows();
is($misplaced, 0, "every row left ($rows) is in its day's partition");

# retention_keep_table off: dropped, not detached.
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM pg_class
 WHERE relname IN (SELECT 'events_p' || min_id_at(d)
                     FROM generate_series(timestamptz '2026-03-01+00', '2026-03-04+00', '1 day') AS d)}
	),
	0,
	'the dropped partitions are gone from every schema');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM events WHERE id < min_id_at('2026-03-05+00')}),
	0,
	'and their rows with them');

# --------------------------------------------------------------------------
# A day's query reads one partition.

my $plan = $node->safe_psql(
	'postgres', q{
EXPLAIN (COSTS OFF)
SELECT * FROM events
 WHERE id >= min_id_at('2026-03-07+00') AND id < min_id_at('2026-03-08+00')});
note $plan;
is(join(' ', $plan =~ /\bon (events_\w+)/g),
	$node->safe_psql('postgres', "SELECT 'events_p' || min_id_at('2026-03-07+00')"),
	"a query on 03-07's range reads only 03-07's partition");

# --------------------------------------------------------------------------
# Limits doc/partitioning.md states.

# pg_partman reads the newest ID as trunc(max(id)), in double precision:
# the last ID of 03-08, in its partition, counts as 03-09's first, so one
# more day is made and one more dropped.
is( $node->safe_psql(
		'postgres', q{
INSERT INTO events (id, body) VALUES (min_id_at('2026-03-09+00') - 1, 'last of 03-08')
RETURNING tableoid::regclass::text = 'events_p' || min_id_at('2026-03-08+00')}),
	't',
	"the last ID of 03-08 is in 03-08's partition");
$node->safe_psql('postgres', 'SELECT partman.run_maintenance()');
is(partition_days(), '03-06 03-07 03-08 03-09 03-10 03-11 03-12 03-13',
	'pg_partman counts it as 03-09: 03-13 made and 03-05 dropped');

# Past the last premade partition, rows go to the default partition; the
# maintenance that must make their partition fails until they are moved out.
is( $node->safe_psql(
		'postgres', q{
INSERT INTO events (id, body) VALUES (min_id_at('2026-03-14+00'), 'late')
RETURNING tableoid::regclass}),
	'events_default',
	'an ID past the premade partitions lands in events_default');
$node->safe_psql('postgres',
	"INSERT INTO events (id, body) VALUES (min_id_at('2026-03-10 05:00+00'), 'built')");
($ret, $stdout, $stderr) =
  $node->psql('postgres', 'SELECT partman.run_maintenance()');
like(
	$stderr,
	qr/updated partition constraint for default partition "events_default" would be violated/,
	'maintenance that must make 03-14 fails on the row in events_default');
# 5.2 stops with an ERROR, 5.5 skips the table with a WARNING.
if ($partman_version =~ /^5\.2\./)
{
	like($stderr, qr/ERROR:  updated partition constraint/,
		"pg_partman $partman_version: an ERROR");
}
elsif ($partman_version =~ /^5\.5\./)
{
	like(
		$stderr,
		qr/WARNING:  pg_partman maintenance skipped partition set for parent table public\.events: updated partition constraint/,
		"pg_partman $partman_version: a WARNING");
}
is(partition_days(), '03-06 03-07 03-08 03-09 03-10 03-11 03-12 03-13',
	'and makes no partition');
$node->safe_psql(
	'postgres', q{
CREATE TABLE held (LIKE events);
WITH moved AS (DELETE FROM events_default RETURNING *)
INSERT INTO held SELECT * FROM moved;
});
$node->safe_psql('postgres', 'SELECT partman.run_maintenance()');
is( $node->safe_psql(
		'postgres', q{
INSERT INTO events SELECT * FROM held;
DROP TABLE held;
SELECT tableoid::regclass::text = 'events_p' || min_id_at('2026-03-14+00')
  FROM events WHERE body = 'late';
}),
	't',
	'moved out of events_default, maintenance makes 03-14, and the row goes there'
);
is(partition_days(), '03-07 03-08 03-09 03-10 03-11 03-12 03-13 03-14',
	'up to 4 days after 03-10, 03-06 dropped');

# Without p_start_partition, an empty table's partitions begin at ID 0,
# the epoch's day; today's rows land in the default partition, and
# maintenance, seeing no row in the partitions, makes none.
$node->safe_psql(
	'postgres', q{
CREATE TABLE unstarted (id bigint NOT NULL DEFAULT idgen_next(), body text)
    PARTITION BY RANGE (id);
SELECT partman.create_parent(
    p_parent_table := 'public.unstarted',
    p_control := 'id',
    p_interval := idgen_span('1 day')::text,
    p_premake := 4);
});
is(partition_days('unstarted'), '01-01 01-02 01-03 01-04 01-05',
	'without p_start_partition: the epoch and 4 days after it');
is( $node->safe_psql(
		'postgres', q{
INSERT INTO unstarted (body) VALUES ('today') RETURNING tableoid::regclass}),
	'unstarted_default',
	"today's row lands in unstarted_default");
$node->safe_psql('postgres', 'SELECT partman.run_maintenance()');
is(partition_days('unstarted'), '01-01 01-02 01-03 01-04 01-05',
	'and maintenance makes no partition for it');

$node->stop;
done_testing();
