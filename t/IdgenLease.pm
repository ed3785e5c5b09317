
# Copyright (c) 2026, The idgen Authors

=pod

=head1 NAME

IdgenLease - a lease registry and the servers minting under it, for the
lease tests (t/015, t/016, t/017, t/021, t/024 to t/027)

=head1 SYNOPSIS

  use FindBin;
  use lib $FindBin::RealBin;
  use IdgenTest;
  use IdgenLease;

  my ($registry, $conninfo) = lease_registry();
  my $a = minting_node('a', $conninfo);
  my $b = minting_node('b', $conninfo);
  my @minting = map { start_minting($_, 5) } $a, $b;
  $_->finish for @minting;
  compare_minted($a, $b, 'two servers');

=head1 DESCRIPTION

Everything below is exported.

  lease_registry(%options)
                          a started registry server and the connection
                          string the minting servers use.  By default the
                          servers connect as role idgen (LOGIN) to a
                          database leases it owns, and make idgen_lease
                          themselves.  Options:
                            name => 'registry'    the node's name
                            conf => $text         appended to postgresql.conf
                                                  before the start
                            dbname => 'leases'    the database made, owned
                                                  by idgen
                            table => '1.1'        public.idgen_lease made
                                                  there first, by idgen, as
                                                  1.1 made it (no guards)
                            superuser => 1        no role, no database: the
                                                  servers connect as the
                                                  bootstrap superuser to
                                                  database postgres
  registry_conninfo($registry, $dbname, $user)
                          "host=... port=... dbname=$dbname", with
                          " user=$user" when $user is given
  registry_db($registry)  the database of the registry that holds
                          idgen_lease (leases, or postgres with superuser)
  lease_table_1_1($table) CREATE TABLE $table with idgen_lease's columns
                          of 1.1
  lease_node($name, $conninfo, conf => $text, %init)
                          idgen_node() with idgen.lease_registry =
                          '$conninfo' first in its settings, then $text
                          (lease_duration, shard_id, shard_ids,
                          shard_pool, ...); not started
  minting_node($name, $conninfo, $conf)
                          a started lease_node() for shard 5 (a lease of
                          3 s, idgen.max_wait 200 ms, then $conf), with the
                          extension, a table minted and a procedure
                          mint_for(seconds) that inserts IDs of shard 5
                          into it for that long, 20 a transaction, errors
                          55000 (no lease) ignored
  start_minting($node, $seconds)
                          CALL mint_for($seconds) in the background: the
                          IPC::Run harness ($h->finish waits for it)
  minted($node)           the IDs in the node's table minted, by
                          millisecond (since 1970)
  compare_minted($a, $b, $what, $both)
                          the IDs two minting_node()s minted: a test that
                          they minted any (with $both, one that A did and
                          one that B did), and one each that no millisecond
                          and no ID is in both
  wait_held($node, $shard)
                          wait until idgen_leases() shows $shard held; die
                          if it does not
  lease_worker_pid($node) the pid of the node's idgen lease worker
  slow_takes($registry, $node)
                          hold for 2 s the COMMIT of each registry
                          transaction that makes $node the owner of a row
                          (a deferred trigger, slow_take): long enough to
                          aim a fault at the answer
  wait_slow_take($registry)
                          wait until a lease session sleeps in such a
                          COMMIT; whether one did
  end_slow_takes($registry)
                          wait until no session sleeps, and drop the
                          trigger
  server_pids($node)      the postmaster and its children (to freeze a
                          server with SIGSTOP)

=cut

package IdgenLease;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

our @EXPORT = qw(
  lease_registry
  registry_conninfo
  registry_db
  lease_table_1_1
  lease_node
  minting_node
  start_minting
  minted
  compare_minted
  wait_held
  lease_worker_pid
  slow_takes
  wait_slow_take
  end_slow_takes
  server_pids
);

# The database that holds idgen_lease, by registry name.
my %lease_db;

sub registry_conninfo
{
	my ($registry, $dbname, $user) = @_;
	return
	    'host='
	  . $registry->host
	  . ' port='
	  . $registry->port
	  . " dbname=$dbname"
	  . (defined $user ? " user=$user" : '');
}

sub registry_db
{
	my ($registry) = @_;
	return $lease_db{ $registry->name } // 'postgres';
}

sub lease_table_1_1
{
	my ($table) = @_;
	return <<"EOS";
CREATE TABLE $table (
    shard integer PRIMARY KEY CHECK (shard >= 0),
    owner text,
    owner_name text,
    valid_until timestamptz,
    previous_until timestamptz,
    renewed_at timestamptz
);
EOS
}

