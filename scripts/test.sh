#!/usr/bin/env bash
# scripts/test.sh -- build, install and run every idgen test suite
#
#	bash scripts/test.sh
#
# Runs scripts/setup.sh with PG_CFLAGS="-Wextra -Wno-unused-parameter
# -Werror" (more warnings than PostgreSQL's own, as errors; a tree built
# without them is built again whole), then, in a copy of the tree owned by the postgres
# user (initdb refuses root), the suites of `make installcheck`, each on its
# own throwaway instance with idgen preloaded:
#	regress    pg_regress           sql/*.sql -> expected/*.out   (REGRESS)
#	isolation  isolationtester      specs/*.spec                  (ISOLATION)
#	tap        prove                t/*.pl                        (TAP_TESTS)
# and then
#	pgtap      pg_prove             test/*.sql on a throwaway cluster
#	                                (scripts/lib.sh) with test/idgen.conf
#	clients    node --test, unittest test/clients/: node-postgres (npm ci
#	                                from its lock) and Debian's psycopg, on
#	                                such a cluster
#	frameworks test/frameworks/run.sh: Django, SQLAlchemy and Alembic,
#	                                ActiveRecord, knex, TypeORM, drizzle,
#	                                Go's pgx, Java's JDBC and Jackson, and
#	                                PHP's PDO and pgsql, each the way its
#	                                users run it, on such a cluster
#	monitoring test/monitoring/run.sh: Debian's prometheus-postgres-exporter
#	                                with monitoring/idgen-queries.yaml as a
#	                                pg_monitor role, scraped, and promtool
#	                                on monitoring/idgen-alerts.yml, on a
#	                                cluster of its own
#	citus      prove                t/citus/*.pl: a Citus coordinator and
#	                                workers; skipped when Citus is not
#	                                installed for this server (scripts/citus.sh
#	                                builds it)
#	nemesis    prove                t/nemesis/*.pl: servers minting under a
#	                                seeded nemesis, every acknowledged ID
#	                                counted (IDGEN_NEMESIS_SEEDS, _SECONDS,
#	                                _SERVERS; scripts/nemesis.sh)
#	poolers    test/poolers/run.sh: clients minting through Debian's
#	                                pgbouncer in transaction pooling, every
#	                                acknowledged ID counted, and idgen's
#	                                settings through each pooling mode, on a
#	                                cluster of its own (IDGEN_POOLER_CLIENTS,
#	                                _ROUNDS, _POOL)
#	analyze    scripts/analyze.sh   clang's scan-build over a clean
#	                                copy of the tree, zero reports; only
#	                                when IDGEN_SUITES names it
# Every suite runs even when an earlier one fails; failures print their diffs
# and log tails, and the exit status is non-zero if any suite failed.
#
# Environment:
#	IDGEN_SUITES="regress tap"   run only these suites
#	IDGEN_SKIP_SETUP=1           do not run scripts/setup.sh (already built;
#	                             nothing is compiled, so no -Werror either)
#	IDGEN_TEST_PACKAGE=1         test the installed package postgresql-N-idgen
#	                             instead of a build of this tree (no setup,
#	                             no build; debian/tests does this)
#	IDGEN_KEEP=1                 keep the work tree and cluster (a failed run
#	                             keeps the work tree anyway, and says where)
#	PROVE_TESTS="t/010_x.pl"     run only these perl TAP files
#	PROVE_FLAGS="--verbose"      extra flags for prove
#	IDGEN_TAP_JOBS=4             TAP files run at once (prove -j): each
#	                             file's nodes have their own ports and
#	                             directories, and most of a file's time is
#	                             spent waiting, not computing

set -euo pipefail

IDGEN_PROG="test"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

