#!/usr/bin/env bash
#
# bench/backfill.sh: what minting for a given time costs next to minting
# now.  On a throwaway preloaded cluster of this machine's PostgreSQL with
# 16 backfill lanes, it times, 5 times each and interleaved,
#
#   SELECT count(f) FROM generate_series(1, N) AS g
#
# for f = nothing, idgen_next(), idgen_next_at(t) with one time
# for every row, idgen_next_at(t0 + g ms) (an import sweeping forward, a
# row a millisecond), and blocks: idgen_next_n(1000) against
# idgen_next_at_n(t, 1000), and late events: BACKFILL_N / 5 times spread
# over an hour in a scrambled order (hashint8(g) mod 3,600,000 ms), below a
# cursor already there, as events arrive when they come late.  Single IDs are timed against the same
# statement without the mint (the times' arithmetic), blocks whole; it
# prints ns per ID (medians) and each one's ratio to idgen_next() or
# idgen_next_n() of the same run.  Then the server restarts as its own
# lease registry, and the same forms are timed again, each against itself
# without a registry: what leasing the lanes costs.
#
#   bash bench/backfill.sh            (as root, after the README's setup)
#
# Environment: BACKFILL_N (rows per statement, 1000000), PG_CONFIG.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"
IDGEN_PROG=backfill-bench

n=${BACKFILL_N:-1000000}
idgen_is_root || idgen_die "run as root: it installs this tree into $PG_CONFIG's server"
make -s -C "$repo" install PG_CONFIG="$PG_CONFIG" >/dev/null

work=$(mktemp -d /tmp/idgen-backfill.XXXXXX)
idgen_on_exit rm -rf -- "$work"
# a long max_lead and max_wait: a statement never waits for the clock
idgen_cluster_start "" "idgen.max_lead = '60s'
idgen.max_wait = '60s'
idgen.backfill_shards = '1000-1015'" >/dev/null
idgen_on_exit idgen_cluster_stop

blocks=$((n / 1000))
# late events: each repetition an hour of its own, within the counts
late=$((n / 5))
# One pass of every form, 5 repetitions, into $2; $1 days before the first
# pass's times, so that the second pass finds its milliseconds unused.
measure()
{
	local back=$1 out=$2
	idgen_psql -qAt <<-EOF 2>&1 | tee -a "$work/psql.log" | sed -n 's/^NOTICE:  \([a-z_]*\) \([0-9.]*\)$/\1 \2/p' >"$out"
	CREATE EXTENSION IF NOT EXISTS idgen;
	SELECT idgen_lanes_init();
	DO \$\$
	DECLARE
		t0 timestamptz;
		-- each repetition its own times: a lane gives a millisecond once
		base timestamptz := date_trunc('day', now()) - interval '200 days' - interval '$back days';
		at timestamptz;
	BEGIN
		FOR rep IN 1..5 LOOP
			at := base + rep * interval '10 days';
			t0 := clock_timestamp();
			PERFORM count(*) FROM generate_series(1, $n);
			RAISE NOTICE 'floor %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
			t0 := clock_timestamp();
			PERFORM count(idgen_next()) FROM generate_series(1, $n);
			RAISE NOTICE 'next %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
			-- one time for every row: 16 lanes a millisecond, then spill
			-- is not allowed, so a fresh millisecond every 16,384 rows
			-- the times' own arithmetic is each form's floor
			t0 := clock_timestamp();
			PERFORM count(at + (g / 16384) * interval '1 ms') FROM generate_series(1, $n) AS g;
			RAISE NOTICE 'floor_same %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
			t0 := clock_timestamp();
			PERFORM count(at + interval '1 day' + g * interval '1 ms') FROM generate_series(1, $n) AS g;
			RAISE NOTICE 'floor_sweep %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
			t0 := clock_timestamp();
			PERFORM count(at + interval '5 days' + (abs(hashint8(g)) % 3600000) * interval '1 ms')
			  FROM generate_series(1, $late) AS g;
			RAISE NOTICE 'floor_late %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
			t0 := clock_timestamp();
			PERFORM count(*) FROM generate_series(1, $blocks) AS b,
				LATERAL generate_series(1, 1000 + b - b);
			RAISE NOTICE 'floor_blocks %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
			t0 := clock_timestamp();
			PERFORM count(idgen_next_at(at + (g / 16384) * interval '1 ms'))
			  FROM generate_series(1, $n) AS g;
			RAISE NOTICE 'at_same %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
			t0 := clock_timestamp();
			PERFORM count(idgen_next_at(at + interval '1 day' + g * interval '1 ms'))
			  FROM generate_series(1, $n) AS g;
			RAISE NOTICE 'at_sweep %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
			-- a cursor above the hour first, as a late event finds one
			PERFORM idgen_next_at(at + interval '5 days' + interval '2 hours');
			t0 := clock_timestamp();
			PERFORM count(idgen_next_at(at + interval '5 days' + (abs(hashint8(g)) % 3600000) * interval '1 ms'))
			  FROM generate_series(1, $late) AS g;
			RAISE NOTICE 'at_late %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
			t0 := clock_timestamp();
			PERFORM count(*) FROM generate_series(1, $blocks) AS b, idgen_next_n(1000);
			RAISE NOTICE 'next_n %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
			t0 := clock_timestamp();
			PERFORM count(*) FROM generate_series(1, $blocks) AS b,
				LATERAL idgen_next_at_n(at + interval '2 days' + b * interval '1 ms', 1000);
			RAISE NOTICE 'at_n %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
		END LOOP;
	END
	\$\$;
	SELECT 'lanes', count(*), sum(minted), sum(spilled) FROM idgen_lanes();
	EOF
}

