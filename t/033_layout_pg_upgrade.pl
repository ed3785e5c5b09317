
# Copyright (c) 2026, The idgen Authors
#
# pg_upgrade into a new cluster after a layout change (12 shard bits and 10
# sequence bits to 13 and 9): each database's stamp of the layout history
# (the end of the extension's comment) comes with the upgraded catalog; the
# server's history and fence do not (doc/upgrading.md):
#
#  - with the old cluster's idgen.state and idgen.layouts copied into the
#    new data directory before its first start, and one start with
#    idgen.allow_foreign_state = on, old IDs decode by the layout that
#    minted them (A, then B), the stored generated column and the
#    expression index still agree with the decoders, the new server's
#    history is the old one's, and its new IDs are above every old one and
#    decode by B;
#  - without the files, the new server's history is one it assumed (B from
#    0), which is not the database's stamp: every decoder and INSERT
#    refuses, loudly, rather than decode old IDs by B; the files copied in
#    afterwards (the guide's remedy) make every ID decode as minted.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use File::Copy qw(copy);
use IPC::Run ();
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $epoch  = '2026-01-01 00:00:00+00';
my $conf_a = "idgen.shard_id = 5\n";    # the default layout
my $conf_b =
  "idgen.shard_bits = 13\nidgen.sequence_bits = 9\nidgen.shard_id = 5000\n";
my $allow   = "idgen.allow_layout_change = on\n";
my $foreign = "idgen.allow_foreign_state = on\n";

sub layout_conf { return $_[0]->data_dir . '/idgen_layout.conf'; }

sub new_node
{
	my ($name) = @_;
	return idgen_node($name, own_system => 1,
		conf => "include_if_exists = 'idgen_layout.conf'\n");
}

sub insert_rows
{
	my ($node, $n, $what) = @_;
	my @ids = split /\n/,
	  $node->safe_psql('postgres',
		"INSERT INTO items SELECT FROM generate_series(1, $n) RETURNING id");
	is(scalar(@ids), $n, "$what: inserted $n rows");
	push @all_ids, @ids;
	return @ids;
}

# Every decoder's answer for the rows up to $upto, one line per row.
sub decodes
{
	my ($node, $upto) = @_;
	return $node->safe_psql(
		'postgres', qq{
SET TimeZone = 'UTC';
SELECT string_agg(format('%s %s %s %s %s %s', id, id_to_timestamp(id),
		id_to_shard(id), id_to_sequence(id), id_to_layout_version(id),
		idgen_decode(id)), E'\\n' ORDER BY id)
  FROM items WHERE id <= $upto});
}

my $history_sql = q{
SET TimeZone = 'UTC';
SELECT string_agg(format('%s %s %s %s %s', version, epoch, shard_bits,
		sequence_bits, first_id), E'\n' ORDER BY version)
  FROM idgen_layout_history()};

my $copy_sql = q{
SELECT obj_description(oid, 'pg_extension') FROM pg_extension WHERE extname = 'idgen'};

# pg_upgrade from $old to $new, both stopped, as PostgreSQL's own
# src/bin/pg_upgrade/t/002_pg_upgrade.pl runs it.
sub pg_upgrade
{
	my ($old, $new, $what) = @_;
	my $bindir = $new->config_data('--bindir');
	my @cmd = (
		"$bindir/pg_upgrade", '--no-sync', '--retain',
		'-d', $old->data_dir, '-D', $new->data_dir,
		'-b', $old->config_data('--bindir'), '-B', $bindir,
		'-s', $new->host, '-p', $old->port, '-P', $new->port);
	my ($out, $err) = ('', '');
	my $cwd = $PostgreSQL::Test::Utils::tmp_check;
	chdir $cwd or die "could not chdir to $cwd: $!";
	my $ok = IPC::Run::run(\@cmd, '>', \$out, '2>', \$err);
	note "pg_upgrade ($what):\n$out$err";
	ok($ok, "$what: pg_upgrade succeeds");
	my @logs = glob($new->data_dir . '/pg_upgrade_output.d/*/log/*');
	if (!$ok)
	{
		diag("pg_upgrade:\n$out$err");
		diag("----- $_\n" . slurp_file($_)) foreach @logs;
	}
	# what idgen logged while pg_upgrade ran the servers
	my $server_log = join '', map { slurp_file($_) }
	  grep { /pg_upgrade_server\.log$/ } @logs;
	return join "\n",
	  grep { /WARNING|ERROR|FATAL|PANIC|idgen (?:layout|recorded|state)/ }
	  split /\n/, $server_log;
}

# --------------------------------------------------------------------------
# The old cluster: layout A, then B.

