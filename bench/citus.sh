#!/usr/bin/env bash
#
# bench/citus.sh: inserts on Citus, DEFAULT idgen_next() against bigserial,
# through the coordinator and through the workers.
#
#   bash bench/citus.sh            about 3 minutes on 2 cores
#   BENCH_SECONDS=3 bash bench/citus.sh
#
# Needs Citus installed for the server (bash scripts/citus.sh builds it) and
# idgen installed (bash scripts/setup.sh).  As root, it runs the servers as
# the postgres user.  It starts a coordinator and two workers, each with
# shared_preload_libraries = 'citus,idgen' and a shard of its own, on
# 127.0.0.1, in a temporary directory removed at the end, and two tables
# distributed by id:
#
#   ids_idgen   (id bigint PRIMARY KEY DEFAULT idgen_next(), v integer)
#   ids_serial  (id bigserial PRIMARY KEY, v integer)
#
# Then pgbench (-M prepared, BENCH_CLIENTS clients per node) inserts into each
# in turn, one row per statement and 100 rows per statement, through the
# coordinator alone and through both workers at once, for BENCH_SECONDS each,
# BENCH_ROUNDS times.  It prints the median rows per second of each and the
# ratio idgen / bigserial: figures of this machine, not a test (nothing
# fails on a slow one).

set -euo pipefail

IDGEN_PROG="bench-citus"
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

seconds=${BENCH_SECONDS:-8}
rounds=${BENCH_ROUNDS:-3}
clients=${BENCH_CLIENTS:-4}

[ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] ||
	idgen_die "Citus is not installed for $PG_CONFIG: bash scripts/citus.sh builds it"
[ -f "$("$PG_CONFIG" --pkglibdir)/idgen.so" ] ||
	idgen_die "idgen is not installed for $PG_CONFIG: bash scripts/setup.sh"
command -v pgbench >/dev/null || idgen_die "pgbench not found in $PG_BINDIR"

dir=$(mktemp -d /tmp/idgen-bench-citus.XXXXXX)
idgen_is_root && chown "$IDGEN_RUN_USER:" "$dir"
names=(coordinator worker1 worker2)
declare -A port=()

stop_all()
{
	local n
	for n in "${names[@]}"; do
		[ -f "$dir/$n/postmaster.pid" ] &&
			idgen_as_user pg_ctl -D "$dir/$n" -m fast -w stop >/dev/null 2>&1
	done
	rm -rf -- "$dir"
}
idgen_on_exit stop_all

shard=0
for n in "${names[@]}"; do
	shard=$((shard + 1))
	port[$n]=$(_idgen_free_port)
	idgen_as_user initdb -D "$dir/$n" -U postgres -A trust --no-locale -E UTF8 >/dev/null
	cat >>"$dir/$n/postgresql.conf" <<-EOT
		listen_addresses = '127.0.0.1'
		unix_socket_directories = '$dir'
		port = ${port[$n]}
		shared_preload_libraries = 'citus,idgen'
		idgen.shard_id = $shard
		citus.shard_count = 8
		max_connections = 200
		shared_buffers = 128MB
		synchronous_commit = off
	EOT
	idgen_as_user pg_ctl -D "$dir/$n" -l "$dir/$n.log" -w start >/dev/null
	idgen_psql -q -h "$dir" -p "${port[$n]}" -U postgres -d postgres -c 'CREATE EXTENSION citus'
done

sql()
{
	idgen_psql -qAt -h "$dir" -p "${port[coordinator]}" -U postgres -d postgres "$@"
}
sql -c "SELECT citus_set_coordinator_host('127.0.0.1', ${port[coordinator]})" >/dev/null
for n in worker1 worker2; do
	sql -c "SELECT citus_add_node('127.0.0.1', ${port[$n]})" >/dev/null
done
sql -c 'CREATE EXTENSION idgen' \
	-c 'CREATE TABLE ids_idgen (id bigint PRIMARY KEY DEFAULT idgen_next(), v integer)' \
	-c "SELECT create_distributed_table('ids_idgen', 'id')" \
	-c 'CREATE TABLE ids_serial (id bigserial PRIMARY KEY, v integer)' \
	-c "SELECT create_distributed_table('ids_serial', 'id')" >/dev/null

for t in idgen serial; do
	echo "INSERT INTO ids_$t (v) VALUES (1);" >"$dir/one_$t.sql"
	echo "INSERT INTO ids_$t (v) SELECT g FROM generate_series(1, 100) AS g;" >"$dir/hundred_$t.sql"
done
chown -R "$IDGEN_RUN_USER:" "$dir" 2>/dev/null || true

# run_one SCRIPT ROWS NODE...: rows per second of SCRIPT on the nodes at once
run_one()
{
	local script=$1 rows=$2 n pids=() total=0 tps
	shift 2
	for n in "$@"; do
		idgen_as_user pgbench -n -M prepared -c "$clients" -j "$clients" -T "$seconds" \
			-h "$dir" -p "${port[$n]}" -U postgres -f "$dir/$script.sql" postgres \
			>"$dir/$script.$n.out" 2>&1 &
		pids+=($!)
	done
	for n in "${pids[@]}"; do
		wait "$n" || { cat "$dir/$script".*.out >&2; idgen_die "pgbench failed"; }
	done
	for n in "$@"; do
		tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$dir/$script.$n.out")
		total=$(awk -v a="$total" -v b="$tps" -v r="$rows" 'BEGIN { printf "%.0f", a + b * r }')
	done
	echo "$total"
}

median()
{
	tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

idgen_log "$rounds rounds of $seconds s each, $clients clients per node, on $(nproc) cores"
printf '\n| inserts through | rows per statement | DEFAULT idgen_next() rows/s | bigserial rows/s | idgen / bigserial |\n'
printf '|---|---|---|---|---|\n'
for via in coordinator workers; do
	nodes=(coordinator)
	[ "$via" = workers ] && nodes=(worker1 worker2)
	for kind in one hundred; do
		rows=1
		[ "$kind" = hundred ] && rows=100
		declare -A samples=([idgen]="" [serial]="")
		for ((r = 0; r < rounds; r++)); do
			# the two take turns, the first one alternating
			order=(idgen serial)
			[ $((r % 2)) -eq 1 ] && order=(serial idgen)
			for t in "${order[@]}"; do
				samples[$t]+=" $(run_one "${kind}_$t" "$rows" "${nodes[@]}")"
			done
		done
		a=$(median <<<"${samples[idgen]# }")
		b=$(median <<<"${samples[serial]# }")
		printf '| %s | %s | %s | %s | %s |\n' "$via" "$rows" "$a" "$b" \
			"$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
	done
done
# every row landed, each ID once
dups=$(sql -c 'SELECT (SELECT count(*) - count(DISTINCT id) FROM ids_idgen) + (SELECT count(*) - count(DISTINCT id) FROM ids_serial)')
[ "$dups" = 0 ] || idgen_die "$dups duplicate IDs"
