#!/usr/bin/env bash
# scripts/setup.sh -- install what idgen needs, then build and install it
#
#	bash scripts/setup.sh
#
# As root: apt-get installs the build and test packages (skipped when they are
# all installed already, so a rerun takes seconds), then make && make install.
# As another user: checks the packages, builds, and installs only if the
# server's directories are writable (else prints the command to run as root).
#
# Environment: PG_CONFIG (default /usr/lib/postgresql/15/bin/pg_config),
# IDGEN_SKIP_APT=1 (never call apt-get), and anything make reads (PG_CFLAGS).
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

packages=(
	build-essential
	"postgresql-$pg_major"
	"postgresql-client-$pg_major"
	"postgresql-server-dev-$pg_major"
	"postgresql-$pg_major-pgtap"		# CREATE EXTENSION pgtap (test/*.sql)
	libtap-parser-sourcehandler-pgtap-perl	# pg_prove
	libipc-run-perl				# PostgreSQL::Test::Cluster (t/*.pl)
	faketime				# clock tests in t/
	gnuplot-nox				# bench/ charts
)

# pgTAP built from source (below) counts as installed.
pgtap_control=
if [ -x "$PG_CONFIG" ]; then
	pgtap_control="$("$PG_CONFIG" --sharedir)/extension/pgtap.control"
fi

missing=()
for pkg in "${packages[@]}"; do
	if [ "$pkg" = "postgresql-$pg_major-pgtap" ] && [ -n "$pgtap_control" ] &&
		[ -f "$pgtap_control" ]; then
		continue
	fi
	status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$pkg")
done

# pg_partman for t/013_partman.pl, only where Debian's is 5.2 or later (the
# integer partitions the README documents); 15's is 4.7 and is left out.
partman_pkg="postgresql-$pg_major-partman"
partman_candidate()
{
	apt-cache policy "$partman_pkg" 2>/dev/null |
		sed -n 's/^ *Candidate: \([0-9].*\)$/\1/p'
}
status=$(dpkg-query -W -f='${db:Status-Status}' "$partman_pkg" 2>/dev/null || true)
if [ "$status" != installed ]; then
	candidate=$(partman_candidate)
	if [ -z "$candidate" ] && idgen_is_root && [ "${IDGEN_SKIP_APT:-0}" != 1 ]; then
		apt-get -q update >/dev/null
		candidate=$(partman_candidate)
	fi
	if [ -n "$candidate" ] && dpkg --compare-versions "$candidate" ge 5.2; then
		missing+=("$partman_pkg")
	fi
fi

# Debian packages pgTAP for each server version it ships, but not yet for a
# release candidate in experimental: then pgTAP is built from Debian's source.
pgtap_pkg="postgresql-$pg_major-pgtap"
pgtap_from_source=0
if [[ " ${missing[*]} " == *" $pgtap_pkg "* ]] && idgen_is_root &&
	[ "${IDGEN_SKIP_APT:-0}" != 1 ]; then
	if ! apt-cache policy "$pgtap_pkg" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
		apt-get -q update >/dev/null
	fi
	if ! apt-cache policy "$pgtap_pkg" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
		kept=()
		for pkg in "${missing[@]}"; do
			[ "$pkg" = "$pgtap_pkg" ] || kept+=("$pkg")
		done
		missing=("${kept[@]}")
		pgtap_from_source=1
	fi
fi

if [ ${#missing[@]} -eq 0 ]; then
	idgen_log "packages already installed"
elif [ "${IDGEN_SKIP_APT:-0}" = 1 ]; then
	idgen_warn "IDGEN_SKIP_APT=1, not installing: ${missing[*]}"
elif idgen_is_root; then
	idgen_log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -q update
	apt-get -q install -y --no-install-recommends "${missing[@]}"
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

# What the build itself cannot do without.
[ -x "$PG_CONFIG" ] || command -v "$PG_CONFIG" >/dev/null 2>&1 ||
	idgen_die "pg_config not found at $PG_CONFIG (set PG_CONFIG)"
pgxs=$("$PG_CONFIG" --pgxs)
[ -f "$pgxs" ] ||
	idgen_die "$pgxs not found: install postgresql-server-dev-$pg_major"
for tool in make gcc; do
	command -v "$tool" >/dev/null 2>&1 ||
		idgen_die "$tool not found: install build-essential"
done

cd "$IDGEN_ROOT"
idgen_log "building with $PG_CONFIG ($("$PG_CONFIG" --version))"
make -j"$(nproc)" PG_CONFIG="$PG_CONFIG"

pkglibdir=$("$PG_CONFIG" --pkglibdir)
sharedir=$("$PG_CONFIG" --sharedir)
if idgen_is_root || { [ -w "$pkglibdir" ] && [ -w "$sharedir/extension" ]; }; then
	make install PG_CONFIG="$PG_CONFIG"
	idgen_log "installed into $pkglibdir and $sharedir/extension"
else
	idgen_warn "cannot write $pkglibdir: not installing"
	idgen_warn "as root, run: make -C $IDGEN_ROOT install PG_CONFIG=$PG_CONFIG"
fi
