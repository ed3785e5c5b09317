
# Copyright (c) 2026, The idgen Authors
#
# Nothing an operator plausibly does to idgen.state leads to a repeated ID.
# Each case stops the server, does something to the file, and starts it
# with the clock a fraction of a second inside the IDs already minted, so
# that a generator that believed the file (or the clock) would repeat IDs:
#
#  1. The file deleted after a clean stop: the last checkpoint bounds the
#     start; a WARNING says what was assumed.
#  2. The file deleted after a crash: the same bound, with WAL replay.
#  3. An older copy of the cluster's own file restored: recognised as older
#     than the last checkpoint, the same bound, a WARNING.
#  4. Another cluster's file: refused with a message naming both clusters;
#     with idgen.allow_foreign_state = on the server starts above both
#     that file's fence and this cluster's bound.
#  5. A corrupt file: refused, and the hint (move the file away) works.
#  6. The first start after initdb has no file and needs no bound: no
#     WARNING, and IDs follow the clock at once.

use strict;
use warnings;

use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

libfaketime();    # dies early without it

my $clock = PostgreSQL::Test::Utils::tempdir() . '/clock';
set_clock_offset($clock, 0);

my $node = idgen_node(
	'state', conf => qq(
idgen.max_wait = '60s'
include_if_exists = 'idgen_extra.conf'
));
my $state = $node->data_dir . '/idgen.state';

# 6. The first start after initdb: no file, no bound, no warning.
my $log_offset = -s $node->logfile // 0;
start_with_clock($node, $clock);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
unlike(slurp_file($node->logfile, $log_offset),
	qr/WARNING:  idgen/, 'the first start after initdb logs no idgen warning');
mint_checked(
	$node,
	'abs(extract(epoch FROM id_to_timestamp(id) - clock_timestamp())) < 0.5',
	'the first IDs after initdb follow the clock');
# a wait for the first fence is the worker's pace on a busy machine; a
# bound would make the first mint wait for the clock
is(stats($node)->{waits} - stats($node)->{fence_waits},
	0, 'and nobody waited for the clock');

# Mint for a while, so that the IDs run up to the clock.
sub mint_on_time
{
	set_clock_offset($clock, 0);
	mint($node, 3000);
	usleep(300_000);
	mint($node, 3000);
	return;
}

# Start after doing something to the file, the clock set 3 s behind the
# last ID minted: check that no new ID is at or below it, and return the log.
# 3 s, not less: the clock must still be behind once the server has started
# and answered, on a machine busy with other tests (prove -j, the matrix's
# jobs side by side); the first mint then waits up to two seconds for the
# clock to come within idgen.max_lead.
sub restart_behind
{
	my ($what, $change, $stop_mode, $wait_for) = @_;
	my $max_before = $all_ids[-1];
	$stop_mode //= 'fast';
	$node->stop($stop_mode) unless $stop_mode eq 'none';
	$change->();
	# the default layout: epoch 2026-01-01 (Unix 1767225600), 22 low bits
	my $last_time = 1767225600 + ($max_before >> 22) / 1000;
	set_clock_offset($clock, $last_time - 3 - time);
	my $offset = -s $node->logfile;
	start_with_clock($node, $clock);
	ok(log_has($node, $offset, $wait_for), "$what: the log says $wait_for")
	  if $wait_for;
	my $log = slurp_file($node->logfile, $offset);
	is( $node->safe_psql('postgres',
			"SELECT clock_timestamp() < id_to_timestamp($max_before)"),
		't',
		"$what: the clock is behind the last ID minted before");
	my @new = mint($node, 3000);
	is(scalar(grep { $_ <= $max_before } @new),
		0, "$what: every new ID is larger than every ID before");
	check_ids(\@all_ids, "$what: every ID so far");
	return $log;
}

# --------------------------------------------------------------------------
# 1. Deleted after a clean stop.

mint_on_time();
my $log = restart_behind('deleted after a clean stop',
	sub { unlink($state) or die "could not remove $state: $!" });
like($log, qr/WARNING:  idgen state file "idgen.state" does not exist/,
	'deleted after a clean stop: a WARNING');
like($log, qr/DETAIL:  New IDs start at .* the last checkpoint/,
	'deleted after a clean stop: the detail says what was assumed');
ok(-f $state, 'the file is written again');

# --------------------------------------------------------------------------
# 2. Deleted after a crash.

mint_on_time();
$log = restart_behind('deleted after a crash',
	sub { unlink($state) or die "could not remove $state: $!" },
	'immediate');
