#!/usr/bin/env bash
#
# bench/compare.sh: does a change make minting dearer?  The per-call cost of
# idgen_next() as a ratio to clock_timestamp()'s, for two revisions of
# idgen, measured in turns on this machine's PostgreSQL.
#
#   bash bench/compare.sh BEFORE AFTER [ROUNDS]     (as root, like run.sh)
#
# Each revision is built from git (git archive, so uncommitted changes are
# not in it).  Each round installs one build, starts a throwaway preloaded
# cluster (scripts/lib.sh), and times, 5 times each and interleaved,
# SELECT count(f) FROM generate_series(1, N) for f = nothing (the floor),
# clock_timestamp(), idgen_next() and id_to_shard() (a decoder); the order of the revisions alternates
# from round to round, so drift hits both alike.  It prints, per revision,
# the ns per call above the floor (medians) and their ratios to
# clock_timestamp().  The library that was installed before
# is put back at exit.
#
# Environment: COMPARE_N (rows per statement, 5000000), PG_CONFIG.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"
IDGEN_PROG=compare

[ $# -ge 2 ] || idgen_die "usage: bash bench/compare.sh BEFORE AFTER [ROUNDS]"
revs=("$1" "$2")
rounds=${3:-4}
n=${COMPARE_N:-5000000}
idgen_is_root || idgen_die "run as root: it installs each build into $PG_CONFIG's server"

work=$(mktemp -d /tmp/idgen-compare.XXXXXX)
pkglib=$("$PG_CONFIG" --pkglibdir)
cp -p "$pkglib/idgen.so" "$work/installed.so" 2>/dev/null || true
restore()
{
	if [ -f "$work/installed.so" ]; then
		cp -p "$work/installed.so" "$pkglib/idgen.so"
	fi
	rm -rf -- "$work"
}
idgen_on_exit restore

for i in 0 1; do
	mkdir -p "$work/build$i"
	git -C "$repo" archive "${revs[i]}" | tar -C "$work/build$i" -xf -
	make -s -C "$work/build$i" PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1 ||
		idgen_die "could not build ${revs[i]}"
	idgen_log "built ${revs[i]} ($(git -C "$repo" rev-parse --short "${revs[i]}"))"
done
make -s -C "$work/build1" install PG_CONFIG="$PG_CONFIG" >/dev/null	# SQL files

# One round: microseconds of each statement, as "kind us" lines.
measure()
{
	idgen_psql -qAt <<-EOF
		SET idgen.max_wait = '60s';
		-- 1.0's objects: every build since has the C functions they name
		CREATE EXTENSION IF NOT EXISTS idgen VERSION '1.0';
		DO \$\$
		DECLARE
			t0 timestamptz;
		BEGIN
			FOR rep IN 1..5 LOOP
				t0 := clock_timestamp();
				PERFORM count(*) FROM generate_series(1, $n);
				RAISE NOTICE 'floor %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
				t0 := clock_timestamp();
				PERFORM count(clock_timestamp()) FROM generate_series(1, $n);
				RAISE NOTICE 'clock %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
				t0 := clock_timestamp();
				PERFORM count(idgen_next()) FROM generate_series(1, $n);
				RAISE NOTICE 'idgen %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
				t0 := clock_timestamp();
				PERFORM count(id_to_shard(g)) FROM generate_series(1::bigint, $n) AS g;
				RAISE NOTICE 'decode %', extract(epoch FROM clock_timestamp() - t0) * 1e6;
			END LOOP;
		END
		\$\$;
	EOF
}

for ((r = 0; r < rounds; r++)); do
	for k in 0 1; do
		i=$(((r + k) % 2))
		cp "$work/build$i/idgen.so" "$pkglib/idgen.so"
		# a long max_lead: a statement never waits for the clock
		idgen_cluster_start "" "idgen.max_lead = '60s'" >/dev/null
		measure 2>&1 | tee -a "$work/psql.log" | sed -n "s/^NOTICE:  \([a-z]*\) \([0-9.]*\)$/$i \1 \2/p" >>"$work/samples"
		idgen_cluster_stop
	done
done

python3 - "$work/samples" "$n" "${revs[0]}" "${revs[1]}" <<'EOF'
import statistics, sys
path, n, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = [line.split() for line in open(path)]
for i, name in enumerate(names):
    per = {'floor': [], 'clock': [], 'idgen': [], 'decode': []}
    for b, k, us in rows:
        if int(b) == i:
            per[k].append(float(us))
    med = {k: statistics.median(v) for k, v in per.items()}
    ns = {k: (med[k] - med['floor']) * 1000 / n for k in ('clock', 'idgen', 'decode')}
    print(f"{name}: idgen_next() {ns['idgen']:.1f} ns, clock_timestamp() {ns['clock']:.1f} ns "
          f"per call above the floor ({med['floor'] * 1000 / n:.1f} ns); "
          f"ratio {ns['idgen'] / ns['clock']:.3f}; id_to_shard() {ns['decode']:.1f} ns, "
          f"ratio {ns['decode'] / ns['clock']:.3f} ({len(per['idgen'])} samples each)")
EOF
