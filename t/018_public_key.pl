
# Copyright (c) 2026, The idgen Authors
#
# The key of public IDs reaches no log, view or setting that a
# non-superuser can read.  It is read from idgen.public_key_file, a file
# only the server's OS user can read:
#
#  - the functions use it; a new content and a reload rotate the key;
#  - the server log, at debug5, never holds a key: the postmaster's
#    "parameter ... changed to" line at a reload shows the file's path;
#  - a member of pg_read_all_settings and pg_monitor sees the path in
#    SHOW, current_setting(), SHOW ALL and pg_settings, never a key, and
#    cannot read pg_file_settings;
#  - a file open to the group or the world, a FIFO, or a file that holds
#    no key, is refused: at a reload the old key stays, at start the
#    server stops;
#  - 1.1's idgen.public_key still works, with a WARNING at start and at
#    each reload, because its value is logged at reload (shown here) and
#    readable by pg_read_all_settings (shown too); the file wins when both
#    are set.

use strict;
use warnings;

use POSIX qw(mkfifo);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my @keys = (
	'5f0c8e4a1b7d93c26e1f0a4b8c3d7e92', 'a3e9017bc44f52d8e6b1903f7a2c5d18',
	'0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f6', '9c8b7a695847362514f3e2d1c0b9a897',
	'7e6d5c4b3a2918f7e6d5c4b3a2918f70');

my $node = idgen_node(
	'public_key', conf => qq(
log_min_messages = debug5
include_if_exists = 'idgen_key.conf'
));
my $data = $node->data_dir;
my $conf = "$data/idgen_key.conf";

