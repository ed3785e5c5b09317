
# Copyright (c) 2026, The idgen Authors

=pod

=head1 NAME

IdgenTest - helpers shared by the idgen TAP tests (t/*.pl)

=head1 SYNOPSIS

  use FindBin;
  use lib $FindBin::RealBin;
  use IdgenTest;

=head1 DESCRIPTION

Everything below is exported.  The lease tests' registry and minting
servers are in IdgenLease.pm.

  @all_ids                every ID the test saw, in mint order (mint()
                          pushes onto it; tests push IDs they mint otherwise)
  idgen_node($name, conf => $text, own_system => 1, %init)
                          a new node, initdb'd with %init, idgen in
                          shared_preload_libraries and $text appended to
                          postgresql.conf; not started.  Nodes are copies
                          of one initdb (INITDB_TEMPLATE) and share its
                          system identifier, except with own_system
  mint($conn, $n, call => $sql, name => $test_name)
                          mint $n IDs in one statement on a node or a
                          background_psql session, check the count (one
                          test), keep them in @all_ids and return them;
                          call defaults to idgen_next(), name to
                          "minted $n IDs"
  mint_checked($conn, $condition, $test_name)
                          mint one ID (kept in @all_ids, and returned) and
                          test that the SQL $condition on it, named id, is
                          true
  check_ids(\@ids, $what, $any_order)
                          three tests (two with $any_order): no duplicate,
                          each ID larger than the one before, none negative
  stats($node)            idgen_stats as a hash reference, noted
  psql_fails($node, $sql, %params)
                          run $sql with VERBOSITY verbose (the SQLSTATE
                          shows); return (exit code, stderr)
  write_conf($file, $text)
                          replace a file's contents (an included conf file)
  start_logged($node)     start with fail_ok; return (whether it started,
                          what the server logged meanwhile)
  libfaketime()           libfaketime's path ($ENV{LIBFAKETIME} first); dies
                          if there is none, so call it early
  set_clock_offset($file, $seconds)
                          the fake clock: write the offset from the real
                          clock that libfaketime reads at every clock call
  start_with_clock($node, $file, %params)
                          start a node under libfaketime, its clock
                          following $file: every process's, the workers
                          started with the server included (a select()
                          shim, built on first use, is preloaded first)
  workers_follow_clock($node, $offset, $what, $slack)
                          one test per idgen worker running: its own
                          clock (the stamp of a line it logs) is within
                          $slack s (5) of the real one plus $offset
  misdecoded($node, $where, $epoch, $shard_bits, $sequence_bits, $shard [, $version])
                          "bad|all": of the rows of table items WHERE
                          $where, how many the decoders do not decode as
                          that layout says from the bits (and, given, as
                          that version of the history), and how many
  log_has($node, $offset, $regex)
                          wait up to 30 s for a line matching $regex in the
                          node's log after byte $offset; whether it came

=cut

package IdgenTest;

use strict;
use warnings;

use Exporter 'import';
use JSON::PP;
use Time::HiRes ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(
  @all_ids
  idgen_node
  mint
  mint_checked
  check_ids
  stats
  psql_fails
  write_conf
  start_logged
  libfaketime
  set_clock_offset
  workers_follow_clock
  start_with_clock
  max_id
  min_id
  log_has
  stamp_refuses
  stamp_of
  misdecoded
);

# scripts/test.sh initdb's one data directory for the whole run and names it
# in INITDB_TEMPLATE.  PostgreSQL::Test::Cluster copies it instead of running
# initdb from 17 on; for the older ones, the same copy, for the same plain
# initdb call only (no extra initdb arguments).
if (defined $ENV{INITDB_TEMPLATE}
	&& !grep { /INITDB_TEMPLATE/ } do
	{
		open my $fh, '<', $INC{'PostgreSQL/Test/Cluster.pm'} or die $!;
		<$fh>;
	})
{
	my $system_or_bail = \&PostgreSQL::Test::Utils::system_or_bail;
	no warnings 'redefine';
	*PostgreSQL::Test::Utils::system_or_bail = sub {
		my @cmd = @_;
		if (   @cmd == 6
			&& $cmd[0] eq 'initdb'
			&& "@cmd[1,3,4,5]" eq '-D -A trust -N')
		{
			@cmd = ('cp', '-RPp', $ENV{INITDB_TEMPLATE}, $cmd[2]);
		}
		return $system_or_bail->(@cmd);
	};
}

# Every ID this test saw, in the order they were minted.
our @all_ids;


sub idgen_node
{
	my ($name, %params) = @_;
	my $conf = delete $params{conf} // '';

	# Copies of the template share one system identifier: a node that
	# must be another cluster to idgen's state files gets its own initdb
	# (any initdb argument beyond the plain call asks for one).
	push @{ $params{extra} }, '--no-instructions'
	  if delete $params{own_system};
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%params);
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'idgen'\n$conf");
	return $node;
}

# Run one query on a node or a background_psql session.
sub query
{
	my ($conn, $sql) = @_;
	return $conn->isa('PostgreSQL::Test::BackgroundPsql')
	  ? $conn->query_safe($sql)
	  : $conn->safe_psql('postgres', $sql);
}

sub mint
{
	my ($conn, $n, %opts) = @_;
	my $call = $opts{call} // 'idgen_next()';
	my @ids  = split /,/,
	  query($conn,
		"SELECT string_agg(${call}::text, ',') FROM generate_series(1, $n)");
	is(scalar(@ids), $n, $opts{name} // "minted $n IDs");
	push @all_ids, @ids;
	return @ids;
}

sub mint_checked
{
	my ($conn, $condition, $test_name) = @_;
	my ($id, $ok) = split /\|/,
	  query($conn, "SELECT id, $condition FROM idgen_next() AS id");
	push @all_ids, $id;
	is($ok, 't', $test_name);
	return $id;
}

# IDs of different shards minted in one millisecond are not in order:
# $any_order skips the order check.
sub check_ids
{
	my ($ids, $what, $any_order) = @_;
	my ($bad_order, $negative, $dups) = (0, 0, 0);
	my %seen;
	for my $i (0 .. $#$ids)
	{
		$negative++ if $ids->[$i] < 0;
		$dups++ if $seen{ $ids->[$i] }++;
		$bad_order++ if $i > 0 && $ids->[$i] <= $ids->[ $i - 1 ];
	}
	is($dups,      0, "$what: no duplicate among " . scalar(@$ids) . " IDs");
	is($bad_order, 0, "$what: each ID larger than the one minted before")
	  unless $any_order;
	is($negative,  0, "$what: no negative ID");
	return;
}

# Every column of idgen_stats, by name: the view is the one list of them.
sub stats
{
	my ($node) = @_;
	my $row = $node->safe_psql('postgres',
		'SELECT row_to_json(s) FROM idgen_stats AS s');
	note "idgen_stats: $row";
	return JSON::PP->new->decode($row);
}

sub psql_fails
{
	my ($node, $sql, %params) = @_;
	my ($ret, $stdout, $stderr) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\n$sql", %params);
	return ($ret, $stderr);
}

sub write_conf
{
	my ($file, $text) = @_;
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh $text;
	close $fh;
	return;
}

sub start_logged
{
	my ($node)     = @_;
	my $log_offset = -s $node->logfile;
	my $started    = $node->start(fail_ok => 1);
	return ($started, slurp_file($node->logfile, $log_offset));
}

# libfaketime (Debian: apt-get install faketime); LIBFAKETIME overrides.
my $libfaketime;

sub libfaketime
{
	($libfaketime) = grep { defined && -f } $ENV{LIBFAKETIME},
	  glob('/usr/lib/*/faketime/libfaketime.so.1'),
	  '/usr/lib/faketime/libfaketime.so.1',
	  '/usr/local/lib/faketime/libfaketime.so.1'
	  unless defined $libfaketime;
	die
	  "this test needs libfaketime: apt-get install faketime, or set LIBFAKETIME"
	  unless defined $libfaketime;
	return $libfaketime;
}

