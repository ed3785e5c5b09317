
# Copyright (c) 2026, The idgen Authors
#
# A dump restored by the database's owner, a role that is not a superuser
# and does not own the extension (doc/upgrading.md, "Restores"):
# every row either decodes as on its source or is refused (55000), never
# decoded wrong, and nothing a failed statement tried changes the server.
#
# The source mints 2,000 IDs under idgen.epoch = 2025-01-01, and names the
# target's four backfill lanes as its own (so its dumps say they may hold
# their IDs); the target runs the defaults (another layout history), with
# those lanes ready; a third server has the source's history.
#
#  (e) first, with the lanes ready: a stamp-bearing COMMENT by a role that
#      owns neither the database nor the extension fails with 42501 and
#      changes nothing (lanes ready, after a restart too), in a database
#      with the extension and in one without; the database owner's, rolled
#      back, changes nothing either; committed, it stops the lanes;
#  (g) the database owner runs idgen_layout_adopt() (1.8), a plain role may
#      not;
#  (a) pg_restore --no-owner -U app into a database with the extension
#      (plain, -j 2, --single-transaction): the stamp is applied, every
#      decoder refuses, and the lanes stop;
#  (b) the same into a database without the extension: the stamp is kept
#      (a security label) and CREATE EXTENSION takes it, so it refuses;
#  (c) psql -U app -f of a plain dump, for both;
#  (d) a superuser's restore, refused, then DROP EXTENSION and CREATE
#      EXTENSION: still refused;
#  (f) the same restores by app into the server with the source's history:
#      every row decodes as on the source, and app mints into it;
#  and databases created at 1.0 and 1.6 decode their rows once updated.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $rows = 2000;
my $source_epoch = "idgen.epoch = '2025-01-01 00:00:00+00'\n";
my $foreign_stamp = '0 12/10 2025-01-01T00:00:00Z';
my $refuses = qr/ERROR:  55000: this database's layout history does not match the server's/;
my $other_history =
  qr/WARNING:  (?:01000: )?this database's IDs were minted under another layout history than this server's/;
my $kept =
  qr/WARNING:  (?:01000: )?extension "idgen" is not created in this database; the layout history it brings is kept for CREATE EXTENSION idgen/;

# Each row as the server decodes it: id, time, shard, sequence.
my $decode_sql = q{
SELECT string_agg(format('%s %s %s %s', id,
		to_char(id_to_timestamp(id) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS'),
		id_to_shard(id), id_to_sequence(id)), E'\n' ORDER BY id)
  FROM ev};

# --------------------------------------------------------------------------
# The source: app's database, 2,000 IDs minted under the 2025 epoch, no
# DEFAULT (the table restores where the extension is missing).

my $source = idgen_node('source',
	conf => $source_epoch . "idgen.backfill_shards = '4000-4003'\n");
$source->start;
$source->safe_psql('postgres',
	'CREATE ROLE app LOGIN NOSUPERUSER; CREATE DATABASE app OWNER app');
$source->safe_psql('app', 'CREATE EXTENSION idgen');
$source->safe_psql('app', q{
SET ROLE app;
CREATE TABLE ev (id bigint PRIMARY KEY, note text);
INSERT INTO ev SELECT idgen_next(), 'event ' || g FROM generate_series(1, 2000) AS g;});
my %decoded =
  map { (split / /)[0] => $_ } split /\n/, $source->safe_psql('app', $decode_sql);
is(scalar(keys %decoded), $rows, 'the source decodes its 2,000 rows');
like($source->safe_psql('app',
		q{SELECT obj_description(oid, 'pg_extension') FROM pg_extension WHERE extname = 'idgen'}),
	qr/ \[shards: 0, 4000-4003\] \[layout history: \Q$foreign_stamp\E\]$/,
	'the source\'s stamp names its lanes and the 2025 epoch');

my $dir = PostgreSQL::Test::Utils::tempdir();
my $dump = "$dir/app.dump";
my $plain = "$dir/app.sql";
$source->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $source->connstr('app') ],
	'pg_dump -Fc of the source');
$source->command_ok([ 'pg_dump', '-f', $plain, '-d', $source->connstr('app') ],
	'pg_dump (plain) of the source');
$source->stop;

# --------------------------------------------------------------------------
# Helpers.

sub run_cmd
{
	my (@cmd) = @_;
	my ($stdout, $stderr) = ('', '');
	my $ok = IPC::Run::run(\@cmd, '<', \'', '>', \$stdout, '2>', \$stderr);
	return ($ok, $stderr);
}

