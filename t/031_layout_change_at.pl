
# Copyright (c) 2026, The idgen Authors
#
# Nodes that share tables change their layout at one instant
# (idgen.layout_change_at), so that they get the same layout history and
# each decodes the others' IDs by the layout that minted them:
#
#  - two nodes mint under layout A; node 1 is restarted with layout B and
#    idgen.layout_change_at a few seconds ahead, while node 2 goes on
#    minting under A, then node 2 is restarted likewise before the
#    instant: each begins version 2 at that instant's ID, and their
#    histories are the same;
#  - IDs either node minted under A (node 2's after node 1 changed too)
#    or B decode alike on both;
#  - an instant before IDs a node may have minted refuses the start.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use POSIX qw(strftime);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $layout_b = "idgen.shard_bits = 13\nidgen.sequence_bits = 9\n"
  . "idgen.allow_layout_change = on\n";

my @nodes;
foreach my $i (1, 2)
{
	my $node = idgen_node("node$i",
		conf => "include_if_exists = 'idgen_layout.conf'\n");
	write_conf($node->data_dir . '/idgen_layout.conf', "idgen.shard_id = $i\n");
	$node->start;
	$node->safe_psql('postgres',
		'CREATE EXTENSION idgen; CREATE TABLE t (id bigint PRIMARY KEY DEFAULT idgen_next(), node int)'
	);
	push @nodes, $node;
}

sub insert_rows
{
	my ($node, $i, $n) = @_;
	return split /\n/,
	  $node->safe_psql('postgres',
		"INSERT INTO t (node) SELECT $i FROM generate_series(1, $n) RETURNING id");
}

my @old = map { [ insert_rows($nodes[$_ - 1], $_, 500) ] } (1, 2);

# The instant, 3 s ahead, on a second boundary.  Node 1 changes first and
# cannot mint before it; node 2 goes on minting under A meanwhile, then
# stops, before the instant, and changes too.
my $at_s = int(time()) + 3;
my $at   = strftime('%Y-%m-%d %H:%M:%S+00', gmtime($at_s));
my $at_ms = ($at_s - 1767225600) * 1000;    # since the default epoch
my $first_id = $at_ms * 2**22;              # 13 + 9 bits below the time

sub change
{
	my ($i) = @_;
	my $node = $nodes[ $i - 1 ];
	$node->stop;
	write_conf($node->data_dir . '/idgen_layout.conf',
		$layout_b . "idgen.shard_id = " . (4000 + $i) . "\nidgen.layout_change_at = '$at'\n");
	my $offset = -s $node->logfile;
	$node->start;
	ok( log_has($node, $offset, qr/idgen layout version 2 begins at ID $first_id\b/),
		"node $i begins version 2 at the instant's ID");
	return;
}

change(1);
push @{ $old[1] }, insert_rows($nodes[1], 2, 500);
ok(time() < $at_s, 'node 2 minted under A after node 1 changed, before the instant')
  or diag('the machine was too slow for this test');
change(2);

my $history = 'SELECT string_agg(format(\'%s %s %s %s\', version, shard_bits, sequence_bits, first_id), \',\' ORDER BY version) FROM idgen_layout_history()';
is($nodes[0]->safe_psql('postgres', $history),
	"1 12 10 0,2 13 9 $first_id", 'node 1: the history the instant gives');
is($nodes[1]->safe_psql('postgres', $history),
	$nodes[0]->safe_psql('postgres', $history),
	'node 2 has the same history');

my @new = map { [ insert_rows($nodes[$_ - 1], $_, 500) ] } (1, 2);
is(scalar(grep { $_ < $first_id } map { @$_ } @new),
	0, 'every new ID is at or above the first ID of version 2');

# Every ID, decoded by each node, as the layout that minted it says.
my $all = join(',', map { @$_ } @old, @new);
foreach my $i (1, 2)
{
	is( $nodes[ $i - 1 ]->safe_psql(
			'postgres', qq{
SELECT count(*) FILTER (WHERE id < $first_id AND
                              (id_to_shard(id), id_to_sequence(id), id_to_layout_version(id))
                            = ((id >> 10) & 4095, (id & 1023)::int, 1)),
       count(*) FILTER (WHERE id >= $first_id AND
                              (id_to_shard(id), id_to_sequence(id), id_to_layout_version(id))
                            = ((id >> 9) & 8191, (id & 511)::int, 2)),
       count(*) FILTER (WHERE id_to_timestamp(id) =
                              '2026-01-01+00'::timestamptz + (id >> 22) * interval '1 ms')
  FROM unnest('{$all}'::bigint[]) AS id}),
		'1500|1000|2500',
		"node $i decodes both nodes' IDs by the layout that minted them");
}
is( $nodes[1]->safe_psql(
		'postgres',
		"SELECT array_agg(DISTINCT id_to_shard(id) ORDER BY id_to_shard(id)) FROM unnest('{$all}'::bigint[]) AS id"
	),
	'{1,2,4001,4002}',
	'node 2 reads the shards of both nodes, old and new');

# An instant before what a node may have minted is refused.
my $node = $nodes[0];
$node->stop;
write_conf($node->data_dir . '/idgen_layout.conf',
	"idgen.shard_id = 1\nidgen.allow_layout_change = on\nidgen.layout_change_at = '2026-06-01 00:00:00+00'\n");
my ($started, $log) = start_logged($node);
ok(!$started, 'a change at an instant before IDs minted is refused');
like($log, qr/"idgen.layout_change_at" is before IDs this server may have minted/,
	'the log says why');
$node->stop('immediate') if $started;

# An instant further ahead than idgen.max_advance (a typo in the year) is
# refused too: a start would raise the generator to it, durably, and the
# server would mint nothing until then, whatever was configured next.
my $next_year = strftime('%Y-%m-%d %H:%M:%S+00', gmtime(time() + 366 * 86400));
write_conf($node->data_dir . '/idgen_layout.conf',
	"idgen.shard_id = 1\nidgen.allow_layout_change = on\nidgen.layout_change_at = '$next_year'\n");
($started, $log) = start_logged($node);
ok(!$started, 'a change at an instant a year ahead is refused');
like($log, qr/"idgen.layout_change_at" is too far ahead of the wall clock/,
	'the log says why');
like($log, qr/HINT:.*"idgen.max_advance"/, 'and names the setting that bounds it');
$node->stop('immediate') if $started;

# Nothing of it was kept: back to the layout it had, it mints now.
write_conf($node->data_dir . '/idgen_layout.conf', $layout_b . "idgen.shard_id = 4001\n");
$node->start;
is( $node->safe_psql('postgres',
		"SET idgen.max_wait = '1s'; "
		  . "SELECT abs(extract(epoch FROM id_to_timestamp(idgen_next()) - clock_timestamp())) < 2"),
	't',
	'after the refused start, the node mints at the clock');
$node->stop;

done_testing();
