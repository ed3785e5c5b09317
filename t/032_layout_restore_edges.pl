
# Copyright (c) 2026, The idgen Authors
#
# Restores whose layout history looks like the server's, or arrives out of
# order, and a process that fails half-way through reading the history:
#
#  - a dump from a server that only ever minted under layout A, restored
#    into a server whose history is A then B: the two version 1s look the
#    same but are two servers' (their history ids differ), so nothing tells
#    the dump's IDs above B's first ID from this server's; every decoder and
#    idgen_next() refuse until idgen_layout_adopt(), and then the dump's IDs
#    decode by A;
#  - a restore's rows of idgen_layout_versions in any order replace this
#    server's rows and keep one another;
#  - a restored version that begins ahead of this server gets no marker;
#  - a restored history is refused in a database this server minted in;
#  - a decoder that fails while reading the table (a lock timeout) reads it
#    again at the next call.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# P: layout A only, shard 5.
my $p = idgen_node('p', conf => "idgen.shard_id = 5\n");
$p->start;
$p->safe_psql('postgres', 'CREATE EXTENSION idgen; CREATE TABLE t (id bigint PRIMARY KEY)');

# Q: layout A, then B (13 shard bits, 9 sequence bits); it mints nothing
# under B before the restore.
my $q = idgen_node('q', conf => "include_if_exists = 'idgen_layout.conf'\n");
$q->start;
$q->safe_psql('postgres', 'CREATE EXTENSION idgen');
$q->stop;
write_conf($q->data_dir . '/idgen_layout.conf',
	"idgen.shard_bits = 13\nidgen.sequence_bits = 9\nidgen.shard_id = 4000\nidgen.allow_layout_change = on\n");
my $offset = -s $q->logfile;
$q->start;
ok(log_has($q, $offset, qr/idgen layout version 2 begins at ID (\d+)/),
	'Q begins version 2');
my ($cut) = slurp_file($q->logfile, $offset) =~ /idgen layout version 2 begins at ID (\d+)/;

# P mints after Q's change: its IDs are above Q's first ID of B.
$p->safe_psql('postgres', 'INSERT INTO t SELECT idgen_next() FROM generate_series(1, 100)');
my $p_max = $p->safe_psql('postgres', 'SELECT max(id) FROM t');
ok($p->safe_psql('postgres', "SELECT min(id) > $cut FROM t") eq 't',
	"P's IDs are above Q's first ID of layout B");

my $dump = $p->basedir . '/p.dump';
$p->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $p->connstr('postgres') ],
	'P is dumped');
$q->safe_psql('postgres', 'CREATE DATABASE r1');
$q->command_ok([ 'pg_restore', '--exit-on-error', '-d', $q->connstr('r1'), $dump ],
	'the dump restores into Q in one go');

my ($ret, $stdout, $stderr) =
  $q->psql('r1', "\\set VERBOSITY verbose\nSELECT count(DISTINCT id_to_shard(id)) FROM t");
isnt($ret, 0, 'a decoder refuses in the restored database');
like($stderr, qr/55000: this database's layout history does not match the server's/,
	'with why');
($ret, $stdout, $stderr) = $q->psql('r1', 'SELECT idgen_next()');
like($stderr, qr/this database's layout history does not match the server's/,
	'idgen_next() refuses there too: its IDs would decode by A');
is($q->safe_psql('postgres', 'SELECT id_to_layout_version(1)'), '1',
	'the database Q made itself decodes on');

is($q->safe_psql('r1', "SELECT idgen_layout_adopt($p_max)"), '2',
	'idgen_layout_adopt() begins version 2 of the database, above P\'s IDs');
is($q->safe_psql('r1',
		'SELECT count(*), count(*) FILTER (WHERE id_to_shard(id) = 5 AND id_to_layout_version(id) = 1) FROM t'),
	'100|100', "P's IDs decode by layout A, shard 5");
my $new = $q->safe_psql('r1', 'SELECT idgen_next()');
ok($new > $p_max, 'a new ID is above them');
is($q->safe_psql('r1', "SELECT id_to_shard($new), id_to_layout_version($new)"),
	'4000|2', 'and decodes by layout B, shard 4000');

# Rows of another history, in the order a table that was vacuumed may hold
# them: version 2 before version 1.
$q->safe_psql('postgres', 'CREATE DATABASE r2');
$q->safe_psql('r2', 'CREATE EXTENSION idgen');
$q->safe_psql('r2', qq{
COPY idgen_layout_versions FROM stdin;
2	2026-01-01 00:00:00+00	13	9	$cut	42
1	2026-01-01 00:00:00+00	12	10	0	42
\\.
});
is( $q->safe_psql(
		'r2',
		'SELECT string_agg(format(\'%s %s %s %s\', version, shard_bits, first_id = 0, history), \',\' ORDER BY version) FROM idgen_layout_versions WHERE version <= 2'
	),
	'1 12 t 42,2 13 f 42',
	'both restored rows are kept, in place of this server\'s');

# A restored version that begins where this server has not minted yet: no
# marker, or this server's next IDs would decode by the version before it.
my $ahead = $q->safe_psql('postgres',
	"SELECT min_id_at(clock_timestamp() + interval '1 hour')");
$q->safe_psql('postgres', 'CREATE DATABASE r3');
$q->safe_psql('r3', 'CREATE EXTENSION idgen');
$q->safe_psql('r3', qq{
COPY idgen_layout_versions FROM stdin;
1	2026-01-01 00:00:00+00	12	10	0	77
2	2026-01-01 00:00:00+00	13	9	$ahead	77
\\.
});
is($q->safe_psql('r3', 'SELECT count(*) FROM idgen_layout_versions WHERE history <> 77'),
	'0', 'a restored version ahead of this server gets no marker');
($ret, $stdout, $stderr) = $q->psql('r3', 'SELECT idgen_next()');
like($stderr, qr/this database's layout history does not match the server's/,
	'and the database mints nothing until adopted');

# A restore into a database this server already minted in.
$q->safe_psql('postgres', 'CREATE DATABASE r4');
$q->safe_psql('r4', 'CREATE EXTENSION idgen; CREATE TABLE m (id bigint DEFAULT idgen_next()); INSERT INTO m DEFAULT VALUES');
($ret, $stdout, $stderr) = $q->psql('r4', qq{
COPY idgen_layout_versions FROM stdin;
1	2026-01-01 00:00:00+00	12	10	0	77
\\.
});
like($stderr, qr/rows of table public\.m were stored before this database's layout history/,
	'a restored history is refused where this server already minted IDs');
is($q->safe_psql('r4', 'SELECT id_to_shard(id) FROM m'), '4000',
	'and they still decode by this server\'s layout');

# A decoder that times out on the table's lock reads it again afterwards.
my $locker = $q->background_psql('postgres');
$locker->query_safe('BEGIN; LOCK TABLE idgen_layout_versions IN ACCESS EXCLUSIVE MODE');
my $reader = $q->background_psql('postgres', on_error_stop => 0);
$reader->query("SET lock_timeout = '100ms'");
my $out = $reader->query('SELECT id_to_shard(1)');
like($reader->{stderr}, qr/lock timeout/, 'a decoder waiting for the lock times out');
$locker->query_safe('COMMIT');
$reader->{stderr} = '';
is($reader->query('SELECT id_to_shard((5::bigint << 10) | 1)'), '5',
	'the next call reads the history again and decodes');
$reader->quit;
$locker->quit;

done_testing();