# The offset goes to a temporary file renamed into place, so that the
# server never reads a half-written one; a temporary file of this
# process's own, since a strobe's child writes the same clock while the
# test moves it.
sub set_clock_offset
{
	my ($file, $seconds) = @_;
	my $tmp = "$file.tmp.$$";
	open my $fh, '>', $tmp or die "could not write $tmp: $!";
	printf $fh "%+.3f\n", $seconds;
	close $fh;
	rename($tmp, $file) or die "could not rename to $file: $!";
	return;
}

# libfaketime's select() runs the real one with its thread-local dont_fake
# flag set.  PostgreSQL 15's postmaster waits in select() and forks from its
# signal handlers, so every child it starts from one (the idgen workers,
# started when the startup process exits) inherits dont_fake = true and reads
# the real clock for good; only children forked from the main loop (client
# backends, a worker restarted later) are skewed.  This select(), preloaded
# before libfaketime, goes straight to the kernel and never sets the flag.
my $select_shim;

sub select_shim
{
	return $select_shim if defined $select_shim;
	my $dir = PostgreSQL::Test::Utils::tempdir();
	open my $fh, '>', "$dir/select_shim.c" or die "could not write: $!";
	print $fh <<'EOC';
#define _GNU_SOURCE
#include <stddef.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int
select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	struct timespec ts;

	if (tv)
	{
		ts.tv_sec = tv->tv_sec;
		ts.tv_nsec = tv->tv_usec * 1000;
	}
	return syscall(SYS_pselect6, nfds, r, w, e, tv ? &ts : NULL, NULL);
}
EOC
	close $fh;
	system('cc', '-shared', '-fPIC', '-O2', '-o', "$dir/select_shim.so",
		"$dir/select_shim.c") == 0
	  or die "could not build the select() shim for libfaketime";
	chmod 0755, $dir;
	$select_shim = "$dir/select_shim.so";
	return $select_shim;
}