sub write_key
{
	my ($file, $text, $mode) = @_;
	write_conf($file, $text);
	chmod($mode // 0600, $file) or die "could not chmod $file: $!";
	return;
}

sub public_of
{
	my ($id) = @_;
	return $node->safe_psql('postgres', "SELECT idgen_to_public($id)");
}

# Reload, and wait until the public form of $id is no longer $old.
sub reload_until_changed
{
	my ($id, $old) = @_;
	$node->reload;
	return $node->poll_query_until('postgres',
		"SELECT idgen_to_public($id) <> $old");
}

sub log_since
{
	my ($offset) = @_;
	return slurp_file($node->logfile, $offset);
}

# 1. A key file, relative to the data directory.
write_key("$data/idgen_public.key", "$keys[0]\n");
write_conf($conf, "idgen.public_key_file = 'idgen_public.key'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
my ($id) = mint($node, 1);
my $pub0 = public_of($id);
isnt($pub0, $id, 'the key file keys idgen_to_public()');
is($node->safe_psql('postgres', "SELECT idgen_from_public($pub0)"),
	$id, 'and idgen_from_public() maps it back');

# 2. Rotation: a new content and a reload.
write_key("$data/idgen_public.key", "$keys[1]\n");
ok(reload_until_changed($id, $pub0), 'a new key file and a reload rotate the key');
my $pub1 = public_of($id);
is($node->safe_psql('postgres', "SELECT idgen_from_public($pub1)"),
	$id, 'under the new key, the public form maps back');

# Another file: the log line names the path, nothing else.
write_key("$data/idgen_public2.key", "  $keys[2]  \n");
write_conf($conf, "idgen.public_key_file = 'idgen_public2.key'\n");
ok(reload_until_changed($id, $pub1), 'another file and a reload rotate the key');
my $pub2 = public_of($id);
like(
	slurp_file($node->logfile),
	qr/parameter "idgen.public_key_file" changed to "idgen_public2.key"/,
	'the log line of the change shows the path');

# 3. What a member of pg_read_all_settings and pg_monitor can read.
$node->safe_psql('postgres', <<'EOS');
CREATE ROLE watcher LOGIN IN ROLE pg_read_all_settings, pg_monitor;
EOS
my $seen = $node->safe_psql(
	'postgres', <<'EOS', extra_params => [ '-U', 'watcher' ]);
SHOW idgen.public_key_file;
SELECT current_setting('idgen.public_key_file');
SELECT current_setting('idgen.public_key');
SHOW ALL;
SELECT * FROM pg_settings;
SELECT idgen_from_public(idgen_to_public(42));
EOS
like($seen, qr/^idgen_public2.key$/m, 'the watcher sees the path');
like($seen, qr/^42$/m, 'and can use the functions');
my $leaks = grep { $seen =~ /\Q$_\E/i } @keys;
is($leaks, 0, 'SHOW, current_setting, SHOW ALL and pg_settings show no key');
my ($ret, $err) = psql_fails($node, 'SELECT * FROM pg_file_settings',
	extra_params => [ '-U', 'watcher' ]);
like($err, qr/42501/, 'the watcher cannot read pg_file_settings');
$seen = $node->safe_psql('postgres', 'SELECT * FROM pg_file_settings');
$leaks = grep { $seen =~ /\Q$_\E/i } @keys;
is($leaks, 0, 'pg_file_settings shows a superuser no key either');

# 4. Refused files, at a reload: the old key stays.
my $offset = -s $node->logfile;
write_key("$data/idgen_public2.key", "$keys[3]\n", 0644);
$node->reload;
$node->wait_for_log(qr/has group or world access/, $offset);
my $log = log_since($offset);
like(
	$log,
	qr/key file "idgen_public2.key" has group or world access.*\n.*DETAIL:  File must have permissions u=rw \(0600\) or less.*\n.*HINT:  Make it readable by its owner only, with "chmod 600 idgen_public2.key", and reload\./,
	'a key file open to others is refused at a reload, with the hint');
is(public_of($id), $pub2, 'and the old key stays');

$offset = -s $node->logfile;
write_key("$data/idgen_public2.key", "not a key, but a secret all the same\n");
$node->reload;
$node->wait_for_log(qr/does not hold a key/, $offset);
$log = log_since($offset);
like($log, qr/key file "idgen_public2.key" does not hold a key/,
	'a file without a key is refused at a reload');
unlike($log, qr/a secret all the same/, 'its content is not echoed');
is(public_of($id), $pub2, 'and the old key stays');

# A FIFO, which would block a reader until someone writes to it.
$offset = -s $node->logfile;
unlink("$data/idgen_public2.key");
mkfifo("$data/idgen_public2.key", 0600) or die "could not mkfifo: $!";
$node->reload;
$node->wait_for_log(qr/is not a regular file/, $offset);
like(log_since($offset), qr/key file "idgen_public2.key" is not a regular file/,
	'a FIFO is refused at a reload, without waiting for a writer');
is(public_of($id), $pub2, 'and the old key stays');
unlink("$data/idgen_public2.key");

# At start, the server does not start.
$node->stop;
write_key("$data/idgen_public2.key", "$keys[3]\n", 0644);
my ($started, $start_log) = start_logged($node);
ok(!$started, 'a key file open to others stops the start');
like($start_log, qr/key file "idgen_public2.key" has group or world access/,
	'with the message');
unlink("$data/idgen_public2.key");
($started, $start_log) = start_logged($node);
ok(!$started, 'a missing key file stops the start');
like($start_log,
	qr/could not open key file "idgen_public2.key" named by "idgen.public_key_file": No such file/,
	'with the message');

# Nothing so far logged a key.
$log   = slurp_file($node->logfile);
$leaks = grep { $log =~ /\Q$_\E/i } @keys;
is($leaks, 0, 'the server log holds no key');

# 5. 1.1's idgen.public_key: works, warns, and shows why.
write_conf($conf, "idgen.public_key = '$keys[3]'\n");
($started, $start_log) = start_logged($node);
ok($started, 'the server starts with 1.1 idgen.public_key');
like(
	$start_log,
	qr/WARNING:  "idgen.public_key" is readable by members of pg_read_all_settings and written to the server log when a reload changes it\n.*HINT:  Move the key into a file only the server's operating system user can read, name the file in "idgen.public_key_file", and remove "idgen.public_key"\./,
	'with a WARNING at start');
my $pub3 = public_of($id);
isnt($pub3, $pub2, 'idgen.public_key keys the functions');
is($node->safe_psql('postgres', "SELECT idgen_from_public($pub3)"),
	$id, 'both ways');
is( $node->safe_psql(
		'postgres', 'SHOW idgen.public_key',
		extra_params => [ '-U', 'watcher' ]),
	$keys[3],
	'what the WARNING says: a pg_read_all_settings member reads it');

$offset = -s $node->logfile;
write_conf($conf, "idgen.public_key = '$keys[4]'\n");
ok(reload_until_changed($id, $pub3), 'a reload changes it');
$log = log_since($offset);
like($log, qr/WARNING:  "idgen.public_key" is readable/,
	'with the WARNING again');
like($log, qr/parameter "idgen.public_key" changed to "$keys[4]"/,
	'what the WARNING says: the reload logs the key');

# Both: the file wins.
write_key("$data/idgen_public2.key", "$keys[2]\n");
write_conf($conf,
	"idgen.public_key = '$keys[4]'\nidgen.public_key_file = 'idgen_public2.key'\n"
);
$node->reload;
ok($node->poll_query_until('postgres', "SELECT idgen_to_public($id) = $pub2"),
	'with both set, the file wins');

$node->stop;
done_testing();
