#!/usr/bin/env bash
# scripts/analyze.sh -- idgen's code through clang's static analyser, which
# must report nothing
#
#	bash scripts/analyze.sh
#
# Builds a clean copy of the tree under clang's static analyser (scan-build
# --status-bugs, from Debian's clang-tools).  Prints every report, and exits
# non-zero if there is any: the code has
# none, so a new one is a new bug or a new false alarm, to fix or to
# rewrite the code around, never to accept.  As a suite of scripts/test.sh
# (IDGEN_SUITES=analyze bash scripts/test.sh) scripts/setup.sh installs
# clang-tools; the matrix runs it in job 18, with sid's newest clang.
#
# cppcheck is not run: without PostgreSQL's headers (with them it takes
# minutes a file) it must be told what the server's macros mean, and
# Debian 12's cppcheck (2.10) and sid's (2.22) read idgen_noreturn's
# spellings differently, so no one set of definitions is clean on both.
#
# Environment: PG_CONFIG (default /usr/lib/postgresql/15/bin/pg_config).
# PG_CFLAGS and COPT are ignored: the build's own warnings are the build's
# to check (scripts/test.sh), and clang rejects some of gcc's flags.

set -euo pipefail

IDGEN_PROG="analyze"
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

for tool in scan-build make; do
	command -v "$tool" >/dev/null 2>&1 ||
		idgen_die "$tool not found: install clang-tools (IDGEN_SUITES=analyze bash scripts/setup.sh does)"
done
unset PG_CFLAGS COPT

work=$(mktemp -d /tmp/idgen-analyze.XXXXXX)
idgen_on_exit rm -rf -- "$work"
mkdir -p -- "$work/tree" "$work/reports"
tar -C "$IDGEN_ROOT" "${IDGEN_COPY_EXCLUDES[@]}" -cf - . | tar -C "$work/tree" -xf -
cd "$work/tree"
failed=0

# ---- clang's static analyser ------------------------------------------------
# scan-build puts its compiler wrapper in CC for the make it runs; the
# bitcode for the JIT (with_llvm) is left out, as it would only be
# compiled again, unanalysed.
idgen_log "$(readlink -f "$(command -v scan-build)"), against $("$PG_CONFIG" --version)"
rc=0
scan-build -o "$work/reports" --status-bugs \
	make -j"$(nproc)" with_llvm=no PG_CONFIG="$PG_CONFIG" >"$work/scan-build.log" 2>&1 || rc=$?
mapfile -t reports < <(find "$work/reports" -name 'report-*.html' | sort)
if [ ${#reports[@]} -gt 0 ]; then
	idgen_warn "scan-build: ${#reports[@]} report(s):"
	for r in "${reports[@]}"; do
		# each report names its file, line and finding in comments
		file=$(sed -n 's/^<!-- BUGFILE \(.*\) -->$/\1/p' "$r")
		line=$(sed -n 's/^<!-- BUGLINE \(.*\) -->$/\1/p' "$r")
		desc=$(sed -n 's/^<!-- BUGDESC \(.*\) -->$/\1/p' "$r")
		printf '  %s:%s: %s\n' "${file#"$work/tree/"}" "$line" "$desc"
	done
	failed=1
elif [ "$rc" -ne 0 ]; then
	idgen_tail "$work/scan-build.log" 40
	idgen_warn "scan-build: the build failed"
	failed=1
else
	idgen_log "scan-build: no report"
fi

if [ "$failed" -ne 0 ]; then
	echo "idgen analyze: FAILED"
	exit 1
fi
echo "idgen analyze: OK (scan-build: no report)"
