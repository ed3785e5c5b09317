
# Copyright (c) 2026, The idgen Authors

=pod

=head1 NAME

IdgenCitus - Citus nodes running idgen, for the tests in t/citus/

=head1 SYNOPSIS

  use FindBin;
  use lib "$FindBin::RealBin/..", $FindBin::RealBin;
  use IdgenTest;
  use IdgenCitus;

=head1 DESCRIPTION

  citus_available()       whether this server has Citus installed (the
                          tests skip, saying so, when it has not)
  citus_node($name, $shard, $conf)
                          a started node with shared_preload_libraries =
                          'citus,idgen', listening on 127.0.0.1 (Citus
                          reaches nodes by host and port), idgen.shard_id =
                          $shard and $conf appended (a later line wins), and
                          CREATE EXTENSION citus run in database postgres
  add_node($coordinator, $node)
                          citus_add_node of $node on $coordinator; returns
                          (psql's exit code, its stderr)
  run_sql_bg($node, $sql) psql -f with $sql on $node, in the background:
                          returns the IPC::Run harness and references to
                          its stdout and stderr

=cut

package IdgenCitus;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IdgenTest;

our @EXPORT = qw(citus_available citus_node add_node run_sql_bg);

sub citus_available
{
	my $pkglibdir = `pg_config --pkglibdir`;
	chomp $pkglibdir;
	return -f "$pkglibdir/citus.so";
}

sub citus_node
{
	my ($name, $shard, $conf) = @_;
	$conf //= '';
	my $node = idgen_node($name);
	$node->append_conf('postgresql.conf', <<"EOC");
shared_preload_libraries = 'citus,idgen'
listen_addresses = '127.0.0.1'
idgen.shard_id = $shard
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
citus.shard_count = 4
$conf
EOC
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	return $node;
}

sub add_node
{
	my ($coordinator, $node) = @_;
	my $port = $node->port;
	my ($ret, $stdout, $stderr) = $coordinator->psql('postgres',
		"SELECT citus_add_node('127.0.0.1', $port)");
	return ($ret, $stderr);
}

my $script_count = 0;

sub run_sql_bg
{
	my ($node, $sql) = @_;
	my $file = PostgreSQL::Test::Utils::tempdir() . '/bg' . ++$script_count . '.sql';
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh $sql;
	close $fh;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr('postgres'), '-f', $file
		],
		'>', \$out, '2>', \$err);
	return ($h, \$out, \$err);
}

1;
