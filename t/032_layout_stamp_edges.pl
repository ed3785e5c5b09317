
# Copyright (c) 2026, The idgen Authors
#
# The restores and copies whose IDs no history here can tell, each refused
# rather than decoded wrong (the stamp: doc/design/layout-history.md,
# "Each database's stamp"):
#
#  - a copy of a server (a base backup started on its own) that changed to
#    another layout than the original: the original's dump, restored into
#    the copy, refuses;
#  - a dump restored over a database whose IDs this server minted in
#    blocks and stored with no idgen default: the whole database refuses,
#    its own rows included, until idgen_layout_adopt();
#  - a layout change where the "idgen stamps" worker cannot start
#    (max_worker_processes): minting waits and fails with a hint, the
#    databases decode as before, and a dump made then carries no ID its
#    stamp does not list; with a slot, minting goes on;
#  - a database still at 1.3 whose table holds another server's history
#    refuses, and keeps refusing through ALTER EXTENSION UPDATE; one whose
#    table is this server's decodes, and mints once updated.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $conf_a = "idgen.shard_id = 7\n";
my $conf_b = "idgen.shard_bits = 13\nidgen.sequence_bits = 9\nidgen.shard_id = 5000\n";
my $conf_x = "idgen.shard_bits = 10\nidgen.sequence_bits = 12\nidgen.shard_id = 300\n";
my $allow  = "idgen.allow_layout_change = on\n";

sub layout_conf { return $_[0]->data_dir . '/idgen_layout.conf'; }

sub pg_restore
{
	my ($node, $db, $dump) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pg_restore', '-d', $node->connstr($db), $dump ],
		'>', \$out, '2>', \$err);
	return $err;
}

my $dir = PostgreSQL::Test::Utils::tempdir();

# --------------------------------------------------------------------------
# P under layout A, a copy C of it, then each changes its layout its own way.

my $p = idgen_node('p', conf => "include_if_exists = 'idgen_layout.conf'\n", allows_streaming => 1);
write_conf(layout_conf($p), $conf_a);
$p->start;
$p->safe_psql('postgres', 'CREATE DATABASE app');
$p->safe_psql('app', q{CREATE EXTENSION idgen;
CREATE TABLE items (id bigint PRIMARY KEY DEFAULT idgen_next(), n int);
INSERT INTO items (n) SELECT g FROM generate_series(1, 200) AS g;});
$p->backup('base');
my $c = PostgreSQL::Test::Cluster->new('c');
$c->init_from_backup($p, 'base');
my $dump_p_a = "$dir/p_a.dump";
$p->command_ok([ 'pg_dump', '-Fc', '-f', $dump_p_a, '-d', $p->connstr('app') ],
	'pg_dump of P under layout A');

$p->stop;
write_conf(layout_conf($p), $conf_b . $allow);
$p->start;

