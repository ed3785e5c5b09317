
# Copyright (c) 2026, The idgen Authors
#
# idgen_advance_past is durable: after it, every new ID is above the ID
# given, across a crash and a clean restart, whatever the clock says; the
# way to carry the generator's floor into a new cluster (pg_upgrade, a
# restore) without copying idgen.state.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# The old cluster minted IDs up to 20 s past this machine's clock (its
# clock was ahead); the new cluster must mint above them.
my $old = idgen_node('old', conf => "idgen.max_lead = '60s'\n");
my $old_clock = PostgreSQL::Test::Utils::tempdir() . '/old_clock';
set_clock_offset($old_clock, 20);
start_with_clock($old, $old_clock);
$old->safe_psql('postgres', 'CREATE EXTENSION idgen');
my @old_ids = mint($old, 1000);
$old->stop;
my $old_max = $old_ids[-1];

my $new = idgen_node('new', conf => "idgen.max_lead = '60s'\n");
$new->start;
$new->safe_psql('postgres', 'CREATE EXTENSION idgen');
is( $new->safe_psql('postgres', "SELECT idgen_next() < $old_max"),
	't', "by its clock alone the new cluster would mint below the old one's IDs");

my ($ret, $stdout, $stderr) =
  $new->psql('postgres', "SELECT idgen_advance_past($old_max)");
is($ret, 0, 'idgen_advance_past succeeds');
is($stderr, '', 'no warning: the old IDs are within idgen.max_lead');
my @after = mint($new, 1000);
cmp_ok($after[0], '>', $old_max, 'new IDs are above the old cluster\'s');

# durable: a crash, then a clean restart
$new->stop('immediate');
$new->start;
@after = mint($new, 1000);
cmp_ok($after[0], '>', $old_max, 'after a crash, new IDs are still above them');
$new->restart;
@after = mint($new, 1000);
cmp_ok($after[0], '>', $old_max, 'and after a clean restart');
check_ids(\@all_ids, 'old and new clusters in mint order');

# An ID an hour ahead, as a public ID or an ID of another layout would
# look: refused, since minting would stop for that hour, and the generator
# stays where it was.
my $hour = $new->safe_psql('postgres',
	"SELECT min_id_at(clock_timestamp() + interval '1 hour')");
my $err;
($ret, $err) = psql_fails($new, "SELECT idgen_advance_past($hour)");
isnt($ret, 0, 'idgen_advance_past of an ID an hour ahead is refused');
like($err, qr/ERROR:  22023: ID $hour is too far ahead of the wall clock/,
	'as an invalid parameter value');
like($err,
	qr/DETAIL:  It is from \S+ \S+, (\d+) ms ahead of the wall clock; "idgen.max_advance" is 60000 ms/,
	'the detail says when that is and how far ahead');
cmp_ok($err =~ /, (\d+) ms ahead/ ? $1 : 0, '>', 3500 * 1000,
	'about an hour');
like($err, qr/HINT:  Check that the argument is an ID of this layout and not a public ID; to move the generator that far on purpose, raise "idgen.max_advance"/,
	'the hint says what to check');
is( $new->safe_psql('postgres',
		"SELECT idgen_next() < min_id_at(clock_timestamp() + interval '1 minute')"),
	't', 'and minting goes on near the clock');

# An ID beyond idgen.max_lead: a warning that minting will wait.
$new->append_conf('postgresql.conf', "idgen.max_lead = '1s'\n");
$new->reload;
my $far = $new->safe_psql('postgres',
	"SELECT min_id_at(clock_timestamp() + interval '30 s')");
($ret, $stdout, $stderr) =
  $new->psql('postgres', "SELECT idgen_advance_past($far)");
is($ret, 0, 'idgen_advance_past of an ID 30 s ahead succeeds');
like($stderr, qr/WARNING:  idgen's clock is now \d+ ms ahead of the wall clock/,
	'and warns that minting will wait for the clock');
($ret, $stdout, $stderr) = $new->psql('postgres',
	"SET idgen.max_wait = '100ms'; SELECT idgen_next() > $far");
like($stderr, qr/ahead of the wall clock/,
	'minting then waits for the clock instead of going below it');

# A deliberate jump past idgen.max_advance, raised for it: minting stops
# until the clock catches up.  The one way back sooner, when no ID up there
# exists: a clean stop, idgen.state removed, and the start from the last
# checkpoint's bound.
($ret, $stdout, $stderr) = $new->psql('postgres',
	"SET idgen.max_advance = '2h'; SELECT idgen_advance_past($hour)");
is($ret, 0, 'with idgen.max_advance raised, the hour is accepted');
($ret, $stdout, $stderr) = $new->psql('postgres',
	"SET idgen.max_wait = '100ms'; SELECT idgen_next()");
like($stderr, qr/ERROR:  idgen's clock is (\d+) ms ahead of the wall clock/,
	'and minting stops');
my ($lead) = $stderr =~ /clock is (\d+) ms ahead/;
cmp_ok($lead // 0, '>', 3500 * 1000, 'the error gives the lead, about an hour');
like($stderr,
	qr/DETAIL:  idgen_advance_past\(\) \(or taking a shard's lease\) moved the generator to \S+ \S+, which the wall clock has not reached/,
	'and says the advance is why, not a clock step');
$new->stop;
unlink($new->data_dir . '/idgen.state') or die "could not remove idgen.state: $!";
$new->start;
is( $new->safe_psql('postgres',
		"SELECT id_to_timestamp(idgen_next()) < clock_timestamp() + interval '10 s'"),
	't', 'after a clean stop and idgen.state removed, IDs follow the clock again');

$new->stop;
done_testing();
