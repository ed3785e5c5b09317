
# Copyright (c) 2026, The idgen Authors
#
# A take whose COMMIT answer is lost, for a shard whose older lease end this
# server still has in memory.  The next round finds the row "mine" and
# renews it: the renewal must establish the generator above the previous
# owner's last millisecond (previous_until) too, or this server mints below
# IDs the other server stamped.  A proxy between the server and its
# registry drops the COMMIT's answer and resets the connection; a deferred
# trigger holds the COMMIT long enough to aim at it.  idgen.max_lead is
# wide so that the previous owner's IDs, stamped just before, may be taken.

use strict;
use warnings;
use IO::Socket::INET;
use IO::Socket::UNIX;
use IO::Select;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenLease;

my ($registry, $direct) = lease_registry(superuser => 1);
my $sockpath = $registry->host . '/.s.PGSQL.' . $registry->port;
my $flag = $PostgreSQL::Test::Utils::tmp_check . '/drop_reply';

# a TCP proxy to the registry's socket; with $flag present, the next reply
# from the registry is dropped and both sides closed (a reset after COMMIT)
my $listen = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
	Listen => 16, ReuseAddr => 1) or die "listen: $!";
my $pport = $listen->sockport;
my $ppid = fork;
die "fork: $!" unless defined $ppid;
# the proxy goes with the test, however it ends
END { kill 'KILL', $ppid if $ppid; }
if ($ppid == 0)
{
	my $sel = IO::Select->new($listen);
	my (%peer, %up);
	while (1)
	{
		foreach my $s ($sel->can_read(0.05))
		{
			if ($s == $listen)
			{
				my $c = $listen->accept or next;
				my $u = IO::Socket::UNIX->new(Peer => $sockpath) or do { close $c; next };
				$peer{$c} = $u; $peer{$u} = $c; $up{$u} = 1;
				$sel->add($c, $u);
				next;
			}
			my $o = $peer{$s};
			next unless $o;
			my $buf;
			my $n = sysread($s, $buf, 65536);
			if (!$n || ($up{$s} && -e $flag))
			{
				unlink $flag if $n;
				$sel->remove($s, $o);
				delete $peer{$s}; delete $peer{$o}; delete $up{$s}; delete $up{$o};
				close $s; close $o;
				next;
			}
			syswrite($o, $buf);
		}
	}
	exit 0;
}

my $via = "host=127.0.0.1 port=$pport dbname=postgres";
my $common = <<"EOC";
idgen.shard_pool = '5'
idgen.lease_duration = '30s'
idgen.max_lead = '40s'
idgen.max_wait = '40s'
EOC
my $a = lease_node('a', $via, conf => $common);
my $b = lease_node('b', $direct, conf => $common);
$a->start;
$a->safe_psql('postgres', 'CREATE EXTENSION idgen');
$a->poll_query_until('postgres', 'SELECT shard = 5 FROM idgen_stats') or die 'A holds no shard';
$b->start;
$b->safe_psql('postgres', 'CREATE EXTENSION idgen');

# wait for A's renewal: t0
my $r0 = $registry->safe_psql('postgres', 'SELECT renewed_at FROM idgen_lease WHERE shard = 5');
$registry->poll_query_until('postgres', "SELECT renewed_at > '$r0' FROM idgen_lease WHERE shard = 5")
  or die 'no renewal';
my $t0 = time;
note 'A renewed; the row freed by hand, as the hint for a stuck row says';
$registry->safe_psql('postgres', 'UPDATE idgen_lease SET owner = NULL WHERE shard = 5');
$b->poll_query_until('postgres', 'SELECT shard = 5 FROM idgen_stats') or die 'B did not claim';
$b->safe_psql('postgres', 'CREATE TABLE b_ids AS SELECT idgen_next() AS id FROM generate_series(1, 100000)');
my ($bmin, $bmax, $bmaxts) = split /\|/, $b->safe_psql('postgres',
	'SELECT min(id), max(id), id_to_timestamp(max(id)) FROM b_ids');
my $bcount = $b->safe_psql('postgres', 'SELECT count(DISTINCT id) FROM b_ids');
my $b_all = $b->safe_psql('postgres', "SELECT string_agg(id::text, ',') FROM b_ids");
$b->stop;
note sprintf('B claimed, minted %s IDs (%s .. %s, up to %s) and gave back, %.1f s after t0',
	$bcount, $bmin, $bmax, $bmaxts, time - $t0);
note $registry->safe_psql('postgres', 'SELECT * FROM idgen_lease WHERE shard = 5');

slow_takes($registry, $a);
wait_slow_take($registry) or die 'A did not take';
open my $fh, '>', $flag or die; close $fh;
note sprintf('A takes, %.1f s after t0; its COMMIT reply will be dropped', time - $t0);
end_slow_takes($registry);
ok(!-e $flag, 'the answer to the COMMIT of the take was lost');
sleep 3;
note $registry->safe_psql('postgres', 'SELECT * FROM idgen_lease WHERE shard = 5');
note $a->safe_psql('postgres', 'SELECT * FROM idgen_leases()');
my $a1 = $a->safe_psql('postgres', 'SELECT idgen_next()');
note "A's first ID after: $a1 " . $a->safe_psql('postgres', "SELECT id_to_timestamp($a1)");
cmp_ok($a1, '>', $bmax, "A's ID is above every ID B stamped for shard 5");

# mint on A while the wall clock crosses B's milliseconds
$a->safe_psql('postgres', 'CREATE TABLE a_ids (id bigint)');
$a->safe_psql('postgres', "CREATE TABLE b_ids AS SELECT unnest('{$b_all}'::bigint[]) AS id");
$a->safe_psql('postgres', qq{
DO \$\$BEGIN
  PERFORM pg_sleep_until(id_to_timestamp($bmin) - interval '100 ms');
  WHILE clock_timestamp() < '$bmaxts'::timestamptz + interval '100 ms' LOOP
    INSERT INTO a_ids SELECT idgen_next_n(50);
    PERFORM pg_sleep(0.001);
  END LOOP;
END\$\$});
my $dups = $a->safe_psql('postgres', 'SELECT count(*) FROM a_ids JOIN b_ids USING (id)');
note 'A minted ' . $a->safe_psql('postgres', 'SELECT count(*) FROM a_ids');
is($dups, 0, 'no ID of A repeats one of B');
note `grep -E 'idgen|lease' ${\ $a->logfile} | tail -20`;

$a->stop;
$registry->stop;
kill 'KILL', $ppid;
waitpid($ppid, 0);
done_testing();
