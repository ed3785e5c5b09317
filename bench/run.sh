#!/usr/bin/env bash
#
# bench/run.sh: benchmark idgen_next() against the usual ways to make IDs.
#
#   bash bench/run.sh            full run (about 9 minutes on 2 cores)
#   bash bench/run.sh --quick    smoke run (about a minute); results stay in bench/out/
#
# Run as root on a fresh machine, it first calls scripts/setup.sh (packages,
# build, install).  It then starts a throwaway cluster as the postgres user
# (initdb refuses root) with idgen preloaded, its unix socket in a temporary
# directory and no TCP port, and measures:
#
#   bulk       SELECT count(f) FROM generate_series(1, N): ns per call above
#              the bare count(*) floor
#   select     pgbench "SELECT f", -M prepared, at 1, 2, 8 and 32 clients: TPS
#   insert     INSERT ... SELECT of N rows into a table whose primary key
#              defaults to f: time, rows/s, table and index size
#   pgins      pgbench single-row INSERTs at 8 clients: TPS, bytes per row
#   small      the insert test again with shared_buffers = 16MB and enough rows
#              that the random-UUID index is many times bigger than that
#   capacity   one statement minting 10 million idgen IDs: elapsed, lead, waits
#
# Every measurement is repeated; within a repetition the generators take
# turns (round robin, the starting one rotating) so drift hits all alike.
# The report gives medians with min..max.  It prints a markdown report and
# writes it, a CSV of the same figures, the raw samples and a PNG chart to
# bench/out/; a full run also copies the report, CSV and chart to
# bench/results.md, bench/results.csv and bench/throughput.png.
#
# Options (also settable through the BENCH_* variables below):
#   --quick          short smoke run
#   --without-idgen  measure only the alternatives (when idgen is not built)
#   --no-setup       do not call scripts/setup.sh (nor build and install)
#   --keep           leave the cluster's directory behind (it is printed)
#
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$bench_dir")
out=$bench_dir/out

quick=0
with_idgen=1
do_setup=1
keep=0
for arg in "$@"; do
	case $arg in
		--quick) quick=1 ;;
		--without-idgen) with_idgen=0 ;;
		--no-setup) do_setup=0 ;;
		--keep) keep=1 ;;
		-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "run.sh: unknown option \"$arg\" (try --help)" >&2; exit 2 ;;
	esac
done

# Sizes and repetitions.  The full run's figures are what the README quotes.
if [ "$quick" = 1 ]; then
	: "${BENCH_REPS:=1}"
	: "${BENCH_SELECT_REPS:=1}"
	: "${BENCH_BULK_REPS:=1}"
	: "${BENCH_BULK_N:=200000}"
	: "${BENCH_SECONDS:=1}"
	: "${BENCH_CLIENTS:=1 8}"
	: "${BENCH_INSERT_N:=100000}"
	: "${BENCH_SMALL_N:=300000}"
	: "${BENCH_CAPACITY_N:=2000000}"
else
	: "${BENCH_REPS:=3}"				# repetitions of every measurement...
	: "${BENCH_SELECT_REPS:=5}"		# ...but pgbench SELECT, the noisiest,
	: "${BENCH_BULK_REPS:=7}"			# and bulk, the cheapest
	: "${BENCH_BULK_N:=1000000}"		# rows per bulk statement (see max_lead below)
	: "${BENCH_SECONDS:=2}"			# pgbench -T for each run
	: "${BENCH_CLIENTS:=1 2 8 32}"	# pgbench client counts for SELECT f
	: "${BENCH_INSERT_N:=1000000}"	# rows per INSERT ... SELECT
	: "${BENCH_SMALL_N:=3000000}"		# rows per INSERT ... SELECT at 16MB shared_buffers
	: "${BENCH_CAPACITY_N:=10000000}"	# IDs minted by the capacity statement
fi
: "${BENCH_INSERT_CLIENTS:=8}"
: "${BENCH_SMALL_SHARED_BUFFERS:=16MB}"
: "${BENCH_PORT:=54329}"

