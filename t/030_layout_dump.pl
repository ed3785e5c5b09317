
# Copyright (c) 2026, The idgen Authors
#
# A dump carries a database's copy of the layout history (the extension
# configuration table idgen_layout_versions), so that its IDs decode by the
# layouts that minted them wherever it is restored:
#
#  - after a layout change with idgen.allow_layout_change = on, the
#    "idgen layouts" worker records the new version in every database;
#  - pg_dump writes each table's rows in the order of their names, so a
#    table whose stored values depend on a decoder (events, with a stored
#    generated column of id_to_shard()) may get its rows before the
#    history's, computed by the history CREATE EXTENSION wrote, the
#    restoring server's.  The restore of the history then refuses to
#    replace it under them (SQLSTATE 55000, naming the table): a restore
#    in one go (pg_restore of -Fc, psql of plain SQL) fails loudly, and
#    what the database is left with decodes by the restoring server's
#    history alone, its stored values computed by it too;
#  - restored history first (the pre-data section, then the rows of
#    idgen_layout_versions, then the data and post-data sections) into a
#    new server with the dumped server's current layout, old IDs decode by
#    the old layout and new ones by the new, in every table; the stored
#    generated columns equal the decoders, the rebuilt expression index
#    counts what a seq scan counts, and the server's own new IDs are above
#    the restored ones and decode by its layout;
#  - restored history first into a server that never minted under the
#    dumped layouts, every decoder refuses until idgen_layout_adopt() begins
#    this server's layout above the database's largest ID as a version of
#    its history; then the rows load, decode as on the dumped server, and
#    this server's new IDs are above them and decode by its layout.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use POSIX qw(strftime);
use IPC::Run ();
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# The layouts: epoch (Unix seconds, and as text), shard bits, sequence
# bits, and the shard of the server that mints under it here.
my %layout = (
	a => [ 1767225600, '2026-01-01 00:00:00+00', 12, 10, 7 ],
	b => [ 1767225600, '2026-01-01 00:00:00+00', 13, 9,  5000 ],
	q => [ 1767225600, '2026-01-01 00:00:00+00', 13, 9,  9 ],
	c => [ 1748736000, '2025-06-01 00:00:00+00', 10, 12, 300 ],);

sub layout_settings
{
	my ($l) = @_;
	my (undef, $epoch, $shard_bits, $sequence_bits, $shard) = @{ $layout{$l} };
	return "idgen.epoch = '$epoch'\nidgen.shard_bits = $shard_bits\n"
	  . "idgen.sequence_bits = $sequence_bits\nidgen.shard_id = $shard\n";
}

