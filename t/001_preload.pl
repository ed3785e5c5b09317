
# Copyright (c) 2026, The idgen Authors
#
# idgen needs shared_preload_libraries, and it checks its layout settings
# when the server starts.
#
#  - Without the preload, CREATE EXTENSION works with a WARNING that says
#    so, and every function fails
#    with SQLSTATE 55000 and a hint naming shared_preload_libraries.
#  - A bad setting stops the server from starting, with a log message that
#    names the setting.
#  - A good non-default layout starts, and IDs decode according to it.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# --------------------------------------------------------------------------
# 1. Not preloaded.

my $node = PostgreSQL::Test::Cluster->new('nopreload');
$node->init;
$node->append_conf('postgresql.conf', "include_if_exists = 'idgen_test.conf'");
$node->start;

my ($created, $create_stderr) = psql_fails($node, 'CREATE EXTENSION idgen;');
is($created, 0, 'CREATE EXTENSION succeeds without the preload');
like(
	$create_stderr,
	qr/WARNING:\s+55000: idgen is not loaded via "shared_preload_libraries"/,
	'CREATE EXTENSION without the preload: a WARNING says so at once');
like(
	$create_stderr,
	qr/HINT:\s+Add idgen to "shared_preload_libraries" in postgresql.conf and restart the server\./,
	'CREATE EXTENSION without the preload: the hint says what to do');
is( $node->safe_psql(
		'postgres', q{
SELECT e.extversion = a.default_version
  FROM pg_extension AS e JOIN pg_available_extensions AS a ON a.name = e.extname
 WHERE e.extname = 'idgen'}),
	't',
	'CREATE EXTENSION works without the preload, at the default version');

for my $call (
	'idgen_next()',
	'idgen_next(0)',
	'id_to_timestamp(1)',
	"min_id_at('2026-02-01 00:00:00+00')",
	'id_to_shard(1)',
	'id_to_sequence(1)',
	'idgen_decode(1)',
	'idgen_stats()',
	'idgen_stats_backends()',
	'idgen_next_n(5)',
	'idgen_advance_past(1)')
{
	my ($ret, $stderr) = psql_fails($node, "SELECT $call;");
	isnt($ret, 0, "$call fails without the preload");
	like($stderr, qr/ERROR:\s+55000:/, "$call: SQLSTATE 55000");
	like(
		$stderr,
		qr/HINT:.*shared_preload_libraries/,
		"$call: the hint names shared_preload_libraries");
}
{
	my ($ret, $stderr) = psql_fails($node, 'SELECT * FROM idgen_stats;');
	like($stderr, qr/ERROR:\s+55000:/,
		'the idgen_stats view fails with SQLSTATE 55000 too');
}

# What needs no layout of the server's works without the preload: the text
# form, and decoding under a layout given as an argument.
is( $node->safe_psql(
		'postgres', q{
SELECT idgen_from_text(idgen_to_text(4194309127, 'evt'), 'evt'),
       id_to_timestamp(175928847299117063, 'discord') AT TIME ZONE 'UTC',
       (idgen_decode(4194309127, 'idgen')).shard,
       min_id_at('2026-01-01 00:00:01+00', 'idgen')}),
	'4194309127|2016-04-30 11:18:25.796|5|4194304000',
	'the text form and decoding by a layout argument work without the preload');

$node->stop;

# --------------------------------------------------------------------------
# 2. Bad settings at start.  The node has never run with idgen loaded, so
# no layout is recorded yet: each refusal comes from the setting itself.

$node->append_conf('postgresql.conf', "shared_preload_libraries = 'idgen'");

my $conf_file = $node->data_dir . '/idgen_test.conf';

my @bad = (
	[ 'idgen.shard_bits = 40', qr/idgen\.shard_bits/, 'shard_bits 40' ],
	[ 'idgen.sequence_bits = 0', qr/idgen\.sequence_bits/, 'sequence_bits 0' ],
	[ 'idgen.sequence_bits = 40', qr/idgen\.sequence_bits/, 'sequence_bits 40' ],
	[ 'idgen.shard_bits = -1', qr/idgen\.shard_bits/, 'shard_bits -1' ],
	[
		"idgen.shard_bits = 20\nidgen.sequence_bits = 13",
		qr/idgen\.(shard_bits|sequence_bits)/,
		'shard_bits + sequence_bits = 33'
	],
	[
		"idgen.epoch = '2100-01-01 00:00:00+00'",
		qr/idgen\.epoch/, 'epoch in the future'
	],
	[ "idgen.epoch = 'garbage'", qr/idgen\.epoch/, 'epoch garbage' ],
	[ "idgen.epoch = 'infinity'", qr/idgen\.epoch/, 'epoch infinity' ],
	[
		"idgen.epoch = '1900-01-01 00:00:00+00'",
		qr/idgen\.epoch/, 'epoch so old that the time field has overflowed'
	],
	[ 'idgen.shard_id = 5000', qr/idgen\.shard_id/, 'shard_id 5000 (12 bits)' ],
	[ 'idgen.shard_id = -1', qr/idgen\.shard_id/, 'shard_id -1' ],
	[
		"idgen.shard_bits = 4\nidgen.shard_id = 16",
		qr/idgen\.shard_id/, 'shard_id 16 with 4 shard bits'
	],
	[ "idgen.shard_ids = '1-'", qr/idgen\.shard_ids/, "shard_ids '1-'" ],
	[ "idgen.shard_ids = '5,x'", qr/idgen\.shard_ids/, "shard_ids '5,x'" ],
	[ "idgen.shard_ids = '7-3'", qr/idgen\.shard_ids/, "shard_ids '7-3'" ],
	[
		"idgen.shard_ids = '100-5000'",
		qr/idgen\.shard_ids/, "shard_ids '100-5000' (12 bits)"
	],
	[
		'max_worker_processes = 0',
		qr/idgen needs a background worker, and "max_worker_processes" is 0/,
		'max_worker_processes = 0 (no room for the fence worker)'
	],);

