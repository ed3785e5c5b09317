
# Copyright (c) 2026, The idgen Authors
#
# A dump carries the layouts its IDs were minted under as the stamp at the
# end of the extension's comment, and a plain restore (pg_restore -d, psql
# -f, default flags) either decodes every ID as on the dumped server or,
# where the restoring server's history differs, fails loudly and every
# decoder refuses (55000) until idgen_layout_adopt():
#
#  - nothing of idgen is a table: a FOR ALL TABLES publication holds only
#    the user's tables, and there is nothing to TRUNCATE;
#  - restored into a new database of the same server, and into a fresh
#    cluster with the same (default) layout: no error, every ID decodes as
#    it did, stored generated columns and an expression index included;
#  - after a layout change the "idgen stamps" worker stamps every database
#    with the new version before minting goes on, and a dump made then,
#    restored into a fresh cluster with the old layout, refuses (without
#    the stamp its new rows would decode by the old layout);
#  - a dump made before the change, restored into the changed server,
#    refuses until idgen_layout_adopt(), then decodes as minted.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use POSIX qw(strftime);
use IPC::Run ();
use File::Copy qw(copy);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# epoch (Unix seconds, and as text), shard bits, sequence bits, shard
my %layout = (
	a => [ 1767225600, '2026-01-01 00:00:00+00', 12, 10, 7 ],
	b => [ 1767225600, '2026-01-01 00:00:00+00', 13, 9,  5000 ],);

sub layout_settings
{
	my ($l) = @_;
	my (undef, $epoch, $shard_bits, $sequence_bits, $shard) = @{ $layout{$l} };
	return "idgen.epoch = '$epoch'\nidgen.shard_bits = $shard_bits\n"
	  . "idgen.sequence_bits = $sequence_bits\nidgen.shard_id = $shard\n";
}

# A file with these contents alone.
sub append_to_file_fresh
{
	my ($path, $text) = @_;
	unlink $path;
	append_to_file($path, $text);
	return;
}

