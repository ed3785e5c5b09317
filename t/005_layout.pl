
# Copyright (c) 2026, The idgen Authors
#
# The layout (idgen.epoch, idgen.shard_bits, idgen.sequence_bits) is
# recorded with the fence.  A start with another layout is refused with a
# clear message, unless idgen.allow_layout_change = on; then the new layout
# is recorded, and IDs minted under it are larger than every ID minted
# before, so that IDs stay unique across the change.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node =
  idgen_node('layout', conf => "include_if_exists = 'idgen_layout.conf'\n");
my $layout_conf = $node->data_dir . '/idgen_layout.conf';

# Start with the layout in $text; return whether the server started and
# what it logged meanwhile.
sub start_with_layout
{
	my ($text) = @_;
	write_conf($layout_conf, $text);
	return start_logged($node);
}

# Decode an ID as the layout ($epoch, $shard_bits, $sequence_bits) would.
sub decodes_by
{
	my ($id, $epoch, $shard_bits, $sequence_bits) = @_;
	my $low = $shard_bits + $sequence_bits;
	return $node->safe_psql(
		'postgres',
		"SELECT id_to_timestamp($id) = '$epoch'::timestamptz + ($id >> $low) * interval '1 ms',
				id_to_shard($id) = ($id >> $sequence_bits) & ((1 << $shard_bits) - 1),
				id_to_sequence($id) = $id & ((1 << $sequence_bits) - 1),
				abs(extract(epoch FROM id_to_timestamp($id) - clock_timestamp())) < 10");
}

# --------------------------------------------------------------------------
# The default layout, recorded at the first start.

my ($started, $log) = start_with_layout('');
ok($started, 'the server starts with the default layout');
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
mint($node, 3000);
is(decodes_by($all_ids[-1], '2026-01-01 00:00:00+00', 12, 10),
	't|t|t|t', 'IDs decode by the default layout');
$node->stop;

# --------------------------------------------------------------------------
# Another layout is refused.

my @changes = (
	[ "idgen.epoch = '2025-01-01 00:00:00+00'\n", 'another epoch' ],
	[
		"idgen.shard_bits = 10\nidgen.sequence_bits = 12\n",
		'other widths with the same sum'
	],
	[ "idgen.sequence_bits = 11\n", 'another sequence width' ],
	[ "idgen.shard_bits = 13\n",    'another shard width' ],);
for my $change (@changes)
{
	my ($text, $what) = @$change;
	($started, $log) = start_with_layout($text);
	ok(!$started, "a start with $what is refused");
	like($log, qr/idgen layout differs from the one recorded/,
		"$what: the log says the layout differs");
	like($log, qr/Recorded: epoch .*shard_bits 12, sequence_bits 10/,
		"$what: the log shows the recorded layout");
	like($log, qr/idgen\.allow_layout_change/,
		"$what: the log names idgen.allow_layout_change");
	$node->stop('immediate') if $started;
}

# The recorded layout still starts, and minting goes on above.
($started, $log) = start_with_layout('');
ok($started, 'the server starts again with the recorded layout');
my $max_default = $all_ids[-1];
my @ids = mint($node, 3000);
is(scalar(grep { $_ <= $max_default } @ids),
	0, 'IDs after the refused starts are larger than before');
check_ids(\@all_ids, 'the default layout');

# --------------------------------------------------------------------------
# With idgen.allow_layout_change = on, a new layout starts.  The server
# crashed first, so crash recovery replays fence records of the old layout.

$node->stop('immediate');
my $max_old = $all_ids[-1];
my $new_layout = qq(idgen.epoch = '2025-01-01 00:00:00+00'
idgen.shard_bits = 10
idgen.sequence_bits = 12
);
($started, $log) =
  start_with_layout($new_layout . "idgen.allow_layout_change = on\n");
ok($started, 'with idgen.allow_layout_change = on, a new layout starts');
like($log, qr/idgen layout changed/, 'the log records the change');
is( $node->safe_psql(
		'postgres',
		"SELECT current_setting('idgen.epoch')::timestamptz = '2025-01-01 00:00:00+00',
			current_setting('idgen.shard_bits'), current_setting('idgen.sequence_bits')"
	),
	't|10|12',
	'the new layout is in effect');

my @new = mint($node, 3000);
is(scalar(grep { $_ <= $max_old } @new),
	0, 'every ID of the new layout is larger than every ID of the old one');
is(decodes_by($new[-1], '2025-01-01 00:00:00+00', 10, 12),
	't|t|t|t', 'IDs decode by the new layout, and carry the time of minting');
check_ids(\@all_ids, 'across the allowed change');

# The new layout is recorded: it starts without the override, after a
# crash too.
$node->stop('immediate');
($started, $log) = start_with_layout($new_layout);
ok($started, 'the new layout starts without the override after a crash');
mint($node, 3000);
$node->stop;
($started, $log) = start_with_layout($new_layout);
ok($started, 'and after a clean stop');
mint($node, 3000);
check_ids(\@all_ids, 'every ID of this test');
$node->stop;

# Back to the old layout: that is a change too.
($started, $log) = start_with_layout('');
ok(!$started, 'going back to the old layout is refused');
like($log, qr/Recorded: epoch .*shard_bits 10, sequence_bits 12/,
	'the log shows the new recorded layout');
$node->stop('immediate') if $started;

# After a clean stop nothing is replayed: the change is read from the state
# file alone, once, and logged once.
($started, $log) =
  start_with_layout("idgen.epoch = '2024-01-01 00:00:00+00'\n"
	  . "idgen.allow_layout_change = on\n");
ok($started, 'a change after a clean stop starts with the override');
my $logged = () = $log =~ /idgen layout changed/g;
is($logged, 1, 'the change is logged once');
mint($node, 100);
check_ids(\@all_ids, 'every ID of this test, after the last change');
$node->stop;

done_testing();
