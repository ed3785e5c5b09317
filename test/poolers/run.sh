#!/usr/bin/env bash
# test/poolers/run.sh -- idgen through a real connection pooler: Debian's
# pgbouncer, in front of a throwaway server with idgen preloaded
# (scripts/lib.sh), listening on a unix socket beside the server's
#
#	bash test/poolers/run.sh
#
# 1. Minting through transaction pooling: IDGEN_POOLER_CLIENTS psql
#    clients (40) at once, each with IDGEN_POOLER_ROUNDS rounds (20) of
#    idgen_next(), a DEFAULT insert, a block (idgen_next_n), an explicit
#    transaction of all three, and IDs for a given time (idgen_next_at, in
#    time order: half an hour before each call), over a pool of
#    IDGEN_POOLER_POOL server connections (4).  Every ID a client was
#    given is collected; none may be given twice, every inserted row must
#    be one a client was told of, and the server connections that minted
#    (idgen_stats_backends) must be the pool's, not the clients.
# 2. Settings through a pool of one server connection: a bare SET of
#    idgen.backfill_max_shift and idgen.max_wait reaches the next client of
#    the pool (the trap: that client's idgen_next_at silently takes a later
#    millisecond), SET LOCAL in a transaction does not (the fix), nor in
#    statement pooling a SET LOCAL sent with its statement in one query or
#    a function's SET clause, nor a role's default (ALTER ROLE ... SET),
#    nor a bare SET in session pooling (pgbouncer's DISCARD ALL).
#
# scripts/test.sh runs it as the suite "poolers" and counts the tests from
# the "# tests N" line.  Run as root or as the server's user.

set -euo pipefail

IDGEN_PROG="poolers"
# shellcheck source=scripts/lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/lib.sh"

clients=${IDGEN_POOLER_CLIENTS:-40}
rounds=${IDGEN_POOLER_ROUNDS:-20}
pool=${IDGEN_POOLER_POOL:-4}
for v in clients rounds pool; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || idgen_die "IDGEN_POOLER_${v^^} must be a positive number, not '${!v}'"
done
[ "$clients" -gt "$pool" ] ||
	idgen_die "IDGEN_POOLER_CLIENTS ($clients) must exceed IDGEN_POOLER_POOL ($pool): the clients share the pool"

pgbouncer=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
[ -x "$pgbouncer" ] ||
	idgen_die "pgbouncer not found: install Debian's pgbouncer (scripts/setup.sh does when the suite is wanted)"

# ---- TAP-like reporting ------------------------------------------------------
tests=0 failed=0

ok()
{
	tests=$((tests + 1))
	echo "ok $tests - $1"
}

