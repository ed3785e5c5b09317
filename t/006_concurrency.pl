
# Copyright (c) 2026, The idgen Authors
#
# 16 sessions mint at once, 4,000,000 IDs in all, into one table whose
# primary key would reject a duplicate.  Each row records the session that
# minted it and a per-session sequence number, so that the order of each
# session's IDs can be checked too.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $clients      = 16;
my $per_xact     = 1000;
my $transactions = 250;
my $total        = $clients * $transactions * $per_xact;    # 4,000,000

my $node = idgen_node(
	'concurrency', conf => qq(
max_connections = 40
shared_buffers = '128MB'
max_wal_size = '1GB'
checkpoint_timeout = '30min'
synchronous_commit = off
));
$node->start;

$node->safe_psql(
	'postgres', q(
CREATE EXTENSION idgen;
CREATE SEQUENCE n CACHE 1000;
CREATE TABLE t (
	id bigint PRIMARY KEY,
	pid integer NOT NULL,
	n bigint NOT NULL
);
));

# Within one statement, idgen_next() and nextval() run row by row in the
# same order, so n orders each session's IDs in the order it minted them.
my $t0 = time;
$node->pgbench(
	"--no-vacuum --client=$clients --jobs=2 --transactions=$transactions",
	0,
	[qr{number of transactions actually processed: 4000/4000}],
	[qr{^$}],
	'16 sessions mint 4,000,000 IDs into one table',
	{
		'006_mint' =>
		  "INSERT INTO t SELECT idgen_next(), pg_backend_pid(), nextval('n') FROM generate_series(1, $per_xact);\n"
	});
note sprintf('pgbench took %.1f s', time - $t0);

is( $node->safe_psql(
		'postgres',
		'SELECT count(*), count(DISTINCT id), count(DISTINCT pid), min(id) > 0 FROM t'),
	"$total|$total|$clients|t",
	'4,000,000 rows, 4,000,000 distinct IDs, from 16 sessions, none negative');

is( $node->safe_psql(
		'postgres', q(
SELECT count(*) FROM (
	SELECT id, lag(id) OVER (PARTITION BY pid ORDER BY n) AS prev FROM t
) s WHERE id <= prev)),
	'0',
	"each session's IDs increase in the order it minted them");

# The generator never ran ahead of its millisecond budget: every ID decodes
# to a time within the run.
is( $node->safe_psql(
		'postgres',
		"SELECT min(id_to_timestamp(id)) > clock_timestamp() - interval '10 min',
			max(id_to_timestamp(id)) <= clock_timestamp() + interval '1 s',
			max(id_to_sequence(id)) <= 1023, bool_and(id_to_shard(id) = 0)
		 FROM t"),
	't|t|t|t',
	'every ID carries a time of the run, shard 0 and a 10-bit sequence');

my $stats = $node->safe_psql('postgres',
	'SELECT minted, max_wait_errors FROM idgen_stats');
my ($minted, $errors) = split /\|/, $stats;
cmp_ok($minted, '>=', $total, "idgen_stats counted every mint ($minted)");
is($errors, 0, 'no caller gave up');
note 'idgen_stats: '
  . $node->safe_psql('postgres', 'SELECT row(s.*) FROM idgen_stats s');

$node->stop;

done_testing();
