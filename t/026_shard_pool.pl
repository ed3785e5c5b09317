
# Copyright (c) 2026, The idgen Authors
#
# Shards claimed from a pool: servers copied from one template, with one
# configuration naming no shard of their own, idgen.shard_pool = '10-13'.
#
#  - Four servers started at the same instant claim four different shards,
#    mint only for them (idgen_next, idgen_next_n), and refuse any other;
#    idgen_stats and idgen_leases() say which shard and since when.
#  - A clean stop gives the shard back.
#  - Four started at once while the registry is down: minting fails with
#    a clear error after idgen.max_wait; once the registry is up, four
#    different shards again.
#  - A crash restart (a backend killed) reclaims the server's own shard,
#    its IDs above those before the crash.
#  - A server frozen past its lease: a fifth server, for which the pool had
#    no free shard, claims the frozen one's above its IDs; the frozen one,
#    resumed, never mints for that shard again, until a new claim of a
#    shard given back, above the fifth's IDs.
#  - A claim committed whose answer was lost (the worker killed meanwhile,
#    the server restarted after a crash) is claimed again, not leaked.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenLease;

my ($registry, $registry_conninfo) = lease_registry(superuser => 1);

# The template: the extension made, then the configuration every copy
# shares, with no number of its own.
my $template = idgen_node('template');
$template->start;
$template->safe_psql('postgres', 'CREATE EXTENSION idgen');
$template->stop;
$template->append_conf('postgresql.conf', <<"EOC");
idgen.lease_registry = '$registry_conninfo'
idgen.shard_pool = '10-13'
idgen.lease_duration = '4s'
idgen.max_wait = '2s'
restart_after_crash = on
EOC
$template->backup_fs_cold('template');

my @nodes = map {
	my $node = PostgreSQL::Test::Cluster->new("s$_");
	$node->init_from_backup($template, 'template', standby => 0);
	$node
} 1 .. 5;
my @four = @nodes[ 0 .. 3 ];

# Start servers at the same instant: every pg_ctl at once.
sub start_at_once
{
	my @h;
	foreach my $node (@_)
	{
		my ($out, $err) = ('', '');
		push @h,
		  IPC::Run::start(
			[
				'pg_ctl', '-w', '-D', $node->data_dir, '-l', $node->logfile,
				'-o', '--cluster-name=' . $node->name, 'start'
			],
			'>', \$out, '2>', \$err);
	}
	$_->finish foreach @h;
	$_->_update_pid(1) foreach @_;
	return;
}

sub held_shard
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(shard::text, '-') FROM idgen_stats");
}

# Wait until every node holds a shard; their shards.
sub wait_for_shards
{
	my @shards;
	foreach my $node (@_)
	{
		$node->poll_query_until('postgres',
			"SELECT shard IS NOT NULL FROM idgen_stats")
		  or die $node->name . ' claimed no shard';
		push @shards, held_shard($node);
	}
	return @shards;
}

sub distinct
{
	my %seen;
	return scalar grep { !$seen{$_}++ } @_;
}

sub registry_owners
{
	return $registry->safe_psql('postgres',
		"SELECT count(DISTINCT owner) FROM idgen_lease WHERE shard BETWEEN 10 AND 13 AND owner IS NOT NULL"
	);
}

sub shards_of
{
	my ($node, $ids) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(DISTINCT id_to_shard(id)::text, ',') FROM unnest('{"
		  . join(',', @$ids)
		  . "}'::bigint[]) AS id");
}

# --------------------------------------------------------------------------
# Four at once, the registry up.

start_at_once(@four);
my @shards = wait_for_shards(@four);
note 'claimed: ' . join(' ', @shards);
is(distinct(@shards), 4, 'four servers started at once claim four different shards');
is(scalar(grep { $_ >= 10 && $_ <= 13 } @shards), 4, 'all of the pool');
is(registry_owners(), '4', 'the registry names four owners');

