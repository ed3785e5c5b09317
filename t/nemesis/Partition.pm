
# Copyright (c) 2026, The idgen Authors
#
# A network partition between one server and the lease registry: every
# server reaches the registry through a relay of its own (a forked process
# on a loopback TCP port), which the nemesis can cut and heal.
#
# A cut is a partition as TCP sees one: nothing moves either way, and no
# side is told.  Bytes already sent wait in the sockets, a registry session
# holding a row lock keeps it, and new connections are accepted but go
# nowhere.  A heal either lets it all through (a short partition: the
# connections survived) or resets every connection first (a long one: TCP
# gave up on both ends).

package Partition;

use strict;
use warnings;

use IO::Select;
use IO::Socket::INET;
use IO::Socket::UNIX;
use POSIX ();

# A relay to the server at host (a socket directory or an address) and port.
sub start
{
	my ($class, $host, $port) = @_;
	my $listen = IO::Socket::INET->new(
		LocalAddr => '127.0.0.1',
		LocalPort => 0,
		Listen    => 64,
		ReuseAddr => 1) or die "relay: could not listen: $!";
	my $self = bless { port => $listen->sockport }, $class;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		local $SIG{__DIE__};
		relay($listen, $host, $port);
		POSIX::_exit(0);
	}
	close $listen;
	$self->{pid} = $pid;
	return $self;
}

sub port { return $_[0]{port} }
sub cut  { kill('USR1', $_[0]{pid}); return }

# Heal, letting through what waited, or resetting every connection first.
sub heal
{
	my ($self, %params) = @_;
	kill($params{reset} ? 'HUP' : 'USR2', $self->{pid});
	return;
}

sub stop
{
	my ($self) = @_;
	kill('KILL', $self->{pid});
	waitpid($self->{pid}, 0);
	return;
}

sub upstream
{
	my ($host, $port) = @_;
	return $host =~ m{^/}
	  ? IO::Socket::UNIX->new(Peer => "$host/.s.PGSQL.$port")
	  : IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port);
}

sub relay
{
	my ($listen, $host, $port) = @_;
	my ($cut, $reset) = (0, 0);
	local $SIG{USR1} = sub { $cut = 1 };
	local $SIG{USR2} = sub { $cut = 0 };
	local $SIG{HUP} = sub { $cut = 0; $reset = 1 };
	my %other;    # socket -> the socket at the other end
	my @held;     # accepted while cut, not yet connected upstream

	for (;;)
	{
		if ($reset)
		{
			close $_ for values %other, @held;
			%other = ();
			@held = ();
			$reset = 0;
		}
		if (!$cut)
		{
			foreach my $client (splice @held)
			{
				my $server = upstream($host, $port);
				if (!$server)
				{
					close $client;
					next;
				}
				$other{$client} = $server;
				$other{$server} = $client;
			}
		}
		my $select = IO::Select->new($listen, $cut ? () : values %other);
		foreach my $ready ($select->can_read(0.05))
		{
			if ($ready == $listen)
			{
				my $client = $listen->accept or next;
				push @held, $client;
				next;
			}
			next if $cut || !$other{$ready};
			my $to = $other{$ready};
			my $n = sysread($ready, my $buf, 65536);
			if (!$n || !defined syswrite($to, $buf))
			{
				delete @other{ $ready, $to };
				close $ready;
				close $to;
			}
		}
	}
}

1;
