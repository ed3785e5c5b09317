
# Copyright (c) 2026, The idgen Authors
#
# Shard leases against a registry that is set up, or tampered with, in
# ways the lease protocol must not depend on.  Two servers, A and B, both
# configured with shard 5, mint for it all the time; their IDs of the
# shard must never share a millisecond.
#
#  - The registry runs with synchronous_commit = off (and a lazy WAL
#    writer) and is crashed again and again: a renewal it acknowledged must
#    not be lost, so the lease session commits synchronously.
#  - A role with CREATE on the registry database makes a schema named
#    after the registry role, with its own idgen_lease whose trigger
#    expires every row: the lease session must not see it.
#  - A connection string with a password and a typo: the password must not
#    reach the server log.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenLease;

# Commits are acknowledged before they are durable, and the WAL writer
# leaves them in memory for up to 10 s: a crash loses what it acknowledged.
my ($registry, $crash_conninfo) = lease_registry(
	dbname => 'leases_crash',
	conf => <<"EOC");
synchronous_commit = off
wal_writer_delay = '10s'
EOC
$registry->safe_psql('postgres', 'CREATE DATABASE leases_hostile');

# --------------------------------------------------------------------------
# A registry that loses what it acknowledged, crashed while both mint.

{
	my $a = minting_node('crash_a', $crash_conninfo);
	wait_held($a, 5);
	my $b = minting_node('crash_b', $crash_conninfo);

	my $started = time;
	my @minting = map { start_minting($_, 30) } $a, $b;
	for (1 .. 10)
	{
		usleep(1_500_000);
		$registry->stop('immediate');
		$registry->start;
	}
	$_->finish for @minting;
	note sprintf('ten registry crashes in %.1f s', time - $started);
	compare_minted($a, $b, 'registry crashed ten times');
	$a->stop;
	$b->stop;
}

# --------------------------------------------------------------------------
# A role with CREATE on the registry database puts its own idgen_lease,
# whose trigger expires every row, first in the registry role's search_path
# (a schema named after it), and, where it may create in public, as
# public.idgen_lease before any server made it.

my $hostile_table = lease_table_1_1('idgen_lease') . <<'EOS';
CREATE FUNCTION expire() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.valid_until := now() - interval '1 minute';
    RETURN NEW;
END $$;
CREATE TRIGGER expire BEFORE INSERT OR UPDATE ON idgen_lease
    FOR EACH ROW EXECUTE FUNCTION expire();
GRANT ALL ON idgen_lease TO idgen;
EOS

$registry->safe_psql('postgres', <<"EOS");
CREATE ROLE mallory LOGIN;
CREATE DATABASE leases_owner;
EOS
$registry->safe_psql('leases_hostile', <<"EOS");
GRANT CREATE ON DATABASE leases_hostile TO mallory;
GRANT CREATE ON SCHEMA public TO idgen;
SET ROLE mallory;
CREATE SCHEMA idgen;
GRANT USAGE ON SCHEMA idgen TO idgen;
SET search_path = idgen;
$hostile_table
EOS

{
	my $hostile = registry_conninfo($registry, 'leases_hostile', 'idgen');
	my $a = minting_node('hostile_a', $hostile);
	wait_held($a, 5);
	my $b = minting_node('hostile_b', $hostile);
	my @minting = map { start_minting($_, 5) } $a, $b;
	$_->finish for @minting;
	compare_minted($a, $b, 'a hostile idgen_lease in the search_path');
	is($registry->safe_psql('leases_hostile', 'SELECT count(*) FROM idgen.idgen_lease'),
		'0', 'the hostile table was not used');
	is( $registry->safe_psql('leases_hostile',
			'SELECT count(*) FROM public.idgen_lease WHERE shard = 5 AND owner IS NOT NULL'),
		'1',
		'public.idgen_lease was');
	$a->stop;
	$b->stop;
}

# On PostgreSQL 14 anyone may create in public: the table a server finds
# there is used only if its owner could as well have replaced it.
$registry->safe_psql('leases_owner', <<"EOS");
GRANT CREATE ON SCHEMA public TO mallory, idgen;
SET ROLE mallory;
$hostile_table
EOS

{
	my $a = minting_node('owner_a',
		registry_conninfo($registry, 'leases_owner', 'idgen'));
	ok( $a->wait_for_log(
			qr/"public\.idgen_lease" is owned by role "mallory"/),
		'a server refuses an idgen_lease owned by another role');
	my ($ret, $stderr) = psql_fails($a, 'SELECT idgen_next(5)');
	like($stderr, qr/could not take the lease on shard 5/,
		'and does not mint under it');
	$a->stop;
}

# --------------------------------------------------------------------------
# Passwords in the connection string never reach a log: URIs with typos
# (libpq quotes the whole string, or its first word when a typo in the
# scheme makes it read the string as keyword=value), a bad
# percent-encoding in the password (libpq quotes the password), and a wrong
# password.

$registry->safe_psql('postgres',
	"CREATE ROLE idgen_pw LOGIN PASSWORD 'RightPw'");
my $hba = $registry->data_dir . '/pg_hba.conf';
write_conf($hba, "local all idgen_pw scram-sha-256\n" . slurp_file($hba));
$registry->reload;

{
	my $s = idgen_node('secrets', conf => "idgen.shard_id = 5\n");
	my @cases = (
		[ 'a URI with a typo', 'postgresql://idgen:Sekr1tTypo@[::1/leases' ],
		# libpq reads these as keyword=value, and quotes the first word
		[ 'a URI after a space', ' postgresql://idgen:Sekr1tSpace@localhost/leases' ],
		[ 'a URI in capitals', 'POSTGRESQL://idgen:Sekr1tUpper@localhost/leases' ],
		[ 'a URI with one slash', 'postgresql:/idgen:Sekr1tSlash@localhost/leases?sslmode=disable' ],
		[
			'a badly encoded password',
			'postgresql://idgen:Sekr1tPct%zz@localhost/leases'
		],
		[
			'a wrong password',
			registry_conninfo($registry, 'postgres', 'idgen_pw')
			  . ' password=Sekr1tWrong'
		]);
	for my $case (@cases)
	{
		my ($what, $conninfo) = @$case;
		my $offset = -s $s->logfile // 0;
		my $registry_offset = -s $registry->logfile;
		$s->append_conf('postgresql.conf',
			"idgen.lease_registry = '$conninfo'\n");
		$s->start;
		ok( $s->wait_for_log(
				qr/could not renew shard leases in the idgen lease registry/,
				$offset),
			"$what: the lease worker logs that it cannot reach the registry");
		my $log = slurp_file($s->logfile, $offset)
		  . slurp_file($registry->logfile, $registry_offset);
		unlike($log, qr/Sekr1t/, "$what: the password is not in a log");
		$s->stop;
	}
}

done_testing();