# Every row's decoding, as the server says it, one line per row:
# id, time (UTC, to the millisecond), shard, sequence, and whether
# idgen_decode() and the stored column agree with them.
sub decodes
{
	my ($node, $db, $where) = @_;
	return $node->safe_psql(
		$db, qq{
SELECT string_agg(format('%s %s %s %s %s', id,
		to_char(id_to_timestamp(id) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS'),
		id_to_shard(id), id_to_sequence(id),
		(idgen_decode(id)).created_at = id_to_timestamp(id)
		  AND (idgen_decode(id)).shard = id_to_shard(id)
		  AND (idgen_decode(id)).sequence = id_to_sequence(id)),
	   E'\\n' ORDER BY id)
  FROM items WHERE $where});
}

# The same lines, computed here from the bits of each ID by a layout.
sub expected
{
	my ($l, @ids) = @_;
	my ($epoch, undef, $shard_bits, $sequence_bits) = @{ $layout{$l} };
	my $low = $shard_bits + $sequence_bits;
	my @lines;
	foreach my $id (sort { $a <=> $b } @ids)
	{
		my $ms = $id >> $low;
		my $t  = $epoch + int($ms / 1000);
		push @lines,
		  sprintf('%d %s.%03d %d %d t',
			$id, strftime('%Y-%m-%d %H:%M:%S', gmtime($t)),
			$ms % 1000,
			($id >> $sequence_bits) & ((1 << $shard_bits) - 1),
			$id & ((1 << $sequence_bits) - 1));
	}
	return join("\n", @lines);
}

sub ids_of
{
	my ($node, $db, $where) = @_;
	return split /\n/,
	  $node->safe_psql($db, "SELECT id FROM items WHERE $where ORDER BY id");
}

sub insert_rows
{
	my ($node, $db, $l, $n) = @_;
	my @ids = split /\n/,
	  $node->safe_psql($db,
		"INSERT INTO items (layout) SELECT '$l' FROM generate_series(1, $n) RETURNING id"
	  );
	is(scalar(@ids), $n, "$db: inserted $n rows under layout $l");
	return @ids;
}

# Index scans against seq scans on id_to_shard(id).
my $by_index = q{SET enable_seqscan = off; SET enable_bitmapscan = on;
SET enable_indexscan = on; };
my $by_seq = q{SET enable_seqscan = on; SET enable_indexscan = off;
SET enable_bitmapscan = off; SET enable_indexonlyscan = off; };

sub shard_count_both_ways
{
	my ($node, $db, $shard, $what) = @_;
	my $q = "SELECT count(*) FROM items WHERE id_to_shard(id) = $shard";
	$node->safe_psql($db, 'ANALYZE items');
	like($node->safe_psql($db, "$by_index EXPLAIN (COSTS OFF) $q"),
		qr/items_shard_idx/, "$what, shard $shard: the plan uses the index");
	my $i = $node->safe_psql($db, "$by_index $q");
	my $s = $node->safe_psql($db, "$by_seq $q");
	is($i, $s,
		"$what, shard $shard: the index scan counts what the seq scan counts ($s)");
	return $s;
}

# Everything that must hold of the rows P minted, in a database restored
# anywhere.
my (@old, @new, $decoded_p);

sub check_restored
{
	my ($node, $db, $what) = @_;
	is(decodes($node, $db, "layout = 'a'"), expected('a', @old),
		"$what: old rows decode as layout A says (shard 7)");
	is(decodes($node, $db, "layout = 'b'"), expected('b', @new),
		"$what: new rows decode as layout B says (shard 5000)");
	is(decodes($node, $db, "layout IN ('a', 'b')"), $decoded_p,
		"$what: every row decodes as on the dumped server");
	is( $node->safe_psql($db,
			'SELECT count(*) FROM items WHERE ts IS DISTINCT FROM id_to_timestamp(id)'),
		'0',
		"$what: the stored generated column equals id_to_timestamp(id)");
	is(shard_count_both_ways($node, $db, 7, $what),
		scalar(@old), "$what: shard 7 has every old row");
	is(shard_count_both_ways($node, $db, 5000, $what),
		scalar(@new), "$what: shard 5000 has every new row");
	return;
}

my $create_table = q{
CREATE TABLE items (
	id bigint PRIMARY KEY DEFAULT idgen_next(),
	layout text NOT NULL,
	ts timestamptz GENERATED ALWAYS AS (id_to_timestamp(id)) STORED);
CREATE INDEX items_shard_idx ON items (id_to_shard(id));
};

# A table whose rows pg_dump writes before those of idgen_layout_versions
# (it sorts them by schema, then name): while they load, the database's
# copy is still what CREATE EXTENSION wrote, this server's history.
my $create_events = q{
CREATE TABLE events (
	id bigint PRIMARY KEY DEFAULT idgen_next(),
	shard integer GENERATED ALWAYS AS (id_to_shard(id)) STORED);
};

# Rows of events whose stored shard is not what layout A (below the
# cut-over) or B says, or not the decoder's.
sub misstored_events
{
	my ($node, $db, $cut) = @_;
	return $node->safe_psql(
		$db, qq{
SELECT count(*) FROM events
 WHERE shard IS DISTINCT FROM id_to_shard(id)
	OR shard IS DISTINCT FROM CASE WHEN id < $cut THEN (id >> 10) & 4095
								   ELSE (id >> 9) & 8191 END});
}

# --------------------------------------------------------------------------
# Server P, layout A (the defaults, shard 7).

my $p = idgen_node('p', conf => "include_if_exists = 'idgen_layout.conf'\n");
my $p_conf = $p->data_dir . '/idgen_layout.conf';
write_conf($p_conf, "idgen.shard_id = 7\n");
$p->start;
$p->safe_psql('postgres', 'CREATE DATABASE app');
$p->safe_psql('postgres', 'CREATE DATABASE other');
$p->safe_psql('app',   "CREATE EXTENSION idgen; $create_table");
$p->safe_psql('app', $create_events . 'INSERT INTO events SELECT FROM generate_series(1, 10)');
$p->safe_psql('other', 'CREATE EXTENSION idgen');

@old = insert_rows($p, 'app', 'a', 500);
usleep(20_000);
push @old, insert_rows($p, 'app', 'a', 500);
is(decodes($p, 'app', "layout = 'a'"), expected('a', @old),
	'P, layout A: every row decodes as layout A says');
is($p->safe_psql('app', 'SELECT count(*) FROM idgen_layout_versions'),
	'1', 'P, layout A: the database has one version');

# --------------------------------------------------------------------------
# Layout B on P, with the override.

$p->stop;
write_conf($p_conf, layout_settings('b') . "idgen.allow_layout_change = on\n");
my $offset = -s $p->logfile;
$p->start;
foreach my $db ('app', 'other')
{
	ok( log_has(
			$p, $offset,
			qr/idgen recorded 1 layout version\(s\) in database "$db"/),
		"P, layout B: the worker recorded the new version in \"$db\"");
	is($p->safe_psql($db, 'SELECT count(*) FROM idgen_layout_versions'),
		'2', "P, layout B: \"$db\" has two versions");
}
my ($cut) = slurp_file($p->logfile, $offset) =~
  /idgen layout version 2 begins at ID (\d+)/;
ok(defined $cut, 'P, layout B: the log says where version 2 begins');
$cut //= 0;
is( $p->safe_psql(
		'app',
		'SELECT string_agg(format(\'%s %s %s %s\', version, shard_bits, sequence_bits, first_id), \',\' ORDER BY version) FROM idgen_layout_versions'
	),
	"1 12 10 0,2 13 9 $cut",
	'P, layout B: the versions are A from 0 and B from the cut-over');

@new = insert_rows($p, 'app', 'b', 500);
usleep(20_000);
push @new, insert_rows($p, 'app', 'b', 500);
$p->safe_psql('app', 'INSERT INTO events SELECT FROM generate_series(1, 10)');
is(misstored_events($p, 'app', $cut), '0',
	'P: events stored the shards of layouts A and B');
ok(max_id(\@old) < min_id(\@new), 'P: new IDs are above old ones');
is(decodes($p, 'app', "layout = 'b'"), expected('b', @new),
	'P, layout B: new rows decode as layout B says');
is(decodes($p, 'app', "layout = 'a'"), expected('a', @old),
	'P, layout B: old rows still decode as layout A says');
$decoded_p = decodes($p, 'app', "layout IN ('a', 'b')");

# --------------------------------------------------------------------------
# The dumps, as users make them: whole, and in the three parts of a restore
# that brings the history first.

my $dir     = PostgreSQL::Test::Utils::tempdir();
my $dump_fc = "$dir/app.dump";
my $dump_sq = "$dir/app.sql";
my @parts_sq = map { "$dir/app.$_.sql" } ('pre', 'versions', 'rest');
$p->command_ok([ 'pg_dump', '-Fc', '-f', $dump_fc, '-d', $p->connstr('app') ],
	'pg_dump -Fc');
$p->command_ok([ 'pg_dump', '-f', $dump_sq, '-d', $p->connstr('app') ],
	'pg_dump, plain SQL');
like(slurp_file($dump_sq), qr/COPY public\.idgen_layout_versions/,
	'the dump carries idgen_layout_versions');
like(slurp_file($dump_sq),
	qr/^COPY public\.events .*^COPY public\.idgen_layout_versions .*^COPY public\.items /ms,
	'the dump holds the rows of events first, then the versions, then items');
$p->command_ok(
	[ 'pg_dump', '--section=pre-data', '-f', $parts_sq[0], '-d', $p->connstr('app') ],
	'pg_dump --section=pre-data');
$p->command_ok(
	[
		'pg_dump', '--data-only', '--table=idgen_layout_versions',
		'-f', $parts_sq[1], '-d', $p->connstr('app')
	],
	'pg_dump --data-only --table=idgen_layout_versions');
$p->command_ok(
	[
		'pg_dump', '--section=data', '--section=post-data',
		'-f', $parts_sq[2], '-d', $p->connstr('app')
	],
	'pg_dump --section=data --section=post-data');
is( join(',', slurp_file($parts_sq[1]) =~ /^COPY (\S+) /mg),
	'public.idgen_layout_versions',
	'pg_dump --data-only --table=idgen_layout_versions: the rows of the versions alone');
unlike(slurp_file($parts_sq[0]), qr/^COPY /m, 'pre-data: no rows');
like(slurp_file($parts_sq[2]),
	qr/^COPY public\.events .*^COPY public\.idgen_layout_versions .*^COPY public\.items /ms,
	'data and post-data: every table\'s rows, the versions\' again');
my $p_max = max_id(\@new);

# The largest ID of the database: events got IDs after items' last.
my $src_max = $p->safe_psql('app',
	'SELECT max(id) FROM (SELECT id FROM items UNION ALL SELECT id FROM events) s');
ok($src_max > $p_max, 'P: the largest ID of the database is one of events\'');
$p->stop;

my $versions_q =
  q{SELECT string_agg(format('%s %s %s %s', version, shard_bits, sequence_bits, first_id), ',' ORDER BY version) FROM idgen_layout_versions WHERE version <= 2};
# Q mints under P's last layout: the restore left a marker where Q begins,
# a version of Q's own history, above P's
my $marker_q =
  q{SELECT count(*), bool_and(shard_bits = 13 AND sequence_bits = 9), bool_and(first_id > (SELECT max(first_id) FROM idgen_layout_versions WHERE version < 3)), bool_and(history <> (SELECT history FROM idgen_layout_versions WHERE version = 1)) FROM idgen_layout_versions WHERE version >= 3};

sub run_cmd
{
	my ($cmd, $in) = @_;
	my ($stdout, $stderr) = ('', '');
	my $ok = IPC::Run::run($cmd, '<', \($in // ''), '>', \$stdout, '2>', \$stderr);
	return ($ok, $stderr);
}

# Restore a dump in one go into a new database of a node, going on past
# errors as both tools do by default: custom format through pg_restore,
# plain SQL through psql.
sub restore_at_once
{
	my ($node, $db, $how) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	return run_cmd(
		$how eq 'fc'
		? [ 'pg_restore', '-d', $node->connstr($db), $dump_fc ]
		: [ 'psql', '-X', '-q', '-d', $node->connstr($db), '-f', $dump_sq ]);
}

# The restore, history first, in a new database, stopping at the first
# error: step 0 the pre-data section, 1 the rows of idgen_layout_versions,
# 2 the data and post-data sections; $between runs after step 1.
sub restore_history_first
{
	my ($node, $name, $db, $how, $between) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	my @fc = (
		[ '--section=pre-data' ],
		[ '--data-only', '--table=idgen_layout_versions' ],
		[ '--section=data', '--section=post-data' ]);
	foreach my $step (0 .. 2)
	{
		my ($ok, $stderr) = run_cmd(
			$how eq 'fc'
			? [
				'pg_restore', '--exit-on-error', @{ $fc[$step] },
				'-d', $node->connstr($db), $dump_fc
			  ]
			: [
				'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1',
				'-d', $node->connstr($db), '-f', $parts_sq[$step]
			  ]);
		ok($ok, "$name, $how: history first, step " . ($step + 1) . ' of 3 succeeds')
		  or diag($stderr);
		if ($step == 1)
		{
			is($node->safe_psql($db, $versions_q), "1 12 10 0,2 13 9 $cut",
				"$name, $how: history first, step 2 replaced this server's version by P's two");
			is($node->safe_psql($db, $marker_q), $name eq 'Q' ? '1|t|t|t' : '0|||',
				"$name, $how: " . ($name eq 'Q' ? 'a marker of Q\'s own follows them' : 'no marker: R mints under another layout'));
		}
		$between->() if $step == 1 && $between;
	}
	return;
}

# A query's result, or its error: a database left wrong must fail the
# checks below, not stop the test.
sub result_or_error
{
	my ($node, $db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql);
	return $ret == 0 ? $out : $err;
}

# A restore in one go fails loudly, and leaves a database that decodes by
# the restoring server's history alone ($l), the one its stored values were
# computed by.
sub check_at_once
{
	my ($node, $name, $how, $l, $own) = @_;
	my $db = "at_once_$how";
	my ($ok, $stderr) = restore_at_once($node, $db, $how);
	note "$name, $how: the restore in one go said: $stderr";
	if ($how eq 'fc')
	{
		ok(!$ok, "$name, $how: pg_restore exits non-zero");
		like($stderr, qr/errors ignored on restore: 1$/m,
			"$name, $how: pg_restore reports one error");
	}
	like($stderr,
		qr/ERROR:  rows of table public\.events were stored before this database's layout history\n/,
		"$name, $how: the restore of idgen_layout_versions fails, naming events");
	like($stderr,
		qr/HINT:  Restore "idgen_layout_versions" before the other tables' rows: pg_restore --section=pre-data, then --data-only --table=idgen_layout_versions, then the rest\./,
		"$name, $how: the hint says to restore the history first");
	is(result_or_error($node, $db, $versions_q), $own,
		"$name, $how: idgen_layout_versions still holds this server's own history");
	is( result_or_error($node, $db,
			'SELECT (SELECT count(*) FROM items) || \' \' || (SELECT count(*) FROM events)'),
		'2000 20',
		"$name, $how: the other tables' rows are there");
	is(eval { decodes($node, $db, 'true') } // $@, expected($l, @old, @new),
		"$name, $how: items decode by this server's layout alone");
	is( result_or_error($node, $db,
			'SELECT count(*) FROM items WHERE ts IS DISTINCT FROM id_to_timestamp(id)'),
		'0', "$name, $how: items' stored column was computed by that history");
	is( result_or_error($node, $db,
			'SELECT count(*) FROM events WHERE shard IS DISTINCT FROM id_to_shard(id)'),
		'0', "$name, $how: events' stored column was computed by that history");
	return;
}

# --------------------------------------------------------------------------
# Server Q: a new cluster with layout B, shard 9; its history is B from 0.

my $q = idgen_node('q', conf => layout_settings('q'));
$q->start;
is( $q->safe_psql(
		'postgres',
		'CREATE EXTENSION idgen; SELECT count(*), min(first_id) FROM idgen_layout_history()'),
	'1|0',
	'Q: its own history is one version, from 0');

foreach my $how ('fc', 'sql')
{
	check_at_once($q, 'Q', $how, 'b', '1 13 9 0');

	my $db = "restored_$how";
	restore_history_first($q, 'Q', $db, $how);
	check_restored($q, $db, "Q, $how");
	is(misstored_events($q, $db, $cut), '0',
		"Q, $how: events stored its shards by layouts A and B");
	is($q->safe_psql($db, $versions_q), "1 12 10 0,2 13 9 $cut",
		"Q, $how: the database has P's two versions");
	is($q->safe_psql($db, $marker_q), '1|t|t|t', "Q, $how: and Q's marker");

	# doc/upgrading.md: move the generator above the restored IDs first
	$q->safe_psql($db, "SELECT idgen_advance_past($src_max)");
	my @mine = insert_rows($q, $db, 'q', 200);
	ok(min_id(\@mine) > $src_max, "Q, $how: new IDs are above every restored one");
	is(decodes($q, $db, "layout = 'q'"), expected('q', @mine),
		"Q, $how: new IDs decode as layout B says, shard 9");
	is(shard_count_both_ways($q, $db, 9, "Q, $how"),
		200, "Q, $how: shard 9 has the new rows");
}

$q->stop;

# --------------------------------------------------------------------------
# Server R: a new cluster with layout C, which P never minted under.

my $r = idgen_node('r', conf => layout_settings('c'));
$r->start;

foreach my $how ('fc', 'sql')
{
	check_at_once($r, 'R', $how, 'c', '1 10 12 0');

	my $db = "restored_$how";
	my $first;
	restore_history_first(
		$r, 'R', $db, $how,
		sub {
			# a history this server never minted under: every decoder refuses
			foreach my $call ('id_to_timestamp(id)', 'id_to_shard(id)',
				'id_to_sequence(id)', 'idgen_decode(id)',
				'id_to_layout_version(id)', "min_id_at(now())")
			{
				my ($ret, undef, $err) = $r->psql($db,
					"\\set VERBOSITY verbose\nSELECT $call FROM (SELECT ${p_max}::bigint AS id) s"
				);
				like($err,
					qr/ERROR:  55000: this database's layout history does not match the server's/,
					"R, $how: $call refuses");
				like($err, qr/HINT:  .*SELECT idgen_layout_adopt\(N\)/,
					"R, $how: $call hints at idgen_layout_adopt()")
				  if $call eq 'id_to_timestamp(id)';
			}

			is($r->safe_psql($db, "SELECT idgen_layout_adopt($src_max)"),
				'3', "R, $how: idgen_layout_adopt() returns version 3");
			my $v3;
			($v3, $first) = split /\|/,
			  $r->safe_psql($db,
				"SELECT format('%s %s %s', shard_bits, sequence_bits, epoch = '$layout{c}[1]'), first_id FROM idgen_layout_versions WHERE version = 3"
			  );
			is($v3, '10 12 t', "R, $how: version 3 is layout C");
			ok($first > $src_max,
				"R, $how: version 3 begins above every ID of the database");
		});
	is($r->safe_psql($db, 'SELECT count(*) FROM idgen_layout_versions'),
		'3', "R, $how: the database has three versions");

	check_restored($r, $db, "R, $how");
	is(misstored_events($r, $db, $cut), '0',
		"R, $how: events stored its shards by layouts A and B");
	my @mine = insert_rows($r, $db, 'c', 200);
	ok(min_id(\@mine) > $src_max,
		"R, $how: new IDs are above every restored one");
	ok(min_id(\@mine) >= $first, "R, $how: new IDs are in version 3");
	is(decodes($r, $db, "layout = 'c'"), expected('c', @mine),
		"R, $how: new IDs decode as layout C says, shard 300");
	is(shard_count_both_ways($r, $db, 300, "R, $how"),
		200, "R, $how: shard 300 has the new rows");
	is( $r->safe_psql(
			$db,
			'SELECT count(*) FROM items WHERE ts IS DISTINCT FROM id_to_timestamp(id)'),
		'0',
		"R, $how: the stored generated column equals id_to_timestamp(id), new rows too");
}

$r->stop;
done_testing();