if [ "${IDGEN_SKIP_SETUP:-0}" != 1 ] && [ "${IDGEN_TEST_PACKAGE:-0}" != 1 ]; then
	# Warnings are errors here, as in CI (a plain make only warns, on any
	# compiler); setup.sh builds the whole tree again when its objects were
	# made without these flags.  -Wextra adds sign-compare, clobbered,
	# type-limits, empty-body and more to PostgreSQL's own -Wall set, less
	# -Wunused-parameter: PostgreSQL fixes the parameters of what idgen
	# implements (PG_FUNCTION_ARGS, a GUC hook's extra and source, an exit
	# callback's code and arg, SIGNAL_ARGS), which idgen need not use, and
	# its own build leaves the warning out for the same reason.
	for flag in -Wextra -Wno-unused-parameter -Werror; do
		case " ${PG_CFLAGS:-} " in
			*" $flag "*) ;;
			*) PG_CFLAGS="${PG_CFLAGS:+$PG_CFLAGS }$flag" ;;
		esac
	done
	export PG_CFLAGS
	setup_started=$SECONDS
	if ! bash "$here/setup.sh"; then
		echo
		echo "idgen tests: FAILED (setup: packages or build failed, no suite ran)"
		exit 1
	fi
	# src/ has no loop of includes and calls, and keeps the map's order
	# (doc/design.md, "Where things live")
	if ! /usr/bin/python3 "$here/src_graph.py"; then
		echo
		echo "idgen tests: FAILED (src/ has a loop or breaks the map's order, no suite ran)"
		exit 1
	fi
	idgen_log "setup took $((SECONDS - setup_started)) s"
fi

# The servers the suites start load $libdir/idgen and the extension's
# scripts from the server's share directory, whatever is there: make sure
# that is what this tree built (or, with IDGEN_TEST_PACKAGE=1, what the
# package postgresql-N-idgen installed), never an idgen left there by
# something else, before the suites and after them.
check_installed()
{
	local pkglibdir sharedir lib f name
	pkglibdir=$("$PG_CONFIG" --pkglibdir)
	sharedir=$("$PG_CONFIG" --sharedir)/extension
	lib=$pkglibdir/idgen.so
	[ -f "$lib" ] || {
		idgen_warn "$lib does not exist: idgen is not installed for $PG_CONFIG"
		return 1
	}
	if [ "${IDGEN_TEST_PACKAGE:-0}" = 1 ]; then
		bash "$IDGEN_ROOT/debian/tests/check-installed" \
			"$("$PG_CONFIG" --version | sed -E 's/^[^0-9]*([0-9]+).*/\1/')"
		return
	fi
	[ -f "$IDGEN_ROOT/idgen.so" ] || {
		idgen_warn "$IDGEN_ROOT/idgen.so does not exist: build idgen first (bash scripts/setup.sh)"
		return 1
	}
	cmp -s "$IDGEN_ROOT/idgen.so" "$lib" || {
		idgen_warn "$lib is not this tree's build: run make install as a user that can write it"
		return 1
	}
	# every installed script is one of this tree's, unchanged: a stale one
	# (a version this tree no longer ships) could be what CREATE EXTENSION runs
	for f in "$sharedir"/idgen.control "$sharedir"/idgen--*.sql; do
		name=${f##*/}
		if [ "$name" = idgen.control ]; then
			cmp -s "$IDGEN_ROOT/idgen.control" "$f"
		else
			cmp -s "$IDGEN_ROOT/sql/$name" "$f"
		fi || {
			idgen_warn "$f is not this tree's: remove it, then run make install"
			return 1
		}
	done
	idgen_log "testing this tree's build, installed in $pkglibdir"
}

if ! check_installed; then
	echo
	echo "idgen tests: FAILED (the servers would not load this tree's idgen, no suite ran)"
	exit 1
fi

read -ra suites <<<"${IDGEN_SUITES:-regress isolation tap pgtap clients frameworks poolers monitoring citus nemesis}"
# each suite's result, and the seconds it took (from its banner to the next)
declare -A result=() took=()
current_suite='' current_started=0

idgen_workcopy
work=$IDGEN_WORKDIR
# what each suite printed, for the summary (outside the tree: not an output)
outs=$(mktemp -d /tmp/idgen-test-out.XXXXXX)
idgen_on_exit rm -rf -- "$outs"
cd "$work"
idgen_log "running in $work$(idgen_is_root && echo " as $IDGEN_RUN_USER")"

wanted()
{
	case " ${suites[*]} " in *" $1 "*) return 0 ;; esac
	return 1
}