my $old = new_node('old');
write_conf(layout_conf($old), $conf_a);
$old->start;
$old->safe_psql(
	'postgres', q{
CREATE EXTENSION idgen;
CREATE TABLE items (
	id bigint PRIMARY KEY DEFAULT idgen_next(),
	shard integer GENERATED ALWAYS AS (id_to_shard(id)) STORED);
CREATE INDEX items_shard_idx ON items (id_to_shard(id));
});
my @ids_a = insert_rows($old, 1000, 'layout A');
usleep(20_000);
push @ids_a, insert_rows($old, 1000, 'layout A');

$old->stop;
write_conf(layout_conf($old), $conf_b . $allow);
my $offset = -s $old->logfile;
my ($started, $log) = start_logged($old);
ok($started, 'the old cluster starts with layout B and the override');
ok(log_has($old, $offset, qr/idgen layout version 2 begins at ID \d+/),
	'the log says where version 2 begins');
my ($cut) = slurp_file($old->logfile, $offset) =~
  /idgen layout version 2 begins at ID (\d+)/;
$cut //= 0;
ok( log_has(
		$old, $offset,
		qr/idgen stamped database "postgres" with layout versions 2 to 2/),
	'the "idgen stamps" worker stamps version 2 on the database');
my @ids_b = insert_rows($old, 1000, 'layout B');
usleep(20_000);
push @ids_b, insert_rows($old, 1000, 'layout B');
check_ids(\@all_ids, 'the old cluster');
ok(max_id(\@ids_a) < $cut && min_id(\@ids_b) >= $cut,
	'layout A IDs are below the cut-over, layout B IDs at or above it');

my $n_a = scalar(@ids_a);
my $n_b = scalar(@ids_b);
my $max_old = max_id(\@all_ids);
my $top = '9223372036854775807';
is(misdecoded($old, "id >= 0 AND id < $cut", $epoch, 12, 10, 5, 1), "0|$n_a",
	'the old cluster: old IDs decode by layout A, version 1');
is(misdecoded($old, "id >= $cut AND id < $top", $epoch, 13, 9, 5000, 2), "0|$n_b",
	'the old cluster: new IDs decode by layout B, version 2');
