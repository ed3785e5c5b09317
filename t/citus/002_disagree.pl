
# Copyright (c) 2026, The idgen Authors

# Nodes that cannot disagree.  Citus itself lets in a node without idgen
# preloaded, with another layout, or with a shard another node mints for.
# citus_add_node creates the extension on the new node before it places a
# shard there, and idgen's script refuses such a node then: the add fails
# with the reason.  A node that got the extension another way (created by
# hand before the add) is let in, and idgen_citus_check() on the
# coordinator names it and its problem.  Nodes sharing shards under one
# lease registry (the coordinator's database) are not a problem.

use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::RealBin/..", $FindBin::RealBin;
use IdgenTest;
use IdgenCitus;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

plan skip_all => 'Citus is not installed for this PostgreSQL (scripts/citus.sh)'
  unless citus_available();

my $c  = citus_node('coordinator', 1);
my $w1 = citus_node('worker1',     2);
$c->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('127.0.0.1', " . $c->port . ')');
my ($ret, $err) = add_node($c, $w1);
is($ret, 0, 'worker 1 added') or diag $err;
$c->safe_psql('postgres', 'CREATE EXTENSION idgen');

my %bad = (
	not_preloaded => citus_node('not_preloaded', 5,
		"shared_preload_libraries = 'citus'"),
	other_epoch => citus_node('other_epoch', 6,
		"idgen.epoch = '2025-01-01 00:00:00+00'"),
	other_bits => citus_node('other_bits', 7, 'idgen.sequence_bits = 12'),
	repeated => citus_node('repeated', 2),);
my %reason = (
	not_preloaded => qr/idgen not preloaded: shared_preload_libraries is 'citus' here/,
	other_epoch =>
	  qr/layout differs: idgen\.epoch is 2025-01-01 00:00:00\+00 here, 2026-01-01 00:00:00\+00 on 127\.0\.0\.1:${\ $c->port}/,
	other_bits => qr/layout differs: idgen\.sequence_bits is 12 here, 10 on/,
	repeated =>
	  qr/shard repeated: shard 2 is also minted for by node \d+ \(127\.0\.0\.1:${\ $w1->port}\)/
);

my $nodes = $c->safe_psql('postgres', 'SELECT count(*) FROM pg_dist_node');
for my $name (sort keys %bad)
{
	($ret, $err) = add_node($c, $bad{$name});
	isnt($ret, 0, "$name: citus_add_node fails");
	like($err, qr/this node disagrees with the other nodes of its Citus cluster about idgen/,
		"$name: with idgen's error from the node");
	like($err, $reason{$name}, "$name: which names the problem");
	is($c->safe_psql('postgres', 'SELECT count(*) FROM pg_dist_node'),
		$nodes, "$name: the node is not in the cluster");
	is($bad{$name}->safe_psql('postgres',
			"SELECT count(*) FROM pg_extension WHERE extname = 'idgen'"),
		'0', "$name: nor the extension on it");
}

# The extension made by hand on each node first: Citus then only runs
# CREATE EXTENSION IF NOT EXISTS there, and lets them in.  (On a node with
# Citus the script refuses to be made without the preload: there it is
# made before Citus.)
$bad{not_preloaded}->safe_psql('postgres',
	'DROP EXTENSION citus; CREATE EXTENSION idgen; CREATE EXTENSION citus');
for my $name (sort keys %bad)
{
	$bad{$name}->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS idgen');
	($ret, $err) = add_node($c, $bad{$name});
	is($ret, 0, "$name: let in with the extension made beforehand") or diag $err;
}
my %id = map {
	$_ => $c->safe_psql('postgres',
		'SELECT nodeid FROM pg_dist_node WHERE nodeport = ' . $bad{$_}->port)
} keys %bad;
$id{worker1} = $c->safe_psql('postgres',
	'SELECT nodeid FROM pg_dist_node WHERE nodeport = ' . $w1->port);
my $check = $c->safe_psql('postgres',
	"SELECT nodeid || '|' || node || '|' || problem || ': ' || detail FROM idgen_citus_check()");
note "idgen_citus_check():\n$check";
my @rows = split /\n/, $check;
is(scalar(@rows), 5, 'idgen_citus_check() reports five problems');
for my $name (sort keys %bad)
{
	my $port = $bad{$name}->port;
	ok((grep { /^$id{$name}\|127\.0\.0\.1:$port\|/ && $_ =~ $reason{$name} } @rows),
		"idgen_citus_check() names $name and its problem");
}
ok( (   grep {
				/^$id{worker1}\|127\.0\.0\.1:${\ $w1->port}\|shard repeated: shard 2 is also minted for by node $id{repeated} /
		} @rows),
	'and worker 1, whose shard the other repeats');

# Stopped, a node is reported as one the check could not ask.
$bad{other_bits}->stop;
like(
	$c->safe_psql(
		'postgres',
		"SELECT problem || ': ' || detail FROM idgen_citus_check() WHERE nodeid = $id{other_bits}"),
	qr/^unreachable: The check could not ask this node: /,
	'a node that is down: unreachable');
$c->safe_psql('postgres',
	"SELECT citus_remove_node('127.0.0.1', ${\ $bad{other_bits}->port })");

# One lease registry for every node, the coordinator's database: a shard
# two nodes are configured with is not minted by both, and is no problem.
my $registry = "host=127.0.0.1 port=${\ $c->port } dbname=postgres";
for my $n ($w1, $bad{repeated})
{
	$n->append_conf('postgresql.conf', "idgen.lease_registry = '$registry'");
	$n->restart;
}
is( $c->safe_psql(
		'postgres',
		"SELECT count(*) FROM idgen_citus_check() WHERE problem = 'shard repeated'"),
	'0',
	'shards repeated under one lease registry are not reported');

done_testing();
