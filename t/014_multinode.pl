
# Copyright (c) 2026, The idgen Authors
#
# Three nodes, each with its own idgen.shard_id, all writing one table that
# PostgreSQL's logical replication copies among them in both directions
# (every node publishes it and subscribes to the two others with origin =
# none, copy_data = false).  Sessions on every node insert at once with
# DEFAULT idgen_next(), in three runs:
#
#  1. Every node's clock is the machine's.  Every node ends with the same
#     rows; no apply worker logged an error or a conflict, and the
#     subscriptions' statistics count none; each ID names the shard of the
#     node that inserted it; a node's IDs follow its insert order; and
#     ORDER BY id across the nodes follows insert time to within
#     idgen.max_lead + 1 ms, which is what idgen allows on one clock.
#  2. The clock of n3 (libfaketime) steps 3 s back while every node
#     inserts and replicates: n3's IDs keep increasing and stay unique, and
#     replication converges as in run 1.
#  3. n3's clock stays 3 s behind: all of run 1 holds again, except that
#     across nodes ORDER BY id follows insert time only to within the
#     clock difference + max_lead + 1 ms, and the difference shows.
#
# origin = none is new in PostgreSQL 16: below it, the test is skipped.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my %shard = (n1 => 1, n2 => 2, n3 => 3);
my @names = sort keys %shard;

# Small enough to bound the order across nodes tightly (see run 1).
my $max_lead_ms = 20;

# Each run: 3 sessions a node, 400 inserts each, paced at 240 a second a
# node so that the three nodes insert side by side for about 5 s.
my $clients    = 3;
my $per_client = 400;
my $rate       = 240;
my $per_run    = $clients * $per_client;

sub new_node
{
	my ($name) = @_;
	return idgen_node(
		$name,
		allows_streaming => 'logical',
		conf => qq(
idgen.shard_id = $shard{$name}
idgen.max_lead = '${max_lead_ms}ms'
max_connections = 20
shared_buffers = '16MB'
synchronous_commit = off
));
}

my %node = (n1 => new_node('n1'));
plan skip_all =>
  'a subscription\'s origin = none, which keeps each row from coming back to the node that sent it, needs PostgreSQL 16 or later'
  if $node{n1}->pg_version < 16;
$node{$_} = new_node($_) for qw(n2 n3);
my @nodes = map { $node{$_} } @names;

libfaketime();    # dies early without it

my $clock = PostgreSQL::Test::Utils::tempdir() . '/n3_clock';
set_clock_offset($clock, 0);
$node{n1}->start;
$node{n2}->start;
start_with_clock($node{n3}, $clock);

# Problems are looked for in what each server logged from here on.
my %log_offset = map { ($_->name => -s $_->logfile) } @nodes;

# --------------------------------------------------------------------------
# The same table on every node (DDL is not replicated), a publication of
# it, and a subscription to each other node.