# The value of a variable of the project Makefile (REGRESS, ISOLATION, ...).
makevar()
{
	# shellcheck disable=SC2016
	make -s --no-print-directory PG_CONFIG="$PG_CONFIG" \
		--eval='idgen-print-%: ; @echo $($*)' "idgen-print-$1" 2>/dev/null
}

banner()
{
	printf '\n===== %s =====\n' "$*"
}

# suite_started SUITE: SUITE's clock starts, the one before it stops
suite_started()
{
	[ -z "$current_suite" ] || took[$current_suite]=$((SECONDS - current_started))
	current_suite=$1
	current_started=$SECONDS
	[ -z "$1" ] || banner "$1"
}

# run_make SUITE MAKE-ARGS...: one part of make installcheck, as the server user
run_make()
{
	local suite=$1
	shift
	suite_started "$suite"
	if idgen_as_user env ${INITDB_TEMPLATE:+INITDB_TEMPLATE="$INITDB_TEMPLATE"} \
		make --no-print-directory installcheck \
		PG_CONFIG="$PG_CONFIG" "$@" 2>&1 | tee "$outs/$suite.out"; then
		result[$suite]=PASS
		return 0
	fi
	result[$suite]=FAIL
	return 1
}

show_diffs()
{
	local f=$1
	[ -s "$f" ] || return 0
	printf '\n----- %s -----\n' "$f"
	head -n 400 -- "$f"
	[ "$(wc -l <"$f")" -le 400 ] || echo "... (truncated; see $f)"
}

# ---- pg_regress --------------------------------------------------------------
if wanted regress; then
	if [ -z "$(makevar REGRESS)" ]; then
		result[regress]=SKIP
	elif ! run_make regress ISOLATION= TAP_TESTS=; then
		show_diffs "$work/regression.diffs"
		idgen_tail "$work/log/postmaster.log" 40
	fi
fi

# ---- isolationtester ---------------------------------------------------------
if wanted isolation; then
	if [ -z "$(makevar ISOLATION)" ]; then
		result[isolation]=SKIP
	elif ! run_make isolation REGRESS= TAP_TESTS=; then
		show_diffs "$work/output_iso/regression.diffs"
		idgen_tail "$work/output_iso/log/postmaster.log" 40
	fi
fi

# ---- perl TAP (PostgreSQL::Test::Cluster) ------------------------------------
# The TAP suites start some 70 nodes: each copies one data directory initdb
# made here, with the settings PostgreSQL::Test::Cluster's initdb has, instead
# of running initdb again (a second of a processor each).  Clusters 17 and
# later do it themselves when INITDB_TEMPLATE is set; t/IdgenTest.pm does it
# for the older ones.
initdb_template()
{
	[ -z "${INITDB_TEMPLATE:-}" ] || return 0
	local dir=$work/.initdb-template
	idgen_as_user env -u LANGUAGE -u LC_ALL LC_MESSAGES=C \
		initdb -D "$dir" -A trust -N --no-instructions >"$outs/initdb-template.log" 2>&1 || {
		idgen_tail "$outs/initdb-template.log" 20
		return 1
	}
	export INITDB_TEMPLATE=$dir
}
if wanted tap || wanted citus || wanted nemesis; then
	initdb_template || idgen_warn "no initdb template: each TAP node runs initdb"
fi