# Each idgen worker's own clock: pg_log_backend_memory_contexts() makes it
# write a log line, stamped (log_line_prefix %m) by its own clock; the
# server parses the stamp.  The prefix differs by version ("%m [%p] %q%a "
# until 18, "%m %b[%p] " from 19): only %m first and [pid] are relied on.  One test per worker running: within $slack
# seconds of the real clock plus $offset.
sub workers_follow_clock
{
	my ($node, $offset, $what, $slack) = @_;
	$slack //= 5;
	my @workers = split /\n/,
	  $node->safe_psql('postgres',
		"SELECT pid || '|' || backend_type FROM pg_stat_activity "
		  . "WHERE backend_type IN ('idgen fence', 'idgen lease') ORDER BY backend_type");
	die "no idgen worker runs" unless @workers;
	foreach my $worker (@workers)
	{
		my ($pid, $type) = split /\|/, $worker;
		my $log_offset = -s $node->logfile;
		my $expected = Time::HiRes::time() + $offset;
		$node->safe_psql('postgres',
			"SELECT pg_log_backend_memory_contexts($pid)");
		my $stamp;
		foreach (1 .. 100)
		{
			($stamp) = slurp_file($node->logfile, $log_offset) =~
			  /^(\S+ \S+ \S+) .*?\[$pid\]\s.*?LOG:  logging memory contexts of PID $pid$/m;
			last if defined $stamp;
			Time::HiRes::usleep(100_000);
		}
		die "$type ($pid) logged no memory contexts" unless defined $stamp;
		my $logged = $node->safe_psql('postgres',
			"SELECT extract(epoch FROM '$stamp'::timestamptz)");
		my $off = $logged - $expected;
		ok(abs($off) < $slack,
			sprintf('%s: the %s worker follows the fake clock (%+.1f s off)',
				$what, $type, $off));
	}
	return;
}

sub start_with_clock
{
	my ($node, $file, %params) = @_;
	local $ENV{LD_PRELOAD} = select_shim() . ' ' . libfaketime();
	local $ENV{FAKETIME_TIMESTAMP_FILE}      = $file;
	local $ENV{FAKETIME_NO_CACHE}            = 1;
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = 1;
	local $ENV{NO_FAKE_STAT}                 = 1;
	delete local $ENV{FAKETIME};
	return $node->start(%params);
}

# The largest and the smallest of a list of IDs.
sub max_id
{
	my ($ids) = @_;
	my $max = $ids->[0];
	$_ > $max and $max = $_ foreach @$ids;
	return $max;
}

sub min_id
{
	my ($ids) = @_;
	my $min = $ids->[0];
	$_ < $min and $min = $_ foreach @$ids;
	return $min;
}

sub misdecoded
{
	my ($node, $where, $epoch, $shard_bits, $sequence_bits, $shard, $version) = @_;
	my $low = $shard_bits + $sequence_bits;
	my $of_version = defined $version ? "AND id_to_layout_version(id) = $version" : '';
	return $node->safe_psql(
		'postgres', qq{
SELECT count(*) FILTER (WHERE NOT (
		id_to_timestamp(id) = '$epoch'::timestamptz + (id >> $low) * interval '1 ms'
		AND id_to_shard(id) = (id >> $sequence_bits) & ((1 << $shard_bits) - 1)
		AND id_to_shard(id) = $shard
		AND id_to_sequence(id) = id & ((1 << $sequence_bits) - 1)
		$of_version
		AND (idgen_decode(id)).created_at = id_to_timestamp(id)
		AND (idgen_decode(id)).shard = id_to_shard(id)
		AND (idgen_decode(id)).sequence = id_to_sequence(id))),
	   count(*)
  FROM items WHERE $where});
}

# A statement in a database whose layout stamp is not the server's history
# (t/030, t/032): 55000, as every decoder and idgen_next() fail there.
# The extension's comment in a database: its description and stamp.
sub stamp_of
{
	my ($node, $db) = @_;
	return $node->safe_psql($db,
		q{SELECT obj_description(oid, 'pg_extension') FROM pg_extension WHERE extname = 'idgen'});
}

sub stamp_refuses
{
	my ($node, $db, $sql, $what) = @_;
	my ($ret, $stdout, $stderr) =
	  $node->psql($db, "\\set VERBOSITY verbose\n$sql");
	Test::More::like($stderr,
		qr/ERROR:  55000: this database's layout history does not match the server's/,
		"$what: refused with 55000");
	return $stderr;
}

# Whether the log, from offset on, gets a line matching re within seconds (30).
sub log_has
{
	my ($node, $offset, $re, $seconds) = @_;
	foreach (1 .. ($seconds // 30) * 10)
	{
		return 1 if slurp_file($node->logfile, $offset) =~ $re;
		Time::HiRes::usleep(100_000);
	}
	return 0;
}

1;
