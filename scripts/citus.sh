#!/usr/bin/env bash
# scripts/citus.sh -- build Citus from its source archive and install it into
# PG_CONFIG's server, for the suite that runs idgen on Citus (t/citus/)
#
#	bash scripts/citus.sh [ARCHIVE]
#
# Citus is a test dependency only: it is never part of idgen, and neither its
# sources nor its build are kept in this repository.  ARCHIVE (default
# $IDGEN_CITUS_TARBALL, else ../shared/vendor/citus-14.0.1.tar.gz beside the
# repository) is checked against ARCHIVE.sha256 before anything is built.
# As root, apt-get installs what the build needs first: the server's headers
# and the three libraries Citus links with.  Citus supports PostgreSQL 16 to
# 18.  scripts/matrix.sh runs this before scripts/test.sh in its citus jobs.
# A rerun with the same archive for the same server builds nothing: the
# archive's checksum is kept beside Citus's control file.

set -euo pipefail

IDGEN_PROG="citus"
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

archive=${1:-${IDGEN_CITUS_TARBALL:-$IDGEN_ROOT/../shared/vendor/citus-14.0.1.tar.gz}}
[ -f "$archive" ] || idgen_die "no Citus source archive at $archive (set IDGEN_CITUS_TARBALL)"
[ -f "$archive.sha256" ] || idgen_die "no checksum file $archive.sha256 beside the archive"
archive=$(cd "$(dirname "$archive")" && pwd)/$(basename "$archive")
(cd "$(dirname "$archive")" && sha256sum --quiet -c "$(basename "$archive").sha256") ||
	idgen_die "$archive does not match its checksum in $archive.sha256"

[ -x "$PG_CONFIG" ] || idgen_die "pg_config not found at $PG_CONFIG (set PG_CONFIG)"
pg_major=$("$PG_CONFIG" --version | sed -E 's/^[^0-9]*([0-9]+).*/\1/')

pg_sharedir=$("$PG_CONFIG" --sharedir)
built_from=$pg_sharedir/extension/citus.idgen-built-from
sum=$(cut -d' ' -f1 "$archive.sha256")
if [ -f "$pg_sharedir/extension/citus.control" ] && [ -f "$built_from" ] &&
	[ "$(cat "$built_from")" = "$sum" ] &&
	[ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ]; then
	idgen_log "Citus from $(basename "$archive") is installed for PostgreSQL $pg_major already"
	exit 0
fi

packages=(build-essential "postgresql-server-dev-$pg_major"
	libcurl4-openssl-dev liblz4-dev libicu-dev)
missing=()
for pkg in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
	idgen_is_root || idgen_die "missing packages: ${missing[*]} (as root: apt-get install ${missing[*]})"
	export DEBIAN_FRONTEND=noninteractive
	idgen_log "installing: ${missing[*]}"
	apt-get -q update >/dev/null || idgen_die "apt-get update failed"
	apt-get -q install -y --no-install-recommends "${missing[@]}" >/dev/null ||
		idgen_die "apt-get install failed for: ${missing[*]}"
fi

build=$(mktemp -d /tmp/idgen-citus.XXXXXX)
idgen_on_exit rm -rf -- "$build"
tar -C "$build" -xzf "$archive"
src=$(find "$build" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -n "$src" ] && [ -f "$src/configure" ] || src=$build
idgen_log "building Citus from $(basename "$archive") for PostgreSQL $pg_major"
(
	# idgen's build flags are not Citus's: PGXS would pass the matrix's
	# PG_CFLAGS=-Werror on, and a newer compiler's warnings in Citus fail it
	unset PG_CFLAGS PG_CPPFLAGS COPT PROFILE
	cd "$src"
	./configure PG_CONFIG="$PG_CONFIG" >"$build/configure.log" 2>&1 ||
		{ idgen_tail "$build/configure.log" 40 >&2; exit 1; }
	# no LLVM bitcode: it doubles the build, and the suite runs no JIT
	make -j"$(nproc)" with_llvm=no >"$build/make.log" 2>&1 ||
		{ idgen_tail "$build/make.log" 40 >&2; exit 1; }
	make install with_llvm=no >"$build/install.log" 2>&1 ||
		{ idgen_tail "$build/install.log" 40 >&2; exit 1; }
) || idgen_die "the Citus build failed"
echo "$sum" >"$built_from"
idgen_log "installed Citus into $("$PG_CONFIG" --pkglibdir) in $SECONDS s"
