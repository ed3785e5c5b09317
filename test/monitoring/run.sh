#!/usr/bin/env bash
# test/monitoring/run.sh -- monitoring/ against the real thing: Debian's
# prometheus-postgres-exporter reading monitoring/idgen-queries.yaml as a
# role that is only a member of pg_monitor, scraped over HTTP, and
# Prometheus's promtool on monitoring/idgen-alerts.yml
#
#	bash test/monitoring/run.sh
#
# It starts its own throwaway cluster (scripts/lib.sh) with test/idgen.conf
# and the exporter as the server user on 127.0.0.1 and a free port, both
# stopped at exit, then:
#	1. without leases or lanes: every series of the queries file that is
#	   not per shard or per lane is there, the per-shard and per-lane ones
#	   are absent and their summaries 0, no query failed, and the count of
#	   minted IDs grows by what the test mints;
#	2. restarted with backfill lanes and a lease registry (the server
#	   itself): the lanes refuse, then mint once attested; every lease is
#	   held; the lease worker runs and the registry offset is measured;
#	3. a standby of it (pg_basebackup): every query runs there, and says
#	   it is a standby whose workers need not run;
#	4. promtool checks the rules and runs their unit tests
#	   (monitoring/*_test.yml), then runs the rules over the series this
#	   machine's exporter served in 2 and 3, held for two hours: no alert
#	   fires but IdgenClockUnsynchronized, and that one only if this
#	   machine's kernel says its clock is not synchronised.
# Each check prints "ok N - ..." or "not ok N - ..."; the last line is
# "# tests N", which scripts/test.sh (suite "monitoring") counts.
#
# Environment: IDGEN_EXPORTER (default /usr/bin/prometheus-postgres-exporter),
# IDGEN_PROMTOOL (default promtool), IDGEN_KEEP=1 keeps the cluster, the
# exporter's log and the scrapes.

set -euo pipefail

IDGEN_PROG="monitoring"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/../../scripts/lib.sh"

queries=$IDGEN_ROOT/monitoring/idgen-queries.yaml
alerts=$IDGEN_ROOT/monitoring/idgen-alerts.yml
exporter=${IDGEN_EXPORTER:-/usr/bin/prometheus-postgres-exporter}
promtool=${IDGEN_PROMTOOL:-promtool}

[ -x "$exporter" ] ||
	idgen_die "$exporter not found: install prometheus-postgres-exporter (scripts/setup.sh does)"
command -v "$promtool" >/dev/null 2>&1 ||
	idgen_die "$promtool not found: install prometheus (scripts/setup.sh does)"
command -v curl >/dev/null 2>&1 ||
	idgen_die "curl not found: install curl (scripts/setup.sh does)"

# ---- checks ------------------------------------------------------------------
tests=0 failed=0

# check DESCRIPTION CMD...: one test, passed when CMD succeeds
check()
{
	local desc=$1
	shift
	tests=$((tests + 1))
	if "$@"; then
		printf 'ok %d - %s\n' "$tests" "$desc"
	else
		printf 'not ok %d - %s\n' "$tests" "$desc"
		failed=$((failed + 1))
	fi
}

# ---- the exporter ------------------------------------------------------------
exporter_pid='' exporter_port='' exporter_log='' scrape=''

stop_exporter()
{
	local i
	[ -n "$exporter_pid" ] || return 0
	kill "$exporter_pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		kill -0 "$exporter_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$exporter_pid" 2>/dev/null || true
	wait 2>/dev/null || true
	exporter_pid=''
}