# A standby of P replays the record that every database is stamped: a
# stamp restored later with fewer versions refuses there as on P.
$p->backup('after_b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($p, 'after_b', has_streaming => 1);
$standby->start;
$p->safe_psql('postgres', 'CREATE DATABASE stale');
pg_restore($p, 'stale', $dump_p_a);
stamp_refuses($p, 'stale', 'SELECT count(*) FROM items WHERE id_to_shard(id) = 7',
	'a dump of P under A, restored on P under B');
$p->wait_for_catchup($standby);
stamp_refuses($standby, 'stale', 'SELECT count(*) FROM items WHERE id_to_shard(id) = 7',
	'and on its standby');
is($standby->safe_psql('app', 'SELECT count(*) FROM items WHERE id_to_shard(id) = 7'),
	'200', 'the standby decodes P\'s own database');
$standby->stop;
$p->safe_psql('app', 'INSERT INTO items (n) SELECT g FROM generate_series(1, 200) AS g');
is($p->safe_psql('app', 'SELECT count(*) FROM items WHERE id_to_shard(id) = 5000'),
	'200', 'P, layout B: the new rows decode by B');
my $dump_p = "$dir/p.dump";
$p->command_ok([ 'pg_dump', '-Fc', '-f', $dump_p, '-d', $p->connstr('app') ],
	'pg_dump of P under layout B');

write_conf(layout_conf($c), $conf_x . $allow);
$c->start;
$c->safe_psql('app', 'INSERT INTO items (n) SELECT g FROM generate_series(1, 10) AS g');
is($c->safe_psql('app', 'SELECT count(*) FROM items WHERE id_to_shard(id) = 300'),
	'10', 'C, the copy, layout X: its new rows decode by X');
$c->safe_psql('postgres', 'CREATE DATABASE from_p');
pg_restore($c, 'from_p', $dump_p);
is($c->safe_psql('from_p', 'SELECT count(*) FROM items'),
	'400', 'P\'s dump restored into its copy C: every row loaded');
my $err = stamp_refuses($c, 'from_p', 'SELECT count(*) FROM items WHERE id_to_shard(id) = 5000',
	'P\'s dump in C: id_to_shard()');
like($err, qr/server's history is 0 12\/10 \S+, \d+ 10\/12 /,
	'P\'s dump in C: the detail names C\'s own history');

# --------------------------------------------------------------------------
# A dump restored over a database where C minted blocks, stored by hand.

$c->safe_psql('postgres', 'CREATE DATABASE mine');
$c->safe_psql('mine', q{CREATE EXTENSION idgen;
CREATE TABLE imported (id bigint PRIMARY KEY);
INSERT INTO imported SELECT idgen_next_n(20) FROM generate_series(1, 10);});
is($c->safe_psql('mine', 'SELECT count(*) FROM imported WHERE id_to_shard(id) = 300'),
	'200', 'C\'s own blocks, stored without a default, decode by X');
pg_restore($c, 'mine', $dump_p);
stamp_refuses($c, 'mine', 'SELECT count(*) FROM imported WHERE id_to_shard(id) = 300',
	'P\'s dump restored over C\'s own rows: id_to_shard() of C\'s rows');
stamp_refuses($c, 'mine', 'SELECT idgen_next_n(2)', 'and idgen_next_n()');
$c->stop;

# --------------------------------------------------------------------------
# A layout change where the stamps worker cannot start.

my $s = idgen_node('s', conf => "include_if_exists = 'idgen_layout.conf'\n");
write_conf(layout_conf($s), $conf_a);
$s->start;
$s->safe_psql('postgres', q{CREATE EXTENSION idgen;
CREATE TABLE items (id bigint PRIMARY KEY DEFAULT idgen_next(), n int);
INSERT INTO items (n) SELECT g FROM generate_series(1, 100) AS g;});
$s->stop;
# the fence worker and the logical replication launcher take both slots
write_conf(layout_conf($s),
	$conf_b . $allow . "max_worker_processes = 2\nidgen.max_wait = '500ms'\n");
my $offset = -s $s->logfile;
$s->start;
ok(log_has($s, $offset, qr/could not start the "idgen stamps" worker/),
	'no slot: the log says the stamps worker could not start');
$err = (psql_fails($s, 'INSERT INTO items (n) VALUES (1)'))[1];
like($err, qr/55000: idgen has not yet stamped every database with its layout history/,
	'no slot: minting waits, then fails');
like($err, qr/max_worker_processes/, 'no slot: the hint names max_worker_processes');
is($s->safe_psql('postgres', 'SELECT count(*) FROM items WHERE id_to_shard(id) = 7'),
	'100', 'no slot: the old rows still decode by layout A');
my $dump_s = "$dir/s.dump";
$s->command_ok([ 'pg_dump', '-Fc', '-f', $dump_s, '-d', $s->connstr('postgres') ],
	'no slot: pg_dump');
my $a2 = idgen_node('a2');
$a2->start;
$a2->safe_psql('postgres', 'CREATE DATABASE s');
is(pg_restore($a2, 's', $dump_s), '', 'its dump restores into a fresh cluster of layout A');
is($a2->safe_psql('s', 'SELECT count(*) FROM items WHERE id_to_shard(id) = 7'),
	'100', 'and every row decodes as on S: no row of layout B was minted to travel');
$a2->stop;

$s->stop;
write_conf(layout_conf($s), $conf_b . $allow . "max_worker_processes = 4\n");
$s->start;
$s->safe_psql('postgres', 'INSERT INTO items (n) VALUES (1)');
is($s->safe_psql('postgres', 'SELECT count(*) FROM items WHERE id_to_shard(id) = 5000'),
	'1', 'with a slot: the database is stamped and minting goes on');
like($s->safe_psql('postgres',
		q{SELECT obj_description(oid, 'pg_extension') FROM pg_extension WHERE extname = 'idgen'}),
	qr/\[layout history: 0 12\/10 \S+, \d+ 13\/9 \S+\]$/, 'with a slot: the stamp lists both versions');

# --------------------------------------------------------------------------
# Databases still at 1.3.

$s->safe_psql('postgres', 'CREATE DATABASE own13');
$s->safe_psql('own13', q{CREATE EXTENSION idgen VERSION '1.3';
INSERT INTO idgen_layout_versions
  SELECT version, epoch, shard_bits, sequence_bits, first_id, 1 FROM idgen_layout_history();
CREATE TABLE items (id bigint PRIMARY KEY DEFAULT idgen_next());});
is($s->safe_psql('own13', 'SELECT id_to_shard(id) FROM (SELECT idgen_next() AS id) s'),
	'5000', '1.3 with this server\'s history: it decodes and mints');
$s->safe_psql('own13', 'DELETE FROM idgen_layout_versions WHERE version = 2');
is($s->safe_psql('own13', 'SELECT id_to_shard(4194309127)'), '5',
	'1.3 with the first version of this server\'s: it decodes');
my ($ret, $stdout, $stderr) = $s->psql('own13', 'INSERT INTO items DEFAULT VALUES');
like($stderr, qr/idgen 1.3 layout table lacks the server's newer layout versions/,
	'1.3 lacking a version: minting refuses, saying to update');
$s->safe_psql('own13', 'ALTER EXTENSION idgen UPDATE');
$s->safe_psql('own13', 'INSERT INTO items DEFAULT VALUES');
is($s->safe_psql('own13', 'SELECT count(*) FROM items'), '1', 'updated: it mints');

$s->safe_psql('postgres', 'CREATE DATABASE foreign13');
$s->safe_psql('foreign13', q{CREATE EXTENSION idgen VERSION '1.3';
INSERT INTO idgen_layout_versions VALUES (1, '2026-01-01 00:00:00+00', 10, 12, 0, 42);});
stamp_refuses($s, 'foreign13', 'SELECT id_to_shard(4194309127)', '1.3 with another server\'s history');

# Its dump, made under 1.3, carries the history as rows of the table: a
# plain restore into a 1.4 database takes them as its stamp.
my $dump_13 = "$dir/foreign13.sql";
$s->command_ok([ 'pg_dump', '-f', $dump_13, '-d', $s->connstr('foreign13') ],
	'pg_dump of a database at 1.3');
$s->safe_psql('postgres', 'CREATE DATABASE from13');
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'psql', '-X', '-q', '-d', $s->connstr('from13'), '-f', $dump_13 ],
		'>', \$out, '2>', \$err);
	unlike($err, qr/ERROR/, 'the 1.3 dump restores into 1.4 with no error');
	like($err, qr/WARNING:  this database's IDs were minted under another layout history/,
		'and warns that its history is another server\'s');
}
like($s->safe_psql('from13',
		q{SELECT obj_description(oid, 'pg_extension') FROM pg_extension WHERE extname = 'idgen'}),
	qr/\[layout history: 0 10\/12 2026-01-01T00:00:00Z\]$/, 'its stamp is the dumped table\'s history');