sub lease_registry
{
	my (%opts) = @_;
	my $registry = PostgreSQL::Test::Cluster->new($opts{name} // 'registry');
	$registry->init;
	$registry->append_conf('postgresql.conf', $opts{conf})
	  if defined $opts{conf};
	$registry->start;
	if ($opts{superuser})
	{
		$lease_db{ $registry->name } = 'postgres';
		return ($registry, registry_conninfo($registry, 'postgres'));
	}

	my $dbname = $opts{dbname} // 'leases';
	$registry->safe_psql('postgres', <<"EOS");
CREATE ROLE idgen LOGIN;
CREATE DATABASE $dbname OWNER idgen;
EOS
	$registry->safe_psql($dbname,
		"SET ROLE idgen;\n" . lease_table_1_1('public.idgen_lease'))
	  if ($opts{table} // '') eq '1.1';
	$lease_db{ $registry->name } = $dbname;
	return ($registry, registry_conninfo($registry, $dbname, 'idgen'));
}

sub lease_node
{
	my ($name, $conninfo, %params) = @_;
	my $conf = delete $params{conf} // '';
	return idgen_node($name, %params,
		conf => "idgen.lease_registry = '$conninfo'\n$conf");
}

sub minting_node
{
	my ($name, $conninfo, $conf) = @_;
	$conf //= '';
	my $node = lease_node($name, $conninfo, conf => <<"EOC");
idgen.lease_duration = '3s'
idgen.max_wait = '200ms'
idgen.shard_id = 5
$conf
EOC
	$node->start;
	$node->safe_psql('postgres', <<'EOS');
CREATE EXTENSION idgen;
CREATE TABLE minted (id bigint);
CREATE PROCEDURE mint_for(seconds float8) LANGUAGE plpgsql AS $$
DECLARE
    stop timestamptz := clock_timestamp() + seconds * interval '1 second';
BEGIN
    WHILE clock_timestamp() < stop LOOP
        BEGIN
            INSERT INTO minted SELECT idgen_next(5) FROM generate_series(1, 20);
        EXCEPTION WHEN object_not_in_prerequisite_state THEN
            NULL;
        END;
        COMMIT;
        PERFORM pg_sleep(0.002);
    END LOOP;
END $$;
EOS
	return $node;
}

sub start_minting
{
	my ($node, $seconds) = @_;
	my ($out, $err) = ('', '');
	return IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr('postgres'), '-c', "CALL mint_for($seconds)"
		],
		'>', \$out, '2>', \$err);
}

sub minted
{
	my ($node) = @_;
	my %ms;
	for my $line (
		split /\n/,
		$node->safe_psql(
			'postgres',
			"SELECT id || ' ' || (extract(epoch FROM id_to_timestamp(id)) * 1000)::bigint FROM minted"
		))
	{
		my ($id, $ms) = split / /, $line;
		push @{ $ms{$ms} }, $id;
	}
	return \%ms;
}

sub compare_minted
{
	my ($a, $b, $what, $both) = @_;
	my $a_ms = minted($a);
	my $b_ms = minted($b);
	my ($n_a, $n_b, $common_ms, $common_ids) = (0, 0, 0, 0);
	$n_a += @$_ for values %$a_ms;
	for my $ms (keys %$b_ms)
	{
		$n_b += @{ $b_ms->{$ms} };
		next unless $a_ms->{$ms};
		$common_ms++;
		my %in_a = map { $_ => 1 } @{ $a_ms->{$ms} };
		$common_ids += grep { $in_a{$_} } @{ $b_ms->{$ms} };
	}
	note "$what: A minted $n_a, B $n_b IDs of shard 5; "
	  . "$common_ms milliseconds and $common_ids IDs in common";
	cmp_ok($n_a + $n_b, '>', 0, "$what: the servers minted");
	if ($both)
	{
		cmp_ok($n_a, '>', 0, "$what: A minted");
		cmp_ok($n_b, '>', 0, "$what: B minted");
	}
	is($common_ms,  0, "$what: no millisecond stamped by both servers");
	is($common_ids, 0, "$what: no ID minted by both servers");
	return;
}

sub wait_held
{
	my ($node, $shard) = @_;
	$node->poll_query_until('postgres',
		"SELECT state = 'held' FROM idgen_leases() WHERE shard = $shard")
	  or die $node->name . " did not take the lease on shard $shard";
	return;
}

sub lease_worker_pid
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'idgen lease'");
}

sub slow_takes
{
	my ($registry, $node) = @_;
	my $port = $node->port;
	$registry->safe_psql(
		registry_db($registry), qq{
CREATE FUNCTION slow_take() RETURNS trigger LANGUAGE plpgsql AS
  \$\$BEGIN PERFORM pg_sleep(2); RETURN NULL; END\$\$;
CREATE CONSTRAINT TRIGGER slow_take AFTER UPDATE ON idgen_lease
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.owner IS NOT NULL AND OLD.owner IS DISTINCT FROM NEW.owner
        AND NEW.owner_name LIKE '% port $port,%')
  EXECUTE FUNCTION slow_take()});
	return;
}

sub wait_slow_take
{
	my ($registry) = @_;
	return $registry->poll_query_until(registry_db($registry),
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'idgen lease' AND wait_event = 'PgSleep'"
	);
}

sub end_slow_takes
{
	my ($registry) = @_;
	$registry->poll_query_until(registry_db($registry),
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE wait_event = 'PgSleep'");
	$registry->safe_psql(registry_db($registry),
		'DROP TRIGGER slow_take ON idgen_lease');
	return;
}

sub server_pids
{
	my ($node) = @_;
	my $pm = $node->{_pid};
	my @children;

	# /proc, not ps: a minimal system has no procps
	foreach my $stat (glob '/proc/[0-9]*/stat')
	{
		open my $fh, '<', $stat or next;
		my $line = <$fh>;
		close $fh;
		next unless defined $line;
		# pid (comm) state ppid ...: comm may hold spaces and parentheses
		push @children, $1 if $line =~ /^(\d+) \(.*\) \S+ (\d+) / && $2 == $pm;
	}
	die "no child process of postmaster $pm found" unless @children;
	return ($pm, @children);
}

1;
