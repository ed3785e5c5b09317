#!/usr/bin/env bash
# scripts/unprivileged.sh -- run a command in a copy of the tree as postgres
#
#	bash scripts/unprivileged.sh make installcheck PROVE_TESTS=t/010_restart.pl
#	bash scripts/unprivileged.sh bash      # a shell in the copy
#
# initdb, pg_regress --temp-instance and PostgreSQL::Test::Cluster refuse to
# run as root.  As root, this copies the repository (without .git and build
# outputs) into a fresh mktemp -d directory under /tmp, gives it to the
# postgres user (IDGEN_RUN_USER), and runs the command there with
# runuser -u postgres, keeping PATH and PG_CONFIG; the copy is removed
# afterwards unless IDGEN_KEEP=1.  As any other user it runs the command in
# place.  The command's exit status is returned.

set -euo pipefail

IDGEN_PROG="unprivileged"
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -gt 0 ] || idgen_die "usage: bash scripts/unprivileged.sh COMMAND [ARG...]"

idgen_workcopy
cd "$IDGEN_WORKDIR"
idgen_is_root && idgen_log "running in $IDGEN_WORKDIR as $IDGEN_RUN_USER"
idgen_as_user "$@"