# start_exporter NAME: the exporter as the server user, connected over the
# cluster's socket as idgen_monitor; its log in $work/NAME.log
start_exporter()
{
	local pidfile=$work/$1.pid i
	exporter_log=$work/$1.log
	exporter_port=$(_idgen_free_port)
	rm -f -- "$pidfile"
	# the shell writes its own PID, then becomes the exporter: that PID is
	# the exporter's, the one stop_exporter ends
	idgen_as_user env \
		DATA_SOURCE_NAME="host=$PGHOST port=$PGPORT user=idgen_monitor dbname=postgres sslmode=disable" \
		sh -c 'echo $$ >"$0" && exec "$@"' "$pidfile" "$exporter" \
		--web.listen-address="127.0.0.1:$exporter_port" \
		--extend.query-path="$queries" >"$exporter_log" 2>&1 &
	for ((i = 0; i < 300; i++)); do
		[ -s "$pidfile" ] && break
		sleep 0.1
	done
	exporter_pid=$(cat -- "$pidfile" 2>/dev/null || true)
	[ -n "$exporter_pid" ] || { idgen_tail "$exporter_log"; idgen_die "the exporter did not start"; }
	for ((i = 0; i < 300; i++)); do
		if curl -sf -o /dev/null "http://127.0.0.1:$exporter_port/metrics"; then
			idgen_log "exporter $("$exporter" --version 2>&1 | head -n 1) on 127.0.0.1:$exporter_port (pid $exporter_pid)"
			return 0
		fi
		kill -0 "$exporter_pid" 2>/dev/null || break
		sleep 0.1
	done
	idgen_tail "$exporter_log"
	idgen_die "the exporter does not answer on 127.0.0.1:$exporter_port"
}

# do_scrape NAME: GET /metrics into $work/NAME.prom, and $scrape
do_scrape()
{
	scrape=$work/$1.prom
	curl -sf -o "$scrape" "http://127.0.0.1:$exporter_port/metrics" ||
		idgen_die "could not scrape the exporter"
}

# A sample line of the text format: the series (name and labels, whose
# values may hold spaces), a space, the value.  name_of: the name alone.
series_awk='
	function series(line) { sub(/ [^ ]*$/, "", line); return line }
	function name_of(line) { sub(/[{ ].*/, "", line); return line }'

# value NAME [LABEL="VALUE"...]: the value of the first sample of NAME in
# $scrape whose labels include each one given; nothing if there is none
value()
{
	local name=$1 IFS=$'\x1f'
	shift
	awk -v name="$name" -v want="$*" "$series_awk"'
		/^#/ { next }
		name_of($0) == name {
			n = split(want, w, "\x1f")
			for (i = 1; i <= n; i++) if (index(series($0), w[i]) == 0) next
			print $NF; exit
		}' "$scrape"
}

# samples NAME: how many samples of NAME $scrape has
samples()
{
	awk -v name="$1" "$series_awk"'
		!/^#/ && name_of($0) == name { c++ } END { print c + 0 }' "$scrape"
}

is() { [ "$1" = "$2" ] || { echo "#   got '$1', expected '$2'" >&2; return 1; }; }
# num_cmp A OP B: awk's comparison of two numbers (NaN is never a number)
num_cmp()
{
	[[ $1 =~ ^-?[0-9.e+-]+$ ]] && [[ $3 =~ ^-?[0-9.e+-]+$ ]] &&
		awk -v a="$1" -v b="$3" "BEGIN { exit !(a $2 b) }" ||
		{ echo "#   not true: $1 $2 $3" >&2; return 1; }
}

# The metrics the queries file defines (namespace_column, labels left out):
# those of a row per shard or lane, and the others.  A usage the exporter
# does not know is no error to it (it drops the column): such a column is
# counted here, and missed.
mapfile -t all_metrics < <(awk '
	/^[a-z_]+:$/ { ns = substr($1, 1, length($1) - 1) }
	/^    - [a-z_]+:$/ { col = $2; sub(/:$/, "", col) }
	/^ +usage: / && !/usage: "LABEL"/ { print ns "_" col }' "$queries")
row_metrics=() node_metrics=()
for m in "${all_metrics[@]}"; do
	case $m in
		idgen_lease_*|idgen_lane_*) row_metrics+=("$m") ;;
		*) node_metrics+=("$m") ;;
	esac
done

all_present()
{
	local m rc=0
	for m in "$@"; do
		[ "$(samples "$m")" -gt 0 ] || { echo "#   no sample of $m" >&2; rc=1; }
	done
	return $rc
}

none_present()
{
	local m rc=0
	for m in "$@"; do
		[ "$(samples "$m")" -eq 0 ] || { echo "#   $m has samples" >&2; rc=1; }
	done
	return $rc
}

# no query failed: the file loaded, the last scrape had no error, and the
# exporter logged no error
queries_loaded()
{
	is "$(value pg_exporter_user_queries_load_error)" 0 &&
		[ "$(awk '/^pg_exporter_user_queries_load_error/ && $NF != 0' "$scrape")" = "" ]
}
scrape_clean()
{
	local errs
	is "$(value pg_exporter_last_scrape_error)" 0 || return 1
	errs=$(grep -E 'level=(error|warn)|err=' "$exporter_log" || true)
	[ -z "$errs" ] || { printf '#   %s\n' "$errs" >&2; return 1; }
}

