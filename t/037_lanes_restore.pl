
# Copyright (c) 2026, The idgen Authors
#
# A dump restored into a server whose backfill lanes are in use: its rows
# may hold IDs of the lanes' shards (its source's lanes, or its source's
# live shards) at milliseconds the lanes would mint at.
#
#  - the restore's COMMENT ON EXTENSION (idgen's stamp) makes the lanes
#    refuse, with a WARNING, before any row arrives;
#  - the refusal names the restore, says what to do, and outlasts a
#    restart;
#  - a comment by hand, which brings no stamp, refuses nothing;
#  - raised past the restored IDs as the hint says and attested, the lanes
#    give none of the restored IDs again.

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

# The target backfills on lane 100 too: a server the source's data moves
# to, its lanes attested before the restore.
my $target = idgen_node('restore_target',
	conf => "idgen.shard_id = 2\nidgen.backfill_shards = '100'");
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
		qr/WARNING:  the backfill lanes of this server refuse until attested again/),
	'the restore warns why the lanes stop');
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

# answered, it would say whether the lane gave a restored ID again
my $err = fails_in('app',
	"SELECT idgen_next_at('$at') IN (SELECT id FROM events) AS given_again");
like($err, qr/the backfill lanes' past is not known/, 'the lanes refuse after the restore');
like($err, qr/DETAIL:  A dump was restored into a database of this server/,
	'the refusal names the restore');
like($err, qr/HINT:  Run SELECT idgen_advance_past\(max\(id\)\)/,
	'the hint says to raise the lanes first');
like(fails_in('postgres', "SELECT idgen_next_at('2026-02-03 00:00:00+00')"),
	qr/the backfill lanes' past is not known/,
	'every database of the server refuses, not only the restored one');

$target->restart;
like(fails_in('app', "SELECT idgen_next_at('$at')"),
	qr/A dump was restored into a database of this server/,
	'the refusal outlasts a restart');

# the guide: raise past the restored IDs, one per shard, then attest
$target->safe_psql('app',
	'SELECT idgen_advance_past(max(id)) FROM events GROUP BY id_to_shard(id)');
is($target->safe_psql('app', 'SELECT idgen_lanes_init()'), 1, 'lane 100 attested again');
like(fails_in('app', "SELECT idgen_next_at('$at')"), qr/no backfill lane can mint/,
	'the restored millisecond is not given again');
my ($ret, $out);
$ret = $target->psql('app',
	"INSERT INTO events SELECT idgen_next_at('2026-03-03 03:03:03.004+00'), '$at' "
	  . "FROM generate_series(1, $rows)",
	stderr => \$err);
is($ret, 0, 'the next millisecond is minted beside the restored rows')
  or diag($err);
is( $target->safe_psql('app',
		"SELECT count(DISTINCT id) FROM events WHERE id_to_shard(id) = 100"),
	2 * $rows, 'every ID on lane 100 distinct');

# a plain dump through psql: the same statement, its WARNING on the screen
$target->safe_psql('postgres', 'CREATE DATABASE app2');
($stdout, $stderr) = ('', '');
IPC::Run::run([ 'psql', '-X', '-q', '-d', $target->connstr('app2'), '-f', $plain ],
	'<', \'', '>', \$stdout, '2>', \$stderr);
like($stderr, qr/WARNING:  the backfill lanes of this server refuse until attested again/,
	'psql of a plain dump shows the WARNING');
like(fails_in('app', "SELECT idgen_next_at('2026-03-03 03:03:03.005+00')"),
	qr/A dump was restored into a database of this server/,
	'and the lanes refuse again');

# the database's owner, who does not own the extension, restores: idgen
# applies its COMMENT (1.8), the rows are loaded, and the lanes stop as the
# comment's transaction commits
$target->safe_psql('app',
	'SELECT idgen_advance_past(max(id)) FROM events GROUP BY id_to_shard(id)');
$target->safe_psql('app', 'SELECT idgen_lanes_init()');
$target->safe_psql('postgres',
	'CREATE ROLE app_owner LOGIN; CREATE DATABASE app3 OWNER app_owner');
$target->safe_psql('app3', 'CREATE EXTENSION idgen');
ok($target->safe_psql('app', "SELECT idgen_next_at('2026-03-03 03:03:03.006+00') > 0"),
	'the lanes mint again, attested');
($stdout, $stderr) = ('', '');
IPC::Run::run(
	[ 'pg_restore', '-U', 'app_owner', '-d', $target->connstr('app3'), $dump ],
	'<', \'', '>', \$stdout, '2>', \$stderr);
unlike($stderr, qr/COMMENT ON EXTENSION/,
	"the restore's COMMENT is applied for the database's owner");
is($target->safe_psql('app3', 'SELECT count(*) FROM events'), $rows,
	'and the rows are restored');
like(fails_in('app', "SELECT idgen_next_at('2026-03-03 03:03:03.007+00')"),
	qr/A dump was restored into a database of this server/,
	'the lanes stop');

$target->stop;
done_testing();
