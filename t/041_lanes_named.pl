
# Copyright (c) 2026, The idgen Authors
#
# Each database's stamp names the shards whose IDs it may hold, so that a
# restore stops a server's backfill lanes only when the dump may hold IDs
# of them.
#
#  - CREATE EXTENSION names this server's shards, live and lanes;
#  - a dump of a server without these lanes, restored into one with them,
#    leaves the lanes minting, and the restored database names this
#    server's shards from then on;
#  - a dump that names this server's lanes stops them, as does a stamp
#    without the part (idgen 1.7 and older), which names any shard;
#  - a dump naming other shards leaves the lanes minting, and its shards
#    are added to the database's;
#  - a comment by hand keeps the part, and says "any" where its text could
#    be taken for one;
#  - DROP and CREATE EXTENSION name any shard, since the rows stay, as does
#    CREATE EXTENSION in a database that has tables already;
#  - a start with a new lane names it in every database's stamp before the
#    lanes mint, and a database the stamps worker missed (copied from a
#    template it cannot enter) asks for another visit at its first mint,
#    live or for a given time; a reload that adds a live shard names it;
#  - idgen_advance_past, the step after a load idgen cannot see, names the
#    shard it raises.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

sub restore
{
	my ($node, $db, $dump) = @_;
	my ($stdout, $stderr) = ('', '');
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	my $ok = IPC::Run::run([ 'pg_restore', '-d', $node->connstr($db), $dump ],
		'<', \'', '>', \$stdout, '2>', \$stderr);
	return $ok ? $stderr : "failed: $stderr";
}

sub mints_at
{
	my ($node, $db, $at) = @_;
	my ($ret, $out, $err) = $node->psql($db, "SELECT idgen_next_at('$at') > 0");
	return $ret == 0 ? $out : $err;
}

# A server without lanes: its databases hold IDs of its live shard only.
my $plain = idgen_node('named_plain', conf => "idgen.shard_id = 1\n");
$plain->start;
$plain->safe_psql('postgres', 'CREATE DATABASE app');
$plain->safe_psql('app', 'CREATE EXTENSION idgen');
like(stamp_of($plain, 'app'), qr/ \[shards: 1\] \[layout history: [^\]]+\]$/,
	'without lanes, the stamp names the live shard');
