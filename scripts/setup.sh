#!/usr/bin/env bash
# scripts/setup.sh -- install what idgen needs, then build and install it
#
#	bash scripts/setup.sh
#	IDGEN_SETUP=demo bash scripts/setup.sh   # only what building and running idgen needs
#
# As root: apt-get installs the build and test packages (skipped when they are
# all installed already, so a rerun takes seconds), then make && make install.
# With IDGEN_SETUP=demo, as scripts/demo.sh runs it, only the build packages
# and the server: no test, benchmark or framework package.  Each package is
# checked on its own, so a later run without it (scripts/test.sh after the
# demo) installs the rest.
# As another user: checks the packages, builds, and installs only if the
# server's directories are writable (else prints the command to run as root).
#
# Environment: PG_CONFIG (default /usr/lib/postgresql/15/bin/pg_config),
# IDGEN_SETUP=demo or all (the default; see above), IDGEN_SUITES (the test
# suites whose packages to install, as scripts/test.sh reads it),
# IDGEN_SKIP_APT=1 (never call apt-get), IDGEN_PACKAGES_ONLY=1 (install the
# packages, build nothing: scripts/matrix.sh makes its cached layers so), and
# anything make reads (PG_CFLAGS).
# When the objects in the tree were built with another server, compiler,
# PG_CFLAGS or COPT than now (recorded in .idgen-build), or by a make run
# since, the tree is cleaned and built whole: scripts/test.sh passes
# PG_CFLAGS="-Wextra -Wno-unused-parameter -Werror", and must see the
# warnings of every file.
# Run it, do not source it: scripts/demo.sh, scripts/test.sh and bench/run.sh
# call it first.

set -euo pipefail

IDGEN_PROG="setup"
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The server's major version picks the Debian package names.
pg_major=15
if [ -x "$PG_CONFIG" ]; then
	pg_major=$("$PG_CONFIG" --version | sed -E 's/^[^0-9]*([0-9]+).*/\1/')
fi

# What is installed: "demo", what building idgen and running it need (the
# compiler, the server's headers and pg_config, the server and psql), or
# "all", that and every test suite's and the benchmark's packages.
setup_for=${IDGEN_SETUP:-all}
case $setup_for in
	all|demo) ;;
	*) idgen_die "IDGEN_SETUP must be demo or all, not '$setup_for'" ;;
esac

packages=(
	build-essential
	"postgresql-$pg_major"
	"postgresql-client-$pg_major"
	"postgresql-server-dev-$pg_major"
)
frameworks_go=0
if [ "$setup_for" = all ]; then
	packages+=(
		libtap-parser-sourcehandler-pgtap-perl	# pg_prove
		libipc-run-perl				# PostgreSQL::Test::Cluster (t/*.pl)
		faketime				# clock tests in t/
		gdb					# t/024: the lease worker out of file descriptors
		python3-psycopg				# client tests (test/clients/)
		gnuplot-nox				# bench/ charts
	)
	# The frameworks suite (test/frameworks/), when it is to run: by
	# default, and when IDGEN_SUITES names it.  scripts/matrix.sh runs it on
	# two releases only, the oldest and the newest frameworks, so the other
	# jobs skip its packages.
	case " ${IDGEN_SUITES:-frameworks} " in
		*" frameworks "*)
			packages+=(
				python3-alembic python3-django python3-psycopg2 python3-sqlalchemy	# frameworks: python
				ruby-activerecord ruby-pg ruby-minitest	# frameworks: ruby
				golang-go	# frameworks: go (with pgx, below)
				default-jdk-headless libpostgresql-jdbc-java libjackson2-databind-java	# frameworks: java
				php-cli php-pgsql	# frameworks: php
			)
			frameworks_go=1
			;;
	esac
	# The poolers suite (test/poolers/): Debian's pgbouncer, when it is to
	# run: by default, and when IDGEN_SUITES names it.  scripts/matrix.sh
	# runs it on 15 alone, so the other jobs skip the package.
	case " ${IDGEN_SUITES:-poolers} " in
		*" poolers "*) packages+=(pgbouncer) ;;	# poolers: the pooler in front
	esac
	# The monitoring suite (test/monitoring/): Debian's exporter, promtool
	# (in the prometheus package) and curl, when the suite is to run, as for
	# the frameworks; scripts/matrix.sh runs it on job 15 only.
	case " ${IDGEN_SUITES:-monitoring} " in
		*" monitoring "*)
			packages+=(prometheus-postgres-exporter prometheus curl)
			;;
	esac
	# The analyze suite (scripts/analyze.sh), only when IDGEN_SUITES names
	# it: scripts/matrix.sh runs it in one job.
	case " ${IDGEN_SUITES:-} " in
		*" analyze "*) packages+=(clang-tools) ;;	# scan-build
	esac
	# node-postgres runs on any node and npm: a machine that has them keeps
	# its own
	command -v node >/dev/null 2>&1 || packages+=(nodejs)
	command -v npm >/dev/null 2>&1 || packages+=(npm)