like($log, qr/WARNING:  idgen state file "idgen.state" does not exist/,
	'deleted after a crash: a WARNING');

# --------------------------------------------------------------------------
# 3. An older copy restored.  A checkpoint after the copy makes it older
# than the last checkpoint.

mint_on_time();
my $old_copy = PostgreSQL::Test::Utils::tempdir() . '/idgen.state.old';
copy($state, $old_copy) or die "could not copy $state: $!";
mint_on_time();
usleep(1_200_000);
mint_on_time();
$node->safe_psql('postgres', 'CHECKPOINT');
$log = restart_behind('an older copy restored',
	sub { copy($old_copy, $state) or die "could not restore $state: $!" });
like($log,
	qr/WARNING:  idgen state file "idgen.state" is older than the last checkpoint/,
	'an older copy: a WARNING');

# A clean restart now trusts the file again: no warning.
mint_on_time();
$node->stop;
$log_offset = -s $node->logfile;
start_with_clock($node, $clock);
unlike(slurp_file($node->logfile, $log_offset),
	qr/WARNING:  idgen/, 'a clean restart with the current file logs no warning');

# --------------------------------------------------------------------------
# 4. Another cluster's file, with the same layout and a fence above this
# cluster's IDs and above the bound its last checkpoint gives (its time
# plus max_lead and fence_horizon, 3 s at most): minted there 4 s later.

mint_on_time();
$node->stop;
usleep(4_000_000);

my $other = idgen_node('other', own_system => 1);
$other->start;
$other->safe_psql('postgres', 'CREATE EXTENSION idgen');
my @other_ids = mint($other, 3000);
$other->stop;

copy($other->data_dir . '/idgen.state', $state)
  or die "could not copy the other cluster's file: $!";
my ($started, $start_log) = start_logged($node);
ok(!$started, "another cluster's file is refused");
like($start_log, qr/idgen state file "idgen.state" belongs to another cluster/,
	"another cluster's file: the message says so");
like($start_log, qr/system identifier \d+; this cluster's is \d+/,
	"another cluster's file: the detail names both clusters");
like($start_log, qr/idgen\.allow_foreign_state/,
	"another cluster's file: the hint names idgen.allow_foreign_state");

write_conf($node->data_dir . '/idgen_extra.conf',
	"idgen.allow_foreign_state = on\n");
# The carried file brings the other cluster's history; its versions are
# this one's (the same layout from 0), so the database's stamp agrees and
# the decoders go on.
$log = restart_behind("another cluster's file, allowed", sub { }, 'none');
is($node->safe_psql('postgres', 'SELECT id_to_shard(idgen_next())'), '0',
	"another cluster's file, allowed: the database still decodes");
like($log, qr/WARNING:  idgen state file "idgen.state" was written by another cluster/,
	"another cluster's file, allowed: a WARNING");
is( $node->safe_psql('postgres',
		"SELECT min(id) > $other_ids[-1] FROM (SELECT idgen_next() AS id) AS s"),
	't',
	"another cluster's file, allowed: new IDs are above the other cluster's");
write_conf($node->data_dir . '/idgen_extra.conf', '');

# The file now names this cluster: a restart without the setting trusts it.
$node->stop;
$log_offset = -s $node->logfile;
start_with_clock($node, $clock);
unlike(slurp_file($node->logfile, $log_offset),
	qr/WARNING:  idgen/,
	'the file names this cluster again: a restart without the override, no warning');

# --------------------------------------------------------------------------
# 5. A corrupt file: refused; moving it away, as the hint says, starts.

mint_on_time();
$node->stop;
{
	open my $fh, '+<', $state or die "could not open $state: $!";
	binmode $fh;
	seek $fh, 20, 0;
	print $fh "\xff\xff\xff\xff";
	close $fh;
}
($started, $start_log) = start_logged($node);
ok(!$started, 'a corrupt file is refused');
like($start_log, qr/idgen state file "idgen.state" is corrupt/,
	'a corrupt file: the message says so');
like($start_log, qr/Move the file out of the data directory/,
	'a corrupt file: the hint says what to do');
$log = restart_behind('a corrupt file moved away',
	sub { move($state, "$state.corrupt") or die "could not move $state: $!" },
	'none');
like($log, qr/WARNING:  idgen state file "idgen.state" does not exist/,
	'a corrupt file moved away: a WARNING');

$node->stop;
done_testing();