# ---- the cluster -------------------------------------------------------------
conf=()
while IFS= read -r line || [ -n "$line" ]; do
	conf+=("$line")
done <"$IDGEN_ROOT/test/idgen.conf"
idgen_cluster_start "" "${conf[@]}"
work=$IDGEN_CLUSTER_DIR
idgen_on_exit stop_exporter
[ "${IDGEN_KEEP:-0}" != 1 ] || idgen_log "scrapes and the exporter's logs in $work"

sql() { idgen_psql -qAt -d postgres "$@"; }

sql -c 'CREATE EXTENSION idgen' \
	-c 'CREATE ROLE idgen_monitor LOGIN' -c 'GRANT pg_monitor TO idgen_monitor'
check "idgen_monitor is a member of pg_monitor and of nothing else, and no superuser" \
	is "$(sql -c "SELECT r.rolsuper OR r.rolbypassrls OR r.rolcreaterole,
		array(SELECT g.rolname FROM pg_auth_members AS m JOIN pg_roles AS g ON g.oid = m.roleid
		       WHERE m.member = r.oid ORDER BY 1)
		  FROM pg_roles AS r WHERE r.rolname = 'idgen_monitor'")" 'f|{pg_monitor}'

# ---- 1. no leases, no lanes --------------------------------------------------
echo "# without leases or lanes"
start_exporter plain
do_scrape plain-1
check "the exporter reaches the server (pg_up 1)" is "$(value pg_up)" 1
check "the queries file loaded (pg_exporter_user_queries_load_error 0)" queries_loaded
check "every query ran: no scrape error, no error in the exporter's log" scrape_clean
check "every node-wide series of the queries file is served (${#node_metrics[@]})" \
	all_present "${node_metrics[@]}"
check "no per-shard or per-lane series without leases or lanes" \
	none_present "${row_metrics[@]}"
check "the lease summaries are 0" \
	is "$(for s in held expired pending 'not held' claiming; do
		printf '%s ' "$(value idgen_leases_shards "state=\"$s\"")"; done)" "0 0 0 0 0 "
check "no lanes configured, none ready" \
	is "$(value idgen_lanes_configured) $(value idgen_lanes_ready)" "0 0"
check "the fence worker runs and should, no lease worker and none should" \
	is "$(value idgen_worker_processes 'worker="idgen fence"') $(value idgen_worker_expected 'worker="idgen fence"') $(value idgen_worker_processes 'worker="idgen lease"') $(value idgen_worker_expected 'worker="idgen lease"')" "1 1 0 0"
check "a primary: idgen_in_recovery 0" is "$(value idgen_in_recovery)" 0
check "idgen.max_lead is 1 s" is "$(value idgen_setting_max_lead_seconds)" 1
synchronized=$(value idgen_clock_synchronized)
check "the clock is synchronised or not (1 or 0)" \
	is "$([ "$synchronized" = 0 ] || [ "$synchronized" = 1 ] && echo yes)" yes
now=$(date +%s)
check "the layout's end is decades away, and remaining = end - now" \
	num_cmp "$(awk -v e="$(value idgen_layout_ends_timestamp_seconds)" \
		-v r="$(value idgen_layout_remaining_seconds)" -v n="$now" \
		'BEGIN { d = e - r - n; print (d < 0 ? -d : d) + (r < 20 * 365 * 86400 ? 1e9 : 0) }')" '<' 60

minted_before=$(value idgen_minted_total)
advances_before=$(value idgen_fence_advances_total)
sql -c 'SELECT count(*) FROM idgen_next_n(1000)' -c 'SELECT idgen_next() FROM generate_series(1, 24)' >/dev/null
do_scrape plain-2
check "idgen_minted_total grows by the 1024 IDs minted" \
	is "$(awk -v a="$minted_before" -v b="$(value idgen_minted_total)" 'BEGIN { print b - a }')" 1024
check "the fence moved for them (idgen_fence_advances_total)" \
	num_cmp "$(value idgen_fence_advances_total)" '>' "$advances_before"
check "the fence is ahead of the wall clock while minting" \
	num_cmp "$(value idgen_fence_ahead_seconds)" '>' -60
