
# Copyright (c) 2026, The idgen Authors
#
# A leftover idgen.state.tmp does not stop the fence for good.  The fence
# worker writes the state file through that temporary name; one the server
# cannot open (a crash's leftover with the wrong mode, an empty directory)
# is removed, and minting carries on.  One that cannot be removed (a
# directory with something in it) stops the fence with a message that
# says what to remove, and minting resumes once it is gone.

use strict;
use warnings;

use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# A short horizon, so that a mint half a second later needs a new fence.
my $node = idgen_node(
	'tmp', conf => qq(
idgen.fence_horizon = '100ms'
idgen.max_wait = '3s'
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
my $tmp = $node->data_dir . '/idgen.state.tmp';

# Mints across several fence moves: a stuck fence makes one of them fail.
sub mint_across_fences
{
	my ($name) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"SELECT idgen_next(); SELECT pg_sleep(0.5); SELECT idgen_next(); SELECT pg_sleep(0.5); SELECT idgen_next()"
	);
	is($ret,    0,  "$name: minting goes on");
	is($stderr, '', "$name: no error") or note $stderr;
	return;
}

mint_across_fences('no leftover');

# Gone at the fence worker's next write of idgen.state, which a loaded
# machine may delay past the mints above.
sub gone
{
	my ($path) = @_;
	foreach (1 .. 100)
	{
		return 1 unless -e $path;
		Time::HiRes::usleep(100_000);
	}
	return 0;
}

# Each leftover is planted while the server is down, as a crash leaves
# one: while it runs, the fence worker writes through that very name every
# few milliseconds, and a file planted under it would race with its own.
sub plant
{
	my ($what) = @_;
	$node->stop;
	if ($what eq 'unopenable')
	{
		# a file the server may not open (its owner may still remove it)
		open my $fh, '>', $tmp or die "could not write $tmp: $!";
		close $fh;
		chmod 0000, $tmp or die "could not chmod $tmp: $!";
	}
	else
	{
		mkdir $tmp or die "could not mkdir $tmp: $!";
		write_conf("$tmp/keep", "not idgen's\n") if $what eq 'full directory';
	}
	my $log_offset = -s $node->logfile;
	$node->start;
	return $log_offset;
}

plant('unopenable');
mint_across_fences('an unopenable idgen.state.tmp');
ok(gone($tmp), 'and it was replaced');

plant('empty directory');
mint_across_fences('an empty directory idgen.state.tmp');
ok(gone($tmp), 'and it was removed');

# a directory with a file in it: not removed, the fence stops, safely
my $log_offset = plant('full directory');
my ($ret, $stderr) = psql_fails($node,
	"SET idgen.max_wait = '1s'; SELECT idgen_next()");
isnt($ret, 0, 'a directory idgen.state.tmp that cannot be removed stops minting');
like($stderr, qr/could not advance the idgen fence/,
	'with the fence error, after idgen.max_wait');
my $log = slurp_file($node->logfile, $log_offset);
like($log, qr/could not remove stale file "idgen.state.tmp": Directory not empty/,
	'the log names the file');
like($log, qr/HINT:  Remove "idgen.state.tmp" from the data directory/,
	'and says what to do');
ok(-e "$tmp/keep", 'what was in it is left alone');

rmtree($tmp);
mint_across_fences('once the directory is removed');

$node->stop;
done_testing();
