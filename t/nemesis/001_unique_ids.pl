
# Copyright (c) 2026, The idgen Authors
#
# Uniqueness under a nemesis, the way Jepsen's unique-ids checker counts it:
# a lease registry and IDGEN_NEMESIS_SERVERS (3) minting servers taking
# shards from a pool, each under a clock of its own (libfaketime, every
# process of the server), with clients minting single IDs, blocks and
# DEFAULT inserts at a bounded rate.  Every ID a client was given (the call
# returned; for an INSERT, the autocommit transaction committed) is written
# to the client's file, outside the servers, as acknowledged.
#
# Meanwhile a nemesis drawn from the seed (IDGEN_NEMESIS_SEEDS, one run
# each) kills servers with SIGKILL, the postmaster and every child of it at
# once, as a crash of the machine does (Processes.pm: the test fails if
# any child runs on after the kill), or one process of a server (which
# takes it down, to start again a second later), freezes a
# server past its lease (SIGSTOP, then SIGCONT), steps a server's clock
# 5 s either way while it runs and an hour back while it is down, strobes
# it (200 ms either way every 10 ms), kills (as a server), freezes and
# restarts the registry (one seed in two runs the registry with
# synchronous_commit = off), restarts a server without its state file,
# starts a clone of a running server from a base backup with the same
# settings, promotes a streaming standby of the first server while that
# server runs (then stops it), copies rows with explicit IDs of a server's
# shard ahead of its generator (then idgen_advance_past, as an import
# does), cuts a server off from the registry past its lease (Partition.pm),
# and does several of these at once to one server.  It also restores, once
# a run at most: a server's database, whose tables hold the IDs its
# clients minted and 100 it mints first, dumped with pg_dump -Fc and
# restored into a new database of another pool server owned by the role
# app (LOGIN, not a superuser), where the superuser created the extension
# first, by pg_restore --no-owner as app, which must exit 0 and print
# nothing; every restored ID must decode there (id_to_timestamp,
# id_to_shard, id_to_sequence) as on its source, the servers having one
# layout history; then app inserts into the restored table with DEFAULT
# idgen_next() at once, until the run ends, and once more when every
# server is back, its IDs counted like any.  The schedule is printed
# before it runs; the same seed draws the same schedule.
#
# The checker (Checker.pm) prints, per server (and per restored database)
# and in all: attempted, acknowledged, duplicated, out of order within a
# client, and lost (an acknowledged INSERT whose row is gone once every
# server is back; commits are synchronous).  An INSERT that a primary key
# refuses as a duplicate counts as duplicated.  A duplicate prints both
# IDs, who minted each and when, and the nemesis events around them.  The
# bar is zero duplicates and zero lost.
#
# Beside them, a lanes server outside the registry (its own shard, 30, and
# four backfill lanes) has a live client and a backfill client: an import
# inserting rows keyed idgen_next_at(t) a millisecond later each statement,
# begun again from its first millisecond when a statement fails (a job
# retried), late events at random times of the last hour or the last 30
# days in the order they arrive, and blocks of idgen_next_at_n(t, 50) for
# 40 milliseconds of 2026-06-01, which fill lanes.  Its rows go to a table without a key, so
# that a duplicate is committed and counted rather than refused by an
# index.  It takes the faults a
# server without a registry can take; losing its state file loses its
# lanes file too, and the nemesis then does what the guide says an
# operator does (idgen_advance_past of the largest of each lane's IDs,
# then idgen_lanes_init()); its clone, given another live shard as the
# guide says, keeps the same lanes, which must refuse (a base backup).
# The pool servers backfill too, on two lanes (200 and 201) that they take
# turns at through the registry, whose rows hold the times each lane used:
# a third client on each runs the same import (resumed a second later
# after a failure, since a lane another server held has used the times a
# retry from the start would ask for) and blocks into its own tb, and its
# lanes file goes with its state file.  Backfilled IDs are counted
# like any: acknowledged, duplicated, lost; they are not in order, and are
# not checked for it.
#
# A last short run is the checker's own test: two servers configured with
# one shard and no registry, the misconfiguration the README says nothing
# can make safe, must be found minting duplicates.
#
# By hand: bash scripts/nemesis.sh --seed N --minutes M --servers K

use strict;
use warnings;

use File::Path qw(make_path);
use IPC::Run;
use List::Util qw(sum);
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FindBin;
use lib "$FindBin::RealBin/..";
use lib "$FindBin::RealBin";
use IdgenTest;
use Checker;
use Partition;
use Processes;

libfaketime();    # dies early without it