check "no scrape error after minting" scrape_clean
stop_exporter

# ---- 2. lanes and leases -----------------------------------------------------
echo "# with backfill lanes and a lease registry"
sql -c 'CREATE DATABASE registry'
idgen_cluster_conf "idgen.backfill_shards = '4000-4003'" \
	"idgen.lease_registry = 'host=$PGHOST port=$PGPORT dbname=registry user=postgres'"
idgen_pg_ctl -w restart -m fast >/dev/null
# every lease held: the shards of test/idgen.conf and idgen.shard_id
shards=$(sql -c "SELECT count(*) FROM idgen_leases()")
for ((i = 0; i < 300; i++)); do
	[ "$(sql -c "SELECT count(*) FROM idgen_leases() WHERE state = 'held'")" = "$shards" ] && break
	sleep 0.1
done
start_exporter options
do_scrape options-1
check "the queries file loaded" queries_loaded
check "every query ran: no scrape error, no error in the exporter's log" scrape_clean
check "every series of the queries file is served (${#all_metrics[@]})" all_present "${all_metrics[@]}"
check "four lanes configured, none ready: the lanes refuse until attested" \
	is "$(value idgen_lanes_configured) $(value idgen_lanes_ready) $(samples idgen_lane_ready) $(value idgen_lane_ready 'shard="4002"')" "4 0 4 0"
check "every lease held ($shards)" \
	is "$(value idgen_leases_shards 'state="held"') $(value idgen_lease_held 'shard="7"') $(samples idgen_lease_held)" "$shards 1 $shards"
check "the lease worker runs and should" \
	is "$(value idgen_worker_processes 'worker="idgen lease"') $(value idgen_worker_expected 'worker="idgen lease"')" "1 1"
check "a lease ends after now, within idgen.lease_duration" \
	num_cmp "$(awk -v v="$(value idgen_lease_valid_until_timestamp_seconds 'shard="100"')" \
		-v d="$(value idgen_setting_lease_duration_seconds)" -v n="$(date +%s)" \
		'BEGIN { print (v > n - 1 && v <= n + d + 1) }')" '==' 1
check "the registry's clock was measured: an offset under a second" \
	num_cmp "$(awk -v o="$(value idgen_clock_registry_offset_seconds)" 'BEGIN { print (o < 0 ? -o : o) }')" '<' 1
sql -c 'SELECT idgen_lanes_init()' \
	-c "SELECT count(*) FROM idgen_next_at_n(now() - interval '1 day', 1500)" >/dev/null
do_scrape options-2
check "attested, the four lanes are ready" is "$(value idgen_lanes_ready)" 4
check "the lanes minted the 1500 IDs asked" \
	is "$(awk '/^idgen_lane_minted_total\{/ { s += $NF } END { print s + 0 }' "$scrape")" 1500
check "no scrape error with lanes and leases" scrape_clean
options_scrape=$scrape
stop_exporter

# ---- 3. a standby of that server ---------------------------------------------
echo "# a standby of that server"
standby=$work/standby
standby_port=$(_idgen_free_port)
stop_standby()
{
	[ -f "$standby/postmaster.pid" ] || return 0
	(cd "$work" && idgen_as_user pg_ctl -D "$standby" -w -m immediate stop >/dev/null 2>&1) || true
}
idgen_on_exit stop_standby
(cd "$work" && idgen_as_user pg_basebackup -h "$PGHOST" -p "$PGPORT" -U postgres -D "$standby" -R -X stream) ||
	idgen_die "pg_basebackup failed"
(cd "$work" && idgen_as_user pg_ctl -D "$standby" -w -t 60 -l "$work/standby.log" \
	-o "-p $standby_port" start >/dev/null) || { idgen_tail "$work/standby.log"; idgen_die "the standby did not start"; }