fi

# Packages that a release may not have: pgTAP for a server still in
# experimental (then built from Debian's source package), pg_partman only
# where Debian's is 5.2 or later (the integer partitions doc/partitioning.md
# documents).  Both are the test suites', not the demo's.
pgtap_pkg="postgresql-$pg_major-pgtap"
partman_pkg="postgresql-$pg_major-partman"

is_installed()
{
	local status
	status=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)
	[ "$status" = installed ]
}

# The version apt would install, or nothing.  The whole output is read before
# it is searched: an early-exiting reader would kill apt-cache with SIGPIPE.
candidate()
{
	local out
	out=$(apt-cache policy "$1" 2>/dev/null || true)
	sed -n 's/^ *Candidate: \([0-9].*\)$/\1/p' <<<"$out"
}

pgtap_control=
if [ -x "$PG_CONFIG" ]; then
	pgtap_control="$("$PG_CONFIG" --sharedir)/extension/pgtap.control"
fi
pgtap_wanted=0
partman_wanted=0
if [ "$setup_for" = all ]; then
	if ! is_installed "$pgtap_pkg" && ! { [ -n "$pgtap_control" ] && [ -f "$pgtap_control" ]; }; then
		pgtap_wanted=1
	fi
	is_installed "$partman_pkg" || partman_wanted=1
fi
# pgx for the frameworks suite's Go part: v5 where the release has it (sid),
# else v4, the only one Debian 12 has
pgx5_pkg=golang-github-jackc-pgx-v5-dev
pgx4_pkg=golang-github-jackc-pgx-v4-dev
pgx_wanted=0
if [ "$frameworks_go" = 1 ] && ! is_installed "$pgx5_pkg" && ! is_installed "$pgx4_pkg"; then
	pgx_wanted=1
fi

missing=()
for pkg in "${packages[@]}"; do
	is_installed "$pkg" || missing+=("$pkg")
done

can_apt=0
if idgen_is_root && [ "${IDGEN_SKIP_APT:-0}" != 1 ]; then
	can_apt=1
fi

