
# Copyright (c) 2026, The idgen Authors
#
# idgen_convert_column and the plans other sessions cached before it: a
# session whose PL/pgSQL trigger ran on the old integer column fails its
# inserts afterwards (42804) until it discards its plans, as doc/reference.md's
# section on converting a column says; a session that connects afterwards is fine.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('convert_plans');
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION idgen;
CREATE TABLE accounts (id serial PRIMARY KEY, n int);
CREATE FUNCTION accounts_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.id < 0 THEN
		RAISE EXCEPTION 'negative';
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER accounts_check BEFORE INSERT ON accounts
	FOR EACH ROW EXECUTE FUNCTION accounts_check();
});

my $early = $node->background_psql('postgres', on_error_stop => 0);
$early->query_safe('INSERT INTO accounts (n) VALUES (1)');

like(
	$node->safe_psql('postgres', "SELECT idgen_convert_column('accounts', 'id')"),
	qr/^public\.accounts\.id: DEFAULT public\.idgen_next\(\); widened to bigint/,
	'converted');

$early->{stderr} = '';
$early->query("\\set VERBOSITY sqlstate\nINSERT INTO accounts (n) VALUES (2)");
like($early->{stderr}, qr/42804/,
	'a session whose trigger ran before the conversion fails its insert');

$early->{stderr} = '';
$early->query('DISCARD PLANS');
$early->query('INSERT INTO accounts (n) VALUES (3)');
is($early->{stderr}, '', 'after DISCARD PLANS it inserts again');
$early->quit;

$node->safe_psql('postgres', 'INSERT INTO accounts (n) VALUES (4)');
is($node->safe_psql('postgres', 'SELECT count(*) FROM accounts'),
	'3', 'a new session inserts; every insert but the failed one is there');

$node->stop;
done_testing();
