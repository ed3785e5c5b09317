
# Copyright (c) 2026, The idgen Authors
#
# Lease rows edited by hand while two servers mint.
# Servers A and B are both configured with shard 5 (and one shard of their
# own, 7 and 6, whose rows tell their owner tokens); both mint for shard 5
# all the time while an operator
#
#  - moves the row's valid_until a minute back (the holder renews it, and
#    the other server does not take it below what the holder stamped),
#  - deletes the row (refused: the row would be taken without its bound),
#  - frees the row with every bound in it moved a minute back,
#  - names the other server as owner under the live holder (it takes
#    over, above what the holder stamped; the holder stops at its next
#    renewal),
#  - as a role granted only SELECT and UPDATE on the table, frees the row
#    with its bound a minute back, naming the live holder in
#    idgen_lease.giving_back as a give-back does (the bound stays: only
#    the table's owner or a superuser gives a lease back).
#
# Their IDs of shard 5 must never share a millisecond.  TRUNCATE is
# refused too.  The registry starts with a table of 1.1, without the
# guards, which the servers add; a guard of an older schema version is
# replaced, one of a newer version left.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenLease;

# A registry of 1.1: the servers add the guards to it.
my ($registry, $conninfo) = lease_registry(table => '1.1');

sub reg
{
	my ($sql) = @_;
	return $registry->safe_psql('leases', $sql);
}

my $a = minting_node('rows_a', $conninfo, "idgen.shard_ids = '7'\n");
wait_held($a, 5);
my $b = minting_node('rows_b', $conninfo, "idgen.shard_ids = '6'\n");
wait_held($b, 6);
my %token = (
	$a->name => reg('SELECT owner FROM public.idgen_lease WHERE shard = 7'),
	$b->name => reg('SELECT owner FROM public.idgen_lease WHERE shard = 6'));

# Both mint for 6 s; the operator acts 1 s in, on the row as it is then.
sub scenario
{
	my ($what, $edit, $both) = @_;
	$_->safe_psql('postgres', 'TRUNCATE minted') for $a, $b;
	my @minting = map { start_minting($_, 6) } $a, $b;
	usleep(1_000_000);
	$edit->();
	$_->finish for @minting;
	compare_minted($a, $b, $what, $both);
	return;
}

scenario(
	'valid_until moved a minute back',
	sub {
		reg("UPDATE public.idgen_lease SET valid_until = now() - interval '1 min' WHERE shard = 5");
	});

scenario(
	'the row deleted',
	sub {
		my ($ret, $out, $err) = $registry->psql('leases',
			'DELETE FROM public.idgen_lease WHERE shard = 5');
		isnt($ret, 0, 'DELETE of a lease row is refused');
		like($err, qr/HINT:.*SET owner = NULL/,
			'with a hint to free the shard with owner = NULL');
	});

scenario(
	'the other server named owner under the live holder',
	sub {
		my $holder = reg('SELECT owner FROM public.idgen_lease WHERE shard = 5');
		my ($other) = grep { $_ ne $holder } values %token;
		reg("UPDATE public.idgen_lease SET owner = '$other' WHERE shard = 5");
	},
	1);

scenario(
	'the row freed with every bound moved a minute back',
	sub {
		reg("UPDATE public.idgen_lease SET owner = NULL, "
			  . "valid_until = now() - interval '1 min', "
			  . "stamped_until = now() - interval '1 min', "
			  . "previous_until = NULL WHERE shard = 5");
	});

# The holder's token is in the row and anyone may set a placeholder: a
# role that may only read and update the table must not pass for the
# holder giving its lease back.
reg(<<'EOS');
CREATE ROLE app LOGIN;
GRANT SELECT, UPDATE ON public.idgen_lease TO app;
EOS
scenario(
	'a give-back spoofed by a role granted UPDATE',
	sub {
		# the row locked, so that the holder renews neither before nor after
		# the bound is read
		my $kept = reg(<<'EOS');
BEGIN;
SET ROLE app;
SELECT set_config('idgen_lease.giving_back', owner, false),
       set_config('test.floor', GREATEST(valid_until, stamped_until)::text, false)
  FROM public.idgen_lease WHERE shard = 5 FOR UPDATE;
UPDATE public.idgen_lease
   SET owner = NULL, valid_until = now() - interval '1 min' WHERE shard = 5
RETURNING GREATEST(valid_until, stamped_until)
          >= current_setting('test.floor')::timestamptz;
COMMIT;
EOS
		is( (split /\n/, $kept)[-1],
			't',
			'a spoofed give-back leaves the bound where the holder had it');
	});

# A guard of an older version (1.3's let anyone give a lease back) is
# replaced at the next round.
reg(<<'EOS');
SET ROLE idgen;
CREATE OR REPLACE FUNCTION public.idgen_lease_guard() RETURNS trigger
LANGUAGE plpgsql AS $f$ BEGIN RETURN NEW; END $f$;
EOS
ok( $registry->poll_query_until('leases',
		"SELECT prosrc LIKE '%idgen lease guard, version 3%' FROM pg_proc "
		  . "WHERE oid = 'public.idgen_lease_guard()'::regprocedure"),
	'the servers replace a guard of an older version');

# One of a newer schema version is a newer idgen's, put there during a
# rolling upgrade: the servers leave it (both replacing each other's guard
# every round would lock the table every round), and say so once.
my $a_offset = -s $a->logfile;
reg(<<'EOS');
SET ROLE idgen;
DO $d$
BEGIN
    EXECUTE format('CREATE OR REPLACE FUNCTION public.idgen_lease_guard() '
        'RETURNS trigger LANGUAGE plpgsql SECURITY INVOKER '
        'SET search_path = pg_catalog, pg_temp AS %L',
        replace(prosrc, 'idgen lease guard, version 3', 'idgen lease guard, version 4'))
      FROM pg_proc WHERE oid = 'public.idgen_lease_guard()'::regprocedure;
END
$d$;
EOS
ok( log_has($a, $a_offset,
		qr/the lease registry's schema is of version 4, newer than this server's 3; this server leaves it as it is/),
	'a server finding a guard of a newer version says it leaves it');
usleep(2_000_000);    # rounds of both servers
is( reg("SELECT prosrc LIKE '%idgen lease guard, version 4%' FROM pg_proc "
		  . "WHERE oid = 'public.idgen_lease_guard()'::regprocedure"),
	't',
	'and leaves it, rounds later');

{
	my ($ret, $out, $err) =
	  $registry->psql('leases', 'TRUNCATE public.idgen_lease');
	isnt($ret, 0, 'TRUNCATE of the lease table is refused');
	like($err, qr/HINT:.*SET owner = NULL/, 'with the same hint');
}

# Triggers disabled by the table's owner are put back at the next round.
reg('ALTER TABLE public.idgen_lease DISABLE TRIGGER USER');
ok( $registry->poll_query_until('leases',
		"SELECT bool_and(tgenabled = 'O') FROM pg_trigger "
		  . "WHERE tgrelid = 'public.idgen_lease'::regclass AND tgname LIKE 'idgen_lease%'"
	),
	'the servers enable the triggers again');

$a->stop;
$b->stop;
done_testing();
