
# Copyright (c) 2026, The idgen Authors
#
# Every layout the start-up check accepts mints and decodes over its whole
# range, and the epoch is one instant whatever the server's settings:
#
#  - epoch 1970 (the layout ends in 2039): minting, decoding, the fence in
#    idgen_stats, the last millisecond of the layout, and min_id_at past the
#    end or of the largest PostgreSQL timestamp refused;
#  - epoch 1999-12-20, just before PostgreSQL's own epoch: no negative ID;
#  - epoch 1600: refused with 41 time bits (the layout has ended), and with
#    62 time bits it mints and decodes, min_id_at of the largest PostgreSQL
#    timestamp is an ID, and an ID past PostgreSQL's timestamps is refused;
#  - idgen.epoch = 'now' (and today, tomorrow, yesterday) is refused;
#  - an epoch written without a zone is UTC, and an all-numeric date is
#    month first, whatever timezone and datestyle say: changing them does
#    not change the layout.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# Each layout gets a cluster of its own: a layout change on one cluster
# would (rightly) start the new generator above every ID of the old layout.
my $node;
my $conf;

sub new_node
{
	my ($name) = @_;
	$node = idgen_node($name);
	$conf = $node->data_dir . '/idgen_layout.conf';
	$node->append_conf('postgresql.conf', "include 'idgen_layout.conf'\n");
	return;
}

sub start_with
{
	my ($text) = @_;
	write_conf($conf, $text);
	return start_logged($node);
}

sub query
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql);
}

# ($ret, $stderr) of a query expected to fail
sub fails
{
	my ($sql) = @_;
	return psql_fails($node, $sql);
}

# --------------------------------------------------------------------------
# Epoch 1970, 12 shard and 10 sequence bits: 41 bits of milliseconds, which
# end at 2^41 ms = 2039-09-07 15:47:35.552 UTC.

new_node('epoch1970');
my ($started, $log) = start_with("idgen.epoch = '1970-01-01 00:00:00+00'\n");
ok($started, 'a layout with epoch 1970 starts') or diag $log;
query('CREATE EXTENSION idgen');

my @ids = mint($node, 1000);
check_ids(\@ids, 'epoch 1970');
is( query(
		"SELECT abs(extract(epoch FROM id_to_timestamp($ids[-1]) - now())) < 60"),
	't',
	'epoch 1970: id_to_timestamp gives the time of minting');
is( query("SELECT (idgen_decode($ids[-1])).created_at = id_to_timestamp($ids[-1])"),
	't', 'epoch 1970: idgen_decode agrees');
is( query(
		"SELECT fence > now() AND fence < now() + interval '1 hour' FROM idgen_stats"),
	't',
	'epoch 1970: idgen_stats shows a finite fence just ahead');
is(query("SELECT id_to_timestamp(9223372036854775807)"),
	'2039-09-07 15:47:35.551+00',
	'epoch 1970: the largest ID decodes to the last millisecond');
is( query(
		"SELECT min_id_at('2039-09-07 15:47:35.551+00') = ((1::bigint << 41) - 1) << 22"
	),
	't',
	'epoch 1970: min_id_at of the last millisecond');
my ($ret, $stderr) = fails("SELECT min_id_at('2039-09-07 15:47:35.552+00')");
like($stderr, qr/22008: timestamp is past the end of the ID layout/,
	'epoch 1970: min_id_at one millisecond past the end is refused');
($ret, $stderr) = fails("SELECT min_id_at('294276-12-31 23:59:59+00')");
like($stderr, qr/22008: timestamp is past the end of the ID layout/,
	'epoch 1970: min_id_at of the largest timestamp is refused');
($ret, $stderr) = fails("SELECT min_id_at('infinity')");
like($stderr, qr/22008: timestamp is past the end of the ID layout/,
	'epoch 1970: min_id_at of infinity is refused');
$node->stop;

# --------------------------------------------------------------------------
# Epoch 1999-12-20: the largest timestamp is past the end, not a negative ID.

