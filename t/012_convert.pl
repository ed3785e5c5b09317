
# Copyright (c) 2026, The idgen Authors
#
# idgen_convert_column on a table that other sessions insert into while it
# runs: it waits for them, they wait for it, and afterwards every row is
# there, every ID is unique, and the rows inserted after it have IDs above
# every old one.  The result is plain DDL: pg_dump carries it into another
# database, where inserts mint from idgen.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('convert');
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION idgen;
CREATE TABLE accounts (id serial PRIMARY KEY, session int, n int, at timestamptz DEFAULT clock_timestamp());
CREATE TABLE payments (id bigserial PRIMARY KEY, account_id int REFERENCES accounts (id));
INSERT INTO accounts (session, n) SELECT 0, g FROM generate_series(1, 1000) AS g;
INSERT INTO payments (account_id) SELECT id FROM accounts;
});

# two sessions insert 300 rows each, one at a time, committing each
my @writers;
for my $s (1 .. 2)
{
	my $w = $node->background_psql('postgres');
	$w->query_until(
		qr/started/, qq{\\echo started
DO \$\$ BEGIN
  FOR i IN 1..300 LOOP
    INSERT INTO accounts (session, n) VALUES ($s, i);
    COMMIT;
    PERFORM pg_sleep(0.002);
  END LOOP;
END \$\$;
\\echo done
});
	push @writers, $w;
}
sleep 0.3;
my $summary = $node->safe_psql('postgres',
	"SELECT idgen_convert_column('accounts', 'id')");
like($summary,
	qr/^public\.accounts\.id: DEFAULT public\.idgen_next\(\); widened to bigint: public\.accounts\.id, public\.payments\.account_id; sequence public\.accounts_id_seq dropped/,
	'converted while two sessions insert');
$_->query_until(qr/done/, '') for @writers;
$_->quit for @writers;

is( $node->safe_psql(
		'postgres', 'SELECT count(*), count(DISTINCT id) FROM accounts'),
	'1600|1600',
	'every row of the old data and of both sessions is there, with unique IDs');

# old IDs came from the sequence (below 1,000,000), new ones from idgen
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE id < 1000000)
     + count(*) FILTER (WHERE id >= min_id_at(now() - interval '1 hour')) = count(*),
       count(*) FILTER (WHERE id >= 1000000) > 0,
       min(id) FILTER (WHERE id >= 1000000) > max(id) FILTER (WHERE id < 1000000),
       max(at) FILTER (WHERE id < 1000000) <= min(at) FILTER (WHERE id >= 1000000)
  FROM accounts}),
	't|t|t|t',
	'rows inserted after the conversion carry idgen IDs, above every old one, and came after every old row'
);

# pg_dump reproduces the converted schema; a restore mints from idgen
my $dump = PostgreSQL::Test::Utils::tempdir() . '/convert.sql';
$node->command_ok(
	[ 'pg_dump', '-d', $node->connstr('postgres'), '-t', 'accounts', '-t', 'payments', '-f', $dump ],
	'pg_dump of the converted tables');
my $sql = slurp_file($dump);
like($sql, qr/id bigint DEFAULT public\.idgen_next\(\) NOT NULL/,
	'the dump has the bigint column with DEFAULT idgen_next()');
unlike($sql, qr/accounts_id_seq/, 'and no trace of the old sequence');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->safe_psql('restored', 'CREATE EXTENSION idgen');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('restored'), '-f', $dump ],
	'the dump restores');
is( $node->safe_psql(
		'restored',
		q{INSERT INTO accounts (session, n) VALUES (9, 1) RETURNING id >= min_id_at('2026-01-01 00:00:00+00')}),
	't',
	'inserts into the restored table mint from idgen');

$node->stop;
done_testing();
