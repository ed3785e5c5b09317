
# Copyright (c) 2026, The idgen Authors
#
# A dump restored into a server whose backfill lanes are in use: its rows
# may hold IDs of the lanes' shards (its source's lanes, or its source's
# live shards) at milliseconds the lanes would mint at.
#
#  - the restore's COMMENT ON EXTENSION (idgen's stamp) makes the lane
#    whose shard the dump names refuse, with a WARNING, before any row
#    arrives; the server's other lane mints on;
#  - the refusal names the restore, says what to do, and outlasts a
#    restart;
#  - a comment by hand, which brings no stamp, refuses nothing;
#  - raised past the restored IDs as the hint says and attested, the lanes
#    give none of the restored IDs again;
#  - while a restore's transaction is open only the lanes its dump names
#    wait; a crash neither forgets a stop nor brings back one attested.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# one millisecond, filled on the source's lane 100 from sequence 0
my $at = '2026-03-03 03:03:03.003+00';
my $rows = 300;

my $source = idgen_node('restore_source',
	conf => "idgen.shard_id = 1\nidgen.backfill_shards = '100'");
$source->start;
$source->safe_psql('postgres', 'CREATE DATABASE app');
$source->safe_psql('app', 'CREATE EXTENSION idgen');
$source->safe_psql('app', 'SELECT idgen_lanes_init()');
$source->safe_psql('app',
	"CREATE TABLE events (id bigint PRIMARY KEY, at timestamptz NOT NULL);
	 INSERT INTO events SELECT idgen_next_at('$at'), '$at' FROM generate_series(1, $rows)");
is( $source->safe_psql('app',
		"SELECT count(*) FILTER (WHERE id_to_shard(id) = 100) FROM events"),
	$rows, 'the source minted its rows on lane 100');
my $dump = $source->basedir . '/app.dump';
$source->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $source->connstr('app') ],
	'pg_dump -Fc of the source');
my $plain = $source->basedir . '/app.sql';
$source->command_ok([ 'pg_dump', '-f', $plain, '-d', $source->connstr('app') ],
	'pg_dump (plain) of the source');
$source->stop;

# The target backfills on lane 100 too, and on 101, which the source's
# dump does not name: a server the source's data moves to, its lanes
# attested before the restore.
my $target = idgen_node('restore_target', allows_streaming => 1,
	conf => "idgen.shard_id = 2\nidgen.backfill_shards = '100-101'");
$target->start;
$target->safe_psql('postgres', 'CREATE EXTENSION idgen');
$target->safe_psql('postgres', 'SELECT idgen_lanes_init()');
$target->safe_psql('postgres',
	"SELECT idgen_next_at('2026-02-01 00:00:00+00')");

# a comment by hand brings no stamp: the lanes go on
$target->safe_psql('postgres', "COMMENT ON EXTENSION idgen IS 'our IDs'");
ok( $target->safe_psql('postgres', "SELECT idgen_next_at('2026-02-02 00:00:00+00') > 0"),
	'a comment by hand leaves the lanes minting');

$target->safe_psql('postgres', 'CREATE DATABASE app');
my $log_offset = -s $target->logfile;
my ($stdout, $stderr) = ('', '');
my $restored = IPC::Run::run(
	[ 'pg_restore', '-d', $target->connstr('app'), $dump ],
	'<', \'', '>', \$stdout, '2>', \$stderr);
ok($restored, 'the plain pg_restore succeeds') or diag($stderr);
ok( log_has($target, $log_offset,
		qr/WARNING:  backfill lane 100 of this server refuses until attested again/),
	'the restore warns why lane 100 stops');
is($target->safe_psql('app', 'SELECT count(*) FROM events'), $rows,
	'the rows are restored');

# A statement's error, in a database of the target.
sub fails_in
{
	my ($db, $sql) = @_;
	my ($ret, $out, $err) = $target->psql($db, $sql);
	isnt($ret, 0, "refused: $sql") or diag("it answered: $out");
	return $err;
}

# Whether each lane is ready, as idgen_lanes() shows it.
sub ready
{
	return $target->safe_psql('postgres',
		"SELECT string_agg(shard || ':' || ready, ' ' ORDER BY shard) FROM idgen_lanes() WHERE configured");
}