log() { printf '[%4ds] %s\n' "$SECONDS" "$*" >&2; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------
# Packages, build, install; the cluster helpers

# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"
IDGEN_PROG=bench
[ "$keep" = 1 ] && export IDGEN_KEEP=1

if [ "$do_setup" = 1 ]; then
	log "scripts/setup.sh: packages, build, install"
	bash "$repo/scripts/setup.sh" >&2
fi
for tool in initdb pg_ctl postgres psql pgbench; do
	[ -x "$PG_BINDIR/$tool" ] || die "$PG_BINDIR/$tool not found (install postgresql-15)"
done
command -v python3 >/dev/null || die "python3 not found"
if [ "$with_idgen" = 1 ] && [ ! -f "$("$PG_CONFIG" --pkglibdir)/idgen.so" ]; then
	die "idgen is not installed in $("$PG_CONFIG" --pkglibdir) (run make install, or use --without-idgen)"
fi

# ---------------------------------------------------------------------------
# A throwaway cluster (scripts/lib.sh: run by the postgres user, unix socket
# in a temporary directory, no TCP, idgen preloaded; removed at exit)

# The settings every test runs with; printed in the report.
shared_buffers=128MB
settings=(
	"shared_buffers = $shared_buffers"
	"fsync = on"
	"synchronous_commit = on"
	"full_page_writes = on"
	"wal_level = replica"
	"max_wal_size = 8GB"			# no checkpoint in the middle of a run:
	"checkpoint_timeout = 1h"		# run.sh checkpoints before each insert run
	"autovacuum = off"				# no background work between the runs
	"jit = off"						# PL/pgSQL's cost would switch JIT on for some only
	"max_parallel_workers_per_gather = 0"
	"max_connections = 100"
)
if [ "$with_idgen" = 1 ]; then
	settings=("shared_preload_libraries = 'idgen'" "idgen.max_lead = 1000" "${settings[@]}")
else
	settings=("shared_preload_libraries = ''" "${settings[@]}")
fi

log "starting a throwaway cluster"
idgen_cluster_start "" "${settings[@]}"
export PGOPTIONS='-c client_min_messages=warning'
psql() { "$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
pgbench() { "$PG_BINDIR/pgbench" "$@"; }

psql -c 'CREATE DATABASE bench'
export PGDATABASE=bench
psql -v with_idgen="$([ "$with_idgen" = 1 ] && echo on || echo off)" -f "$bench_dir/generators.sql"

# ---------------------------------------------------------------------------
# Output files

rm -rf "$out"
work=$out/work		# pgbench scripts and scratch files
mkdir -p "$out/logs" "$work"
samples=$out/samples.csv
meta=$out/meta.csv
echo 'test,generator,clients,rep,metric,value' >"$samples"
echo 'key,value' >"$meta"

sample() {	# sample TEST GENERATOR CLIENTS REP METRIC VALUE
	[ -n "$6" ] || die "empty measurement for $*"
	printf '%s,%s,%s,%s,%s,%s\n' "$@" >>"$samples"
}
meta() {	# meta KEY VALUE...
	local k=$1
	shift
	printf '%s,"%s"\n' "$k" "$(printf '%s' "$*" | sed 's/"/""/g')" >>"$meta"
}

# ---------------------------------------------------------------------------
# The generators: key, label, SQL expression, type of the ID

gen_keys=(idgen seq1 seq100 uuid4 uuid7 insta clock)
declare -A gen_label=(
	[idgen]='idgen_next()'
	[seq1]='nextval(), CACHE 1 (bigserial)'
	[seq100]='nextval(), CACHE 100'
	[uuid4]='gen_random_uuid()'
	[uuid7]='UUIDv7 in SQL'
	[insta]='Instagram next_id() in PL/pgSQL'
	[clock]='clock_timestamp() (floor)'
	[floor]='bare count(*) (floor)'
	[idgen_n]='idgen_next_n(1000), per ID'
	[block_floor]='blocks of 1000 bare rows (floor of idgen_next_n)'
)
declare -A gen_expr=(
	[idgen]='idgen_next()'
	[seq1]="nextval('bench_seq1')"
	[seq100]="nextval('bench_seq100')"
	[uuid4]='gen_random_uuid()'
	[uuid7]='bench_uuidv7()'
	[insta]='bench_instagram_id()'
	[clock]='clock_timestamp()'
)
declare -A gen_type=(
	[idgen]=bigint [seq1]=bigint [seq100]=bigint [insta]=bigint
	[uuid4]=uuid [uuid7]=uuid [clock]=timestamptz
)
# measured in bulk only: blocks of IDs, not one expression per row
bulk_only_keys=(idgen_n block_floor)
if [ "$with_idgen" = 0 ]; then
	gen_keys=("${gen_keys[@]:1}")
	bulk_only_keys=()
fi
has_gen() { local g; for g in "${gen_keys[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
only_known() { local g; for g in "$@"; do has_gen "$g" && printf '%s ' "$g"; done; }

{
	echo 'key,label,expr,type'
	for g in "${gen_keys[@]}" "${bulk_only_keys[@]}" floor; do
		printf '%s,"%s","%s",%s\n' "$g" "${gen_label[$g]}" "$(printf '%s' "${gen_expr[$g]:-count(*)}" | sed 's/"/""/g')" "${gen_type[$g]:-}"
	done
} >"$out/generators.csv"

rotate() {	# rotate N WORD...: the words, starting at the N-th (mod count)
	local n=$1
	shift
	local a=("$@") i
	for ((i = 0; i < ${#a[@]}; i++)); do
		printf '%s ' "${a[$(((i + n) % ${#a[@]}))]}"
	done
}

# Time one SQL statement on the client side (round trip and commit
# included: far below a millisecond beside statements of 100 ms and more).
timed() {	# timed SQL -> seconds
	psql -c '\timing on' -c "$1" | awk '/^Time: /{ms = $2} END {if (ms == "") exit 1; printf "%.6f\n", ms / 1000}'
}

# Before each idgen run: let the generator's lead over the wall clock drain.
drain() {
	case $1 in idgen|idgen_n) ;; *) return 0 ;; esac
	psql -c 'SELECT bench_idgen_drain(0, 10)' >/dev/null
}

# idgen's counters around each test, to show the waits.
stats_snapshot() {	# stats_snapshot TEST before|after
	[ "$with_idgen" = 1 ] || return 0
	psql -c "INSERT INTO bench_idgen_stats SELECT '$1', '$2', clock_timestamp(), s.* FROM idgen_stats s"
}
if [ "$with_idgen" = 1 ]; then
	psql -c 'CREATE TABLE bench_idgen_stats AS
		SELECT NULL::text AS test, NULL::text AS at, NULL::timestamptz AS ts, s.*
		FROM idgen_stats s WITH NO DATA'
fi

pgbench_tps() {	# pgbench_tps LOGNAME CLIENTS SCRIPT -> TPS
	local name=$1 c=$2 script=$3 j=$2 log=$out/logs/$1.log
	[ "$j" -gt 2 ] && j=2
	if ! pgbench -n -M prepared -c "$c" -j "$j" -T "$BENCH_SECONDS" -f "$script" >"$log" 2>&1; then
		cat "$log" >&2
		die "pgbench failed ($name)"
	fi
	if grep -q '^number of failed transactions: [1-9]' "$log"; then
		cat "$log" >&2
		die "pgbench: failed transactions ($name)"
	fi
	awk '/^tps = /{print $3; found = 1; exit} END {if (!found) exit 1}' "$log" ||
		die "no tps in $log"
}

# ---------------------------------------------------------------------------
# The run's facts

# How busy the CPUs are without us (before the first test): other work on
# the machine makes every figure noisier.
cpu_busy() {
	local a b
	a=$(awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6}' /proc/stat)
	sleep 2
	b=$(awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6}' /proc/stat)
	echo "$a $b" | awk '{busy = $3 - $1; idle = $4 - $2; printf "%.0f\n", 100 * busy / (busy + idle)}'
}

meta mode "$([ "$quick" = 1 ] && echo 'quick smoke run: small sizes, 1 repetition, not for quoting' || echo 'full run')"
meta date "$(date -u '+%Y-%m-%d %H:%M UTC')"
meta cpu "$(nproc) x $(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo)"
meta memory "$(awk '/^MemTotal/{printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
meta os "$(. /etc/os-release && echo "$PRETTY_NAME") $(uname -r)"
meta postgres "$(psql -c 'SHOW server_version')"
meta idgen "$([ "$with_idgen" = 1 ] && psql -c "SELECT extversion FROM pg_extension WHERE extname = 'idgen'" || echo 'not measured (--without-idgen)')"
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo 'no commit yet')
if [ -n "$(git -C "$repo" status --porcelain -- . ':!bench' 2>/dev/null)" ]; then
	commit="$commit + uncommitted changes"
fi
meta commit "$commit"
meta settings "$(printf '%s; ' "${settings[@]%%#*}" | sed 's/  *;/;/g')"
meta reps "$BENCH_REPS"
meta select_reps "$BENCH_SELECT_REPS"
meta bulk_reps "$BENCH_BULK_REPS"
meta busy_before "$(cpu_busy)"
meta bulk_n "$BENCH_BULK_N"
meta seconds "$BENCH_SECONDS"
meta clients "$BENCH_CLIENTS"
meta insert_n "$BENCH_INSERT_N"
meta insert_clients "$BENCH_INSERT_CLIENTS"
meta small_n "$BENCH_SMALL_N"
meta small_shared_buffers "$BENCH_SMALL_SHARED_BUFFERS"
meta capacity_n "$BENCH_CAPACITY_N"
if [ "$with_idgen" = 1 ]; then
	meta idgen_settings "$(psql -c "SELECT string_agg(name || ' = ' || setting || coalesce(unit, ''), '; ' ORDER BY name)
		FROM pg_settings WHERE name LIKE 'idgen.%'")"
fi

# ---------------------------------------------------------------------------
# 1. bulk: SELECT count(f) FROM generate_series(1, N)

bulk_sql() {
	if [ "$1" = floor ]; then
		echo "SELECT count(*) FROM generate_series(1, $2)"
	elif [ "$1" = idgen_n ]; then
		# N IDs in blocks of 1000 (k in the argument: one call per block)
		echo "SELECT count(*) FROM generate_series(1, $2 / 1000) AS k, LATERAL idgen_next_n(1000 + 0 * k)"
	elif [ "$1" = block_floor ]; then
		# the same rows, in the same shape, with no ID: idgen_n's own floor
		echo "SELECT count(*) FROM generate_series(1, $2 / 1000) AS k, LATERAL generate_series(1, 1000 + 0 * k)"
	else
		echo "SELECT count(${gen_expr[$1]}) FROM generate_series(1, $2)"
	fi
}

log "bulk: warm-up"
for g in floor "${gen_keys[@]}" "${bulk_only_keys[@]}"; do
	drain "$g"
	psql -c "$(bulk_sql "$g" $((BENCH_BULK_N / 10)))" >/dev/null
done
stats_snapshot bulk before
for ((r = 1; r <= BENCH_BULK_REPS; r++)); do
	log "bulk: repetition $r of $BENCH_BULK_REPS, N = $BENCH_BULK_N"
	for g in $(rotate "$r" floor "${gen_keys[@]}" "${bulk_only_keys[@]}"); do
		drain "$g"
		sample bulk "$g" 1 "$r" seconds "$(timed "$(bulk_sql "$g" "$BENCH_BULK_N")")"
	done
done
stats_snapshot bulk after

# ---------------------------------------------------------------------------
# 2. select: pgbench "SELECT f" at several client counts

select_gens=("${gen_keys[@]}")
for g in "${select_gens[@]}"; do
	echo "SELECT ${gen_expr[$g]};" >"$work/select_$g.sql"
done
stats_snapshot select before
for ((r = 1; r <= BENCH_SELECT_REPS; r++)); do
	for c in $BENCH_CLIENTS; do
		log "select: repetition $r of $BENCH_SELECT_REPS, $c clients"
		for g in $(rotate "$r" "${select_gens[@]}"); do
			sample select "$g" "$c" "$r" tps "$(pgbench_tps "select_${g}_c${c}_r$r" "$c" "$work/select_$g.sql")"
		done
	done
done
stats_snapshot select after

# ---------------------------------------------------------------------------
# 3. insert: INSERT ... SELECT into a table whose primary key defaults to f

make_table() {	# make_table GENERATOR: a fresh, empty ins_GENERATOR
	local g=$1 t=ins_$1
	case $g in
		seq1) psql -c "DROP TABLE IF EXISTS $t" -c "CREATE TABLE $t (id bigserial PRIMARY KEY, n integer NOT NULL)" ;;
		seq100) psql -c "DROP TABLE IF EXISTS $t" -c "CREATE TABLE $t (id bigserial PRIMARY KEY, n integer NOT NULL)" \
			-c "ALTER SEQUENCE ${t}_id_seq CACHE 100" ;;
		*) psql -c "DROP TABLE IF EXISTS $t" -c "CREATE TABLE $t (id ${gen_type[$g]} PRIMARY KEY DEFAULT ${gen_expr[$g]}, n integer NOT NULL)" ;;
	esac
}

sizes() {	# sizes TEST GENERATOR CLIENTS REP: rows and sizes of ins_GENERATOR
	local rows table index
	read -r rows table index < <(psql -F ' ' -c "SELECT count(*), pg_relation_size('ins_$2'),
		pg_relation_size('ins_$2_pkey') FROM ins_$2")
	sample "$1" "$2" "$3" "$4" rows "$rows"
	sample "$1" "$2" "$3" "$4" table_bytes "$table"
	sample "$1" "$2" "$3" "$4" index_bytes "$index"
}

insert_test() {	# insert_test TEST N GENERATOR...
	local test=$1 n=$2 r g
	shift 2
	stats_snapshot "$test" before
	for ((r = 1; r <= BENCH_REPS; r++)); do
		log "$test: repetition $r of $BENCH_REPS, INSERT ... SELECT of $n rows"
		for g in $(rotate "$r" "$@"); do
			make_table "$g"
			psql -c 'CHECKPOINT'
			drain "$g"
			sample "$test" "$g" 1 "$r" seconds "$(timed "INSERT INTO ins_$g (n) SELECT i FROM generate_series(1, $n) i")"
			sizes "$test" "$g" 1 "$r"
		done
	done
	stats_snapshot "$test" after
}

read -ra insert_gens <<<"$(only_known idgen seq1 seq100 uuid4 uuid7 insta)"
insert_test insert "$BENCH_INSERT_N" "${insert_gens[@]}"

# ---------------------------------------------------------------------------
# 4. pgins: pgbench single-row INSERTs

for g in "${insert_gens[@]}"; do
	echo "INSERT INTO ins_$g (n) VALUES (1);" >"$work/ins_$g.sql"
done
stats_snapshot pgins before
for ((r = 1; r <= BENCH_REPS; r++)); do
	log "pgins: repetition $r of $BENCH_REPS, $BENCH_INSERT_CLIENTS clients"
	for g in $(rotate "$r" "${insert_gens[@]}"); do
		make_table "$g"
		psql -c 'CHECKPOINT'
		sample pgins "$g" "$BENCH_INSERT_CLIENTS" "$r" tps \
			"$(pgbench_tps "pgins_${g}_r$r" "$BENCH_INSERT_CLIENTS" "$work/ins_$g.sql")"
		sizes pgins "$g" "$BENCH_INSERT_CLIENTS" "$r"
	done
done
stats_snapshot pgins after
for g in "${insert_gens[@]}"; do
	psql -c "DROP TABLE ins_$g"
done

# ---------------------------------------------------------------------------
# 5. capacity: one statement minting many IDs

if [ "$with_idgen" = 1 ]; then
	log "capacity: one statement minting $BENCH_CAPACITY_N IDs (at most 1,024 per ms)"
	drain idgen
	stats_snapshot capacity before
	psql -F ' ' -c '\timing on' -c "
		SELECT n, (extract(epoch FROM id_to_timestamp(m) - clock_timestamp()) * 1000)::bigint,
			(SELECT lead_ms FROM idgen_stats)
		FROM (SELECT count(id) AS n, max(id) AS m
			  FROM (SELECT idgen_next() AS id FROM generate_series(1, $BENCH_CAPACITY_N)) s) s" >"$work/capacity.out"
	stats_snapshot capacity after
	read -r n lead_from_id lead_stats <"$work/capacity.out"
	[ "$n" = "$BENCH_CAPACITY_N" ] || die "capacity: counted $n IDs"
	sample capacity idgen 1 1 seconds "$(awk '/^Time: /{printf "%.6f\n", $2 / 1000}' "$work/capacity.out")"
	sample capacity idgen 1 1 lead_from_id_ms "$lead_from_id"
	sample capacity idgen 1 1 lead_ms "$lead_stats"
fi

# ---------------------------------------------------------------------------
# 6. small: the insert test with an index far bigger than shared_buffers

log "restarting with shared_buffers = $BENCH_SMALL_SHARED_BUFFERS"
idgen_cluster_conf "shared_buffers = $BENCH_SMALL_SHARED_BUFFERS"
idgen_pg_ctl -w -t 60 -m fast -l "$IDGEN_PGLOG" restart >/dev/null
meta small_shared_buffers_bytes "$(psql -c "SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'")"
read -ra small_gens <<<"$(only_known idgen seq1 uuid4 uuid7)"
insert_test small "$BENCH_SMALL_N" "${small_gens[@]}"
for g in "${small_gens[@]}"; do
	psql -c "DROP TABLE ins_$g"
done

# ---------------------------------------------------------------------------
# idgen's counters, per test

if [ "$with_idgen" = 1 ]; then
	psql -F ' ' -c "
		SELECT a.test, m.metric, m.delta
		FROM bench_idgen_stats b
		JOIN bench_idgen_stats a ON a.test = b.test AND a.at = 'after' AND b.at = 'before',
		LATERAL (VALUES
			('minted', a.minted - b.minted),
			('waits', a.waits - b.waits),
			('wait_time_ms', a.wait_time_ms - b.wait_time_ms),
			('max_wait_errors', a.max_wait_errors - b.max_wait_errors),
			('borrowed_ms', a.borrowed_ms - b.borrowed_ms),
			('fence_waits', a.fence_waits - b.fence_waits),
			('fence_advances', a.fence_advances - b.fence_advances),
			('lead_ms_after', a.lead_ms)) m(metric, delta)
		ORDER BY a.ts" | while read -r test metric delta; do
		sample idgen_stats "$test" 1 1 "$metric" "$delta"
	done
fi

idgen_cluster_stop
meta runtime_s "$SECONDS"
log "done in ${SECONDS}s; writing the report"

# ---------------------------------------------------------------------------
# The report

python3 "$bench_dir/report.py" "$out"
if [ "$quick" = 0 ] && [ "$with_idgen" = 1 ]; then
	cp "$out/results.md" "$out/results.csv" "$bench_dir/"
	[ -f "$out/throughput.png" ] && cp "$out/throughput.png" "$bench_dir/"
	log "copied to bench/results.md, bench/results.csv, bench/throughput.png"
fi