# A statement as a role (undef: the superuser); (exit code, stdout, stderr).
sub as_role
{
	my ($node, $db, $role, $sql) = @_;
	my ($stdout, $stderr);
	my $ret = $node->psql($db, "\\set VERBOSITY verbose\n$sql",
		stdout => \$stdout, stderr => \$stderr,
		defined $role ? (extra_params => [ '-U', $role ]) : ());
	return ($ret, $stdout, $stderr);
}

# How many rows of ev decode otherwise than on the source, and how: 'refused'
# when every decoder and idgen_next() fail with 55000, 'decoded' when they
# all answer.  A row the source did not have counts as wrong.
sub wrong_rows
{
	my ($node, $db, $what) = @_;
	my ($ret, $out, $err) = as_role($node, $db, 'app', $decode_sql);
	if ($ret == 0)
	{
		my $wrong = 0;
		foreach my $line (split /\n/, $out)
		{
			my ($id) = split / /, $line;
			$wrong++ unless defined $decoded{$id} && $decoded{$id} eq $line;
		}
		note "$what: $wrong rows decode wrong";
		return ($wrong, 'decoded');
	}
	like($err, $refuses, "$what: id_to_timestamp() refuses with 55000");
	my $refused = 1;
	foreach my $sql ('SELECT id_to_shard(id) FROM ev', 'SELECT id_to_sequence(id) FROM ev',
		'SELECT (idgen_decode(id)).created_at FROM ev', 'SELECT idgen_next()')
	{
		my (undef, undef, $e) = as_role($node, $db, 'app', $sql);
		$refused = 0 unless $e =~ $refuses;
		like($e, $refuses, "$what: $sql refuses with 55000");
	}
	return (0, $refused ? 'refused' : 'partial');
}

# The case's verdict: every row restored, none decoded wrong, and the state
# expected ('refused' on the target, 'decoded' where the history is the
# source's).
sub check_rows
{
	my ($node, $db, $what, $expected) = @_;
	my (undef, $count) = $node->psql($db, 'SELECT count(*) FROM ev');
	is($count, $rows, "$what: every row restored");
	my ($wrong, $state) = wrong_rows($node, $db, $what);
	is($wrong, 0, "$what: no row decodes wrong");
	is($state, $expected, "$what: the rows are $expected");
	return;
}

sub new_db
{
	my ($node, $db, $with_extension) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	$node->safe_psql($db, 'CREATE EXTENSION idgen') if $with_extension;
	return;
}

# --------------------------------------------------------------------------
# The target: defaults (epoch 2026-01-01), four backfill lanes.

my $target = idgen_node('target',
	conf => "idgen.backfill_shards = '4000-4003'\nmax_prepared_transactions = 2\n");
$target->start;
$target->safe_psql('postgres', 'CREATE EXTENSION idgen');
is($target->safe_psql('postgres', 'SELECT idgen_lanes_init()'), 4, 'target: four lanes attested');
$target->safe_psql('postgres', 'CREATE ROLE app LOGIN NOSUPERUSER; CREATE ROLE plain LOGIN');

sub lanes_ready
{
	return $target->safe_psql('postgres',
		'SELECT count(*) FILTER (WHERE ready) FROM idgen_lanes()');
}

# no lane ID exists anywhere in this test: attesting again is all it takes
sub attest
{
	$target->safe_psql('postgres', 'SELECT idgen_lanes_init()');
	is(lanes_ready(), 4, "$_[0]: the lanes are attested again");
	return;
}

# (e) A stamp-bearing COMMENT by a role that has neither privilege.
new_db($target, 'e1', 1);
$target->safe_psql('e1', q{SET ROLE app;
CREATE TABLE own (id bigint PRIMARY KEY DEFAULT idgen_next());
INSERT INTO own SELECT FROM generate_series(1, 100);});
my $e1_stamp = stamp_of($target, 'e1');
my $bring = "COMMENT ON EXTENSION idgen IS 'x [layout history: $foreign_stamp]'";
foreach my $form ("BEGIN; $bring; ROLLBACK;", "$bring;")
{
	my (undef, undef, $err) = as_role($target, 'e1', 'plain', $form);
	like($err,
		qr/ERROR:  42501: must be owner of this database or of extension idgen to apply the layout history this restore brings/,
		"(e) plain role, $form: refused with 42501");
	like($err, qr/HINT:  .*rows loaded without this statement decode by this database's layout history/,
		"(e) plain role, $form: the hint names the consequence");
	is(lanes_ready(), 4, "(e) plain role, $form: the lanes stay ready");
}
new_db($target, 'e2', 0);
{
	my (undef, undef, $err) = as_role($target, 'e2', 'plain', "$bring;");
	like($err, qr/ERROR:  42501: must be owner of this database or of extension idgen/,
		'(e) plain role, no extension in the database: refused with 42501');
	is($target->safe_psql('postgres',
			"SELECT count(*) FROM pg_shseclabel WHERE provider = 'idgen'"),
		0, '(e) and no history is kept for the database');
}
is(stamp_of($target, 'e1'), $e1_stamp, '(e) the stamp is unchanged');
$target->restart;
is(lanes_ready(), 4, '(e) after a restart, the lanes are still ready');