# Why a lane does not mint, as idgen_lanes() says it ('' when it mints).
sub reason
{
	my ($shard) = @_;
	return $target->safe_psql('postgres',
		"SELECT not_ready_reason FROM idgen_lanes() WHERE shard = $shard");
}

is(ready(), '100:false 101:true', 'idgen_lanes() shows lane 100 stopped, 101 ready');
like(reason(100),
	qr/^named by a restore: run SELECT idgen_advance_past\(max\(id\)\) on the restored keys, one per shard, then SELECT idgen_lanes_init\(\)$/,
	'and says why lane 100 does not mint, and what to run');
is(reason(101), '', 'lane 101 has no reason');
is( $target->safe_psql('postgres',
		"SELECT id_to_shard(idgen_next_at('2026-02-03 00:00:00+00'))"),
	'101', 'the lane the dump does not name mints on, in every database');
# a millisecond the other lane cannot fill: the refusal names lane 100
my $err = fails_in('app', "SELECT idgen_next_at_n('2026-02-04 00:00:00+00', 1500)");
like($err, qr/no backfill lane can mint at/, 'lane 100 gives nothing after the restore');
like($err, qr/lane 100 was named by a restore/, 'the refusal names the restore');
like($err, qr/HINT:  Attest the lanes passed over with SELECT idgen_lanes_init\(\) once SELECT idgen_advance_past\(max\(id\)\) has run, one per shard, on the keys that may hold their IDs \(the restored keys, for a lane a restore named\)/,
	'the hint says what to run');

$target->restart;
is(ready(), '100:false 101:true', 'the refusal outlasts a restart');
like(fails_in('app', "SELECT idgen_next_at_n('2026-02-05 00:00:00+00', 1500)"),
	qr/lane 100 was named by a restore/, 'and still says why');

# the guide: raise past the restored IDs, one per shard, then attest
$target->safe_psql('app',
	'SELECT idgen_advance_past(max(id)) FROM events GROUP BY id_to_shard(id)');
is($target->safe_psql('app', 'SELECT idgen_lanes_init()'), 2, 'the lanes attested again');
is(ready(), '100:true 101:true', 'lane 100 is ready again');
# lane 100 is raised past the restored millisecond: lane 101 gives it
is( $target->safe_psql('app',
		"SELECT id_to_shard(x) || ':' || (x IN (SELECT id FROM events)) FROM idgen_next_at('$at') x"),
	'101:false', 'the restored millisecond is not given again on lane 100');
my ($ret, $out);
$ret = $target->psql('app',
	"INSERT INTO events SELECT idgen_next_at('2026-03-03 03:03:03.004+00'), '$at' "
	  . "FROM generate_series(1, $rows)",
	stderr => \$err);
is($ret, 0, 'the next millisecond is minted beside the restored rows')
  or diag($err);
is( $target->safe_psql('app',
		"SELECT count(DISTINCT id) || ':' || count(*) FROM events"),
	2 * $rows . ':' . 2 * $rows, 'every ID distinct');

# a plain dump through psql: the same statement, its WARNING on the screen
$target->safe_psql('postgres', 'CREATE DATABASE app2');
($stdout, $stderr) = ('', '');
IPC::Run::run([ 'psql', '-X', '-q', '-d', $target->connstr('app2'), '-f', $plain ],
	'<', \'', '>', \$stdout, '2>', \$stderr);
like($stderr, qr/WARNING:  backfill lane 100 of this server refuses until attested again/,
	'psql of a plain dump shows the WARNING');
is(ready(), '100:false 101:true', 'and lane 100 refuses again');

# the database's owner, who does not own the extension, restores: idgen
# applies its COMMENT (1.8), the rows are loaded, and the lanes stop as the
# comment's transaction commits
$target->safe_psql('app',
	'SELECT idgen_advance_past(max(id)) FROM events GROUP BY id_to_shard(id)');
$target->safe_psql('app', 'SELECT idgen_lanes_init()');
$target->safe_psql('postgres',
	'CREATE ROLE app_owner LOGIN; CREATE DATABASE app3 OWNER app_owner');
