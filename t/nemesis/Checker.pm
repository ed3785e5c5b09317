
# Copyright (c) 2026, The idgen Authors
#
# The nemesis's checker, the way Jepsen's unique-ids checker counts: per
# server and in all, IDs attempted, acknowledged, duplicated, out of order
# within a client, and lost.  Its input: the clients' files of
# acknowledged IDs ("ack CLIENT KIND AT ID"; "refused CLIENT KIND AT ID"
# for an INSERT whose ID a key refused as one the table held; "attempted
# CLIENT N"), where a client is SERVER/N, and the rows each server's
# tables hold at the end.

package Checker;

use strict;
use warnings;

use Exporter 'import';
use Test::More;
use Time::HiRes qw(time);

our @EXPORT = qw(check refused_id acknowledge);

# The ID a statement's error says a primary key refused as one the table
# held, if that is its error.
sub refused_id
{
	my ($stderr) = @_;
	return $stderr =~ /duplicate key value violates unique constraint.*\n.*Key \(id\)=\((\d+)\)/
	  ? $1 : undef;
}

# An INSERT of $n rows RETURNING id, run once: the IDs it returned
# acknowledged in $file as a client's, a key's refusal noted.
sub acknowledge
{
	my ($file, $client, $n, $stdout, $stderr) = @_;
	open my $fh, '>>', $file or die "could not write $file: $!";
	printf $fh "ack %s insert %.3f %s\n", $client, time, $_
	  for grep { /^\d+$/ } split /\n/, $stdout;
	my $id = refused_id($stderr);
	printf $fh "refused %s insert %.3f %s\n", $client, time, $id if defined $id;
	print $fh "attempted $client $n\n";
	close $fh;
	return;
}

# check($seed, \@servers, \@log, \%restored, @files): the counts in all, as
# a hash reference; @log is the nemesis's events ([time, text]), printed
# around each duplicate; %restored names the databases restored into each
# server, whose tables t hold the acknowledged INSERTs of SERVER:DB.
sub check
{
	my ($seed, $servers, $log, $restored, @files) = @_;
	my (%first, %attempted, %acked, %backfilled, %dups, %disorder, %last, @dup_pairs);
	foreach my $file (@files)
	{
		next unless -f $file;
		open my $fh, '<', $file or die;
		while (<$fh>)
		{
			chomp;
			my @f = split / /;
			if ($f[0] eq 'attempted')
			{
				(my $server = $f[1]) =~ s{/.*}{};
				$attempted{$server} += $f[2];
				next;
			}
			my ($tag, $client, $kind, $at, $id) = @f;
			(my $server = $client) =~ s{/.*}{};
			if ($tag eq 'refused')
			{
				$dups{$server}++;
				push @dup_pairs,
				  [ $id, $first{$id} // 'a row the table held', "$client $kind at $at, refused by the key" ];
				next;
			}
			if ($tag eq 'ack')
			{
				$acked{$server}++;
				$backfilled{$server}++ if $kind =~ /^at_/;
			}
			# IDs for a given time come in the times' order, not the clock's
			if ($tag eq 'ack' && $kind !~ /^at_/)
			{
				$disorder{$server}++
				  if defined $last{$client} && $id <= $last{$client};
				$last{$client} = $id;
			}
			if (my $was = $first{$id})
			{
				$dups{$server}++;
				push @dup_pairs, [ $id, $was, "$client $kind at $at" ];
			}
			else
			{
				$first{$id} = "$client $kind at $at";
			}
		}
	}

	# lost: acknowledged INSERTs whose rows are gone, once every server is back
	my %lost;
	my %rows;
	foreach my $node (@$servers)
	{
		my ($ret, $out) = $node->psql('postgres',
			'SELECT id FROM t UNION ALL SELECT id FROM tb', timeout => 30);
		$rows{ $node->name } = { map { $_ => 1 } split /\n/, $out } if $ret == 0;
		foreach my $db (@{ $restored->{ $node->name } // [] })
		{
			($ret, $out) = $node->psql($db, 'SELECT id FROM t', timeout => 30);
			$rows{ $node->name . ":$db" } = { map { $_ => 1 } split /\n/, $out }
			  if $ret == 0;
		}
	}
	foreach my $file (@files)
	{
		next unless -f $file;
		open my $fh, '<', $file or die;
		while (<$fh>)
		{
			my ($tag, $client, $kind, undef, $id) = split / /;
			next unless $tag eq 'ack' && ($kind eq 'insert' || $kind eq 'at_insert');
			chomp $id;
			(my $server = $client) =~ s{/.*}{};
			$lost{$server}++ unless $rows{$server} && $rows{$server}{$id};
		}
	}

	my %all;
	diag sprintf('seed %s: %-18s %9s %12s %10s %12s %5s',
		$seed, 'server', 'attempted', 'acknowledged', 'duplicated',
		'out of order', 'lost');
	foreach my $s (sort keys %{ { %attempted, %acked } })
	{
		diag sprintf('seed %s: %-18s %9d %12d %10d %12d %5d',
			$seed, $s, $attempted{$s} // 0, $acked{$s} // 0, $dups{$s} // 0,
			$disorder{$s} // 0, $lost{$s} // 0);
		$all{attempted} += $attempted{$s} // 0;
		$all{acked} += $acked{$s} // 0;
		$all{dups} += $dups{$s} // 0;
		$all{disorder} += $disorder{$s} // 0;
		$all{lost} += $lost{$s} // 0;
		$all{backfilled} += $backfilled{$s} // 0;
		$all{leased_backfilled} += $backfilled{$s} // 0 if $s =~ /^s\d+_/;
		$all{restore_acked} += $acked{$s} // 0 if $s =~ /:restore\d+$/;
	}
	diag sprintf('seed %s: %-18s %9d %12d %10d %12d %5d',
		$seed, 'all', map { $all{$_} // 0 } qw(attempted acked dups disorder lost));
	foreach my $d (@dup_pairs[ 0 .. ($#dup_pairs < 4 ? $#dup_pairs : 4) ])
	{
		my ($id, $a, $b) = @$d;
		diag "seed $seed: duplicate $id: first $a, again $b";
		my ($ta) = "$a $b" =~ / at ([\d.]+)/;
		diag sprintf('  nemesis at %.1f: %s', $_->[0] - $ta, $_->[1])
		  for grep { abs($_->[0] - $ta) < 6 } @$log;
	}
	return \%all;
}

1;