# the database's owner, rolled back
{
	my (undef, undef, $err) = as_role($target, 'e1', 'app', "BEGIN; $bring; ROLLBACK;");
	unlike($err, qr/ERROR/, '(e) the owner\'s COMMENT, rolled back: no error');
	is(lanes_ready(), 4, '(e) the owner\'s COMMENT, rolled back: the lanes stay ready');
	is(stamp_of($target, 'e1'), $e1_stamp, '(e) and the stamp is unchanged');
	$target->restart;
	is(lanes_ready(), 4, '(e) after a restart too');
}

# the database's owner, its transaction still open: the lanes wait for it,
# as for a row it changed (its rows may be arriving), and mint again once
# it rolls back
{
	$target->safe_psql('e1', 'GRANT EXECUTE ON FUNCTION idgen_next_at(timestamptz) TO app');
	my $s = $target->background_psql('e1', on_error_stop => 0,
		extra_params => [ '-U', 'app' ]);
	$s->query_safe('BEGIN');
	# a dump of this server's own history: the database still mints
	$s->query("COMMENT ON EXTENSION idgen IS '$e1_stamp'");
	my (undef, $err) = psql_fails($target,
		"SET idgen.max_wait = '1s'; SELECT idgen_next_at(now() - interval '1 minute')");
	like($err, qr/55P03: the backfill lanes waited "idgen.max_wait" for a restore to end/,
		'(e) while the owner\'s restore is open, the lanes wait for it');
	$s->query("SELECT idgen_next_at(now() - interval '1 minute')");
	like($s->{stderr}, qr/the backfill lanes this transaction's restore names do not mint in it/,
		'(e) nor mint in the restore\'s own transaction');
	$s->query('ROLLBACK');
	$s->quit;
	ok($target->safe_psql('postgres',
			"SELECT idgen_next_at(now() - interval '1 minute') > 0"),
		'(e) rolled back, they mint again');
}