$plain->safe_psql('app',
	'CREATE TABLE events (id bigint PRIMARY KEY DEFAULT idgen_next(), v int);
	 INSERT INTO events (v) SELECT g FROM generate_series(1, 100) g');
my $plain_dump = $plain->basedir . '/plain.dump';
$plain->command_ok([ 'pg_dump', '-Fc', '-f', $plain_dump, '-d', $plain->connstr('app') ],
	'pg_dump of the server without lanes');
$plain->stop;

# A server with lanes 100 and 101, minting for past times.
my $conf = "idgen.shard_id = 2\nidgen.backfill_shards = '100-101'\n";
my $lanes = idgen_node('named_lanes', conf => $conf);
$lanes->start;
$lanes->safe_psql('postgres', 'CREATE EXTENSION idgen');
like(stamp_of($lanes, 'postgres'), qr/ \[shards: 2, 100-101\] \[layout history: /,
	'with lanes, the stamp names them and the live shard');
$lanes->safe_psql('postgres', 'SELECT idgen_lanes_init()');
is(mints_at($lanes, 'postgres', '2026-02-01 00:00:00+00'), 't', 'the lanes mint');

# 1. A dump holding no lane's IDs: the lanes go on.
my $offset = -s $lanes->logfile;
is(restore($lanes, 'from_plain', $plain_dump), '', 'the restore prints nothing');
is(mints_at($lanes, 'from_plain', '2026-02-02 00:00:00+00'), 't',
	'a dump that names no lane leaves the lanes minting');
is(mints_at($lanes, 'postgres', '2026-02-02 00:00:01+00'), 't', 'in every database');
unlike(slurp_file($lanes->logfile, $offset), qr/of this server refuses? until attested again/,
	'and the log says nothing of a stop');
like(stamp_of($lanes, 'from_plain'), qr/ \[shards: 1-2, 100-101\] \[layout history: /,
	"the restored database names the dump's shards and this server's");

# 2. A dump of that database names the lanes: restored here, they stop.
$lanes->safe_psql('from_plain',
	"INSERT INTO events (id, v) SELECT idgen_next_at('2026-02-03 00:00:00+00'), 0");
my $lanes_dump = $lanes->basedir . '/lanes.dump';
$lanes->command_ok(
	[ 'pg_dump', '-Fc', '-f', $lanes_dump, '-d', $lanes->connstr('from_plain') ],
	'pg_dump of a database the lanes minted into');
is(restore($lanes, 'again', $lanes_dump), '', 'its restore prints nothing');
like(mints_at($lanes, 'postgres', '2026-02-04 00:00:00+00'),
	qr/backfill lane 10[01] refuses since a restore named its shard/,
	"a dump naming the lanes stops them");

sub attest
{
	my ($db) = @_;
	$lanes->safe_psql($db,
		'SELECT idgen_advance_past(max(id)) FROM events GROUP BY id_to_shard(id)');
	$lanes->safe_psql($db, 'SELECT idgen_lanes_init()');
}
attest('again');
is(mints_at($lanes, 'postgres', '2026-02-04 00:00:00+00'), 't', 'attested again, they mint');

# 3. A stamp without the part, as idgen 1.7 and older wrote: any shard, a stop.
my $history = stamp_of($lanes, 'postgres');
$history =~ s/^.* \[layout history: /[layout history: /;
$lanes->safe_psql('postgres', 'CREATE DATABASE old_stamp');
$lanes->safe_psql('old_stamp',
	"CREATE EXTENSION idgen; CREATE TABLE events (id bigint PRIMARY KEY);
	 COMMENT ON EXTENSION idgen IS 'x $history'");
like(mints_at($lanes, 'postgres', '2026-02-05 00:00:00+00'),
	qr/backfill lane 10[01] refuses since a restore named its shard/,
	'a stamp that names no lanes stops them');
is(stamp_of($lanes, 'old_stamp'), "x $history", 'and its database names any lane still');
attest('old_stamp');

# 4. A dump of other lanes: these go on, and the database names both.
$lanes->safe_psql('postgres', 'CREATE DATABASE other_lanes');
$lanes->safe_psql('other_lanes',
	"CREATE EXTENSION idgen;
	 COMMENT ON EXTENSION idgen IS 'y [shards: 200, 300-301] $history'");
is(mints_at($lanes, 'postgres', '2026-02-06 00:00:00+00'), 't',
	"a dump naming other lanes leaves this server's minting");
like(stamp_of($lanes, 'other_lanes'),
	qr/^y \[shards: 2, 100-101, 200, 300-301\] \[layout history: /,
	'its database names its lanes and this server\'s');

# 5. A comment by hand keeps the part.
$lanes->safe_psql('other_lanes', "COMMENT ON EXTENSION idgen IS 'ours'");
like(stamp_of($lanes, 'other_lanes'),
	qr/^ours \[shards: 2, 100-101, 200, 300-301\] \[layout history: /,
	'a comment by hand keeps the lanes named');

# A comment by hand that ends as a part would, where the stamp names any
# shard: it says so.
$lanes->safe_psql('old_stamp', "COMMENT ON EXTENSION idgen IS 'note [shards: none]'");
like(stamp_of($lanes, 'old_stamp'), qr/^note \[shards: none\] \[shards: any\] \[layout history: /,
	'a description ending as a part is not taken for one');
like(mints_at($lanes, 'postgres', '2026-02-06 00:00:01+00'), qr/^t$/,
	'and a comment by hand stops nothing');

# 6. DROP and CREATE EXTENSION: the rows stay, so the stamp names any shard.
$lanes->safe_psql('other_lanes', 'DROP EXTENSION idgen; CREATE EXTENSION idgen');
unlike(stamp_of($lanes, 'other_lanes'), qr/\[shards: /,
	'created again, the stamp names any shard');

# the extension added to a database that has tables already, however its
# rows came (a clone of one restored before the extension, a drop whose
# kept stamp was removed): any shard
$lanes->safe_psql('postgres', 'CREATE DATABASE late_ext');
$lanes->safe_psql('late_ext',
	'CREATE TABLE events (id bigint PRIMARY KEY); CREATE EXTENSION idgen');
unlike(stamp_of($lanes, 'late_ext'), qr/\[shards: /,
	'CREATE EXTENSION where tables exist names any shard');
$lanes->safe_psql('late_ext',
	'DROP EXTENSION idgen; SECURITY LABEL FOR idgen ON DATABASE late_ext IS NULL; CREATE EXTENSION idgen');
unlike(stamp_of($lanes, 'late_ext'), qr/\[shards: /,
	'and again after a drop whose kept stamp was removed');

# A template the stamps worker cannot enter, given the extension now.
$lanes->safe_psql('postgres', 'CREATE DATABASE tmpl');
$lanes->safe_psql('tmpl', 'CREATE EXTENSION idgen');
$lanes->safe_psql('postgres', 'ALTER DATABASE tmpl ALLOW_CONNECTIONS false');

# 7. A start with a new lane: every stamp names it before the lanes mint.
$lanes->append_conf('postgresql.conf', "idgen.backfill_shards = '100-102'\n");
$offset = -s $lanes->logfile;
$lanes->restart;
is(mints_at($lanes, 'postgres', '2026-02-07 00:00:00+00'), 't',
	'after a start with a new lane, the lanes mint');
like(stamp_of($lanes, 'postgres'), qr/ \[shards: 2, 100-102\] \[layout history: /,
	'the stamp names the new lane');
# shard 1, the first server's live shard: named by the raise past its IDs
like(stamp_of($lanes, 'again'), qr/ \[shards: 1-2, 100-102\] \[layout history: /,
	'in every database');
like(stamp_of($lanes, 'old_stamp'), qr/\[shards: any\] \[layout history: /,
	'one naming any shard is left');
like(slurp_file($lanes->logfile, $offset),
	qr/idgen named this server's shards in the stamp of database "again"/,
	'the log says so');

# a database copied from the template the worker could not enter: the
# first mint there asks for another visit
$lanes->safe_psql('postgres', 'CREATE DATABASE from_tmpl TEMPLATE tmpl');
like(stamp_of($lanes, 'from_tmpl'), qr/ \[shards: 2, 100-101\] \[layout history: /,
	'a copy of the template names the lanes of before');
is(mints_at($lanes, 'from_tmpl', '2026-02-07 00:00:01+00'), 't', 'a lane mints there');
like(stamp_of($lanes, 'from_tmpl'), qr/ \[shards: 2, 100-102\] \[layout history: /,
	'after the stamp names the new lane');

# the same template copied again: its first live mint asks for a visit
$lanes->safe_psql('postgres', 'CREATE DATABASE from_tmpl2 TEMPLATE tmpl');
$lanes->safe_psql('from_tmpl2', 'SELECT idgen_next()');
ok( $lanes->poll_query_until('from_tmpl2',
		q{SELECT obj_description(oid, 'pg_extension') ~ ' \[shards: 2, 100-102\] ' FROM pg_extension WHERE extname = 'idgen'}),
	"a live mint in a database the worker missed has this server's shards named there");

# a reload that adds a live shard: named in every stamp by another visit
$lanes->safe_psql('postgres', "ALTER SYSTEM SET idgen.shard_ids = '7'");
$lanes->reload;
ok( $lanes->poll_query_until('again',
		q{SELECT obj_description(oid, 'pg_extension') ~ ' \[shards: 1-2, 7, 100-102\] ' FROM pg_extension WHERE extname = 'idgen'}),
	'a live shard added by a reload is named in every stamp');
# the visit ends in every database it enters before the log is read below
foreach my $db (split /\n/,
	$lanes->safe_psql('postgres', 'SELECT datname FROM pg_database WHERE datallowconn'))
{
	$lanes->poll_query_until($db,
		q{SELECT coalesce(c !~ ' \[shards: [0-9]' OR c ~ '[ ,]7[],]', true)
		  FROM (SELECT obj_description(oid, 'pg_extension') AS c
		          FROM pg_extension WHERE extname = 'idgen') AS stamp
		  RIGHT JOIN (SELECT) AS one ON true})
	  or die "the visit did not reach $db";
}
$lanes->safe_psql('postgres', 'ALTER SYSTEM RESET idgen.shard_ids');
$lanes->reload;

$offset = -s $lanes->logfile;
$lanes->restart;
is(mints_at($lanes, 'postgres', '2026-02-08 00:00:00+00'), 't', 'and after the next start');
unlike(slurp_file($lanes->logfile, $offset), qr/idgen named this server's shards/,
	'which finds every stamp naming them and writes none');

# 8. Rows loaded where idgen could not see (COPY, a data-only restore): the
# guide's raise names their shards.
$lanes->safe_psql('postgres', 'CREATE DATABASE loaded');
$lanes->safe_psql('loaded',
	"CREATE EXTENSION idgen; CREATE TABLE events (id bigint PRIMARY KEY);
	 INSERT INTO events
	 SELECT ((extract(epoch FROM timestamptz '2026-01-15 00:00:00+00') - 1767225600)::bigint * 1000
	         << 22) | (300 << 10) | g
	   FROM generate_series(0, 9) g");
$lanes->safe_psql('loaded',
	'SELECT idgen_advance_past(max(id)) FROM events GROUP BY id_to_shard(id)');
like(stamp_of($lanes, 'loaded'), qr/ \[shards: 2, 100-102, 300\] \[layout history: /,
	"idgen_advance_past of a shard not minted here names it in the stamp");
$lanes->safe_psql('loaded', 'SELECT idgen_advance_past(idgen_next())');
like(stamp_of($lanes, 'loaded'), qr/ \[shards: 2, 100-102, 300\] \[layout history: /,
	'of a live shard of this server, names nothing more');

$lanes->stop;
done_testing();