my %ids;
foreach my $i (0 .. 3)
{
	my $node = $four[$i];
	my @ids = mint($node, 500, name => $node->name . ' mints');
	push @ids, split /\n/,
	  $node->safe_psql('postgres', 'SELECT idgen_next_n(200)');
	is(shards_of($node, \@ids), $shards[$i],
		$node->name . ': idgen_next() and idgen_next_n() mint for the claimed shard');
	is( $node->safe_psql('postgres', "SELECT idgen_next($shards[$i]) > 0"),
		't', $node->name . ': idgen_next(shard) accepts the claimed shard');
	$ids{ $node->name } = \@ids;
}
check_ids([ map { @$_ } values %ids ], 'four servers', 1);

my $other = $shards[1];
my ($ret, $stderr) = psql_fails($four[0], "SELECT idgen_next($other)");
like($stderr, qr/shard $other is not the shard this server claimed/,
	'a shard another server claimed is refused');
is( $four[0]->safe_psql('postgres',
		"SELECT state || '|' || (since IS NOT NULL) || '|' || (since <= now()) FROM idgen_leases() WHERE shard = $shards[0]"
	),
	'held|true|true',
	'idgen_leases() shows the claimed shard held, and since when');
is( $four[0]->safe_psql('postgres',
		'SELECT shard_since = (SELECT since FROM idgen_leases()) FROM idgen_stats'),
	't', 'idgen_stats says the same');
ok($four[0]->log_contains("idgen claimed shard $shards[0] of \"idgen.shard_pool\""),
	'the claim is logged');

# A clean stop gives every shard back.
$_->stop foreach @four;
is( $registry->safe_psql('postgres',
		'SELECT count(*) FROM idgen_lease WHERE shard BETWEEN 10 AND 13 AND owner IS NULL'),
	'4', 'a clean stop gives the shard back');

# --------------------------------------------------------------------------
# Four at once, the registry down.

$registry->stop;
start_at_once(@four);
($ret, $stderr) = psql_fails($four[0], 'SELECT idgen_next()');
isnt($ret, 0, 'with the registry down, minting fails');
like($stderr,
	qr/could not claim a shard of "idgen.shard_pool" within "idgen.max_wait" \(2000 ms\)/,
	'with the reason');
like($stderr, qr/55000/, 'and SQLSTATE 55000');
is($four[0]->safe_psql('postgres', 'SELECT state FROM idgen_leases()'),
	'claiming', 'idgen_leases() shows the server claiming');
is(held_shard($four[0]), '-', 'idgen_stats shows no shard');
$registry->start;
@shards = wait_for_shards(@four);
note 'claimed: ' . join(' ', @shards);
is(distinct(@shards), 4,
	'once the registry is up, the four claim four different shards');
foreach my $i (0 .. 3)
{
	my $node = $four[$i];
	my @ids = mint($node, 500, name => $node->name . ' mints again');
	is(shards_of($node, \@ids), $shards[$i],
		$node->name . ': for its claimed shard');
	push @{ $ids{ $node->name } }, @ids;
}
check_ids([ map { @$_ } values %ids ], 'four servers, twice', 1);

# --------------------------------------------------------------------------
# A crash restart reclaims its own shard.

my $s1 = $four[0];
my $s1_shard = held_shard($s1);
my $s1_owner = $registry->safe_psql('postgres',
	"SELECT owner FROM idgen_lease WHERE shard = $s1_shard");
my $log_offset = -s $s1->logfile;
# the end of its lease as the registry has it before the crash (at least
# two thirds of a lease ahead): reclaimed before it, not taken after it
my $s1_until = $registry->safe_psql('postgres',
	"SELECT valid_until FROM idgen_lease WHERE shard = $s1_shard");
my $backend = $s1->background_psql('postgres');
my $backend_pid = $backend->query_safe('SELECT pg_backend_pid()');
kill 'KILL', $backend_pid;
$backend->{run}->kill_kill;
ok($s1->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset),
	's1 restarts after a crash');
$s1->poll_query_until('postgres', 'SELECT shard IS NOT NULL FROM idgen_stats')
  or die 's1 claimed no shard after its crash restart';
is(held_shard($s1), $s1_shard, 'a crash restart reclaims its own shard');
is( $s1->safe_psql('postgres',
		"SELECT since < '$s1_until' FROM idgen_leases()"),
	't', 'before its lease of before the crash ended');
ok($s1->log_contains("idgen holds the lease on shard $s1_shard", $log_offset),
	'as its own lease, renewed');