for my $case (@bad)
{
	my ($conf, $log_re, $what) = @$case;

	write_conf($conf_file, "$conf\n");
	my ($started, $log) = start_logged($node);
	ok(!$started, "the server refuses to start with $what");
	like($log, $log_re, "$what: the log names the setting");
	if ($started)
	{
		# The setting was not enforced: show what the server runs with.
		diag(
			"$what: started anyway; "
			  . $node->safe_psql(
				'postgres',
				"SELECT string_agg(name || '=' || setting, ', ') FROM pg_settings WHERE name LIKE 'idgen.%'"
			  ));
		$node->stop('immediate');
	}
}

# --------------------------------------------------------------------------
# 3. A good non-default layout starts, and IDs decode by it.  A new node:
# none of the starts above can have recorded a layout in it.

$node = idgen_node(
	'layout', conf => qq(
idgen.epoch = '2025-06-01 00:00:00+00'
idgen.shard_bits = 8
idgen.sequence_bits = 14
idgen.shard_id = 200
idgen.shard_ids = '3,10-12'
));
ok($node->start(fail_ok => 1), 'the server starts with a non-default layout');
($created, $create_stderr) = psql_fails($node, 'CREATE EXTENSION idgen;');
is($created, 0, 'CREATE EXTENSION with the preload');
unlike($create_stderr, qr/WARNING/, 'CREATE EXTENSION with the preload: no WARNING');

is( $node->safe_psql(
		'postgres',
		"SELECT current_setting('idgen.shard_bits') || ' ' || current_setting('idgen.sequence_bits')"
	),
	'8 14',
	'the layout settings are in effect');

# (1000 << 22) | (5 << 14) | 7: one second after the epoch, shard 5, seq 7.
my $fixed = 1000 * 2**22 + 5 * 2**14 + 7;
is( $node->safe_psql(
		'postgres',
		"SELECT id_to_timestamp($fixed) = '2025-06-01 00:00:01+00',
			id_to_shard($fixed), id_to_sequence($fixed),
			(idgen_decode($fixed)).shard,
			min_id_at('2025-06-01 00:00:01.0005+00')"),
	"t|5|7|5|4194304000",
	'a fixed ID decodes by the configured layout');

my @ids = mint($node, 3000, name => 'minted 3000 IDs with idgen_next()');
check_ids(\@ids, 'shard 200, non-default layout');
my @ids3 = mint(
	$node, 1000,
	call => 'idgen_next(3)',
	name => 'minted 1000 IDs with idgen_next(3)');
check_ids(\@ids3, 'shard 3, non-default layout');
my @ids11 = mint(
	$node, 1000,
	call => 'idgen_next(11)',
	name => 'minted 1000 IDs with idgen_next(11)');
check_ids(\@ids11, 'shard 11, non-default layout');
push @ids, @ids3, @ids11;

my $last = $ids[-1];
is( $node->safe_psql(
		'postgres',
		"SELECT id_to_shard($ids[0]), id_to_shard($ids[3000]), id_to_shard($last),
			($last >> 22) = floor(extract(epoch FROM id_to_timestamp($last)
				- '2025-06-01 00:00:00+00') * 1000)::bigint,
			($last & 16383) = id_to_sequence($last),
			abs(extract(epoch FROM id_to_timestamp($last) - clock_timestamp())) < 10"
	),
	"200|3|11|t|t|t",
	'minted IDs carry the shard and the time of the configured layout');

# Shard 300 needs 9 bits: outside an 8-bit field.
my ($ret, $stderr) = psql_fails($node, 'SELECT idgen_next(300);');
like($stderr, qr/ERROR:\s+22023:/,
	'a shard outside the 8-bit field is refused with 22023');
($ret, $stderr) = psql_fails($node, 'SELECT idgen_next(13);');
like($stderr, qr/ERROR:\s+22023:/, 'a shard not owned is refused with 22023');
like($stderr, qr/idgen\.shard_ids/, 'the refusal names idgen.shard_ids');

check_ids(\@all_ids, 'all IDs of this test, every shard', 1);

# All shards share one generator word, (ms << sequence_bits) | sequence:
# stripped of the shard field, the IDs increase in mint order.
{
	my @words = map { (($_ >> 22) << 14) | ($_ & 16383) } @all_ids;
	my $bad = grep { $words[$_] <= $words[ $_ - 1 ] } 1 .. $#words;
	is($bad, 0, 'time and sequence increase across shards in mint order');
}

$node->stop;

done_testing();