new_node('epoch1999');
($started, $log) = start_with("idgen.epoch = '1999-12-20 00:00:00+00'\n");
ok($started, 'a layout with epoch 1999-12-20 starts') or diag $log;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
@ids = mint($node, 10);
is( query(
		"SELECT abs(extract(epoch FROM id_to_timestamp($ids[-1]) - now())) < 60"),
	't',
	'epoch 1999-12-20: id_to_timestamp gives the time of minting');
($ret, $stderr) = fails("SELECT min_id_at('294276-12-31 23:59:59+00')");
like($stderr, qr/22008: timestamp is past the end of the ID layout/,
	'epoch 1999-12-20: min_id_at of the largest timestamp is refused');
$node->stop;

# --------------------------------------------------------------------------
# Epoch 1600: 41 bits of milliseconds ended in 1669, a clear refusal; 62 bits
# (no shard bits, one sequence bit) last 146 million years.

new_node('epoch1600');
($started, $log) = start_with("idgen.epoch = '1600-01-01 00:00:00+00'\n");
ok(!$started, 'epoch 1600 with 41 time bits is refused');
like($log, qr/"idgen.epoch" is too far in the past for the layout/,
	'the refusal names idgen.epoch');

($started, $log) = start_with(
	"idgen.epoch = '1600-01-01 00:00:00+00'\nidgen.shard_bits = 0\n"
	  . "idgen.sequence_bits = 1\n");
ok($started, 'epoch 1600 with 62 time bits starts') or diag $log;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
@ids = mint($node, 1000);
check_ids(\@ids, 'epoch 1600, 62 time bits');
is( query(
		"SELECT abs(extract(epoch FROM id_to_timestamp($ids[-1]) - now())) < 60"),
	't',
	'epoch 1600: id_to_timestamp gives the time of minting');
is( query(
		"SELECT min_id_at(id_to_timestamp($ids[-1])) <= $ids[-1]
		    AND min_id_at(id_to_timestamp($ids[-1]) + interval '1 ms') > $ids[-1]"
	),
	't',
	'epoch 1600: min_id_at brackets an ID by its millisecond');
is( query(
		"SELECT min_id_at('294276-12-31 23:59:59+00') > 0
		    AND id_to_timestamp(min_id_at('294276-12-31 23:59:59+00'))
		        = '294276-12-31 23:59:59+00'"),
	't',
	'epoch 1600: min_id_at of the largest timestamp is an ID that decodes back');
($ret, $stderr) = fails("SELECT id_to_timestamp(9223372036854775807)");
like($stderr, qr/22008: timestamp out of range/,
	'epoch 1600: an ID past PostgreSQL\'s timestamps is refused');
$node->stop;

# --------------------------------------------------------------------------
# Relative words are refused; an epoch without a zone is UTC, month first.

new_node('zoneless');
for my $word (qw(now today tomorrow yesterday))
{
	($started, $log) = start_with("idgen.epoch = '$word'\n");
	ok(!$started, "idgen.epoch = '$word' is refused");
	like($log, qr/"idgen.epoch" must be a fixed instant/,
		"idgen.epoch = '$word': the log says why");
}

my $zoneless = "idgen.epoch = '01/02/2026 00:00:00'\n";
($started, $log) =
  start_with($zoneless . "timezone = 'America/New_York'\ndatestyle = 'ISO, DMY'\n");
ok($started, 'an epoch without a zone starts') or diag $log;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
is(query("SELECT min_id_at('2026-01-02 00:00:00+00')"),
	0, 'the epoch is read as UTC and month first, not in timezone or datestyle');
$node->stop;

($started, $log) =
  start_with($zoneless . "timezone = 'Asia/Tokyo'\ndatestyle = 'SQL, MDY'\n");
ok($started,
	'another timezone and datestyle are not a layout change') or diag $log;
unlike($log, qr/layout differs|layout changed/,
	'no layout change is reported');
is(query("SELECT min_id_at('2026-01-02 00:00:00+00')"),
	0, 'the epoch is the same instant');
$node->stop;

done_testing();