tap_jobs=${IDGEN_TAP_JOBS:-4}
[[ $tap_jobs =~ ^[1-9][0-9]*$ ]] || idgen_die "IDGEN_TAP_JOBS must be a positive number, not '$tap_jobs'"
prove_flags="-j$tap_jobs --timer${PROVE_FLAGS:+ $PROVE_FLAGS}"
prove_args=("PROVE_FLAGS=$prove_flags")
[ -z "${PROVE_TESTS:-}" ] || prove_args+=("PROVE_TESTS=$PROVE_TESTS")
if wanted tap; then
	if ! perl -MIPC::Run -e 1 2>/dev/null; then
		# this command installs what the suites need: a skip here would hide it
		idgen_warn "perl's IPC::Run is not installed (libipc-run-perl): the TAP suite cannot run"
		result[tap]=FAIL
	elif [ -z "$(makevar TAP_TESTS)" ] || ! compgen -G 't/*.pl' >/dev/null; then
		result[tap]=SKIP
	elif ! run_make tap REGRESS= ISOLATION= "${prove_args[@]}"; then
		# prove's "Test Summary Report" names the files that failed
		mapfile -t failed_t < <(sed -n '/^Test Summary Report/,$p' "$outs/tap.out" |
			grep -oE '^t/[^ ]+\.pl' | sort -u || true)
		if [ ${#failed_t[@]} -gt 0 ]; then
			result[tap]="FAIL (${failed_t[*]})"
			for t in "${failed_t[@]}"; do
				t=$(basename "$t" .pl)
				idgen_tail "$work/tmp_check/log/regress_log_$t" 60
				for f in "$work/tmp_check/log/${t}"_*.log; do
					idgen_tail "$f" 20
				done
			done
		else
			for f in "$work"/tmp_check/log/*; do
				idgen_tail "$f" 40
			done
		fi
	fi
fi

# ---- idgen on Citus (perl TAP) ----------------------------------------------
if wanted citus; then
	if ! compgen -G 't/citus/*.pl' >/dev/null; then
		result[citus]=SKIP
	elif [ ! -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ]; then
		idgen_log "citus: Citus is not installed for $PG_CONFIG (bash scripts/citus.sh builds it): skipped"
		result[citus]=SKIP
	else
		# PROVE_TESTS picks files of this suite only when it names some
		citus_tests='t/citus/*.pl'
		case " ${PROVE_TESTS:-} " in *" t/citus/"*) citus_tests=$PROVE_TESTS ;; esac
		citus_args=("PROVE_TESTS=$citus_tests" "PROVE_FLAGS=$prove_flags")
		if ! run_make citus REGRESS= ISOLATION= "${citus_args[@]}"; then
			result[citus]=FAIL
			for f in "$work"/tmp_check/log/regress_log_*; do
				idgen_tail "$f" 60
			done
		fi
	fi
fi

# ---- uniqueness under a nemesis (perl TAP) -----------------------------------
if wanted nemesis; then
	if ! compgen -G 't/nemesis/*.pl' >/dev/null; then
		result[nemesis]=SKIP
	elif ! run_make nemesis REGRESS= ISOLATION= "PROVE_TESTS=t/nemesis/*.pl" \
		"PROVE_FLAGS=--timer${PROVE_FLAGS:+ $PROVE_FLAGS}"; then
		result[nemesis]=FAIL
		for f in "$work"/tmp_check/log/regress_log_*; do
			idgen_tail "$f" 80
		done
	fi
fi

# ---- suites on a cluster of this script's ------------------------------------
# conf: the lines of test/idgen.conf, the settings every suite's server gets
read_test_conf()
{
	local line
	conf=()
	[ -f test/idgen.conf ] || return 0
	while IFS= read -r line || [ -n "$line" ]; do
		conf+=("$line")
	done <test/idgen.conf
}

# run_cluster_suite SUITE FUNCTION: FUNCTION in a subshell, whose exit hook
# stops its cluster whatever happens; its output kept for the summary
run_cluster_suite()
{
	suite_started "$1"
	if ("$2") 2>&1 | tee "$outs/$1.out"; then	# pipefail: the status of FUNCTION
		result[$1]=PASS
	else
		result[$1]=FAIL
	fi
}

# ---- pgTAP -------------------------------------------------------------------
run_pgtap()
{
	idgen_on_exit_reset	# this subshell cleans up its cluster only
	read_test_conf
	idgen_cluster_start "" "${conf[@]}" || return 1
	if idgen_psql -q -d postgres -c 'CREATE DATABASE idgen_pgtap' &&
		idgen_psql -q -d idgen_pgtap \
			-c 'CREATE EXTENSION pgtap' -c 'CREATE EXTENSION idgen' &&
		pg_prove -h "$PGHOST" -p "$PGPORT" -U postgres -d idgen_pgtap \
			test/*.sql; then
		return 0
	fi
	idgen_tail "$IDGEN_PGLOG" 40
	return 1
}

if wanted pgtap; then
	if ! compgen -G 'test/*.sql' >/dev/null; then
		result[pgtap]=SKIP
	else
		run_cluster_suite pgtap run_pgtap
	fi
fi

# ---- client libraries -------------------------------------------------------
# Debian's interpreter: a python3 earlier in PATH (pyenv) lacks its psycopg
client_python=/usr/bin/python3

# on_idgen_cluster CMD...: CMD against a throwaway cluster of test/idgen.conf
# (and the lines of the array cluster_conf, when set) with idgen created in
# its database, in a subshell (run_cluster_suite) whose exit hook stops the
# cluster; the server log's tail if CMD fails
cluster_conf=()
on_idgen_cluster()
{
	idgen_on_exit_reset	# this subshell cleans up its cluster only
	read_test_conf
	idgen_cluster_start "" "${conf[@]}" "${cluster_conf[@]}" || return 1
	if idgen_psql -q -d postgres -c 'CREATE EXTENSION idgen' && "$@"; then
		return 0
	fi
	idgen_tail "$IDGEN_PGLOG" 40
	return 1
}

# as_client CMD...: CMD as the server user, connected to the cluster
as_client()
{
	idgen_as_user env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
		PGDATABASE="$PGDATABASE" "$@"
}

client_tests()
{
	(cd test/clients &&
		as_client node --test --test-reporter=tap &&
		as_client "$client_python" -m unittest -v test_psycopg)
}

run_clients()
{
	command -v node >/dev/null 2>&1 ||
		{ idgen_warn "node not found: install nodejs (scripts/setup.sh does)"; return 1; }
	command -v npm >/dev/null 2>&1 ||
		{ idgen_warn "npm not found: install npm (scripts/setup.sh does)"; return 1; }
	"$client_python" -c 'import psycopg' 2>/dev/null ||
		{ idgen_warn "$client_python cannot import psycopg: install python3-psycopg (scripts/setup.sh does)"; return 1; }
	# npm's cache inside the work tree: the server user's HOME may not be writable
	(cd test/clients && idgen_as_user env npm_config_cache="$work/.npm-cache" \
		npm ci --no-audit --no-fund --loglevel=error) || return 1
	on_idgen_cluster client_tests
}

if wanted clients; then
	if [ ! -f test/clients/package.json ]; then
		result[clients]=SKIP
	else
		run_cluster_suite clients run_clients
	fi
fi

# ---- frameworks ---------------------------------------------------------------
# Each framework the way its users run it, against a cluster of this script's
# with idgen created in its database: test/frameworks/run.sh.  The cluster
# listens on 127.0.0.1 too (its free port), for Java's pgjdbc, which has no
# unix sockets.
run_frameworks()
{
	cluster_conf=("listen_addresses = '127.0.0.1'")
	on_idgen_cluster as_client IDGEN_PYTHON="$client_python" \
		npm_config_cache="$work/.npm-cache" bash test/frameworks/run.sh
}

if wanted frameworks; then
	if [ ! -f test/frameworks/run.sh ]; then
		result[frameworks]=SKIP
	else
		run_cluster_suite frameworks run_frameworks
	fi
fi

# ---- connection poolers ---------------------------------------------------------
# Debian's pgbouncer in front of a cluster test/poolers/run.sh starts itself
# (scripts/lib.sh), with the backfill lanes its clients mint on
run_poolers()
{
	bash test/poolers/run.sh
}

if wanted poolers; then
	if [ ! -f test/poolers/run.sh ]; then
		result[poolers]=SKIP
	else
		run_cluster_suite poolers run_poolers
	fi
fi

# ---- monitoring ---------------------------------------------------------------
# The exporter and promtool against a cluster the script starts itself (it
# restarts it with lanes and a lease registry): test/monitoring/run.sh
run_monitoring()
{
	idgen_on_exit_reset	# this subshell cleans up what the script starts
	bash test/monitoring/run.sh
}

if wanted monitoring; then
	if [ ! -f test/monitoring/run.sh ]; then
		result[monitoring]=SKIP
	else
		run_cluster_suite monitoring run_monitoring
	fi
fi

# ---- static analysers -------------------------------------------------------
# Not in the default set: it builds the tree again, and clang's analyser
# takes a minute or two.  The matrix runs it in one job.
if wanted analyze; then
	suite_started analyze
	if bash "$here/analyze.sh" 2>&1 | tee "$outs/analyze.out"; then
		result[analyze]=PASS
	else
		result[analyze]=FAIL
	fi
fi

suite_started ""

# ---- the idgen under test, again ---------------------------------------------
# Servers load idgen.so afresh all along: it must not have changed under them
# (a make install or a package install while the suites ran).
still_installed=1
if ! check_installed >/dev/null; then
	idgen_warn "the installed idgen changed while the suites ran: the results say nothing about this tree"
	still_installed=0
fi

# ---- summary -----------------------------------------------------------------

# How many tests a suite ran, from what its runner printed: pg_regress says
# "All 3 tests passed." or "1 of 3 tests failed." (with "# " before it since
# PostgreSQL 16), prove and pg_prove say "Files=6, Tests=290"; for clients,
# node --test (its TAP reporter, asked for: newer nodes default to another)
# says "# tests 21", unittest "Ran 9 tests" and minitest "1 runs", summed
# (test/poolers/run.sh and test/monitoring/run.sh say "# tests N" too).
tests_run()
{
	local out=$outs/$1.out n
	[ -f "$out" ] || return 0
	if [ "$1" = clients ] || [ "$1" = frameworks ] || [ "$1" = poolers ] ||
		[ "$1" = monitoring ]; then
		n=$(grep -oE '^# tests [0-9]+|^Ran [0-9]+ tests?|^[0-9]+ runs,' "$out" |
			grep -oE '[0-9]+' | awk '{ s += $1 } END { if (NR) print s }' || true)
	else
		n=$(grep -oE 'All [0-9]+ tests passed|of [0-9]+ tests failed|Tests=[0-9]+' "$out" |
			grep -oE '[0-9]+' | tail -n 1 || true)
	fi
	case $n in
		'') ;;
		1) printf '1 test' ;;
		*) printf '%s tests' "$n" ;;
	esac
}

banner "summary: PostgreSQL $("$PG_CONFIG" --version | sed -E 's/^[^0-9]*//')"
pass=0 fail=0 skip=0
for s in "${suites[@]}"; do
	r=${result[$s]:-SKIP}
	case $r in
		PASS) pass=$((pass + 1)) ;;
		FAIL*) fail=$((fail + 1)) ;;
		*) skip=$((skip + 1)) ;;
	esac
	printf '  %-10s %-6s %-12s %s\n' "$s" "$r" "$(tests_run "$s")" \
		"${took[$s]:+${took[$s]} s}"
done
if [ "$still_installed" = 0 ]; then
	printf '  %-10s %-6s %s\n' installed FAIL "(changed during the run)"
	fail=$((fail + 1))
fi
if [ "$fail" -gt 0 ] && [ "$work" != "$IDGEN_ROOT" ]; then
	IDGEN_KEEP=1		# keep the evidence
	echo "  outputs and logs kept in $work"
fi
echo
# the closing line: suites passed and failed, in the form CI reads
if [ "$fail" -gt 0 ]; then
	echo "idgen tests FAILED"
	echo "suites: $pass passed, $fail failed, $skip skipped"
	exit 1
fi
echo "idgen tests OK"
echo "suites: $pass passed, $fail failed, $skip skipped"