measure 0 "$work/samples"

# The same server as its own lease registry: every shard and lane leased,
# each lane's fence published once the registry holds its range.
idgen_psql -qc 'CREATE DATABASE registry'
idgen_cluster_conf "idgen.lease_registry = 'host=$PGHOST port=$PGPORT dbname=registry user=postgres'"
idgen_pg_ctl -w -t 60 -l "$IDGEN_PGLOG" restart >/dev/null
for _ in $(seq 1 100); do
	[ "$(idgen_psql -qAt -c "SELECT coalesce((SELECT bool_and(state = 'held') FROM idgen_leases()), false)
		AND coalesce((SELECT bool_and(ready) FROM idgen_lanes() WHERE configured), false)")" = t ] && break
	sleep 0.2
done
measure 100 "$work/samples_registry"

python3 - "$work/samples" "$n" "$(idgen_psql -qAt -c 'SHOW server_version')" "$work/samples_registry" "$late" <<'EOF'
import statistics, sys
path, n, version, path_registry, late = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
def medians(path):
    per = {}
    for line in open(path):
        k, us = line.split()
        per.setdefault(k, []).append(float(us))
    return per, {k: statistics.median(v) for k, v in per.items()}
per, med = medians(path)
_, med_r = medians(path_registry)
floor_of = {'next': 'floor', 'at_same': 'floor_same', 'at_sweep': 'floor_sweep',
            'at_late': 'floor_late'}
rows_of = {'at_late': late}
ns = {k: (med[k] - med[f]) * 1000 / rows_of.get(k, n) for k, f in floor_of.items()}
print(f"PostgreSQL {version}, {n} IDs a statement, {len(per['next'])} repetitions, medians")
print(f"single IDs, above the same statement without the mint (floor {med['floor'] * 1000 / n:.1f} ns a row):")
rows = [('next', 'idgen_next()'),
        ('at_same', 'idgen_next_at(t), one time for all rows'),
        ('at_sweep', 'idgen_next_at(t0 + g ms), an import sweeping'),
        ('at_late', 'idgen_next_at(t), late events, scrambled hour')]
for k, name in rows:
    print(f"  {name:48s} {ns[k]:8.1f} ns   x{ns[k] / ns['next']:.2f} idgen_next()")
# a block's rows cost more than the mint: the whole statement, per ID
whole = {k: med[k] * 1000 / n for k in ('next_n', 'at_n', 'floor_blocks')}
print("blocks of 1,000, the whole statement per ID:")
print(f"  {'generate_series(1, 1000), no mint':48s} {whole['floor_blocks']:8.1f} ns")
print(f"  {'idgen_next_n(1000)':48s} {whole['next_n']:8.1f} ns")
print(f"  {'idgen_next_at_n(t, 1000)':48s} {whole['at_n']:8.1f} ns   x{whole['at_n'] / whole['next_n']:.2f} idgen_next_n()")
# the same forms with every shard and lane leased through a registry
ns_r = {k: (med_r[k] - med_r[f]) * 1000 / rows_of.get(k, n) for k, f in floor_of.items()}
print("with a lease registry (the server its own), against the same form without:")
for k, name in rows:
    print(f"  {name:48s} {ns_r[k]:8.1f} ns   x{ns_r[k] / ns[k]:.2f}")
at_n_r = med_r['at_n'] * 1000 / n
print(f"  {'idgen_next_at_n(t, 1000)':48s} {at_n_r:8.1f} ns   x{at_n_r / whole['at_n']:.2f}")
EOF