my $decoded  = decodes($old, $max_old);
my $history  = $old->safe_psql('postgres', $history_sql);
my $db_copy  = $old->safe_psql('postgres', $copy_sql);
is($history =~ tr/\n//, 1, 'the old cluster\'s history has two versions');
note "old history:\n$history\nold database stamp:\n$db_copy";
like($db_copy, qr/\[layout history: 0 12\/10 2026-01-01T00:00:00Z, $cut 13\/9 2026-01-01T00:00:00Z\]$/,
	'the database\'s stamp is the history');

write_conf(layout_conf($old), $conf_b);
$old->stop;

# --------------------------------------------------------------------------
# pg_upgrade into a new cluster of layout B; the old cluster's files copied.

my $new = new_node('new');
write_conf(layout_conf($new), $conf_b);
my $upgrade_log = pg_upgrade($old, $new, 'into a new cluster');
note "what the servers logged of idgen during pg_upgrade:\n$upgrade_log";
unlike($upgrade_log, qr/ERROR|PANIC/,
	'into a new cluster: no ERROR from the servers pg_upgrade ran');

foreach my $f ('idgen.state', 'idgen.layouts')
{
	ok(-f $old->data_dir . "/$f", "the old cluster has $f");
	copy($old->data_dir . "/$f", $new->data_dir . "/$f")
	  or die "could not copy $f: $!";
}
write_conf(layout_conf($new), $conf_b . $foreign);
($started, $log) = start_logged($new);
ok($started, 'the new cluster starts with the old files and idgen.allow_foreign_state');
like($log, qr/idgen state file "idgen.state" was written by another cluster/,
	'it says the state file is the other cluster\'s');

sub check_decoding
{
	my ($node, $what) = @_;
	# ok(), not is(): a mismatch would print thousands of lines
	my $now = decodes($node, $max_old);
	ok($now eq $decoded,
		"$what: every old row decodes exactly as on the old cluster");
	if ($now ne $decoded)
	{
		my @was = split /\n/, $decoded;
		my @is  = split /\n/, $now;
		my @diff = grep { ($was[$_] // '') ne ($is[$_] // '') } 0 .. $#was;
		diag(scalar(@diff) . ' rows differ; the first: ' . ($was[ $diff[0] ] // '')
			  . ' now ' . ($is[ $diff[0] ] // '')) if @diff;
	}
	is(misdecoded($node, "id >= 0 AND id < $cut", $epoch, 12, 10, 5, 1), "0|$n_a",
		"$what: old IDs decode by layout A, version 1");
	is(misdecoded($node, "id >= $cut AND id < $max_old + 1", $epoch, 13, 9, 5000, 2), "0|$n_b",
		"$what: IDs minted after the change decode by layout B, version 2");
	is( $node->safe_psql(
			'postgres',
			'SELECT count(*) FROM items WHERE shard IS DISTINCT FROM id_to_shard(id)'),
		'0',
		"$what: the stored generated column equals id_to_shard(id)");
	my $by_index = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
	my $by_seq =
	  'SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
	like( $node->safe_psql(
			'postgres',
			"$by_index EXPLAIN (COSTS OFF) SELECT count(*) FROM items WHERE id_to_shard(id) = 5"),
		qr/items_shard_idx/,
		"$what: the plan uses the expression index");
	is( $node->safe_psql(
			'postgres', "$by_index
SELECT (SELECT count(*) FROM items WHERE id_to_shard(id) = 5),
	   (SELECT count(*) FROM items WHERE id_to_shard(id) = 5000 AND id <= $max_old)"),
		"$n_a|$n_b",
		"$what: by the expression index, shard 5 holds the old rows, shard 5000 the new");
	is( $node->safe_psql(
			'postgres', "$by_seq
SELECT (SELECT count(*) FROM items WHERE id_to_shard(id) = 5),
	   (SELECT count(*) FROM items WHERE id_to_shard(id) = 5000 AND id <= $max_old)"),
		"$n_a|$n_b",
		"$what: by a seq scan too");
	return;
}

check_decoding($new, 'the new cluster');
is($new->safe_psql('postgres', $history_sql),
	$history, 'the new cluster\'s layout history is the old one\'s');
is($new->safe_psql('postgres', $copy_sql),
	$db_copy, 'the database\'s stamp came with the upgraded catalog, unchanged');

my @fresh = insert_rows($new, 100, 'the new cluster');
ok(min_id(\@fresh) > $max_old, 'the new cluster\'s IDs are above every old ID');
is(misdecoded($new, "id >= $max_old + 1 AND id < $top", $epoch, 13, 9, 5000, 2), "0|100",
	'the new cluster\'s IDs decode by layout B, version 2');
check_ids(\@all_ids, 'across the upgrade');

# Without the override from here: the files are the cluster's own now.
write_conf(layout_conf($new), $conf_b);
$new->restart;
check_decoding($new, 'the new cluster, restarted');
$new->stop;

# --------------------------------------------------------------------------
# pg_upgrade into a third cluster, the files forgotten: its history is the
# one it assumed, layout B from 0, and the database's stamp says otherwise.

my $third = new_node('third');
write_conf(layout_conf($third), $conf_b);
$upgrade_log = pg_upgrade($old, $third, 'without the files');
note "what the servers logged of idgen during pg_upgrade:\n$upgrade_log";
($started, $log) = start_logged($third);
ok($started, 'the third cluster starts');
is($third->safe_psql('postgres', $copy_sql),
	$db_copy, 'without the files: the stamp is as it came');
foreach my $f ('id_to_timestamp', 'id_to_shard', 'id_to_sequence',
	'id_to_layout_version', 'idgen_decode')
{
	my ($ret, $err) =
	  psql_fails($third, "SELECT $f(id) FROM items ORDER BY id LIMIT 1");
	isnt($ret, 0, "without the files: $f() fails");
	like($err, qr/55000: this database's layout history does not match the server's/,
		"without the files: $f() says the histories do not match");
}
my ($ret, $err) = psql_fails($third, 'INSERT INTO items DEFAULT VALUES');
isnt($ret, 0, 'without the files: a row is refused');
like($err, qr/does not match the server's/, 'for the same reason');
is($third->safe_psql('postgres', 'SELECT count(*) FROM items'),
	$n_a + $n_b, 'without the files: no row was added');

# The remedy: the old cluster's files, and one start that takes them.
$third->stop;
foreach my $f ('idgen.state', 'idgen.layouts')
{
	copy($old->data_dir . "/$f", $third->data_dir . "/$f")
	  or die "could not copy $f: $!";
}
write_conf(layout_conf($third), $conf_b . $foreign);
($started, $log) = start_logged($third);
ok($started, 'the third cluster starts with the old files');
check_decoding($third, 'the files copied in after the first start');
my @third_ids = insert_rows($third, 100, 'the third cluster');
ok(min_id(\@third_ids) > $max_old,
	'the third cluster\'s IDs are above every old ID');
$third->stop;

done_testing();
