
# Copyright (c) 2026, The idgen Authors
#
# idgen_clock() shows what the kernel says of the system clock.  A shim
# preloaded into the server stands in for adjtimex() and answers what the
# test tells it, so that both a synchronised clock and one no time daemon
# disciplines are seen, whatever this machine's clock is doing.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

plan skip_all => 'adjtimex() is Linux only' unless $^O eq 'linux';

my $node = idgen_node('clock');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');

# this machine's own clock: figures, whatever they are
like($node->safe_psql('postgres',
		'SELECT synchronized IS NOT NULL, estimated_error_ms >= 0, maximum_error_ms >= 0 FROM idgen_clock()'),
	qr/^t\|t\|t$/, 'idgen_clock() reads the kernel\'s view of the clock');

# adjtimex() answering IDGEN_TEST_TIMEX="state esterror_us maxerror_us"
my $dir = PostgreSQL::Test::Utils::tempdir();
open my $fh, '>', "$dir/timex_shim.c" or die "could not write: $!";
print $fh <<'EOC';
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/timex.h>

int
adjtimex(struct timex *tx)
{
	int			state = TIME_OK;
	long		est = 0, max = 0;
	const char *v = getenv("IDGEN_TEST_TIMEX");

	if (v)
		sscanf(v, "%d %ld %ld", &state, &est, &max);
	tx->esterror = est;
	tx->maxerror = max;
	return state;
}
EOC
close $fh;
system('cc', '-shared', '-fPIC', '-O2', '-o', "$dir/timex_shim.so", "$dir/timex_shim.c") == 0
  or die "could not build the adjtimex() shim";
chmod 0755, $dir;

sub clock_says
{
	my ($timex) = @_;
	$node->stop;
	{
		local $ENV{LD_PRELOAD}       = "$dir/timex_shim.so";
		local $ENV{IDGEN_TEST_TIMEX} = $timex;
		$node->start;
	}
	return $node->safe_psql('postgres',
		'SELECT synchronized, estimated_error_ms, maximum_error_ms FROM idgen_clock()');
}

# TIME_OK (0), 1.5 ms estimated, 250 ms at most
is(clock_says('0 1500 250000'), 't|1.5|250',
	'a synchronised clock, with its estimated and maximum error in ms');
# TIME_ERROR (5): no time daemon disciplines the clock
is(clock_says('5 16000000 16000000'), 'f|16000|16000',
	'a clock the kernel counts unsynchronised');

$node->stop;
done_testing();
