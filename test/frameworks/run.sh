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
#	java/     Orders.java compiled with javac against Debian's pgjdbc and
#	          Jackson jars (/usr/share/java), its JSON read by node --test
#	          (java.test.js); pgjdbc connects over TCP, to 127.0.0.1 and
#	          PGPORT, so the server must listen there too
#	php/      orders.php on Debian's php-cli, PDO and pgsql, its JSON read
#	          by node --test (php.test.js)
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
if compgen -G 'node/*.test.js' >/dev/null; then
	part node bash -c 'cd node && npm ci --no-audit --no-fund --loglevel=error &&
		node --test --test-reporter=tap'
fi

# Go in GOPATH mode on Debian's packaged sources (/usr/share/gocode), as
# Debian builds Go, offline, with its build cache in a temporary directory
# (the server user's home may not be writable); pgx v5 where it is installed,
# else v4.  go test prints no count of its own: "# tests N" is what
# scripts/test.sh reads.
go_tests()
{
	local gopath=/usr/share/gocode tags=pgx4 tmp out status
	command -v go >/dev/null 2>&1 ||
		{ echo "go not found: install golang-go (scripts/setup.sh does)"; return 1; }
	if [ -d "$gopath/src/github.com/jackc/pgx/v5" ]; then
		tags=pgx5
	elif [ ! -d "$gopath/src/github.com/jackc/pgx/v4" ]; then
		echo "pgx not found: install golang-github-jackc-pgx-v5-dev or -v4-dev (scripts/setup.sh does)"
		return 1
	fi
	tmp=$(mktemp -d /tmp/idgen-go.XXXXXX) || return 1
	out=$tmp/out
	go version
	(cd go && env GOPATH="$gopath" GO111MODULE=off GOPROXY=off GOFLAGS= \
		GOENV=off GOTOOLCHAIN=local GOCACHE="$tmp/cache" \
		go test -v -count=1 -tags "$tags" .) 2>&1 | tee "$out"
	status=${PIPESTATUS[0]}
	printf '# tests %s\n' "$(grep -cE '^--- (PASS|FAIL|SKIP): ' "$out")"
	rm -rf -- "$tmp"
	return "$status"
}

if compgen -G 'go/*_test.go' >/dev/null; then
	part go go_tests
fi

# Java: javac and the jars Debian installs in /usr/share/java, offline,
# the classes in a temporary directory
java_tests()
{
	local jars=/usr/share/java cp jar tmp status
	command -v javac >/dev/null 2>&1 ||
		{ echo "javac not found: install default-jdk-headless (scripts/setup.sh does)"; return 1; }
	cp=
	for jar in postgresql jackson-databind jackson-core jackson-annotations; do
		[ -f "$jars/$jar.jar" ] ||
			{ echo "$jars/$jar.jar not found: install libpostgresql-jdbc-java and libjackson2-databind-java (scripts/setup.sh does)"; return 1; }
		cp=$cp:$jars/$jar.jar
	done
	tmp=$(mktemp -d /tmp/idgen-java.XXXXXX) || return 1
	javac -version
	if javac -Xlint:all -Werror -d "$tmp" -cp "${cp#:}" java/Orders.java; then
		(cd java && IDGEN_JAVA_CLASSPATH="$tmp$cp" node --test --test-reporter=tap java.test.js)
		status=$?
	else
		status=1
	fi
	rm -rf -- "$tmp"
	return "$status"
}

php_tests()
{
	local mods
	command -v php >/dev/null 2>&1 ||
		{ echo "php not found: install php-cli (scripts/setup.sh does)"; return 1; }
	mods=$(php -m)
	if ! grep -qx pdo_pgsql <<<"$mods" || ! grep -qx pgsql <<<"$mods"; then
		echo "php has no pdo_pgsql or pgsql: install php-pgsql (scripts/setup.sh does)"
		return 1
	fi
	mods=$(php --version)
	echo "${mods%%$'\n'*}"
	(cd php && node --test --test-reporter=tap php.test.js)
}

if [ -f java/Orders.java ]; then
	part java java_tests
fi
if [ -f php/orders.php ]; then
	part php php_tests
fi

exit $rc