is( $registry->safe_psql('postgres',
		"SELECT owner FROM idgen_lease WHERE shard = $s1_shard"),
	$s1_owner, 'under the same owner');
my @after = mint($s1, 500, name => 's1 mints after its crash restart');
cmp_ok(min_id(\@after), '>', max_id($ids{s1}), 'above its IDs before the crash');
push @{ $ids{s1} }, @after;

# --------------------------------------------------------------------------
# s1 frozen past its lease; s5 claims its shard; s1, resumed, does not mint
# for it.

my @frozen = server_pids($s1);
kill 'STOP', @frozen;
note 'froze s1: ' . join(' ', @frozen);

my $s5 = $nodes[4];
$s5->start;
$s5->poll_query_until('postgres', 'SELECT shard IS NOT NULL FROM idgen_stats')
  or die 's5 claimed no shard';
is(held_shard($s5), $s1_shard, 's5 claims the shard of s1 once its lease ended');
ok($s5->log_contains('no shard of "idgen.shard_pool" is free'),
	's5 logged that the pool had no free shard until then');
my @s5_ids = mint($s5, 500, name => 's5 mints');
cmp_ok(min_id(\@s5_ids), '>', max_id($ids{s1}), 'above every ID s1 stamped');

kill 'CONT', @frozen;
note 'resumed s1';
my $minted_old = 0;
my $deadline = time + 8;    # two leases
while (time < $deadline)
{
	my ($r, $out) = $s1->psql('postgres', 'SELECT id_to_shard(idgen_next())');
	$minted_old++ if $r == 0 && $out eq $s1_shard;
	usleep(100_000);
}
# a mint in flight when s1 was frozen may still finish below its lease's end
cmp_ok($minted_old, '<=', 1, 's1, resumed, no longer mints for its old shard');
ok($s1->log_contains("idgen lost the lease on shard $s1_shard"),
	's1 logged that it lost the shard');
($ret, $stderr) = psql_fails($s1, 'SELECT idgen_next()');
like($stderr, qr/could not claim a shard of "idgen.shard_pool"/,
	'and, with no shard free, fails to mint');

# s5 stops cleanly: s1 claims the shard given back, above s5's IDs.
$s5->stop;
$s1->poll_query_until('postgres', 'SELECT shard IS NOT NULL FROM idgen_stats')
  or die 's1 claimed no shard again';
is(held_shard($s1), $s1_shard, 's1 claims the shard s5 gave back');
my @again = mint($s1, 500, name => 's1 mints for it again');
cmp_ok(min_id(\@again), '>', max_id(\@s5_ids), 'above every ID s5 stamped');
check_ids([ @{ $ids{s1} }, @s5_ids, @again ], "shard $s1_shard over s1 and s5");

# --------------------------------------------------------------------------
# A claim the registry committed whose answer never reached the server:
# its lease worker is killed while the COMMIT sleeps, so the server
# restarts after a crash with its owner token.  It does not mint for the
# shard until it claims it again, and claims that row, not another.

my $s4_shard = held_shard($four[3]);
$four[3]->stop;
my $s5_port = $s5->port;
slow_takes($registry, $s5);
$log_offset = -s $s5->logfile;
$s5->start;
wait_slow_take($registry) or die 's5\'s claim did not reach its COMMIT';
kill 'KILL', lease_worker_pid($s5);
ok($s5->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset),
	's5 restarts after a crash while its claim commits');
end_slow_takes($registry);
is( $registry->safe_psql('postgres',
		"SELECT string_agg(shard::text, ',') FROM idgen_lease WHERE owner_name LIKE '% port $s5_port,%' AND owner IS NOT NULL"
	),
	$s4_shard,
	'the registry committed the claim');
$s5->poll_query_until('postgres', 'SELECT shard IS NOT NULL FROM idgen_stats')
  or die 's5 claimed no shard after its crash restart';
is(held_shard($s5), $s4_shard, 's5 claims the row it never heard it had');
my @s5_more = mint($s5, 500, name => 's5 mints');
cmp_ok(min_id(\@s5_more), '>', max_id($ids{s4}),
	'above the IDs of the shard\'s previous owner');

$s5->stop;
$_->stop foreach @four[ 0 .. 2 ];
$registry->stop;
done_testing();