pgtap_from_source=0
if [ ${#missing[@]} -gt 0 ] || [ "$pgtap_wanted" = 1 ] || [ "$partman_wanted" = 1 ] ||
	[ "$pgx_wanted" = 1 ]; then
	if [ "$can_apt" = 1 ]; then
		# the lists may be old or absent (a fresh image): read them anew first
		export DEBIAN_FRONTEND=noninteractive
		idgen_log "apt-get update"
		apt-get -q update >/dev/null ||
			idgen_die "apt-get update failed: check this machine's apt sources and network"
		if [ "$partman_wanted" = 1 ]; then
			c=$(candidate "$partman_pkg")
			if [ -n "$c" ] && dpkg --compare-versions "$c" ge 5.2; then
				missing+=("$partman_pkg")
			fi
		fi
		if [ "$pgx_wanted" = 1 ]; then
			if [ -n "$(candidate "$pgx5_pkg")" ]; then
				missing+=("$pgx5_pkg")
			else
				missing+=("$pgx4_pkg")
			fi
		fi
		if [ "$pgtap_wanted" = 1 ]; then
			if [ -n "$(candidate "$pgtap_pkg")" ]; then
				missing+=("$pgtap_pkg")
			else
				pgtap_from_source=1
			fi
		fi
		unknown=()
		for pkg in "${missing[@]}"; do
			[ -n "$(candidate "$pkg")" ] || unknown+=("$pkg")
		done
		[ ${#unknown[@]} -eq 0 ] ||
			idgen_die "no package ${unknown[*]} in this machine's apt sources: add the Debian release (or apt.postgresql.org) that has it to /etc/apt/sources.list, or install it by hand"
	else
		[ "$pgtap_wanted" = 0 ] || missing+=("$pgtap_pkg")
		[ "$pgx_wanted" = 0 ] || missing+=("$pgx4_pkg")
	fi
fi

if [ ${#missing[@]} -eq 0 ]; then
	idgen_log "packages already installed"
elif [ "${IDGEN_SKIP_APT:-0}" = 1 ]; then
	idgen_warn "IDGEN_SKIP_APT=1, not installing: ${missing[*]}"
elif [ "$can_apt" = 1 ]; then
	idgen_log "installing: ${missing[*]}"
	apt-get -q install -y --no-install-recommends "${missing[@]}" ||
		idgen_die "apt-get install failed for: ${missing[*]}"
else
	idgen_warn "missing packages: ${missing[*]}"
	idgen_warn "as root, run: apt-get install --no-install-recommends ${missing[*]}"
fi

if [ "$pgtap_from_source" = 1 ] && [ -n "$pgtap_control" ]; then
	idgen_log "no $pgtap_pkg package: building pgTAP from Debian's source package"
	pgtap_dir=$(mktemp -d /tmp/idgen-pgtap.XXXXXX)
	(
		cd "$pgtap_dir"
		apt-get -q source --tar-only pgtap >/dev/null ||
			idgen_die "apt-get source pgtap failed: add a deb-src line for this release to the apt sources"
		tar -xzf pgtap_*.orig.tar.gz
		cd pgtap-*/
		make -s PG_CONFIG="$PG_CONFIG" >/dev/null
		make -s install PG_CONFIG="$PG_CONFIG" >/dev/null
	)
	rm -rf -- "$pgtap_dir"
fi

if [ "${IDGEN_PACKAGES_ONLY:-0}" = 1 ]; then
	idgen_log "IDGEN_PACKAGES_ONLY=1: packages done, nothing built"
	exit 0
fi

# What the build itself cannot do without.
[ -x "$PG_CONFIG" ] || command -v "$PG_CONFIG" >/dev/null 2>&1 ||
	idgen_die "pg_config not found at $PG_CONFIG: install postgresql-server-dev-$pg_major (or set PG_CONFIG)"
pgxs=$("$PG_CONFIG" --pgxs)
[ -f "$pgxs" ] ||
	idgen_die "$pgxs not found: install postgresql-server-dev-$pg_major"
for tool in make gcc; do
	command -v "$tool" >/dev/null 2>&1 ||
		idgen_die "$tool not found: install build-essential"
done

cd "$IDGEN_ROOT"
# make rebuilds only what changed since the objects were made, not what was
# made with other flags: a tree built once without -Werror (by hand, or by
# the demo) would never show scripts/test.sh, which asks for -Werror, the
# warnings of the files it did not touch.  So the build records what it was
# made with (server, compiler, PG_CFLAGS, COPT) in .idgen-build, and the
# tree is cleaned and built whole when that differs, or when anything was
# built after it (a make by hand); otherwise make rebuilds what changed, as
# always.  The record is written even when make fails: with -Werror a file
# that warns leaves no object, so every object there was made this way.
build_stamp=.idgen-build
read -r cc _ <<<"$("$PG_CONFIG" --cc)"
build_id=$(printf '%s\n' "pg_config: $PG_CONFIG, $("$PG_CONFIG" --version)" \
	"compiler: $("$PG_CONFIG" --cc), $("$cc" --version 2>/dev/null | head -n 1)" \
	"PG_CFLAGS: ${PG_CFLAGS:-}" "COPT: ${COPT:-}")

# built_since_stamp: true when an object or the library is newer than the record
built_since_stamp()
{
	local f
	for f in idgen.so src/*.o src/*.bc; do
		[ -e "$f" ] && [ "$f" -nt "$build_stamp" ] && return 0
	done
	return 1
}

any_built()
{
	local f
	for f in idgen.so src/*.o src/*.bc; do
		[ -e "$f" ] && return 0
	done
	return 1
}

if any_built &&
	{ [ ! -f "$build_stamp" ] || [ "$(cat -- "$build_stamp")" != "$build_id" ] || built_since_stamp; }; then
	idgen_log "the objects here were made with other flags, compiler or server, or by a make since ($build_stamp): make clean, then build all"
	make -s clean PG_CONFIG="$PG_CONFIG"
fi
idgen_log "building with $PG_CONFIG ($("$PG_CONFIG" --version))${PG_CFLAGS:+, PG_CFLAGS=$PG_CFLAGS}"
build_rc=0
make -j"$(nproc)" PG_CONFIG="$PG_CONFIG" || build_rc=$?
printf '%s\n' "$build_id" >"$build_stamp"
[ "$build_rc" -eq 0 ] || idgen_die "the build failed${PG_CFLAGS:+ (PG_CFLAGS=$PG_CFLAGS)}"

pkglibdir=$("$PG_CONFIG" --pkglibdir)
sharedir=$("$PG_CONFIG" --sharedir)
if idgen_is_root || { [ -w "$pkglibdir" ] && [ -w "$sharedir/extension" ]; }; then
	make install PG_CONFIG="$PG_CONFIG"
	idgen_log "installed into $pkglibdir and $sharedir/extension"
else
	idgen_warn "cannot write $pkglibdir: not installing"
	idgen_warn "as root, run: make -C $IDGEN_ROOT install PG_CONFIG=$PG_CONFIG"
fi