# Every row's decoding as the server says it: id, time, shard, sequence.
sub decodes
{
	my ($node, $db, $where) = @_;
	return $node->safe_psql(
		$db, qq{
SELECT string_agg(format('%s %s %s %s', id,
		to_char(id_to_timestamp(id) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS'),
		id_to_shard(id), id_to_sequence(id)), E'\\n' ORDER BY id)
  FROM items WHERE $where});
}

# The same lines, computed here from the bits of each ID by a layout.
sub expected
{
	my ($l, @ids) = @_;
	my ($epoch, undef, $shard_bits, $sequence_bits) = @{ $layout{$l} };
	my $low = $shard_bits + $sequence_bits;
	return join("\n",
		map {
			my $ms = $_ >> $low;
			sprintf('%d %s.%03d %d %d',
				$_, strftime('%Y-%m-%d %H:%M:%S', gmtime($epoch + int($ms / 1000))),
				$ms % 1000,
				($_ >> $sequence_bits) & ((1 << $shard_bits) - 1),
				$_ & ((1 << $sequence_bits) - 1))
		} sort { $a <=> $b } @ids);
}

sub insert_rows
{
	my ($node, $db, $l, $n) = @_;
	return split /\n/,
	  $node->safe_psql($db,
		"INSERT INTO items (layout) SELECT '$l' FROM generate_series(1, $n) RETURNING id");
}

# What must hold of P's rows in a database restored anywhere: every row
# decodes by the layout that minted it, and what was stored or indexed
# from the decoders agrees.
my (@old, @new);

sub check_decodes
{
	my ($node, $db, $what, $with_new) = @_;
	is(decodes($node, $db, "layout = 'a'"), expected('a', @old),
		"$what: the rows of layout A decode by it");
	is(decodes($node, $db, "layout = 'b'"), expected('b', @new),
		"$what: the rows of layout B decode by it")
	  if $with_new;
	is( $node->safe_psql($db,
			'SELECT count(*) FROM items WHERE ts IS DISTINCT FROM id_to_timestamp(id)'),
		'0', "$what: the stored generated column equals id_to_timestamp(id)");
	$node->safe_psql($db, 'ANALYZE items');
	my $q = 'SELECT count(*) FROM items WHERE id_to_shard(id) = 7';
	like(
		$node->safe_psql($db, "SET enable_seqscan = off; EXPLAIN (COSTS OFF) $q"),
		qr/items_shard_idx/, "$what: the plan uses the expression index");
	is($node->safe_psql($db, "SET enable_seqscan = off; $q"),
		scalar(@old), "$what: the index finds every row of shard 7");
	return;
}

sub run_cmd
{
	my (@cmd) = @_;
	my ($stdout, $stderr) = ('', '');
	my $ok = IPC::Run::run(\@cmd, '<', \'', '>', \$stdout, '2>', \$stderr);
	return ($ok, $stderr);
}

# A dump restored in one command with default flags, into a new database.
sub restore
{
	my ($node, $db, $dump) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	return run_cmd(
		$dump =~ /\.sql$/
		? ('psql', '-X', '-q', '-d', $node->connstr($db), '-f', $dump)
		: ('pg_restore', '-d', $node->connstr($db), $dump));
}

my $create_table = q{
CREATE TABLE items (
	id bigint PRIMARY KEY DEFAULT idgen_next(),
	layout text NOT NULL,
	ts timestamptz GENERATED ALWAYS AS (id_to_timestamp(id)) STORED);
CREATE INDEX items_shard_idx ON items (id_to_shard(id));
};

my $dir = PostgreSQL::Test::Utils::tempdir();

# --------------------------------------------------------------------------
# Server P, layout A.

my $p = idgen_node('p', conf => "include_if_exists = 'idgen_layout.conf'\n");
my $p_conf = $p->data_dir . '/idgen_layout.conf';
write_conf($p_conf, layout_settings('a'));
$p->start;
$p->safe_psql('postgres', 'CREATE DATABASE app');
$p->safe_psql('app', "CREATE EXTENSION idgen; $create_table");
@old = insert_rows($p, 'app', 'a', 300);
usleep(20_000);
push @old, insert_rows($p, 'app', 'a', 300);
check_decodes($p, 'app', 'P, layout A');

# IMMUTABLE lets the planner fold a decoder of a constant: what it folds
# now must be what any later layout and restore decode (checked below).
my $first = $old[0];
like(
	$p->safe_psql('app', "EXPLAIN (VERBOSE, COSTS OFF) SELECT id_to_shard($first)"),
	qr/Output: 7\b/, 'the planner folds id_to_shard() of a constant');
my $folded = $p->safe_psql('app',
	"SELECT id_to_shard($first), id_to_sequence($first), id_to_timestamp($first)");

# Nothing of idgen a schema tool or a publication would take for the user's.
is( $p->safe_psql(
		'app', q{
SELECT string_agg(c.relname || ':' || c.relkind::text, ',' ORDER BY c.relname)
  FROM pg_class AS c JOIN pg_depend AS d
	ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
 WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')}),
	'idgen_stats:v,idgen_stats_backends:v',
	'the extension has no table, sequence or index: its relations are two views');
$p->safe_psql('app', 'CREATE PUBLICATION everything FOR ALL TABLES');
is($p->safe_psql('app', 'SELECT string_agg(tablename, \',\') FROM pg_publication_tables'),
	'items', 'a FOR ALL TABLES publication holds the user\'s table alone');
$p->safe_psql('app', 'DROP PUBLICATION everything');
like(
	$p->safe_psql('app',
		q{SELECT obj_description(oid, 'pg_extension') FROM pg_extension WHERE extname = 'idgen'}),
	qr/\[layout history: 0 12\/10 2026-01-01T00:00:00Z\]$/,
	'the extension\'s comment ends with the stamp: version 1, layout A');

my $dump_a_fc = "$dir/app_a.dump";
my $dump_a_sq = "$dir/app_a.sql";
$p->command_ok([ 'pg_dump', '-Fc', '-f', $dump_a_fc, '-d', $p->connstr('app') ],
	'pg_dump -Fc under layout A');
$p->command_ok([ 'pg_dump', '-f', $dump_a_sq, '-d', $p->connstr('app') ],
	'pg_dump (plain) under layout A');
like(slurp_file($dump_a_sq),
	qr/^CREATE EXTENSION .*^COMMENT ON EXTENSION idgen IS '.*\[layout history: [^\]]*\]';.*^CREATE TABLE public\.items/ms,
	'the plain dump carries the stamp right after CREATE EXTENSION, before the tables');
unlike(slurp_file($dump_a_sq), qr/idgen_layout_versions/,
	'the dump names no table of idgen');

# Plain restores on the same server.
foreach my $dump ($dump_a_fc, $dump_a_sq)
{
	my $db = $dump =~ /\.sql$/ ? 'copy_sq' : 'copy_fc';
	my ($ok, $stderr) = restore($p, $db, $dump);
	ok($ok, "$db: the restore on the same server succeeds");
	is($stderr, '', "$db: and says nothing");
	check_decodes($p, $db, "$db on P");
}

# A fresh cluster with the same layout: its history looks the same.
my $q = idgen_node('q', conf => layout_settings('a'), own_system => 1);
$q->start;
{
	my ($ok, $stderr) = restore($q, 'app', $dump_a_fc);
	ok($ok, 'Q, fresh with layout A: pg_restore succeeds');
	is($stderr, '', 'Q: and says nothing');
	check_decodes($q, 'app', 'Q');
}

# --------------------------------------------------------------------------
# Layout B on P: every database stamped before minting goes on.

$p->stop;
write_conf($p_conf, layout_settings('b') . "idgen.allow_layout_change = on\n");
my $offset = -s $p->logfile;
$p->start;
@new = insert_rows($p, 'app', 'b', 300);
ok(log_has($p, $offset, qr/idgen stamped database "$_" with layout versions 2 to 2/),
	"P, layout B: the stamps worker stamped \"$_\"")
  foreach ('app', 'copy_fc', 'copy_sq');
ok(log_has($p, $offset, qr/idgen stamped every database with its 2 layout version\(s\)/),
	'P, layout B: and said it had stamped them all');
my ($cut) = slurp_file($p->logfile, $offset) =~ /idgen layout version 2 begins at ID (\d+)/;
like(
	$p->safe_psql('app',
		q{SELECT obj_description(oid, 'pg_extension') FROM pg_extension WHERE extname = 'idgen'}),
	qr/\[layout history: 0 12\/10 2026-01-01T00:00:00Z, $cut 13\/9 2026-01-01T00:00:00Z\]$/,
	'P, layout B: the stamp lists both versions');
check_decodes($p, 'app', 'P, layout B', 1);
is( $p->safe_psql('app',
		"SELECT id_to_shard($first), id_to_sequence($first), id_to_timestamp($first)"),
	$folded, 'P, layout B: a constant decodes as it was folded under A');

# A restart with the same history stamps nothing again.
$offset = -s $p->logfile;
$p->restart;
$p->safe_psql('app', 'SELECT idgen_next()');
# (a pass would have begun at the start, and each database takes it
# milliseconds: 5 s of the log, not the 30 s a line that should come gets)
ok(!log_has($p, $offset, qr/idgen stamped/, 5),
	'P, restarted: the history was stamped everywhere already; no database is visited');

# idgen.stamped is framed with the cluster's identifier: another cluster's
# file is not believed (every database is visited again), and the text an
# older idgen wrote still is.
$p->stop;
copy($q->data_dir . '/idgen.stamped', $p->data_dir . '/idgen.stamped')
  or die "copy: $!";
$offset = -s $p->logfile;
$p->start;
$p->safe_psql('app', 'SELECT idgen_next()');
ok(log_has($p, $offset, qr/idgen ignores "idgen.stamped": it was written by another cluster/),
	"P, with Q's idgen.stamped: the file is ignored, as another cluster's");
ok(log_has($p, $offset, qr/idgen stamped every database with its 2 layout version\(s\)/),
	'P: every database is visited again, and the file written anew');
$p->stop;
append_to_file_fresh($p->data_dir . '/idgen.stamped',
	"0 12/10 2026-01-01T00:00:00Z, $cut 13/9 2026-01-01T00:00:00Z\n");
$offset = -s $p->logfile;
$p->start;
$p->safe_psql('app', 'SELECT idgen_next()');
ok(!log_has($p, $offset, qr/idgen stamped|idgen ignores/, 5),
	'P, with the text idgen 1.4 to 1.7 wrote: it is taken; no database is visited');
unlike(slurp_file($p->data_dir . '/idgen.stamped'), qr/^0 /,
	'and it is written framed at once, to be read once');

my $dump_b_fc = "$dir/app_b.dump";
my $dump_b_sq = "$dir/app_b.sql";
$p->command_ok([ 'pg_dump', '-Fc', '-f', $dump_b_fc, '-d', $p->connstr('app') ],
	'pg_dump -Fc under layout B');
$p->command_ok([ 'pg_dump', '-f', $dump_b_sq, '-d', $p->connstr('app') ],
	'pg_dump (plain) under layout B');
{
	my ($ok, $stderr) = restore($p, 'copy_b', $dump_b_fc);
	is($stderr, '', 'the dump under B restored on P: no error');
	check_decodes($p, 'copy_b', 'copy_b on P', 1);
}

# Into Q, which never minted under B: the restore says so and fails on the
# rows whose stored column needs a decoder; every decoder refuses after.
foreach my $dump ($dump_b_fc, $dump_b_sq)
{
	my $db = $dump =~ /\.sql$/ ? 'app_b_sq' : 'app_b_fc';
	my ($ok, $stderr) = restore($q, $db, $dump);
	ok(!$ok || $dump =~ /\.sql$/, "$db on Q: pg_restore exits with failure");
	like($stderr,
		qr/WARNING:  this database's IDs were minted under another layout history than this server's/,
		"$db on Q: psql shows the WARNING when the stamp arrives")
	  if $dump =~ /\.sql$/;
	like($stderr, qr/this database's layout history does not match the server's/,
		"$db on Q: the rows of items, whose column needs a decoder, fail to load");
	stamp_refuses($q, $db, 'SELECT id_to_timestamp(1)', "$db on Q: id_to_timestamp()");
	stamp_refuses($q, $db, 'SELECT min_id_at(now())',   "$db on Q: min_id_at()");
	stamp_refuses($q, $db, 'SELECT idgen_next()',       "$db on Q: idgen_next()");
	stamp_refuses($q, $db, "EXPLAIN SELECT id_to_shard($first)",
		"$db on Q: the planner, folding a constant");
}

# Without a generated column the rows load, and still nothing decodes.
$p->safe_psql('app', 'CREATE TABLE plain_ids AS SELECT id FROM items');
my $dump_plain = "$dir/plain_ids.dump";
$p->command_ok(
	[ 'pg_dump', '-Fc', '-f', $dump_plain, '-d', $p->connstr('app'),
	  '--exclude-table=items' ],
	'pg_dump -Fc of plain_ids with the extension');
{
	my ($ok, $stderr) = restore($q, 'plain_b', $dump_plain);
	is($q->safe_psql('plain_b', 'SELECT count(*) FROM plain_ids'),
		scalar(@old) + scalar(@new), 'plain_b on Q: every row loaded');
	my $err = stamp_refuses($q, 'plain_b', 'SELECT count(DISTINCT id_to_shard(id)) FROM plain_ids',
		'plain_b on Q: id_to_shard() of the loaded rows');
	like($err, qr/HINT:  It was restored from a server with another layout history/,
		'plain_b on Q: the hint says where such a database belongs');
}

# A dump made under A, restored into P after the change: its stamp is the
# start of P's history; P cannot tell a dump of its own from one of a copy
# that kept minting under A, so it refuses until told.
{
	my ($ok, $stderr) = restore($p, 'old_a', $dump_a_fc);
	stamp_refuses($p, 'old_a', 'SELECT id_to_shard(1)', 'old_a on P (a dump of P before the change)');
	is($p->safe_psql('old_a', 'SELECT count(*) FROM items'), '0',
		'old_a on P: the rows with a stored decoder did not load');
	like($p->safe_psql('old_a', 'SELECT idgen_layout_adopt()'),
		qr/^0 12\/10 2026-01-01T00:00:00Z, $cut 13\/9 2026-01-01T00:00:00Z$/,
		'old_a on P: idgen_layout_adopt() stamps the server\'s history');
	$p->command_ok(
		[ 'pg_restore', '--data-only', '-d', $p->connstr('old_a'), $dump_a_fc ],
		'old_a on P: the rows load once adopted');
	check_decodes($p, 'old_a', 'old_a on P, adopted');
}

# A later change stamps P's own databases again, and leaves a restored
# stamp of fewer versions refusing: it may be a copy's that kept minting
# under A, and the worker extends only the history it stamped last.
restore($p, 'old_a2', $dump_a_fc);
stamp_refuses($p, 'old_a2', 'SELECT id_to_shard(1)', 'old_a2 on P, left unadopted');
$p->stop;
write_conf($p_conf,
	"idgen.epoch = '2026-01-01 00:00:00+00'\nidgen.shard_bits = 14\n"
	  . "idgen.sequence_bits = 8\nidgen.shard_id = 9000\nidgen.allow_layout_change = on\n");
$offset = -s $p->logfile;
$p->start;
$p->safe_psql('app', 'INSERT INTO items (layout) VALUES (\'c\')');
ok(log_has($p, $offset, qr/idgen stamped database "app" with layout versions 3 to 3/),
	'P, a third layout: the worker stamps version 3 on app');
ok(log_has($p, $offset, qr/database "old_a2" keeps a layout history that is not this server's/),
	'P, a third layout: and leaves old_a2\'s stamp');
stamp_refuses($p, 'old_a2', 'SELECT id_to_shard(1)', 'old_a2 on P, after the third layout');
check_decodes($p, 'app', 'P, layout C', 1);

# Only a superuser (or whom it grants to) says which history applies.
$p->safe_psql('app', 'CREATE ROLE app_user LOGIN');
my ($ret, $stdout, $stderr) =
  $p->psql('app', 'SELECT idgen_layout_adopt()', extra_params => [ '-U', 'app_user' ]);
like($stderr, qr/permission denied for function idgen_layout_adopt/,
	'idgen_layout_adopt() is not for PUBLIC');

$p->stop;
$q->stop;
done_testing();