start_exporter_on() { local p=$PGPORT; PGPORT=$1; start_exporter "$2"; PGPORT=$p; }
start_exporter_on "$standby_port" standby
# a mint on the primary, replayed: the standby's generator follows the
# fence the primary moved for it, up to idgen.fence_horizon ahead
lsn=$(sql -c 'SELECT idgen_next()' -c 'SELECT pg_current_wal_flush_lsn()' | tail -n 1)
for ((i = 0; i < 100; i++)); do
	[ "$(sql -p "$standby_port" -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t ] && break
	sleep 0.05
done
do_scrape standby
echo "# the standby's idgen_lead_seconds: $(value idgen_lead_seconds)"
check "on the standby, the queries file loaded" queries_loaded
check "on the standby, every query ran" scrape_clean
check "on the standby: idgen_in_recovery 1, no worker runs, none should" \
	is "$(value idgen_in_recovery) $(value idgen_worker_processes 'worker="idgen fence"') $(value idgen_worker_expected 'worker="idgen fence"') $(value idgen_worker_processes 'worker="idgen lease"') $(value idgen_worker_expected 'worker="idgen lease"')" "1 0 0 0 0"
standby_scrape=$scrape
stop_exporter
stop_standby

# ---- 4. the rules ------------------------------------------------------------
echo "# the alerting rules"
promtool_out=$work/promtool.out
# promtool_in DIR ARGS...: promtool ARGS in DIR, its output shown if it fails
promtool_in()
{
	local dir=$1
	shift
	(cd "$dir" && "$promtool" "$@") >"$promtool_out" 2>&1 || { cat "$promtool_out" >&2; return 1; }
}
check "promtool check rules monitoring/idgen-alerts.yml" \
	promtool_in "$IDGEN_ROOT/monitoring" check rules idgen-alerts.yml
for t in "$IDGEN_ROOT"/monitoring/*_test.yml; do
	check "promtool test rules monitoring/${t##*/}" \
		promtool_in "$IDGEN_ROOT/monitoring" test rules "${t##*/}"
done

# real_rules NAME SCRAPE: the rules over the series of SCRAPE, each held for
# three hours, as one exporter's would be scraped (instance and job
# added): two hours in, only the lack of a time daemon may alert, where
# there is none
real_rules()
{
	local real_test=$work/$1_test.yml a labels
	{
		echo "rule_files: ['$alerts']"
		echo "evaluation_interval: 1m"
		echo "tests:"
		echo "  - interval: 1m"
		echo "    input_series:"
		awk "$series_awk"'
		/^(idgen_|pg_up)/ && $NF != "NaN" {
			s = series($0)
			if (s ~ /\{/) sub(/\}$/, ",instance=\"db\",job=\"idgen\"}", s)
			else s = s "{instance=\"db\",job=\"idgen\"}"
			printf "      - series: '\''%s'\''\n        values: '\''%s+0x180'\''\n", s, $NF
		}' "$2"
		echo "    alert_rule_test:"
		awk '/^[ ]+- alert: / { print $3 }' "$alerts" | while read -r a; do
			echo "      - alertname: $a"
			echo "        eval_time: 2h"
			if [ "$a" = IdgenClockUnsynchronized ] &&
				[ "$(scrape=$2 value idgen_clock_synchronized)" = 0 ]; then
				labels=$(awk "$series_awk"'/^idgen_clock_synchronized/ { s = series($0); sub(/^[^{]*\{/, "", s); sub(/\}$/, "", s); print s }' "$2")
				echo "        exp_alerts:"
				echo "          - exp_labels: {severity: warning, instance: db, job: idgen$(
					sed -E 's/([a-z_]+)="([^"]*)"/, \1: "\2"/g; s/",,/",/g' <<<"$labels")}"
				# its annotations as the rule writes them, for instance "db"
				echo "            exp_annotations:"
				awk -v a="$a" '
					/^[ ]+- alert: / { inside = ($3 == a) }
					inside && /^[ ]+(summary|description): "/ {
						sub(/^[ ]+/, "")
						gsub(/\{\{ \$labels\.instance \}\}/, "db")
						print "              " $0
					}' "$alerts"
			fi
		done
	} >"$real_test"
	promtool_in "$work" test rules "$real_test"
}

echo "# this machine's clock: synchronized $(scrape=$options_scrape value idgen_clock_synchronized), estimated error $(scrape=$options_scrape value idgen_clock_estimated_error_seconds) s"
check "on the primary's own series, no alert fires but for a clock without a time daemon" \
	real_rules primary "$options_scrape"
check "on the standby's own series, no alert fires but for a clock without a time daemon" \
	real_rules standby "$standby_scrape"

echo "# tests $tests"
if [ "$failed" -gt 0 ]; then
	echo "# $failed of $tests failed; the scrapes and logs: $work (IDGEN_KEEP=1 keeps them)"
	exit 1
fi
