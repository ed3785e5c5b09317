#!/usr/bin/env bash
# test/frameworks/run.sh -- idgen in the frameworks application teams use,
# each run the way its users run it, against the server that PGHOST, PGPORT,
# PGUSER and PGDATABASE name (idgen preloaded, and created in PGDATABASE);
# the tests make their own databases where they need more
#
#	python/   Debian's python3 (IDGEN_PYTHON), unittest: Django,
#	          SQLAlchemy and Alembic
#	ruby/     minitest, every *_test.rb in one run: ActiveRecord
#	node/     npm ci from its lock, then node --test: knex, TypeORM,
#	          drizzle-orm
#	go/       go test, with Debian's pgx
#
# scripts/test.sh runs it as the suite "frameworks" and counts the tests
# from what each runner prints ("Ran N tests", "N runs,", "# tests N").
# Every part runs even when one before it failed; the status is non-zero
# if any failed.

set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1

rc=0
python=${IDGEN_PYTHON:-/usr/bin/python3}

# part NAME CMD...: one framework's tests
part()
{
	local name=$1
	shift
	printf '\n----- %s -----\n' "$name"
	if ! "$@"; then
		printf -- '----- %s: FAILED\n' "$name"
		rc=1
	fi
}

if compgen -G 'python/test_*.py' >/dev/null; then
	part python bash -c 'cd python && "$1" -m unittest -v' python "$python"
fi
if compgen -G 'ruby/*_test.rb' >/dev/null; then
	part ruby bash -c 'cd ruby &&
		ruby -e "Dir[\"*_test.rb\"].sort.each { |f| require File.expand_path(f) }"'
fi

exit $rc