$target->safe_psql('app3', 'CREATE EXTENSION idgen');
is(ready(), '100:true 101:true', 'the lanes mint again, attested');
($stdout, $stderr) = ('', '');
IPC::Run::run(
	[ 'pg_restore', '-U', 'app_owner', '-d', $target->connstr('app3'), $dump ],
	'<', \'', '>', \$stdout, '2>', \$stderr);
unlike($stderr, qr/COMMENT ON EXTENSION/,
	"the restore's COMMENT is applied for the database's owner");
is($target->safe_psql('app3', 'SELECT count(*) FROM events'), $rows,
	'and the rows are restored');
is(ready(), '100:false 101:true', 'lane 100 stops');

# A stamp that names shard 100 only, of this server's history: what a
# dump of a server whose lane 100 minted brings.
my $history = $target->safe_psql('postgres',
	"SELECT obj_description(oid, 'pg_extension') FROM pg_extension WHERE extname = 'idgen'");
$history =~ s/^.* \[layout history: /[layout history: /;
my $names_100 = "from elsewhere [shards: 100] $history";
$target->safe_psql('app3',
	'SELECT idgen_advance_past(max(id)) FROM events GROUP BY id_to_shard(id)');
$target->safe_psql('app3', 'SELECT idgen_lanes_init()');

# its transaction still open: lane 100 waits for it, lane 101 mints on
{
	$target->safe_psql('postgres', 'CREATE DATABASE app4');
	$target->safe_psql('app4', 'CREATE EXTENSION idgen');
	my $s = $target->background_psql('app4', on_error_stop => 0);
	$s->query_safe('BEGIN');
	$s->query_safe("COMMENT ON EXTENSION idgen IS '$names_100'");
	is(ready(), '100:false 101:true', 'an open restore holds the lane its dump names');
	is(reason(100), 'a restore naming it is in an open transaction', 'idgen_lanes() says so');
	is( $target->safe_psql('postgres',
			"SET idgen.max_wait = '1s'; SELECT id_to_shard(idgen_next_at('2026-05-06 00:00:00+00'))"),
		'101', 'and the other lane mints meanwhile, without waiting');
	my (undef, $err) = psql_fails($target,
		"SET idgen.max_wait = '1s'; SELECT idgen_next_at_n('2026-06-07 00:00:00+00', 1500)");
	like($err, qr/the backfill lanes waited "idgen.max_wait" for a restore to end/,
		'a time only both lanes can give waits for the restore');
	$s->query_safe('ROLLBACK');
	$s->quit;
	is(ready(), '100:true 101:true', 'rolled back, lane 100 mints again');
}

# committed, then a crash: the stop is durable; attested, then a crash
# before any checkpoint: the replayed table that names the stop (logged
# after the last checkpoint) does not bring it back
$target->safe_psql('app4', "COMMENT ON EXTENSION idgen IS '$names_100'");
is(ready(), '100:false 101:true', 'the restore committed stops lane 100');
$target->stop('immediate');
$target->start;
is(ready(), '100:false 101:true', 'and a crash does not forget it');
# a second restore naming lane 100, stopped already: holding it gives
# nothing, so a time lane 101 alone cannot give fails at once
{
	my $s = $target->background_psql('app4', on_error_stop => 0);
	$s->query_safe('BEGIN');
	$s->query_safe("COMMENT ON EXTENSION idgen IS '$names_100'");
	my (undef, $err) = psql_fails($target,
		"SET idgen.max_wait = '3s'; SELECT idgen_next_at_n('2026-06-08 00:00:00+00', 1500)");
	like($err, qr/lane 100 was named by a restore/,
		'a restore holding only a stopped lane makes nothing wait');
	$s->query_safe('ROLLBACK');
	$s->quit;
}
is($target->safe_psql('app4', 'SELECT idgen_lanes_init()'), 2, 'attested again');
$target->stop('immediate');
$target->start;
is(ready(), '100:true 101:true', 'a crash after the attestation keeps it');

# A savepoint rolled back takes its names with it: only the lane named
# outside it stops (a DO block's caught error, nested savepoints likewise).
(my $names_101 = $names_100) =~ s/\[shards: 100\]/[shards: 101]/;
foreach my $case (
	[ 'ROLLBACK TO',
		"BEGIN; COMMENT ON EXTENSION idgen IS '$names_100'; SAVEPOINT s;
		 COMMENT ON EXTENSION idgen IS '$names_101'; ROLLBACK TO s; COMMIT;" ],
	[ 'nested savepoints',
		"BEGIN; SAVEPOINT s1; COMMENT ON EXTENSION idgen IS '$names_100'; SAVEPOINT s2;
		 COMMENT ON EXTENSION idgen IS '$names_101'; ROLLBACK TO s2; RELEASE s1; COMMIT;" ],
	[ 'a DO block that catches its error',
		"BEGIN; COMMENT ON EXTENSION idgen IS '$names_100';
		 DO \$\$ BEGIN EXECUTE \$c\$COMMENT ON EXTENSION idgen IS '$names_101'\$c\$;
		   RAISE division_by_zero; EXCEPTION WHEN division_by_zero THEN NULL; END \$\$;
		 COMMIT;" ])
{
	my ($what, $sql) = @$case;
	$target->safe_psql('app4', $sql);
	is(ready(), '100:false 101:true', "$what: only the lane named outside the savepoint stops");
	$target->safe_psql('app4', 'SELECT idgen_lanes_init()');
}

# A FATAL while the commit waits to make the stop durable (the fence
# worker waits for a synchronous standby that never comes): the abort that
# follows lets the lane go, and attesting it makes it mint again.
$target->safe_psql('postgres',
	"ALTER SYSTEM SET synchronous_standby_names = 'nosuchstandby'");
$target->reload;
$target->safe_psql('postgres', 'SELECT pg_sleep(1)');    # the worker reloads too
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'psql', '-XAtq', '-d', $target->connstr('app4'), '-c',
			"SET idgen.max_wait = '120s'; COMMENT ON EXTENSION idgen IS '$names_100'"
		],
		'>', \$out, '2>', \$err);
	ok( $target->poll_query_until('postgres',
			"SELECT count(*) = 2 FROM pg_stat_activity
			  WHERE (query LIKE 'SET idgen.max_wait%' AND state = 'active')
			     OR (backend_type = 'idgen fence' AND wait_event = 'SyncRep')"),
		'the restore waits in its commit for the stop to be durable');
	$target->safe_psql('postgres',
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SET idgen.max_wait%'");
	$h->finish;
}
$target->safe_psql('postgres', 'ALTER SYSTEM RESET synchronous_standby_names');
$target->reload;
$target->safe_psql('app4', 'SELECT idgen_lanes_init()');
is(ready(), '100:true 101:true', 'a restore ended by a FATAL leaves no lane held');
is( $target->safe_psql('postgres',
		"SET idgen.max_wait = '2s'; SELECT count(*) FROM idgen_next_at_n('2026-06-09 00:00:00+00', 1500)"),
	'1500', 'and no wait for a restore that has ended');

# A stamp naming only a shard kept but not a lane (raised past, not in
# idgen.backfill_shards) holds nothing: a time no lane can give fails at
# once rather than waiting for that restore.
$target->safe_psql('postgres',
	'SELECT idgen_advance_past(((1000::bigint) << 22) | (7 << 10))');
(my $names_7 = $names_100) =~ s/\[shards: 100\]/[shards: 7]/;
{
	my $s = $target->background_psql('app4', on_error_stop => 0);
	$s->query_safe('BEGIN');
	$s->query_safe("COMMENT ON EXTENSION idgen IS '$names_7'");
	my (undef, $err) = psql_fails($target,
		"SET idgen.max_wait = '3s'; SELECT idgen_next_at_n('2026-06-09 00:00:00+00', 2500)");
	like($err, qr/no backfill lane can mint at/,
		'a restore naming no lane of this server makes nothing wait');
	$s->query_safe('COMMIT');
	$s->quit;
}
is(ready(), '100:true 101:true', 'and stops none');

# a database whose SQL is still 1.7's: the library serves its idgen_lanes()
# as it was, and the update brings the column
$target->safe_psql('postgres', 'CREATE DATABASE at17');
$target->safe_psql('at17', "CREATE EXTENSION idgen VERSION '1.7'");
is( $target->safe_psql('at17',
		"SELECT string_agg(shard || ':' || ready, ' ' ORDER BY shard) FROM idgen_lanes() WHERE configured"),
	'100:true 101:true', "1.7's idgen_lanes() under the 1.8 library, ten columns");
$target->safe_psql('at17', 'ALTER EXTENSION idgen UPDATE');
is( $target->safe_psql('at17',
		"SELECT string_agg(shard || ':' || coalesce(not_ready_reason, '-'), ' ' ORDER BY shard) FROM idgen_lanes()"),
	'7:not named in idgen.backfill_shards 100:- 101:-',
	'updated, it says why not (null: both lanes mint; shard 7 is only kept)');

# A role's idgen.max_wait of 0 does not skip the stop's durable write: the
# commit waits for the "idgen fence" worker as the default would (here
# stopped until the commit is seen waiting), since a crash before the
# write forgets the stop.
$target->safe_psql('postgres', 'CREATE DATABASE app5');
$target->safe_psql('app5', 'CREATE EXTENSION idgen');
{
	my $fence = $target->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'idgen fence'");
	die "no idgen fence worker" unless $fence =~ /^\d+$/;
	kill 'STOP', $fence;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-d', $target->connstr('app5'), '-c', 'SET idgen.max_wait = 0',
		  '-c', "COMMENT ON EXTENSION idgen IS '$names_100'" ],
		'<', \'', '>', \$out, '2>', \$err);
	my $waits = eval {
		$target->poll_query_until('postgres',
			"SELECT count(*) = 1 FROM pg_stat_activity WHERE datname = 'app5' AND wait_event_type = 'Extension'");
	};
	kill 'CONT', $fence;
	$h->finish;
	ok($waits, 'idgen.max_wait = 0: the commit waits for the stop to be written');
	unlike($err, qr/not durable yet/, 'and goes on once it is, with no WARNING of it');
	like($err, qr/WARNING:  backfill lane 100 of this server refuses until attested again/,
		'and says which lane stops');
}
is(ready(), '100:false 101:true', 'the restore stopped lane 100');
# an attestation whose write does not come in time still says what it lifted
($ret, $out, $err) = $target->psql('app5', 'SET idgen.max_wait = 0; SELECT idgen_lanes_init()');
like($err, qr/NOTICE:  the stop a restore put on backfill lane 100 is lifted.*ERROR:  could not make the backfill lanes durable/s,
	'an attestation that fails its write says it lifted the stop');
$target->safe_psql('app5', 'SELECT idgen_lanes_init()');

# A promotion: the standby replays the stop and says it beside the
# server-wide reason, and the attestation a promotion asks for says that
# it lifts the restore's stop too.
$target->backup('before_promotion');
my $standby = PostgreSQL::Test::Cluster->new('restore_standby');
$standby->init_from_backup($target, 'before_promotion', has_streaming => 1);
$standby->start;
$target->safe_psql('app5', "COMMENT ON EXTENSION idgen IS '$names_100'");
$target->wait_for_catchup($standby);
$standby->promote;
is( $standby->safe_psql('postgres',
		"SELECT string_agg(shard || ': ' || not_ready_reason, E'\n' ORDER BY shard) FROM idgen_lanes() WHERE configured"),
	"100: named by a restore, and replayed another server's WAL: run SELECT idgen_advance_past(max(id)) on the restored keys, one per shard, and on the keys that may hold its other IDs, then SELECT idgen_lanes_init()\n"
	  . "101: replayed another server's WAL: run SELECT idgen_advance_past(max(id)) on the keys that may hold its IDs, one per shard, then SELECT idgen_lanes_init()",
	'promoted, lane 100 still says a restore named it');
($ret, $out, $err) = $standby->psql('postgres', 'SELECT idgen_lanes_init()');
like($err, qr/NOTICE:  the stop a restore put on backfill lane 100 is lifted/,
	'the attestation says it lifts the stop');
$standby->stop;

$target->stop;
done_testing();