# a transaction whose outcome could still be a rollback once the stop is
# durable is refused before anything changes: PREPARE TRANSACTION (its
# outcome comes later, elsewhere) and SERIALIZABLE (its commit can still
# fail the serialization check)
foreach my $case (
	[ "BEGIN; $bring; PREPARE TRANSACTION 'p1';",
		qr/cannot PREPARE a transaction that restores idgen's stamp/, 'PREPARE TRANSACTION' ],
	[ "BEGIN ISOLATION LEVEL SERIALIZABLE; $bring; COMMIT;",
		qr/a restore of idgen's stamp cannot run in a serializable transaction/, 'SERIALIZABLE' ])
{
	my ($sql, $refusal, $what) = @$case;
	my (undef, undef, $err) = as_role($target, 'e1', 'app', $sql);
	like($err, $refusal, "(e) $what: refused");
	is(stamp_of($target, 'e1'), $e1_stamp, "(e) $what: the stamp is unchanged");
	is(lanes_ready(), 4, "(e) $what: the lanes stay ready");
	is($target->safe_psql('postgres', 'SELECT count(*) FROM pg_prepared_xacts'), 0,
		"(e) $what: nothing is left prepared");
}
is($target->safe_psql('e1', 'SELECT count(*) FROM own WHERE id_to_timestamp(id) > now() - interval \'1 hour\''),
	100, '(e) the database still decodes its own rows');

# committed: applied, with the WARNING, and the lanes stop
{
	my $offset = -s $target->logfile;
	my ($ret, undef, $err) = as_role($target, 'e1', 'app', "$bring;");
	is($ret, 0, '(e) the owner\'s COMMENT, committed, succeeds');
	like($err, $other_history, '(e) and warns of another history');
	like(stamp_of($target, 'e1'), qr/^x \[layout history: \Q$foreign_stamp\E\]$/,
		'(e) the stamp is the comment\'s');
	is(lanes_ready(), 0, '(e) committed, it stops the lanes');
	ok(log_has($target, $offset,
			qr/WARNING:  backfill lanes? [\d, ]+ of this server refuses? until attested again/),
		'(e) the log says why the lanes stop');
	like((as_role($target, 'e1', 'app', 'SELECT id_to_shard(id) FROM own'))[2], $refuses,
		'(e) the database refuses to decode');
}

# (g) idgen_layout_adopt() by the database's owner: every ID in e1 was
# minted here, so adopting is right
{
	my (undef, undef, $err) = as_role($target, 'e1', 'plain', 'SELECT idgen_layout_adopt()');
	like($err, qr/permission denied for function idgen_layout_adopt/,
		'(g) a plain role may not adopt');
	my ($ret, $out);
	($ret, $out, $err) = as_role($target, 'e1', 'app', 'SELECT idgen_layout_adopt()');
	is($ret, 0, '(g) the database\'s owner adopts the server\'s history') or diag($err);
	is($target->safe_psql('e1',
			'SELECT count(*) FROM own WHERE id_to_timestamp(id) > now() - interval \'1 hour\''),
		100, '(g) the rows decode as minted');
}
attest('(e)');

# --------------------------------------------------------------------------
# (a) pg_restore --no-owner -U app, the extension created first.

foreach my $case ([ 'a1', [] ], [ 'a2', [ '-j', '2' ] ], [ 'a3', ['--single-transaction'] ])
{
	my ($db, $flags) = @$case;
	my $what = "($db) pg_restore --no-owner -U app @$flags";
	new_db($target, $db, 1);
	my $offset = -s $target->logfile;
	my ($ok, $err) = run_cmd('pg_restore', '--no-owner', '-U', 'app', @$flags,
		'-d', $target->connstr($db), $dump);
	ok($ok, "$what: succeeds") or diag($err);
	unlike($err, qr/must be owner/, "$what: the COMMENT is not refused");
	ok(log_has($target, $offset, $other_history), "$what: the server warns of another history");
	like(stamp_of($target, $db), qr/\[layout history: \Q$foreign_stamp\E\]$/,
		"$what: the stamp is the source's");
	check_rows($target, $db, $what, 'refused');
	is(lanes_ready(), 0, "$what: the lanes stop");
	attest($what);
}

# (b) the same, the extension not created yet: app may not create it
{
	my $what = '(b1) pg_restore --no-owner -U app, no extension';
	new_db($target, 'b1', 0);
	my $offset = -s $target->logfile;
	my ($ok, $err) = run_cmd('pg_restore', '--no-owner', '-U', 'app',
		'-d', $target->connstr('b1'), $dump);
	like($err, qr/permission denied to create extension "idgen"/,
		"$what: CREATE EXTENSION fails for app");
	unlike($err, qr/does not exist/, "$what: the COMMENT does not fail");
	ok(log_has($target, $offset, $kept), "$what: the server says the history is kept");
	like($target->safe_psql('postgres',
			"SELECT label FROM pg_shseclabel JOIN pg_database AS d ON d.oid = objoid "
			  . "WHERE provider = 'idgen' AND d.datname = 'b1'"),
		qr/\Q$foreign_stamp\E/, "$what: kept as the database's security label");
	is($target->safe_psql('b1', 'SELECT count(*) FROM ev'), $rows, "$what: the rows load");
	my $lanes = lanes_ready();
	note "$what: lanes ready after the restore: $lanes";
	is($lanes, 0, "$what: the lanes stop");
	my ($ret, $out);
	($ret, $out, $err) = as_role($target, 'b1', undef, 'CREATE EXTENSION idgen');
	is($ret, 0, "$what: a superuser creates the extension");
	like($err, $other_history, "$what: CREATE EXTENSION warns of another history");
	check_rows($target, 'b1', $what, 'refused');
	attest($what) if $lanes == 0;
}

# (c) psql -U app -f of the plain dump, the extension before and after
{
	my $what = '(c1) psql -U app -f, extension created first';
	new_db($target, 'c1', 1);
	my ($ok, $err) = run_cmd('psql', '-X', '-q', '-U', 'app', '-d', $target->connstr('c1'),
		'-f', $plain);
	unlike($err, qr/ERROR/, "$what: no error");
	like($err, $other_history, "$what: the WARNING on the screen");
	check_rows($target, 'c1', $what, 'refused');
	is(lanes_ready(), 0, "$what: the lanes stop");
	attest($what);

	$what = '(c2) psql -U app -f, no extension';
	new_db($target, 'c2', 0);
	($ok, $err) = run_cmd('psql', '-X', '-q', '-U', 'app', '-d', $target->connstr('c2'),
		'-f', $plain);
	like($err, qr/permission denied to create extension "idgen"/,
		"$what: CREATE EXTENSION fails for app");
	like($err, $kept, "$what: the WARNING that the history is kept");
	my (undef, undef, $e) = as_role($target, 'c2', undef, 'CREATE EXTENSION idgen');
	like($e, $other_history, "$what: CREATE EXTENSION warns of another history");
	check_rows($target, 'c2', $what, 'refused');
	attest($what) if lanes_ready() == 0;
}

# (d) a superuser's restore fails closed; DROP and CREATE EXTENSION keep it so
foreach my $drop ('DROP EXTENSION idgen CASCADE', 'DROP EXTENSION idgen')
{
	my $db = $drop =~ /CASCADE/ ? 'd1' : 'd2';
	my $what = "($db) a superuser's restore, then $drop; CREATE EXTENSION idgen";
	new_db($target, $db, 0);
	my $offset = -s $target->logfile;
	run_cmd('pg_restore', '-d', $target->connstr($db), $dump);
	ok(log_has($target, $offset, $other_history), "$what: the restore warns");
	check_rows($target, $db, "$what, before", 'refused');
	my (undef, undef, $err) = as_role($target, $db, undef, "$drop; CREATE EXTENSION idgen;");
	like($err, $other_history, "$what: CREATE EXTENSION warns of another history");
	unlike($err, qr/ERROR/, "$what: no error");
	check_rows($target, $db, $what, 'refused');
	attest($what) if lanes_ready() == 0;
}

# A database of the target's own, dropped and created again: nothing kept.
{
	new_db($target, 'own', 1);
	my (undef, undef, $err) =
	  as_role($target, 'own', undef, 'DROP EXTENSION idgen; CREATE EXTENSION idgen;');
	unlike($err, qr/WARNING|ERROR/, 'the target\'s own database: DROP and CREATE say nothing');
	is($target->safe_psql('own', 'SELECT idgen_next() > 0'), 't', 'and it mints');
}

# Databases created at 1.0 and 1.6 decode their own rows once updated.
foreach my $version ('1.0', '1.6')
{
	(my $db = "v$version") =~ s/\./_/;
	new_db($target, $db, 0);
	$target->safe_psql($db, qq{CREATE EXTENSION idgen VERSION '$version';
CREATE TABLE own (id bigint PRIMARY KEY, at timestamptz DEFAULT now());
INSERT INTO own (id) SELECT idgen_next() FROM generate_series(1, 100);
ALTER EXTENSION idgen UPDATE;});
	is( $target->safe_psql($db,
			q{SELECT count(*) FROM own WHERE id_to_timestamp(id) BETWEEN at - interval '1 s' AND at + interval '1 s'}),
		100, "a database created at $version decodes its rows once updated");
}
$target->stop;

# --------------------------------------------------------------------------
# (f) The source's history on another server: app's restores decode as on
# the source, and app mints.

my $same = idgen_node('same', conf => $source_epoch);
$same->start;
$same->safe_psql('postgres', 'CREATE ROLE app LOGIN NOSUPERUSER');
{
	my $what = '(f1) same history, pg_restore --no-owner -U app, extension created first';
	new_db($same, 'f1', 1);
	my ($ok, $err) = run_cmd('pg_restore', '--no-owner', '-U', 'app',
		'-d', $same->connstr('f1'), $dump);
	ok($ok, "$what: succeeds") or diag($err);
	unlike($err, qr/WARNING|must be owner/, "$what: says nothing");
	check_rows($same, 'f1', $what, 'decoded');
	my ($ret, $out);
	($ret, $out, $err) = as_role($same, 'f1', 'app',
		"INSERT INTO ev SELECT idgen_next(), 'new' FROM generate_series(1, 10)");
	is($ret, 0, "$what: app mints into it") or diag($err);
	is($same->safe_psql('f1', 'SELECT count(DISTINCT id) FROM ev'), $rows + 10,
		"$what: every ID distinct");

	$what = '(f2) same history, psql -U app -f, no extension';
	new_db($same, 'f2', 0);
	($ok, $err) = run_cmd('psql', '-X', '-q', '-U', 'app', '-d', $same->connstr('f2'),
		'-f', $plain);
	like($err, $kept, "$what: the history is kept");
	($ret, $out, $err) = as_role($same, 'f2', undef, 'CREATE EXTENSION idgen');
	unlike($err, qr/WARNING/, "$what: CREATE EXTENSION says nothing");
	check_rows($same, 'f2', $what, 'decoded');
}
$same->stop;

done_testing();
