
# Copyright (c) 2026, The idgen Authors
#
# idgen_next_n with a block longer than the fence horizon: the caller
# waiting for the fence tells the worker how far it needs it, so the block
# is minted instead of failing after idgen.max_wait.  And a restart after a
# crash that followed a block starts above its last ID.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node(
	'blocks', conf => qq(
idgen.fence_horizon = '10ms'
idgen.max_wait = '5s'
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');

my @before = mint($node, 100);

# 500,000 IDs span 489 ms of the sequence: fifty horizons of 10 ms
my ($count, $distinct, $min, $max) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT count(*), count(DISTINCT id), min(id), max(id) FROM idgen_next_n(500000) AS id'
  );
is($count,    500000, 'a block of 500,000 IDs with a 10 ms fence horizon');
is($distinct, 500000, 'all of them distinct');
cmp_ok($min, '>', $before[-1], 'the block follows the IDs minted before it');
push @all_ids, $min, $max;

is( $node->safe_psql('postgres',
		"SELECT fence > id_to_timestamp($max) FROM idgen_stats"),
	't',
	'the fence moved past the last ID of the block');

# and the worker keeps a horizon open after it: on a loaded machine a 10 ms
# horizon can fall behind the clock for a moment, so this waits for it
ok( $node->poll_query_until('postgres',
		"SELECT fence_ahead_ms >= 0 FROM idgen_stats"),
	'the fence is ahead of the clock again after the block');

# The generator 600 ms ahead of the clock (idgen_advance_past, as a restore
# would put it), then a block of 1,000,000 (976 ms of the sequence) that may
# not wait: it would end about 1.6 s ahead, past idgen.max_lead.  The error
# says it is the block, and how far ahead the generator itself is: not a
# clock step.  The lead is set by the test, not by how fast the machine
# mints, so a loaded machine cannot make the block fit.
my ($ret, $stdout, $stderr) = $node->psql(
	'postgres', q{
SELECT idgen_advance_past(min_id_at(clock_timestamp() + interval '600 ms'));
SET idgen.max_wait = 0;
SELECT count(*) FROM idgen_next_n(1000000);
});
like($stderr,
	qr/ERROR:  a block of 1000000 IDs would end (\d+) ms ahead of the wall clock/,
	'a block that would wait too long for the clock says so');
my ($end) = $stderr =~ /would end (\d+) ms ahead/;
like($stderr,
	qr/DETAIL:  The generator is (\d+) ms ahead of the wall clock; its own IDs take the block's last one 97[67] ms further/,
	'the detail says how far ahead the generator is, and what the block adds');
my ($lead) = $stderr =~ /The generator is (\d+) ms ahead/;
cmp_ok($lead // 9999, '<=', 1000, 'the generator itself is within idgen.max_lead');
cmp_ok($end // 0, '>', 1000, 'the block would end past it');
like($stderr, qr/HINT:  Ask for fewer IDs at once/, 'the hint does not blame the clock');

# A crash right after the block: the restart starts above it.
$node->stop('immediate');
$node->start;
my @after = mint($node, 100);
cmp_ok($after[0], '>', $max, 'after a crash, new IDs follow the block');
check_ids(\@all_ids, 'blocks and single IDs');

$node->stop;
done_testing();
