#!/usr/bin/env bash
# scripts/pgxn.sh -- the PGXN route: make dist's zip, installed and checked
# with Debian's pgxnclient as a PGXN user would
#
#	bash scripts/pgxn.sh
#
# As root in a git checkout (CI runs it in a fresh Debian root): installs
# what the build needs (scripts/setup.sh), git and pgxnclient; makes the
# release zip with `make dist`; `pgxn install`s it; then, as the server
# user, `pgxn check`s it (the zip's own make installcheck: pg_regress,
# isolation, and PROVE_TESTS, by default t/001_preload.pl only, since the
# whole TAP suite already runs in the matrix).

set -euo pipefail

IDGEN_PROG="pgxn"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

idgen_is_root || idgen_die "needs root: it installs packages and the extension"
[ -d "$IDGEN_ROOT/.git" ] || idgen_die "$IDGEN_ROOT is not a git checkout: make dist archives git HEAD"

result=FAIL
summary()
{
	printf '\n===== summary: PGXN archive, PostgreSQL %s =====\n' "$("$PG_CONFIG" --version 2>/dev/null | sed -E 's/^[^0-9]*//')"
	printf '  %-10s %s\n' pgxn "$result"
	echo
	if [ "$result" = PASS ]; then
		echo "pgxn: 1 passed, 0 failed"
	else
		echo "pgxn: 0 passed, 1 failed"
	fi
}
idgen_on_exit summary

# what the build and the zip's installcheck need, not the frameworks'
# packages: the suites pgxn check runs
IDGEN_SUITES="regress isolation tap" bash "$here/setup.sh"
export DEBIAN_FRONTEND=noninteractive
need=()
command -v git >/dev/null 2>&1 || need+=(git)
command -v pgxn >/dev/null 2>&1 || need+=(pgxnclient)
if [ ${#need[@]} -gt 0 ]; then
	idgen_log "installing: ${need[*]}"
	apt-get -q install -y --no-install-recommends "${need[@]}" >/dev/null
fi

cd "$IDGEN_ROOT"
git config --global --add safe.directory "$IDGEN_ROOT"
make -s dist PG_CONFIG="$PG_CONFIG"
zip=$(ls -1 idgen-*.zip)
# the README's commands name the archive make dist makes, not one remembered
readme=$(cat README.md)
named=$(grep -oE 'idgen-[0-9]+[.][0-9]+[.][0-9]+[.]zip' <<<"$readme" | sort -u || true)
if [ "$named" != "$zip" ]; then
	idgen_warn "README.md names ${named:-no archive} where make dist makes $zip (META.json's version)"
	exit 1
fi
dir=$(mktemp -d /tmp/idgen-pgxn.XXXXXX)
idgen_on_exit rm -rf -- "$dir"
cp -- "$zip" "$dir/"
chown -R "$IDGEN_RUN_USER:" "$dir"

idgen_log "pgxn install ./$zip"
(cd "$dir" && pgxn install --yes --nosudo --make make --pg_config "$PG_CONFIG" "./$zip")

idgen_log "pgxn check ./$zip (as $IDGEN_RUN_USER)"
(cd "$dir" && idgen_as_user env PROVE_TESTS="${PROVE_TESTS:-t/001_preload.pl}" \
	pgxn check --yes --make make --pg_config "$PG_CONFIG" "./$zip") || {
	[ -f "$dir/regression.diffs" ] && head -n 200 -- "$dir/regression.diffs"
	exit 1
}
result=PASS