not_ok()
{
	tests=$((tests + 1))
	failed=$((failed + 1))
	echo "not ok $tests - $1"
	shift
	[ $# -eq 0 ] || printf '#   %s\n' "$@"
}

# is GOT WANT NAME: one check of a value
is()
{
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		not_ok "$3" "got:  '$1'" "want: '$2'"
	fi
}

# ---- the server and the pooler -----------------------------------------------
idgen_cluster_start "" "idgen.backfill_shards = '4000-4015'"
work=$IDGEN_CLUSTER_DIR/poolers
mkdir -p -- "$work"
idgen_is_root && chown "$IDGEN_RUN_USER:" "$work"
server_port=$PGPORT
bouncer_port=$((PGPORT + 1))

idgen_psql -q -d postgres <<'SQL'
CREATE DATABASE idgen_pool;
CREATE ROLE idgen_importer LOGIN;
ALTER ROLE idgen_importer SET idgen.backfill_max_shift = '5ms';
SQL
idgen_psql -q -d idgen_pool <<'SQL'
CREATE EXTENSION idgen;
SELECT idgen_lanes_init() \g /dev/null
CREATE TABLE minted (
	id bigint PRIMARY KEY DEFAULT idgen_next(),
	client integer NOT NULL,
	how text NOT NULL,
	at timestamptz
);
CREATE TABLE acked (kind text NOT NULL, id bigint NOT NULL, pid integer NOT NULL);
-- statement pooling: a function's SET clause lasts for its call only
CREATE FUNCTION next_at_within_5ms(t timestamptz) RETURNS bigint
LANGUAGE sql SET idgen.backfill_max_shift = '5ms'
AS $$ SELECT idgen_next_at(t) $$;
SQL

# Three pools in transaction mode and one each in statement and session
# mode, all of one database: "txn" for the minting clients, the others of
# one server connection each, so that a client's server connection is the
# one the client before it had.
cat >"$work/userlist.txt" <<'EOF'
"postgres" ""
"idgen_importer" ""
EOF
db="host=$IDGEN_CLUSTER_DIR port=$server_port dbname=idgen_pool"
cat >"$work/pgbouncer.ini" <<EOF
[databases]
txn = $db pool_mode=transaction
one = $db pool_mode=transaction pool_size=1
stmt = $db pool_mode=statement pool_size=1
sess = $db pool_mode=session pool_size=1

[pgbouncer]
listen_addr =
listen_port = $bouncer_port
unix_socket_dir = $IDGEN_CLUSTER_DIR
auth_type = trust
auth_file = $work/userlist.txt
admin_users = postgres
pool_mode = transaction
default_pool_size = $pool
max_client_conn = $((clients + 20))
logfile = $work/pgbouncer.log
pidfile = $work/pgbouncer.pid
EOF
idgen_is_root && chown "$IDGEN_RUN_USER:" "$work"/*

stop_bouncer()
{
	local pid
	[ -f "$work/pgbouncer.pid" ] || return 0
	pid=$(cat -- "$work/pgbouncer.pid")
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

idgen_on_exit stop_bouncer
version=$("$pgbouncer" --version)
echo "# ${version%%$'\n'*}"
(cd "$work" && idgen_as_user "$pgbouncer" -d -q "$work/pgbouncer.ini") ||
	{ idgen_tail "$work/pgbouncer.log" 20; idgen_die "pgbouncer did not start"; }

# bpsql DB [PSQL-ARGS...]: psql through pgbouncer as postgres, a new client
bpsql()
{
	local db=$1
	shift
	psql -X -q -At -v ON_ERROR_STOP=1 -h "$IDGEN_CLUSTER_DIR" -p "$bouncer_port" \
		-U postgres -d "$db" "$@"
}

for i in $(seq 1 100); do
	if bpsql pgbouncer -c 'SHOW VERSION' >/dev/null 2>&1; then
		break
	fi
	[ "$i" -lt 100 ] || { idgen_tail "$work/pgbouncer.log" 20; idgen_die "pgbouncer does not answer"; }
	sleep 0.1
done

# ---- 1. minting through transaction pooling ----------------------------------
# Every line a client prints is "kind|id|server pid"; each round gives
# 1 + 1 + 5 + (1 + 2 + 3) + 1 + 3 = 17 IDs, 4 of them inserted.
client_sql()
{
	local c=$1 r
	for ((r = 1; r <= rounds; r++)); do
		cat <<EOF
SELECT 'next', idgen_next(), pg_backend_pid();
INSERT INTO minted (client, how) VALUES ($c, 'default') RETURNING 'default', id, pg_backend_pid();
SELECT 'block', id, pg_backend_pid() FROM idgen_next_n(5) AS id;
BEGIN;
SELECT 'txn-next', idgen_next(), pg_backend_pid();
INSERT INTO minted (client, how) SELECT $c, 'txn-default' FROM generate_series(1, 2)
	RETURNING 'txn-default', id, pg_backend_pid();
SELECT 'txn-block', id, pg_backend_pid() FROM idgen_next_n(3) AS id;
COMMIT;
INSERT INTO minted (id, client, how, at)
	SELECT idgen_next_at(t), $c, 'at', t FROM (SELECT clock_timestamp() - interval '30 minutes' AS t) AS s
	RETURNING 'at', id, pg_backend_pid();
BEGIN;
SELECT 'at-block', id, pg_backend_pid()
	FROM idgen_next_at_n(clock_timestamp() - interval '30 minutes', 3) AS id;
COMMIT;
EOF
	done
}

per_round=17
inserted_per_round=4
mkdir -p -- "$work/clients"
pids=()
started=$SECONDS
for ((c = 1; c <= clients; c++)); do
	client_sql "$c" >"$work/clients/$c.sql"
	timeout 300 psql -X -q -At -F '|' -v ON_ERROR_STOP=1 -h "$IDGEN_CLUSTER_DIR" \
		-p "$bouncer_port" -U postgres -d txn -f "$work/clients/$c.sql" \
		>"$work/clients/$c.out" 2>"$work/clients/$c.err" &
	pids+=("$!")
done
bad=()
for ((c = 1; c <= clients; c++)); do
	wait "${pids[c - 1]}" || bad+=("$c")
done
echo "# $clients clients, $rounds rounds each, through a pool of $pool: $((SECONDS - started)) s"
if [ ${#bad[@]} -eq 0 ]; then
	ok "every client ran its $rounds rounds through transaction pooling"
else
	not_ok "every client ran its $rounds rounds through transaction pooling" \
		"clients that failed: ${bad[*]}"
	for c in "${bad[@]:0:3}"; do
		idgen_tail "$work/clients/$c.err" 10
	done
fi

cat "$work"/clients/*.out >"$work/acked.txt"
idgen_psql -q -d idgen_pool -c "\\copy acked FROM '$work/acked.txt' WITH (FORMAT text, DELIMITER '|')"

# q SQL: one value from the server, directly (not through the pooler)
q()
{
	idgen_psql -At -d idgen_pool -c "$1"
}

want=$((clients * rounds * per_round))
is "$(q 'SELECT count(*) FROM acked')" "$want" \
	"every client was given all its IDs ($clients x $rounds x $per_round)"
is "$(q 'SELECT count(*) - count(DISTINCT id) FROM acked')" 0 \
	"no ID was given twice"
is "$(q "SELECT count(*) FROM minted")" "$((clients * rounds * inserted_per_round))" \
	"the table holds one row per acknowledged insert"
is "$(q "SELECT count(*) FROM minted AS m
	LEFT JOIN acked AS a ON a.id = m.id AND a.kind IN ('default', 'txn-default', 'at')
	WHERE a.id IS NULL")" 0 \
	"every row's ID is one a client was told of"
is "$(q "SELECT count(*) FROM minted
	WHERE how = 'at' AND (id_to_timestamp(id) <> date_trunc('milliseconds', at)
	                      OR id_to_shard(id) NOT BETWEEN 4000 AND 4015)")" 0 \
	"every ID for a given time is on a lane, at that time's millisecond"
is "$(q "SELECT count(*) FROM acked
	WHERE (kind LIKE 'at%') <> (id_to_shard(id) BETWEEN 4000 AND 4015)")" 0 \
	"live IDs are off the lanes, lane IDs on them"

# The pool's few server connections minted for all the clients, and they
# are what idgen_stats_backends lists: server processes, not clients.
server_pids=$(q 'SELECT count(DISTINCT pid) FROM acked')
if [ "$server_pids" -ge 1 ] && [ "$server_pids" -le "$pool" ]; then
	ok "$clients clients minted on $server_pids server connections (pool of $pool)"
else
	not_ok "$clients clients minted on at most $pool server connections" \
		"they minted on $server_pids"
fi
live="kind NOT LIKE 'at%'"
is "$(q "SELECT count(*) FROM (SELECT pid FROM idgen_stats_backends
	EXCEPT SELECT pid FROM acked WHERE $live) AS s")" 0 \
	"idgen_stats_backends lists only the pool's server connections"
is "$(q "SELECT count(*) FROM (SELECT pid FROM acked WHERE $live
	EXCEPT SELECT pid FROM idgen_stats_backends) AS s")" 0 \
	"every server connection that minted live is in idgen_stats_backends"
is "$(q "SELECT (SELECT sum(minted) FROM idgen_stats_backends)
	= (SELECT count(*) FROM acked WHERE $live)")" t \
	"idgen_stats_backends counts every live ID the clients were given"

# ---- 2. settings through a pool ----------------------------------------------
# A millisecond every lane has given: idgen_next_at there needs a shift.
full_at=$(q "SELECT date_trunc('milliseconds', now() - interval '10 minutes')")
lane_ids=$(q "SELECT count(*) * (1 << current_setting('idgen.sequence_bits')::int)
	FROM idgen_lanes() WHERE configured")
is "$(q "SELECT count(*) FROM idgen_next_at_n('$full_at', $lane_ids)")" "$lane_ids" \
	"every lane gave the millisecond $full_at whole"

# settings DB [ROLE]: what a new client of DB sees, and its server pid
settings()
{
	psql -X -q -At -v ON_ERROR_STOP=1 -h "$IDGEN_CLUSTER_DIR" -p "$bouncer_port" \
		-U "${2:-postgres}" -d "$1" -c "SELECT current_setting('idgen.backfill_max_shift') || ' ' ||
			current_setting('idgen.max_wait')"
}
defaults="0 10s"

# shifted_by DB: what a new client's idgen_next_at of the full millisecond
# gives: how many ms later than asked, or the error
shifted_by()
{
	local out
	if out=$(bpsql "$1" -c "SELECT extract(milliseconds FROM
			id_to_timestamp(idgen_next_at('$full_at')) - '$full_at')::int" 2>&1); then
		echo "$out ms later"
	else
		case $out in
			*"no backfill lane can mint at"*) echo "refused: full" ;;
			*) echo "failed: $out" ;;
		esac
	fi
}

pid_one=$(bpsql one -c 'SELECT pg_backend_pid()')
is "$(settings one)" "$defaults" "transaction pooling: a new client starts at the defaults"
is "$(shifted_by one)" "refused: full" \
	"transaction pooling: the full millisecond is refused without a shift"

# the trap: a bare SET stays on the server connection after the client
bpsql one -c "SET idgen.backfill_max_shift = '5ms'" -c "SET idgen.max_wait = '1s'"
is "$(settings one)" "5ms 1s" \
	"transaction pooling: a bare SET reaches the next client of the server connection"
is "$(shifted_by one)" "1 ms later" \
	"transaction pooling: so that client's idgen_next_at takes a later millisecond unasked"
bpsql one -c 'RESET idgen.backfill_max_shift' -c 'RESET idgen.max_wait'
is "$(settings one)" "$defaults" "transaction pooling: RESET puts the defaults back"

# the fix: SET LOCAL inside the transaction
got=$(bpsql one <<SQL
BEGIN;
SET LOCAL idgen.backfill_max_shift = '5ms';
SET LOCAL idgen.max_wait = '1s';
SELECT current_setting('idgen.backfill_max_shift') || ' ' || current_setting('idgen.max_wait');
SELECT extract(milliseconds FROM id_to_timestamp(idgen_next_at('$full_at')) - '$full_at')::int || ' ms later';
COMMIT;
SQL
)
is "$got" "5ms 1s
1 ms later" "transaction pooling: SET LOCAL holds in its transaction"
is "$(settings one)" "$defaults" \
	"transaction pooling: SET LOCAL does not reach the next client"
is "$(shifted_by one)" "refused: full" \
	"transaction pooling: nor does its shift"
is "$(bpsql one -c 'SELECT pg_backend_pid()')" "$pid_one" \
	"transaction pooling: all of it on one server connection"

# per role: pgbouncer pools each role apart, and the role's default holds
is "$(settings one idgen_importer)" "5ms 10s" \
	"transaction pooling: a role's default (ALTER ROLE ... SET) holds for its clients"
is "$(settings one)" "$defaults" \
	"transaction pooling: and for its clients only"

# statement pooling: no transaction blocks; the same trap, other fixes
pid_stmt=$(bpsql stmt -c 'SELECT pg_backend_pid()')
bpsql stmt -c "SET idgen.backfill_max_shift = '5ms'"
is "$(settings stmt)" "5ms 10s" \
	"statement pooling: a bare SET reaches the next client"
bpsql stmt -c 'RESET idgen.backfill_max_shift'
# psql -c sends both statements as one query: one implicit transaction
later="extract(milliseconds FROM id_to_timestamp(%s) - '$full_at')::int || ' ms later'"
# shellcheck disable=SC2059
is "$(bpsql stmt -c "SET LOCAL idgen.backfill_max_shift = '5ms'; SELECT $(printf "$later" "idgen_next_at('$full_at')")")" \
	"1 ms later" "statement pooling: SET LOCAL sent in one query with its statement holds there"
# shellcheck disable=SC2059
is "$(bpsql stmt -c "SELECT $(printf "$later" "next_at_within_5ms('$full_at')")")" "1 ms later" \
	"statement pooling: a function's SET clause holds in its call"
is "$(settings stmt)" "$defaults" \
	"statement pooling: neither reaches the next client"
is "$(bpsql stmt -c 'SELECT pg_backend_pid()')" "$pid_stmt" \
	"statement pooling: all of it on one server connection"
# last: pgbouncer closes the client, and the server connection with it
got=$(bpsql stmt -c "BEGIN" 2>&1 || true)
case $got in
	*"transaction blocks not allowed in statement pooling mode"*)
		ok "statement pooling: a transaction block is refused, so no SET LOCAL there" ;;
	*) not_ok "statement pooling: a transaction block is refused, so no SET LOCAL there" "got: $got" ;;
esac

# session pooling: the server connection is reset (DISCARD ALL) between clients
pid_sess=$(bpsql sess -c 'SELECT pg_backend_pid()')
bpsql sess -c "SET idgen.backfill_max_shift = '5ms'"
is "$(settings sess)" "$defaults" \
	"session pooling: a bare SET ends with its client (server_reset_query)"
is "$(bpsql sess -c 'SELECT pg_backend_pid()')" "$pid_sess" \
	"session pooling: on the same server connection"

echo "# tests $tests"
if [ "$failed" -gt 0 ]; then
	echo "# $failed of $tests failed"
	idgen_tail "$work/pgbouncer.log" 30
	idgen_tail "$IDGEN_PGLOG" 30
	exit 1
fi
echo "# all $tests passed"