for my $node (@nodes)
{
	$node->safe_psql(
		'postgres', q(
CREATE EXTENSION idgen;
CREATE TABLE t (
	id bigint PRIMARY KEY DEFAULT idgen_next(),
	node text NOT NULL,
	run integer NOT NULL,
	sess integer NOT NULL,
	n integer NOT NULL,
	t0 timestamptz NOT NULL,
	t1 timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE PUBLICATION t_pub FOR TABLE t;
));
}

# A subscription is named for where it sits and where it reads from; the
# publisher sees that name as the walsender's application_name.
sub sub_name { return "$_[0]_from_$_[1]"; }

for my $sub (@names)
{
	for my $pub (grep { $_ ne $sub } @names)
	{
		my $connstr = $node{$pub}->connstr . ' dbname=postgres';
		$node{$sub}->safe_psql('postgres',
			    "CREATE SUBSCRIPTION ${\ sub_name($sub, $pub)} CONNECTION '$connstr' "
			  . 'PUBLICATION t_pub WITH (origin = none, copy_data = false)');
	}
}

for my $pub (@names)
{
	my $subs = join ', ',
	  map { "'" . sub_name($_, $pub) . "'" } grep { $_ ne $pub } @names;
	ok( $node{$pub}->poll_query_until(
			'postgres',
			"SELECT count(*) = 2 FROM pg_stat_replication WHERE application_name IN ($subs) AND state = 'streaming'"
		),
		"$pub streams to both other nodes");
}

# --------------------------------------------------------------------------
# Helpers.

# pgbench on a node, in the background: $clients sessions, each inserting
# $per_client rows, one a transaction.  n counts a session's inserts: it is
# the session's insert order.  t0 is the node's clock before the INSERT
# and t1 its clock after the ID was minted (column defaults are computed in
# column order, id before t1).
sub start_inserts
{
	my ($node, $run) = @_;
	my $script = $node->basedir . "/insert_$run.sql";
	write_conf(
		$script, qq(\\set n :n + 1
SELECT clock_timestamp() AS t0 \\gset
INSERT INTO t (node, run, sess, n, t0) VALUES ('${\ $node->name}', $run, :client_id, :n, ':t0');
));
	my %bench = (node => $node, out => '', err => '');
	$bench{harness} = IPC::Run::start(
		[
			'pgbench', '--no-vacuum',
			"--client=$clients", '--jobs=1',
			"--transactions=$per_client", "--rate=$rate",
			'--define=n=0', "--file=$script",
			'--host=' . $node->host, '--port=' . $node->port,
			'postgres'
		],
		'>', \$bench{out}, '2>', \$bench{err},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return \%bench;
}

sub finish_inserts
{
	my ($bench, $what) = @_;
	my $name = $bench->{node}->name;
	my $ok   = $bench->{harness}->finish;
	ok($ok, "$what: pgbench on $name exits with success")
	  or diag "pgbench on $name:\n$bench->{out}\n$bench->{err}";
	like(
		$bench->{out},
		qr{number of transactions actually processed: $per_run/$per_run},
		"$what: $name inserted $per_run rows from $clients sessions");
	is($bench->{err}, '', "$what: pgbench on $name reported no error");
	return;
}

# What a node logged since the test began that speaks of a problem: a
# duplicate key or any other error stops an apply worker with an ERROR;
# from PostgreSQL 18 a conflict is logged as such.
sub log_problems
{
	my ($node) = @_;
	return grep { /\b(?:WARNING|ERROR|FATAL|PANIC):|\bconflict\b/i }
	  split /\n/, slurp_file($node->logfile, $log_offset{ $node->name });
}

# Wait until each subscription has applied what its publisher had written
# when the wait began, twice: the second round covers the WAL that applying
# the first wrote, which origin = none keeps from being sent on.  An apply
# error stops the wait: a duplicate key stops replication for good.
sub converge
{
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	for my $round (1, 2)
	{
		my %target = map { ($_ => $node{$_}->lsn('write')) } @names;
		my $behind = 1;
		while ($behind)
		{
			return 0 if grep { log_problems($_) } @nodes;
			return 0 if time > $deadline;
			$behind = 0;
			for my $pub (@names)
			{
				my $subs = join ', ',
				  map { "'" . sub_name($_, $pub) . "'" }
				  grep { $_ ne $pub } @names;
				$behind += $node{$pub}->safe_psql(
					'postgres', qq(
SELECT 2 - count(*) FROM pg_stat_replication
 WHERE application_name IN ($subs) AND state = 'streaming'
   AND replay_lsn >= '$target{$pub}'));
			}
			usleep(100_000) if $behind;
		}
	}
	return 1;
}

# The counters of pg_stat_subscription_stats that count errors and, from
# PostgreSQL 18, conflicts: the view's own list of them.
my @counters = split /\n/, $node{n1}->safe_psql(
	'postgres', q(
SELECT attname FROM pg_attribute
 WHERE attrelid = 'pg_stat_subscription_stats'::regclass AND attnum > 0
   AND (attname LIKE '%error\_count' OR attname LIKE 'confl\_%')
 ORDER BY attnum));
note 'subscription counters checked: ' . join(', ', @counters);
ok((grep { /^confl_/ } @counters) > 0,
	'pg_stat_subscription_stats counts conflicts from PostgreSQL 18')
  if $node{n1}->pg_version >= 18;

# Every node holds the same rows, those of $runs runs, replication never
# stumbled, and each ID names the shard of the node that inserted it.
# Returns whether replication caught up.
sub check_replicated
{
	my ($what, $runs) = @_;
	my $rows = $runs * 3 * $per_run;

	my $converged = ok(converge(), "$what: every subscription caught up");

	for my $node (@nodes)
	{
		my @problems = log_problems($node);
		is(scalar(@problems), 0,
			"$what: ${\ $node->name} logged no error and no conflict")
		  or diag join("\n", @problems);
	}

	my $sum = join(' + ', @counters);
	for my $node (@nodes)
	{
		my $stats = $node->safe_psql('postgres',
			"SELECT subname, $sum FROM pg_stat_subscription_stats ORDER BY subname"
		);
		my @subs = split /\n/, $stats;
		is(scalar(@subs), 2, "$what: ${\ $node->name} has two subscriptions");
		is(scalar(grep { !/\|0$/ } @subs),
			0,
			"$what: ${\ $node->name}'s subscriptions count no error and no conflict"
		) or diag $stats;
		is( $node->safe_psql(
				'postgres',
				'SELECT count(*) FROM pg_stat_subscription WHERE pid IS NOT NULL AND relid IS NULL AND leader_pid IS NULL'),
			'2',
			"$what: ${\ $node->name}'s two apply workers run");
	}

	my $digest =
	  q(SELECT count(*), md5(string_agg(t::text, ' ' ORDER BY id)) FROM t);
	my $expected = $node{n1}->safe_psql('postgres', $digest);
	like($expected, qr/^$rows\|/, "$what: n1 holds $rows rows");
	for my $name ('n2', 'n3')
	{
		is($node{$name}->safe_psql('postgres', $digest),
			$expected, "$what: $name holds exactly the rows n1 holds");
	}

	my $shards = join ', ', map { "('$_', $shard{$_})" } @names;
	for my $node (@nodes)
	{
		is( $node->safe_psql(
				'postgres', qq(
SELECT count(*) FILTER (WHERE id_to_shard(id) = s.shard), count(*)
  FROM t LEFT JOIN (VALUES $shards) AS s(node, shard) USING (node))),
			"$rows|$rows",
			"$what: on ${\ $node->name}, every ID names the shard of the node that inserted it"
		);
	}

	is( $node{n1}->safe_psql(
			'postgres', qq(
SELECT count(*) FROM (
	SELECT FROM t GROUP BY node, run, sess
	HAVING min(n) = 1 AND max(n) = $per_client AND count(DISTINCT n) = $per_client
) s)),
		$runs * 3 * $clients,
		"$what: in each session, n counted its inserts from 1 to $per_client");
	return $converged;
}

# A node's IDs follow the order in which it minted them:
#  - in each session, each ID is above the one the session inserted before
#    (whatever its clock did);
#  - each run's IDs are above every ID of the node's run before;
#  - across sessions, for the @steady nodes (whose clock did not step
#    during the run): a row whose INSERT began (t0) after the node had
#    minted another row's ID (t1) has the larger ID.  That is the part of
#    the one order in which a node mints that its clock shows; rows whose
#    inserts overlapped in time are not compared.
# And for the @steady nodes, each ID's time lies on the node's clock
# between its INSERT's start (to the millisecond) and idgen.max_lead after
# the mint.
sub check_order
{
	my ($what, $run, @steady) = @_;

	for my $name (@names)
	{
		is( $node{n1}->safe_psql(
				'postgres', qq(
SELECT count(*) FROM (
	SELECT id, lag(id) OVER (PARTITION BY sess ORDER BY n) AS prev
	  FROM t WHERE node = '$name' AND run = $run
) s WHERE id <= prev)),
			'0',
			"$what: each session of $name has increasing IDs in its insert order"
		);
		next if $run == 1;
		is( $node{n1}->safe_psql(
				'postgres', qq(
SELECT min(id) FILTER (WHERE run = $run) > max(id) FILTER (WHERE run = $run - 1)
  FROM t WHERE node = '$name')),
			't',
			"$what: every ID of $name is above every ID of its run before");
	}

	for my $name (@steady)
	{
		# The rows' starts and ends in time order (at one instant, starts
		# first); at each start, the largest ID minted so far.
		is( $node{n1}->safe_psql(
				'postgres', qq(
SELECT count(*) FROM (
	SELECT is_start, id, max(id) FILTER (WHERE NOT is_start)
			OVER (ORDER BY at, is_start DESC ROWS UNBOUNDED PRECEDING) AS minted_before
	  FROM (SELECT id, t0 AS at, true AS is_start FROM t
			 WHERE node = '$name' AND run = $run
			UNION ALL
			SELECT id, t1, false FROM t
			 WHERE node = '$name' AND run = $run) e
) s WHERE is_start AND minted_before >= id)),
			'0',
			"$what: ${name}'s IDs follow the order in which its sessions minted them"
		);
		is( $node{n1}->safe_psql(
				'postgres', qq(
SELECT count(*) FROM t
 WHERE node = '$name' AND run = $run
   AND (id_to_timestamp(id) < date_trunc('milliseconds', t0)
		OR id_to_timestamp(id) > t1 + interval '$max_lead_ms ms'))),
			'0',
			"$what: each ID of $name carries its clock's time at the mint, or up to $max_lead_ms ms more"
		);
	}
	return;
}

# The order across nodes.  An inversion is a row b whose ID is below that
# of a row a although b's INSERT began (t0) after a's ID was minted (t1);
# its size is b.t0 - a.t1, by one clock: n3's readings are moved by
# $n3_behind seconds onto the others' clock.  Returns the largest, in ms
# (0 when there is none), and how many rows have one below them.
#
# The bound: b's ID carries at least the millisecond of b.t0 on b's clock,
# a's ID at most a.t1 + max_lead on a's clock, and a's ID is the larger,
# so its time is at least b's.  Hence an inversion is below the difference
# between the two nodes' clocks + max_lead + 1 ms.  Within a node there is
# none (check_order); across nodes, IDs of one millisecond sort by shard.
sub largest_inversion
{
	my ($run, $n3_behind) = @_;
	my ($ms, $rows) = split /\|/, $node{n1}->safe_psql(
		'postgres', qq(
SELECT round(greatest(max(extract(epoch FROM latest_start_below - t1)) * 1000, 0), 3),
	   count(*) FILTER (WHERE latest_start_below > t1)
  FROM (SELECT t1, max(t0) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS latest_start_below
		  FROM (SELECT id,
					   t0 + CASE node WHEN 'n3' THEN interval '$n3_behind s' ELSE interval '0' END AS t0,
					   t1 + CASE node WHEN 'n3' THEN interval '$n3_behind s' ELSE interval '0' END AS t1
				  FROM t WHERE run = $run) r) s));
	note "run $run: the largest inversion of ORDER BY id against insert time is $ms ms "
	  . "($rows rows sort after a row whose INSERT began after their ID was minted)";
	return $ms;
}

# --------------------------------------------------------------------------
# Run 1: every node inserts, and every clock is the machine's.

my @benches = map { start_inserts($_, 1) } @nodes;
finish_inserts($_, 'run 1') for @benches;
my $replicated = check_replicated('run 1', 1);
check_order('run 1', 1, @names);

my $inversion = largest_inversion(1, 0);
cmp_ok($inversion, '<', $max_lead_ms + 1,
	"run 1: across nodes, ORDER BY id follows insert time to within max_lead + 1 ms ($inversion ms)"
);

# Replication that stopped would only make the next runs wait out their
# timeouts.
if (!$replicated)
{
	$_->stop for @nodes;
	done_testing();
	exit;
}

# --------------------------------------------------------------------------
# Run 2: n3's clock steps 3 s back while every node inserts and replicates.

my $st0 = stats($node{n3});
@benches = map { start_inserts($_, 2) } @nodes;

# Step once n3 has inserted rows of this run and received the others'.
ok( $node{n3}->poll_query_until(
		'postgres', 'SELECT count(DISTINCT node) = 3 FROM t WHERE run = 2'),
	'run 2: n3 inserts and receives the others\' rows');
set_clock_offset($clock, -3);
my $last_before_step =
  $node{n3}->safe_psql('postgres', 'SELECT last_id FROM idgen_stats');
{
	# the server's clock read, then ours: psql's start (slow on a loaded
	# machine) adds to what is measured instead of taking from it
	my $server = $node{n3}->safe_psql('postgres',
		'SELECT extract(epoch FROM clock_timestamp())');
	my $behind = time - $server;
	ok($behind > 2.5 && $behind < 6,
		sprintf('run 2: n3\'s clock is now 3 s behind (%.2f s)', $behind));
}

finish_inserts($_, 'run 2') for @benches;
check_replicated('run 2', 2);
check_order('run 2', 2, 'n1', 'n2');

my $st1 = stats($node{n3});
cmp_ok($st1->{clock_steps_back}, '>', $st0->{clock_steps_back},
	"run 2: n3's minting saw its clock step back");
cmp_ok($st1->{waits}, '>', $st0->{waits},
	"run 2: n3's sessions waited for its clock to come within max_lead");
is($st1->{max_wait_errors}, 0, 'run 2: no session of n3 gave up');
cmp_ok(
	$node{n1}->safe_psql(
		'postgres',
		"SELECT count(*) FROM t WHERE node = 'n3' AND id > $last_before_step"),
	'>', 0,
	'run 2: n3 went on inserting after the step');

# --------------------------------------------------------------------------
# Run 3: n3's clock stays 3 s behind the others'.  By the machine's clock,
# ORDER BY id now puts n3's rows up to 3 s early: the clock difference.

@benches = map { start_inserts($_, 3) } @nodes;
finish_inserts($_, 'run 3') for @benches;
check_replicated('run 3', 3);
check_order('run 3', 3, @names);

$inversion = largest_inversion(3, 3);
cmp_ok($inversion, '<', 3000 + $max_lead_ms + 1,
	"run 3: across nodes, ORDER BY id follows insert time to within the clock difference + max_lead + 1 ms ($inversion ms)"
);
cmp_ok($inversion, '>', 1500,
	'run 3: and the clock difference shows in it');

$_->stop for @nodes;

done_testing();
