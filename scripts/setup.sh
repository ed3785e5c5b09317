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

missing=()
for pkg in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$pkg")
done

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