my @seeds = split /,/, ($ENV{IDGEN_NEMESIS_SEEDS} // '1,2,274');
my $seconds = $ENV{IDGEN_NEMESIS_SECONDS} // 40;
my $nservers = $ENV{IDGEN_NEMESIS_SERVERS} // 3;
my $lease_s = 3;
my $work = PostgreSQL::Test::Utils::tempdir();

# ---------------------------------------------------------------------------
# The schedule: [seconds after the start, fault, target], drawn from the seed.

my @faults = qw(kill9 kill9_worker freeze step_ahead step_behind strobe
  down_hour_back registry_kill registry_freeze no_state_file clone
  explicit_ahead promote partition partition_reset several restore);
# By hand, the faults to draw from: IDGEN_NEMESIS_FAULTS=partition,freeze
if ($ENV{IDGEN_NEMESIS_FAULTS})
{
	my %known = map { ($_ => 1) } @faults;
	@faults = split /,/, $ENV{IDGEN_NEMESIS_FAULTS};
	$known{$_} or die "no fault is called $_; the faults: @{[ sort keys %known ]}"
	  for @faults;
}

# Several faults at once on one server: one from each of two or three of
# these kinds, the network's first, so that the server is cut off or its
# clock moved when it is stopped, frozen or started again.
my @kinds = (
	[qw(partition partition_reset registry_freeze registry_kill)],
	[qw(step_ahead step_behind strobe)],
	[qw(kill9 kill9_worker freeze no_state_file down_hour_back)]);

sub several
{
	my @chosen;
	while (@chosen < 2)
	{
		@chosen = map { $_->[ int(rand(@$_)) ] } grep { rand() < 0.75 } @kinds;
	}
	return join('+', @chosen);
}

sub schedule
{
	my ($seed) = @_;
	srand($seed);
	my @events;
	my $t = 2;
	# one clone, one promotion of the standby, one restore a run
	my %once = (clone => 0, promote => 0, restore => 0);
	while ($t < $seconds - 6)
	{
		# by hand, faults of which one a run is drawn may be all there is
		last unless grep { !$once{$_} } @faults;
		my $fault = $faults[ int(rand(@faults)) ];
		next if exists $once{$fault} && $once{$fault}++ > 0;
		$fault = several() if $fault eq 'several';
		# the last target is the lanes server
		push @events, [ $t, $fault, int(rand($nservers + 1)) ];
		$t += 2 + int(rand(3));
	}
	return @events;
}

# ---------------------------------------------------------------------------
# Clients: forked processes, each calling one server through psql at a
# bounded rate and writing what it was given to its own file.

# A backfill client's statement: an import sweeping forward a millisecond
# a statement, begun again from its first millisecond whenever a statement
# fails (as a job is retried); late events in the order they arrive, at
# random times of the last hour or the last 30 days; or a block for one of
# 40 milliseconds, for which the clients contend.
sub backfill_sql
{
	my ($sweep) = @_;
	my $r = rand();
	if ($r < 0.25)
	{
		my $span = rand() < 0.5 ? '1 hour' : '30 days';
		return ('at_insert', 5,
			"INSERT INTO tb (id, c) SELECT idgen_next_at(now() - random() * interval '$span'), g FROM generate_series(1, 5) g RETURNING id", 0);
	}
	if ($r < 0.7)
	{
		my $at = sprintf(q{'2026-05-01 12:00:00+00'::timestamptz + interval '%d ms'}, $sweep);
		return ('at_insert', 5,
			"INSERT INTO tb (id, c) SELECT idgen_next_at($at), g FROM generate_series(1, 5) g RETURNING id", 1);
	}
	my $at = sprintf(q{'2026-06-01 12:00:00+00'::timestamptz + interval '%d ms'}, int(rand(40)));
	return ('at_insert', 50,
		"INSERT INTO tb (id, c) SELECT i, -2 FROM idgen_next_at_n($at, 50) AS i RETURNING id", 0);
}

# $block: the size of every block (else 20, among singles and inserts),
# 'insert' for inserts alone, or 'backfill' or 'backfill_resumed' for a
# backfill client.  $as: the database and role, postgres's by default.
sub client
{
	my ($node, $name, $file, $until, $seed, $block, $as) = @_;
	my ($db, $user) = @{ $as // [ 'postgres', undef ] };
	my $inserts = ($block // '') eq 'insert';
	my $backfill = ($block // '') =~ /^backfill/;
	# a job that resumes a second later, rather than from its start
	my $resumes = ($block // '') eq 'backfill_resumed';
	$block = undef if $backfill || $inserts;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	return $pid if $pid;

	srand($seed);
	open my $out, '>>', $file or POSIX::_exit(2);
	$out->autoflush(1);
	my $attempted = 0;
	my $sweep = 0;    # the backfill import's next millisecond
	while (time < $until)
	{
		my $r = $inserts ? 1 : $block ? 0.5 : rand();
		$block //= 20;
		my ($kind, $n, $sql, $sweeping) =
		    $backfill ? backfill_sql($sweep)
		  : $r < 0.4 ? ('single', 1, 'SELECT idgen_next()')
		  : $r < 0.7 ? ('block', $block, "SELECT idgen_next_n($block)")
		  :   ('insert', 5,
			'INSERT INTO t (c) SELECT g FROM generate_series(1, 5) g RETURNING id');
		$attempted += $n;
		my ($stdout, $stderr) = ('', '');
		my $ok = eval {
			IPC::Run::run(
				[
					'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1',
					'-h', $node->host, '-p', $node->port, '-d', $db,
					defined $user ? ('-U', $user) : (), '-c', $sql
				],
				'<', \undef, '>', \$stdout, '2>', \$stderr,
				IPC::Run::timeout(5));
		};
		$sweep = $ok ? $sweep + 1 : $resumes ? $sweep + 1000 : 0 if $sweeping;
		if ($ok)
		{
			my $at = sprintf('%.3f', time);
			print $out "ack $name $kind $at $_\n" for grep { /^\d+$/ } split /\n/, $stdout;
		}
		# an ID the server minted again, refused by the table's key: a
		# duplicate the client was not given, counted all the same
		elsif (defined(my $id = refused_id($stderr)))
		{
			printf $out "refused %s %s %.3f %s\n", $name, $kind, time, $id;
		}
		usleep(20_000);
	}
	print $out "attempted $name $attempted\n";
	close $out;
	POSIX::_exit(0);
}

# ---------------------------------------------------------------------------
# Servers and their clocks.

my $registry;
my $standby;    # streaming from the first server, until promoted
my %clock;    # node name -> its clock file
my %relay;    # node name -> its way to the registry (a Partition)

# Stop the relays (a clone or a standby shares its origin's) and forget
# them: at the end of each run, and of a run that dies, since they are this
# process's children.
sub stop_relays
{
	my %relays = map { ($_ => $_) } values %relay;
	$_->stop for values %relays;
	%relay = ();
	return;
}
my $harness = $$;
END
{
	local $?;    # the test's exit status, which waitpid would change
	stop_relays() if $$ == $harness;
}

sub start_server
{
	my ($node) = @_;
	my $lock = $node->data_dir . '/postmaster.pid';
	# after a SIGKILL the old children may still hold the shared memory
	foreach (1 .. 50)
	{
		if (open my $fh, '<', $lock)
		{
			my $pid = <$fh> // '';
			close $fh;
			chomp $pid;
			# what a reboot would leave: a lock file naming no process
			unlink $lock if $pid =~ /^\d+$/ && pid_gone($pid);
		}
		$node->{_pid} = undef;
		return 1 if start_with_clock($node, $clock{ $node->name }, fail_ok => 1);
		usleep(200_000);
	}
	return 0;
}

sub new_server
{
	my ($name, $pool) = @_;
	$relay{$name} = Partition->start($registry->host, $registry->port);
	my $node = idgen_node($name, allows_streaming => 1,
		conf => server_conf($pool, $relay{$name}));
	$clock{$name} = "$work/clock_$name";
	set_clock_offset($clock{$name}, 0);
	start_server($node) or die "$name did not start";
	return $node;
}

sub server_conf
{
	my ($pool, $relay) = @_;
	my $conninfo = 'host=127.0.0.1 port=' . $relay->port . ' dbname=postgres';
	return <<"EOC";
idgen.lease_registry = '$conninfo'
idgen.shard_pool = '$pool'
idgen.backfill_shards = '200-201'
idgen.lease_duration = '${lease_s}s'
idgen.max_wait = '1s'
EOC
}

# The lanes server: no registry, a shard of its own, four lanes.
my %lanes;    # node name -> 1 for the lanes server

sub new_lanes_server
{
	my ($name) = @_;
	my $node = idgen_node($name, allows_streaming => 1, conf => <<"EOC");
idgen.shard_id = 30
idgen.backfill_shards = '100-103'
idgen.max_wait = '1s'
EOC
	$clock{$name} = "$work/clock_$name";
	$lanes{$name} = 1;
	set_clock_offset($clock{$name}, 0);
	start_server($node) or die "$name did not start";
	return $node;
}

# What the guide tells an operator whose lanes lost their file: raise each
# lane past the largest of its IDs the tables hold (every acknowledged
# backfilled ID is a committed row here), then attest.
sub attest_lanes
{
	my ($node) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', <<'EOS', timeout => 10);
SELECT idgen_advance_past(max(id)) FROM tb
 WHERE id_to_shard(id) BETWEEN 100 AND 103 OR id_to_shard(id) BETWEEN 200 AND 201
 GROUP BY id_to_shard(id);
SELECT idgen_lanes_init();
EOS
	event($ret == 0 ? $node->name . ': lanes attested' : $node->name . ": lanes not attested: $err");
	return;
}

# ---------------------------------------------------------------------------
# The nemesis.

my @log;    # [time, text]

sub event
{
	my ($text) = @_;
	push @log, [ time, $text ];
	note sprintf('nemesis %.1f: %s', time - $log[0][0], $text);
	return;
}

sub later
{
	my ($pending, $delay, $what, $code) = @_;
	push @$pending, [ time + $delay, $what, $code ];
	return;
}

# A server in the midst of a fault (frozen, its clock moved, starting
# again) takes no other fault until it is over: a frozen server would hang
# a base backup or a copy, and two writers would race on one clock file.
my %busy;

my %lasts = (
	kill9 => 1.5, kill9_worker => 1.5, freeze => $lease_s + 1.5, step_ahead => 3.5,
	step_behind => 3.5, strobe => 2.5, down_hour_back => 3.5,
	registry_kill => 1.5, registry_freeze => 2.5,
	partition => $lease_s + 2.5, partition_reset => $lease_s + 2.5,
	restore => 0);    # over when it returns, as a clone is

sub run_fault
{
	my ($fault, $node, @rest) = @_;
	my @parts = split /\+/, $fault;
	my @targets = map { /^registry_/ ? 'registry' : $node->name } @parts;
	foreach my $target (@targets)
	{
		return event("$fault of $target skipped: it is in the midst of another fault")
		  if ($busy{$target} // 0) > time;
	}
	event("several faults at once on " . $node->name . ": $fault") if @parts > 1;
	foreach my $i (0 .. $#parts)
	{
		my $end = time + ($lasts{ $parts[$i] } // 0);
		$busy{ $targets[$i] } = $end if $end > ($busy{ $targets[$i] } // 0);
		run_one_fault($parts[$i], $node, @rest);
	}
	return;
}

# Of the run: servers killed, their children killed with them, and those
# that ran on right after the kill.
my %kills;

sub killed
{
	my ($what, $children, $survived) = @_;
	return event("$what: it is down") unless defined $children;
	$kills{servers}++;
	$kills{children} += $children;
	$kills{survived} += $survived;
	event("$what: the postmaster and its $children children at once"
		  . ($survived ? ", $survived of them running on" : ''));
	return;
}

sub run_one_fault
{
	my ($fault, $node, $servers, $pending, $clients, $until, $seed) = @_;
	my $name = $node->name;
	if ($fault eq 'kill9')
	{
		killed("kill -9 of $name", kill_server($node));
		later($pending, 1, "$name started again", sub { start_server($node) });
	}
	elsif ($fault eq 'kill9_worker')
	{
		my (undef, @children) = postmaster_pids($node);
		return event("kill -9 of a process of $name: it is down") unless @children;
		my $victim = $children[ int(rand(@children)) ];
		my $what = command_of($victim);
		event("kill -9 of $name\'s process $victim ($what)");
		kill('KILL', $victim);
		# restart_after_crash is off: the postmaster went down with it
		later($pending, 1, "$name started again after its process was killed",
			sub { start_server($node) unless postmaster_pids($node) });
	}
	elsif ($fault eq 'freeze')
	{
		my @pids = postmaster_pids($node);
		return event("freeze of $name: it is down") unless @pids;
		event("SIGSTOP of $name, past its lease");
		signal_all('STOP', @pids);
		later($pending, $lease_s + 1, "SIGCONT of $name",
			sub { signal_all('CONT', @pids) });
	}
	elsif ($fault eq 'step_ahead' || $fault eq 'step_behind')
	{
		my $step = $fault eq 'step_ahead' ? 5 : -5;
		event("$name\'s clock steps ${step} s");
		set_clock_offset($clock{$name}, $step);
		later($pending, 3, "$name\'s clock set right",
			sub { set_clock_offset($clock{$name}, 0) });
	}
	elsif ($fault eq 'strobe')
	{
		event("$name\'s clock strobes 200 ms either way every 10 ms, for 2 s");
		my $pid = fork();
		die "fork: $!" unless defined $pid;
		if ($pid == 0)
		{
			local $SIG{__DIE__};
			my $end = time + 2;
			my $sign = 1;
			while (time < $end)
			{
				set_clock_offset($clock{$name}, 0.2 * $sign);
				$sign = -$sign;
				usleep(10_000);
			}
			set_clock_offset($clock{$name}, 0);
			POSIX::_exit(0);
		}
		# it ends by itself, and is reaped at the end
	}
	elsif ($fault eq 'down_hour_back')
	{
		event("$name stopped, its clock an hour back, started");
		$node->stop('immediate', fail_ok => 1);
		set_clock_offset($clock{$name}, -3600);
		start_server($node);
		later($pending, 3, "$name\'s clock set right",
			sub { set_clock_offset($clock{$name}, 0) });
	}
	elsif ($fault eq 'partition' || $fault eq 'partition_reset')
	{
		my $relay = $relay{$name};
		return event("$fault of $name skipped: it has no registry") unless $relay;
		my @behind = sort grep { $relay{$_} == $relay } keys %relay;
		event("$name cut off from the registry, past its lease (@behind)");
		$relay->cut;
		my $reset = $fault eq 'partition_reset';
		later($pending, $lease_s + 2,
			$reset
			? "$name\'s partition healed, its connections reset"
			: "$name\'s partition healed, what waited let through",
			sub { $relay->heal(reset => $reset) });
	}
	elsif ($fault eq 'registry_kill')
	{
		killed('kill -9 of the registry', kill_server($registry));
		later($pending, 1, 'the registry started again', sub { start_server($registry) });
	}
	elsif ($fault eq 'registry_freeze')
	{
		my @pids = postmaster_pids($registry);
		return event('freeze of the registry: it is down') unless @pids;
		event('SIGSTOP of the registry for 2 s');
		signal_all('STOP', @pids);
		later($pending, 2, 'SIGCONT of the registry',
			sub { signal_all('CONT', @pids) });
	}
	elsif ($fault eq 'no_state_file' && $name !~ /^(clone|standby)_/)
	{
		event("$name stopped, its idgen.state and idgen.lanes removed, started");
		$node->stop('immediate', fail_ok => 1);
		unlink($node->data_dir . '/idgen.state', $node->data_dir . '/idgen.lanes');
		start_server($node);
		later($pending, 1, "$name\'s lanes raised past the table's lane IDs, attested",
			sub { attest_lanes($node) });
	}
	elsif ($fault eq 'no_state_file')
	{
		event("$name stopped, its idgen.state removed, started");
		$node->stop('immediate', fail_ok => 1);
		unlink($node->data_dir . '/idgen.state');
		start_server($node);
	}
	elsif ($fault eq 'clone')
	{
		return event("clone of $name: it is down") unless postmaster_pids($node);
		my $backup = "clone_$seed";
		my $ok = eval { $node->backup($backup); 1 };
		return event("clone of $name: the base backup failed") unless $ok;
		my $clone = PostgreSQL::Test::Cluster->new("clone_${name}");
		$clone->init_from_backup($node, $backup, standby => 0);
		# without a registry, another live shard, as the guide says; the
		# same lanes, which must refuse
		$clone->append_conf('postgresql.conf', 'idgen.shard_id = 31') if $lanes{$name};
		$clock{ $clone->name } = "$work/clock_" . $clone->name;
		$relay{ $clone->name } = $relay{$name} if $relay{$name};    # its settings
		set_clock_offset($clock{ $clone->name }, 0);
		event("a clone of $name started from a base backup, with its settings");
		start_server($clone);
		push @$servers, $clone;
		push @$clients,
		  client($clone, $clone->name . '/1',
			"$work/ack_${seed}_" . $clone->name . '_1', $until, $seed * 1000 + 99,
			$lanes{$name} ? 'backfill' : undef);
	}
	elsif ($fault eq 'promote')
	{
		my $sb = $standby;
		return event('promotion: the standby is down') unless $sb && postmaster_pids($sb);
		event($sb->name . ', a standby of ' . $servers->[0]->name
			  . ', promoted while its primary runs');
		my $ok = eval { $sb->promote; 1 };
		return event('promotion failed: ' . ($@ // '')) unless $ok;
		$standby = undef;
		push @$servers, $sb;
		push @$clients,
		  client($sb, $sb->name . '/1', "$work/ack_${seed}_" . $sb->name . '_1',
			$until, $seed * 1000 + 98);
		later($pending, 6, $sb->name . ', promoted, stopped',
			sub { $sb->stop('fast', fail_ok => 1) });
	}
	elsif ($fault eq 'restore')
	{
		restore($node, $servers, $clients, $until, $seed);
	}
	elsif ($fault eq 'explicit_ahead')
	{
		# a server that is down or holds no shard: nothing to copy
		my ($ret, $stdout) = $node->psql('postgres', <<'EOS', timeout => 10);
INSERT INTO t (id, c)
SELECT min_id_at(clock_timestamp() + interval '2 s') + (s.shard::bigint << 10) + g, -1
  FROM idgen_stats AS s, generate_series(0, 99) AS g
 WHERE s.shard IS NOT NULL
RETURNING id;
SELECT idgen_advance_past(max(id)) FROM t;
EOS
		if ($ret == 0)
		{
			my @ids = grep { /^\d+$/ } split /\n/, $stdout;
			open my $fh, '>>', "$work/explicit_$seed" or die;
			print $fh "explicit $name copy " . sprintf('%.3f', time) . " $_\n" for @ids;
			close $fh;
			event("rows with " . scalar(@ids) . " explicit IDs of $name\'s shard copied in 2 s ahead, then idgen_advance_past");
		}
		else
		{
			event("explicit IDs on $name: not copied (the server is down or holds no shard)");
		}
	}
	return;
}

# A restore, as the header says: dumped from one server, restored by app
# into another's database, decoded there, minted into.
my %restored;    # node name -> the databases restored into it
my @restore_errors;    # what a restore printed or failed at
my %decoded;    # restored IDs decoded on their new server: all, wrong

# app inserts 5 rows into a restored t, acknowledged as its client's, in
# up to $tries tries half a second apart (the server may be between two
# leases); the error of the last try, if none succeeded.
sub app_mints
{
	my ($node, $db, $seed, $tries) = @_;
	my $client = $node->name . ":$db/app";
	foreach my $try (1 .. $tries)
	{
		my ($ret, $stdout, $stderr) = $node->psql($db,
			'INSERT INTO t (c) SELECT -4 FROM generate_series(1, 5) RETURNING id',
			extra_params => [ '-U', 'app' ], timeout => 30);
		acknowledge("$work/ack_${seed}_" . $node->name . ":${db}_app", $client, 5,
			$stdout, $stderr);
		return undef if $ret == 0 || defined refused_id($stderr);
		return (split /\n/, $stderr)[0] if $try == $tries;
		usleep(500_000);
	}
}

sub restore
{
	my ($source, $servers, $clients, $until, $seed) = @_;
	my $from = $source->name;
	return event("restore from $from: it is down") unless postmaster_pids($source);
	# the next pool server after the source that is up and in no fault
	my @pool = grep { $_->name =~ /^s\d+_\d+$/ } @$servers;
	my ($i) = grep { $pool[$_]->name eq $from } 0 .. $#pool;
	@pool = (@pool[ ($i // -1) + 1 .. $#pool ], @pool[ 0 .. ($i // -1) ]);
	my ($target) = grep {
		$_->name ne $from && postmaster_pids($_) && ($busy{ $_->name } // 0) <= time
	} @pool;
	return event("restore from $from: no other pool server is up") unless $target;
	my $to = $target->name;
	my $db = 'restore' . (1 + sum(0, map { scalar @$_ } values %restored));
	my $dump = "$work/${db}_$seed.dump";
	my $what = "restore of $from\'s postgres into $to\'s $db";
	my $began = time;

	# rows minted now, whatever the clients got in: counted as theirs are
	my ($ret, $stdout, $stderr) = $source->psql('postgres',
		'INSERT INTO t (c) SELECT -3 FROM generate_series(1, 100) RETURNING id', timeout => 30);
	acknowledge("$work/ack_${seed}_${from}_fill", "$from/fill", 100, $stdout, $stderr);
	event("$from minted 100 rows into t, before the dump: "
		  . ($ret == 0 ? 'done' : (split /\n/, $stderr)[0]));
	($ret, $stdout, $stderr) = command('pg_dump', '-Fc', '-h', $source->host,
		'-p', $source->port, '-d', 'postgres', '-f', $dump);
	if ($ret != 0 || $stderr ne '')
	{
		push @restore_errors, "pg_dump of $from exited $ret: $stderr";
		return event("$what: pg_dump exited $ret");
	}
	($ret, $stdout, $stderr) = $target->psql('postgres', <<"EOS", timeout => 30);
SELECT 'CREATE ROLE app LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'app') \\gexec
CREATE DATABASE $db OWNER app;
EOS
	($ret, $stdout, $stderr) = $target->psql($db, 'CREATE EXTENSION idgen', timeout => 30)
	  if $ret == 0;
	if ($ret != 0)
	{
		push @restore_errors, "$to: the database $db and its extension: $stderr";
		return event("$what: $db not created");
	}
	push @{ $restored{$to} }, $db;
	($ret, $stdout, $stderr) = command('pg_restore', '--no-owner', '-h', $target->host,
		'-p', $target->port, '-U', 'app', '-d', $db, $dump);
	push @restore_errors, "pg_restore into $to\'s $db as app exited $ret: $stderr"
	  if $ret != 0 || $stderr ne '';
	event(sprintf("%s by app, pg_restore --no-owner (%.1f s in): exit %d", $what, time - $began, $ret)
		  . ($stderr eq '' ? '' : ', ' . (split /\n/, $stderr)[0]));

	# each restored ID decoded on the target, then on the source
	my $decode = q{SELECT id, id_to_timestamp(id) AT TIME ZONE 'UTC', id_to_shard(id), id_to_sequence(id)};
	my ($tret, $there, $terr) = $target->psql($db,
		"$decode FROM (SELECT id FROM t UNION ALL SELECT id FROM tb) AS r ORDER BY id",
		extra_params => [ '-U', 'app' ], timeout => 30);
	if ($tret != 0)
	{
		push @restore_errors, "$to\'s $db did not decode its restored IDs: $terr";
	}
	else
	{
		my @there = split /\n/, $there;
		my @ids = map { (split /\|/)[0] } @there;
		my ($sret, $here, $serr) = $source->psql('postgres',
			"$decode FROM unnest('{" . join(',', @ids) . "}'::bigint[]) AS r(id) ORDER BY id",
			timeout => 30);
		my @here = split /\n/, $here;
		if ($sret != 0 || @here != @there)
		{
			push @restore_errors, "$from did not decode the IDs restored from it: $serr";
		}
		else
		{
			my @wrong = grep { $here[$_] ne $there[$_] } 0 .. $#there;
			$decoded{all} += @there;
			$decoded{wrong} += @wrong;
			diag "$what: $from decodes $here[$_], $to decodes $there[$_]"
			  for @wrong[ 0 .. ($#wrong < 4 ? $#wrong : 4) ];
			event("$what: " . scalar(@there) . ' restored IDs decoded, '
				  . scalar(@wrong) . " otherwise than on $from");
		}
	}

	# app mints into the restored table now, then for the rest of the run
	$stderr = app_mints($target, $db, $seed, 5);
	event(sprintf('%s: %.1f s; app mints into it, INSERT into the restored t: %s',
		$what, time - $began, $stderr // 'done'));
	push @$clients,
	  client($target, "$to:$db/app", "$work/ack_${seed}_$to:${db}_app", $until,
		$seed * 1000 + 97, 'insert', [ $db, 'app' ]);
	return;
}

# ---------------------------------------------------------------------------
# One run.

sub run_seed
{
	my ($seed) = @_;
	my @events = schedule($seed);
	%kills = (servers => 0, children => 0, survived => 0);
	%restored = ();
	@restore_errors = ();
	%decoded = (all => 0, wrong => 0);
	note "seed $seed, $seconds s, $nservers servers; the schedule:";
	note sprintf('  %5.1f s  %-16s server %d', @$_) for @events;

	$registry = PostgreSQL::Test::Cluster->new("registry_$seed");
	# the registry keeps the real clock: a file no one moves
	$clock{ $registry->name } = "$work/clock_" . $registry->name;
	set_clock_offset($clock{ $registry->name }, 0);
	$registry->init;
	$registry->append_conf('postgresql.conf', 'synchronous_commit = off')
	  if $seed % 2 == 0;
	$registry->start;

	# a shard for each server and none to spare: a clone or a promoted
	# standby mints only once it takes a lease another server let lapse
	my $pool = '10-' . (10 + $nservers - 1);
	my @servers = map { new_server("s${_}_$seed", $pool) } 1 .. $nservers;
	push @servers, new_lanes_server("b_$seed");
	# backfilled rows go to a table without a key: a duplicate is committed
	# and counted, not refused by an index
	foreach my $node (@servers)
	{
		$node->safe_psql('postgres',
			'CREATE EXTENSION idgen; CREATE TABLE t (id bigint PRIMARY KEY DEFAULT idgen_next(), c int); '
			  . 'CREATE TABLE tb (id bigint, c int); SELECT idgen_lanes_init()');
	}

	# a streaming standby of the first server, with its settings
	$servers[0]->backup("standby_$seed");
	$standby = PostgreSQL::Test::Cluster->new("standby_$seed");
	$standby->init_from_backup($servers[0], "standby_$seed", has_streaming => 1);
	$clock{ $standby->name } = "$work/clock_" . $standby->name;
	$relay{ $standby->name } = $relay{ $servers[0]->name };    # its settings
	set_clock_offset($clock{ $standby->name }, 0);
	start_server($standby) or die 'the standby did not start';

	my $start = time;
	my $until = $start + $seconds;
	@log = ([ $start, "seed $seed: the clients start" ]);
	my @clients;
	foreach my $i (0 .. $#servers)
	{
		my $name = $servers[$i]->name;
		# the lanes server's second client backfills; each pool server's
		# third, on the two lanes they take turns at through the registry
		foreach my $c ($lanes{$name} ? (1, 2) : (1, 2, 3))
		{
			push @clients,
			  client($servers[$i], "$name/$c", "$work/ack_${seed}_${name}_$c",
				$until, $seed * 1000 + $i * 10 + $c,
				$lanes{$name} && $c == 2 ? 'backfill' : $c == 3 ? 'backfill_resumed' : undef);
		}
	}

	my @pending;
	my @todo = @events;
	while (time < $until || @pending)
	{
		# due and not due by one reading of the clock: an event falling due
		# between two readings was dropped, and a server stayed frozen
		my $now = time;
		my @due = grep { $_->[0] <= $now } @pending;
		@pending = grep { $_->[0] > $now } @pending;
		foreach my $p (@due)
		{
			event($p->[1]);
			$p->[2]->();
		}
		# one fault a turn: when faults fell behind (a base backup, a
		# restore), what is due meanwhile (a SIGCONT, a restart) goes first
		if (@todo && $start + $todo[0][0] <= time)
		{
			my $e = shift @todo;
			run_fault($e->[1], $servers[ $e->[2] ], \@servers, \@pending,
				\@clients, $until, $seed);
		}
		usleep(50_000);
	}
	waitpid($_, 0) for @clients;
	1 while waitpid(-1, POSIX::WNOHANG()) > 0;    # the strobes

	# every server back, its clock right, before the rows are counted
	foreach my $node (@servers)
	{
		set_clock_offset($clock{ $node->name }, 0);
		signal_all('CONT', postmaster_pids($node));
		start_server($node) unless postmaster_pids($node);
	}

	# app mints into each restored database again now that every server
	# and the registry are back: the faults may have left it no shard to
	# mint with during the run.  The pool has a shard for each pool server,
	# none for a clone of one or a standby promoted, either of which may
	# hold the restore's server's shard: they stop meanwhile (their leases
	# given back) and start again for their rows to be counted.
	my @clones = grep { $_->name =~ /^(?:clone_s\d+|standby)_/ } @servers;
	$_->stop('fast', fail_ok => 1) for @clones;
	foreach my $node (@servers)
	{
		foreach my $db (@{ $restored{ $node->name } // [] })
		{
			my $err = app_mints($node, $db, $seed, 20);
			push @restore_errors, 'app could not mint into ' . $node->name . "\'s $db: $err"
			  if defined $err;
		}
	}
	start_server($_) for @clones;

	my @files = (glob("$work/ack_${seed}_*"), "$work/explicit_$seed");
	my $all = check($seed, \@servers, \@log, \%restored, @files);
	cmp_ok($all->{acked}, '>', 1000, "seed $seed: the clients were given IDs ($all->{acked})");
	cmp_ok($all->{backfilled} // 0, '>', 500,
		"seed $seed: the backfill clients were given IDs for their times (" . ($all->{backfilled} // 0) . ')');
	cmp_ok($all->{leased_backfilled} // 0, '>', 100,
		"seed $seed: on the pool servers' leased lanes too (" . ($all->{leased_backfilled} // 0) . ')');
	is($all->{dups}, 0, "seed $seed: no ID was given twice");
	is($all->{lost}, 0, "seed $seed: no acknowledged INSERT was lost");
	is($kills{survived}, 0,
		"seed $seed: each server killed went down whole: no child of its postmaster ran on "
		  . "($kills{servers} kills, $kills{children} children killed)");
	SKIP:
	{
		my $restores = sum(map { scalar @$_ } values %restored) // 0;
		skip "seed $seed drew no restore", 3
		  unless $restores || @restore_errors;
		is(join("\n", @restore_errors), '',
			"seed $seed: every restore by its database's owner exited 0 and printed nothing ($restores)");
		ok($decoded{all} > 0 && $decoded{wrong} == 0,
			"seed $seed: every restored ID decodes on its new server as on its source "
			  . "($decoded{all} IDs, $decoded{wrong} otherwise)");
		cmp_ok($all->{restore_acked} // 0, '>', 0,
			"seed $seed: app minted into the restored tables ("
			  . ($all->{restore_acked} // 0) . ' IDs, counted with the others)');
	}
	$_->stop('immediate', fail_ok => 1) for @servers, $registry, grep { defined } $standby;
	foreach my $node (@servers, $registry, grep { defined } $standby)
	{
		my @left = orphans_of($node->name) or next;
		signal_all('CONT', @left);
		signal_all('KILL', @left);
	}
	$standby = undef;
	stop_relays();
	return;
}

run_seed($_) for @seeds;

# ---------------------------------------------------------------------------
# The checker's own test: one shard, two servers, no registry.

{
	my @pair = map {
		my $n = idgen_node("unsafe_$_", conf => "idgen.shard_id = 7\n");
		$n->start;
		$n->safe_psql('postgres',
			'CREATE EXTENSION idgen; CREATE TABLE t (id bigint PRIMARY KEY DEFAULT idgen_next(), c int)');
		$n;
	} 1, 2;
	@log = ([ time, 'two servers of shard 7, no registry' ]);
	# both generators raised to one millisecond 3 s ahead of the clock:
	# the first mints wait until the clock is within idgen.max_lead of it,
	# then both servers mint from there, so their first blocks are the same
	# IDs however late a loaded machine starts the clients
	my $common = $pair[0]->safe_psql('postgres',
		q{SELECT min_id_at(clock_timestamp() + interval '3 s')});
	$_->safe_psql('postgres', "SELECT idgen_advance_past($common)") for @pair;
	my $until = time + 6;
	my @clients = map {
		# blocks of 2,000 IDs, two milliseconds each, so that the two
		# servers' milliseconds meet often in 4 s
		client($pair[$_], $pair[$_]->name . '/1', "$work/ack_unsafe_$_", $until, 77 + $_, 2000)
	} 0, 1;
	waitpid($_, 0) for @clients;
	my $all = check('unsafe', \@pair, \@log, {}, glob("$work/ack_unsafe_*"));
	cmp_ok($all->{dups}, '>', 0,
		'the checker finds the duplicates of two servers sharing a shard without a registry');
	$_->stop for @pair;
}

done_testing();
