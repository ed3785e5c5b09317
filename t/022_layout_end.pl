
# Copyright (c) 2026, The idgen Authors
#
# A layout that ends soon says so.  With an epoch so far back that the
# default layout's 41 bits of milliseconds run out within a year, the
# server warns at start, naming the date, and the fence worker again once a
# day while it runs; idgen_stats shows the date.  idgen.layout_end_warning
# sets how early; a database still at 1.1 reads idgen_stats as before.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $epoch = '1958-01-01 00:00:00+00';
my $node  = idgen_node('end', conf => "idgen.epoch = '$epoch'\n");
my $clock = PostgreSQL::Test::Utils::tempdir() . '/clock';
set_clock_offset($clock, 0);

my $log_offset = -s $node->logfile;
start_with_clock($node, $clock);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');

# 2^41 ms after the epoch, computed apart from the server's layout code
my $end = $node->safe_psql('postgres',
	"SELECT timestamptz '$epoch' + make_interval(secs => 2199023255.552)");
is($node->safe_psql('postgres', "SELECT layout_ends = '$end' FROM idgen_stats"),
	't', "idgen_stats shows when the layout runs out ($end)");

my $log = slurp_file($node->logfile, $log_offset);
like($log, qr/WARNING:  idgen's layout runs out at 2027-/,
	'the start warns that the layout runs out, naming the date');
like($log, qr/DETAIL:  That is \d+ days from now; from then on no ID can be minted/,
	'and what that means');
like($log, qr/HINT:  .*"idgen.layout_end_warning" sets how early this warns/,
	'and which setting moves the warning');

# a day later the fence worker says it again
$log_offset = -s $node->logfile;
set_clock_offset($clock, 86400 + 60);
my $again = 0;
foreach (1 .. 100)
{
	$again = 1
	  if slurp_file($node->logfile, $log_offset) =~ /WARNING:  idgen's layout runs out at 2027-/;
	last if $again;
	Time::HiRes::usleep(100_000);
}
ok($again, 'a day later the warning comes again');
set_clock_offset($clock, 0);

# a database still at 1.1 reads idgen_stats without the new column
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', "CREATE EXTENSION idgen VERSION '1.1'");
like($node->safe_psql('old', 'SELECT minted >= 0, fence_waits >= 0 FROM idgen_stats'),
	qr/^t\|t$/, 'a database at 1.1 reads idgen_stats as before');
$node->safe_psql('old', 'ALTER EXTENSION idgen UPDATE');
is($node->safe_psql('old', "SELECT layout_ends = '$end' FROM idgen_stats"),
	't', 'and, updated, shows layout_ends too');

# further off than the setting: no warning
$node->stop;
$node->append_conf('postgresql.conf', "idgen.layout_end_warning = '100d'\n");
$log_offset = -s $node->logfile;
$node->start;
$node->safe_psql('postgres', 'SELECT idgen_next()');
unlike(slurp_file($node->logfile, $log_offset), qr/layout runs out/,
	'no warning when the end is further off than idgen.layout_end_warning');

$node->stop;
done_testing();