stamp_refuses($s, 'from13', 'SELECT id_to_shard(4194309127)', 'the 1.3 dump restored into 1.4');

# Only the extension's or the database's owner writes a stamp that way, as
# with COMMENT ON EXTENSION: another role's COPY is refused.
$s->safe_psql('from13', 'CREATE ROLE plain LOGIN');
($ret, $stdout, $stderr) = $s->psql('from13',
	"COPY idgen_layout_versions FROM stdin;\n1\t2026-01-01 00:00:00+00\t12\t10\t0\t1\n\\.\n",
	extra_params => [ '-U', 'plain' ]);
like($stderr, qr/must be owner of this database or of extension idgen to apply the layout history this restore brings/,
	'another role\'s COPY of a 1.3 history is not taken');
like($s->safe_psql('from13',
		q{SELECT obj_description(oid, 'pg_extension') FROM pg_extension WHERE extname = 'idgen'}),
	qr/\[layout history: 0 10\/12 2026-01-01T00:00:00Z\]$/, 'and the stamp is unchanged');
($ret, $stdout, $stderr) = $s->psql('foreign13', 'ALTER EXTENSION idgen UPDATE');
like($stderr, qr/WARNING:  this database's layout history does not match the server's/,
	'its update warns');
stamp_refuses($s, 'foreign13', 'SELECT id_to_shard(4194309127)', 'updated, it still refuses');
like($s->safe_psql('foreign13',
		q{SELECT obj_description(oid, 'pg_extension') FROM pg_extension WHERE extname = 'idgen'}),
	qr/\[layout history: 0 10\/12 2026-01-01T00:00:00Z\]$/, 'its stamp is the table\'s history');
$s->stop;

done_testing();
