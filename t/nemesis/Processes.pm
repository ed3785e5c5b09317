
# Copyright (c) 2026, The idgen Authors
#
# A server's processes for the nemesis, from /proc (a minimal root has no
# ps): the postmaster and its children, the ones left of a server whose
# postmaster is gone, signals to them, a kill of the whole server; and a
# client program run with what it printed.

package Processes;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run;

our @EXPORT = qw(children_of postmaster_pids command_of orphans_of pid_gone
  runs_on kill_server signal_all command);

# The children of a process, from /proc (a minimal root has no ps).
sub children_of
{
	my ($pid) = @_;
	my @children;
	foreach my $stat (glob('/proc/[0-9]*/stat'))
	{
		open my $fh, '<', $stat or next;
		my $line = <$fh> // '';
		close $fh;
		# pid (comm) state ppid ...: comm may hold spaces
		push @children, $1 if $line =~ /^(\d+) \(.*\) \S+ (\d+) / && $2 == $pid;
	}
	return @children;
}

# The postmaster and its children.
sub postmaster_pids
{
	my ($node) = @_;
	my $pid = $node->{_pid};
	return () unless defined $pid && !pid_gone($pid);
	return ($pid, children_of($pid));
}

sub command_of
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/cmdline" or return '?';
	local $/;
	my $cmd = <$fh> // '';
	$cmd =~ s/\0/ /g;
	$cmd =~ s/\s+$//;
	return $cmd;
}

# Processes left of a server whose postmaster is gone (frozen when it was
# killed, say), by the cluster name in their titles: woken and killed at
# the end of a run, so that none outlives it.
sub orphans_of
{
	my ($name) = @_;
	my @pids;
	foreach my $cmdline (glob('/proc/[0-9]*/cmdline'))
	{
		my ($pid) = $cmdline =~ m{^/proc/(\d+)/};
		push @pids, $pid if command_of($pid) =~ /^postgres: \Q$name\E: /;
	}
	return @pids;
}

# Dead, or a zombie nobody reaps (an init that does not, as on some
# machines): either way no postmaster.
sub pid_gone
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return 1;
	my $line = <$fh> // '';
	return $line =~ /^\d+ \(.*\) Z /;
}

# Whether a process runs on: neither gone, nor exiting (PF_EXITING among
# its flags), nor with a SIGKILL pending, as a process sent one has from
# the kill() on until it begins to exit.
sub runs_on
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return 0;
	my $line = <$fh> // '';
	close $fh;
	# pid (comm) state ppid pgrp session tty_nr tpgid flags ...
	my ($state, $flags) = $line =~ /^\d+ \(.*\) (\S) (?:\S+ ){5}(\d+) / or return 0;
	return 0 if $state eq 'Z' || $state eq 'X' || ($flags & 0x4);
	open $fh, '<', "/proc/$pid/status" or return 0;
	my %status = map { /^(\w+):\s*(\S*)/ ? ($1 => $2) : () } <$fh>;
	close $fh;
	my $pending = hex($status{SigPnd} // 0) | hex($status{ShdPnd} // 0);
	return !($pending & (1 << (9 - 1)));    # bit n - 1 is signal n
}

# A crash of the whole server: SIGKILL to the postmaster and to every child
# of it at once.  Each child of a postmaster leads a session of its own
# (setsid()), so no process group holds them all: the postmaster named by
# postmaster.pid is stopped first, so that it forks no child between the
# reading of its children and the kill, then all are killed.  (The
# framework's kill9 kills the postmaster alone, and its children run on
# until they notice, a backend until its statement ends.)  Returns how many
# children were killed and how many of them run on right after the kill,
# which must be none; nothing when the server is down.
sub kill_server
{
	my ($node) = @_;
	my ($killed, $survived);
	my $pid = '';
	if (open my $fh, '<', $node->data_dir . '/postmaster.pid')
	{
		$pid = <$fh> // '';
		close $fh;
		chomp $pid;
	}
	# a lock file left by an earlier kill may name another process by now
	my $data_dir = $node->data_dir;
	if ($pid =~ /^\d+$/ && !pid_gone($pid)
		&& command_of($pid) =~ /\s-D\s+"?\Q$data_dir\E"?(\s|$)/)
	{
		kill('STOP', $pid);
		my @children = children_of($pid);
		kill('KILL', $pid, @children);
		$killed = scalar(@children);
		$survived = scalar(grep { runs_on($_) } @children);
	}
	# what PostgreSQL::Test::Cluster takes for a node it stopped
	$node->{_pid} = undef;
	return ($killed, $survived);
}


sub signal_all
{
	my ($sig, @pids) = @_;
	kill($sig, @pids) if @pids;
	return;
}

# Run a command (a client program), within 60 s: its exit status (1 for a
# timeout), stdout and stderr.
sub command
{
	my (@cmd) = @_;
	my ($stdout, $stderr) = ('', '');
	my $ok = eval {
		IPC::Run::run(\@cmd, '<', \undef, '>', \$stdout, '2>', \$stderr,
			IPC::Run::timeout(60));
	};
	$stderr .= $@ if $@;
	return ($ok ? 0 : ($? >> 8) || 1, $stdout, $stderr);
}

1;
