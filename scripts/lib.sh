# scripts/lib.sh -- shell helpers shared by the idgen scripts (bash only)
# shellcheck shell=bash
#
# Source it; do not run it:
#
#	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Sourcing sets
#	IDGEN_ROOT      the repository root (the directory above scripts/)
#	PG_CONFIG       $PG_CONFIG if set, else /usr/lib/postgresql/15/bin/pg_config
#	PG_BINDIR       the server's bin directory (from PG_CONFIG), put first in PATH
#	IDGEN_RUN_USER  who runs servers when we are root (default postgres): initdb,
#	                pg_ctl, pg_regress --temp-instance and PostgreSQL::Test::Cluster
#	                all refuse to run as root
#
# Functions
#	idgen_log MSG... / idgen_warn MSG... / idgen_die MSG...
#	idgen_is_root                  true when running as uid 0
#	idgen_on_exit CMD [ARG...]     run CMD with its ARGs, each word as given (no
#	                               re-splitting, no eval: idgen_on_exit rm -rf -- "$d"),
#	                               when the script exits (last registered runs
#	                               first); this library owns the EXIT trap, so
#	                               register cleanups here instead of calling trap
#	idgen_on_exit_reset            forget the hooks registered so far (in a subshell
#	                               that cleans up only what it starts)
#	idgen_as_user CMD...           run CMD as $IDGEN_RUN_USER (runuser) when root,
#	                               keeping PATH, PG_CONFIG and LANG; else run it as is
#	idgen_workcopy                 set IDGEN_WORKDIR to a tree the server user can
#	                               write: when root, a copy of the repository (no .git,
#	                               no build outputs) in a fresh mktemp -d under /tmp,
#	                               chowned to $IDGEN_RUN_USER and removed at exit;
#	                               otherwise the repository itself
#	idgen_cluster_start DIR [LINE...]
#	                               initdb a throwaway cluster in DIR (must be new or
#	                               empty; "" = a fresh mktemp -d under /tmp), listening
#	                               only on a unix socket in DIR, on a free port, with
#	                               shared_preload_libraries = 'idgen' and then each
#	                               LINE appended to postgresql.conf (a later line wins,
#	                               e.g. "shared_preload_libraries = ''"); start it with
#	                               pg_ctl -w and export PGHOST PGPORT PGUSER PGDATABASE
#	                               so psql, pg_prove and pgbench find it.  At exit it is
#	                               stopped and DIR removed.  Sets IDGEN_CLUSTER_DIR,
#	                               IDGEN_PGDATA, IDGEN_PGLOG (the server log).
#	                               One cluster at a time.
#	idgen_pg_ctl ARGS...           pg_ctl -D $IDGEN_PGDATA ARGS as the server user,
#	                               e.g. "idgen_pg_ctl -w restart -m fast"
#	idgen_cluster_conf LINE...     append lines to the cluster's postgresql.conf
#	                               (then restart, or reload for sighup settings)
#	idgen_cluster_stop             stop the cluster and remove DIR (idempotent)
#	idgen_psql ARGS...             psql -X -v ON_ERROR_STOP=1 against the cluster
#	idgen_tail FILE [N]            print the last N (40) lines of FILE, headed by its name
#
# Environment read
#	IDGEN_KEEP=1        keep the temporary work copy and cluster directories
#	IDGEN_RUN_USER      see above

if [ -z "${BASH_VERSION:-}" ]; then
	echo "scripts/lib.sh needs bash" >&2
	return 1
fi

IDGEN_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
IDGEN_RUN_USER=${IDGEN_RUN_USER:-postgres}
if [ -x "$PG_CONFIG" ] || command -v "$PG_CONFIG" >/dev/null 2>&1; then
	PG_BINDIR=$("$PG_CONFIG" --bindir)
else
	PG_BINDIR=/usr/lib/postgresql/15/bin
fi
case ":$PATH:" in
	":$PG_BINDIR:"*) ;;
	*) PATH="$PG_BINDIR:$PATH" ;;
esac
export PATH PG_CONFIG PG_BINDIR IDGEN_ROOT IDGEN_RUN_USER

# A locale that exists on every Debian system, so initdb never trips over an
# ssh-forwarded LANG that is not generated here.
case "${LANG:-}" in
	C.UTF-8|C.utf8|C|POSIX) ;;
	*) export LANG=C.UTF-8 ;;
esac
unset LC_ALL LC_CTYPE LC_COLLATE LC_MESSAGES LC_MONETARY LC_NUMERIC LC_TIME

idgen_log()
{
	printf '%s: %s\n' "${IDGEN_PROG:-idgen}" "$*"
}

idgen_warn()
{
	printf '%s: WARNING: %s\n' "${IDGEN_PROG:-idgen}" "$*" >&2
}

idgen_die()
{
	printf '%s: ERROR: %s\n' "${IDGEN_PROG:-idgen}" "$*" >&2
	exit 1
}

idgen_is_root()
{
	[ "$(id -u)" -eq 0 ]
}

# ---- cleanup at exit ---------------------------------------------------------

# Each hook is kept as the words it was given, never joined into a string
# and split or eval'd again: IDGEN_EXIT_HOOK_WORDS holds every hook's words
# one after another, IDGEN_EXIT_HOOK_START where each hook's words begin and
# IDGEN_EXIT_HOOK_COUNT how many there are.
IDGEN_EXIT_HOOK_WORDS=()
IDGEN_EXIT_HOOK_START=()
IDGEN_EXIT_HOOK_COUNT=()

_idgen_run_exit_hooks()
{
	local rc=$? i start count
	set +e
	trap - EXIT
	for ((i = ${#IDGEN_EXIT_HOOK_START[@]} - 1; i >= 0; i--)); do
		start=${IDGEN_EXIT_HOOK_START[i]}
		count=${IDGEN_EXIT_HOOK_COUNT[i]}
		"${IDGEN_EXIT_HOOK_WORDS[@]:start:count}"
	done
	exit "$rc"
}

idgen_on_exit()
{
	[ $# -gt 0 ] || idgen_die "idgen_on_exit: no command given"
	IDGEN_EXIT_HOOK_START+=("${#IDGEN_EXIT_HOOK_WORDS[@]}")
	IDGEN_EXIT_HOOK_COUNT+=("$#")
	IDGEN_EXIT_HOOK_WORDS+=("$@")
	trap _idgen_run_exit_hooks EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# Forget every hook registered so far (a subshell that cleans up only what
# it starts itself).
idgen_on_exit_reset()
{
	IDGEN_EXIT_HOOK_WORDS=()
	IDGEN_EXIT_HOOK_START=()
	IDGEN_EXIT_HOOK_COUNT=()
}

# ---- running as the server user ----------------------------------------------

idgen_as_user()
{
	if idgen_is_root; then
		id -u "$IDGEN_RUN_USER" >/dev/null 2>&1 ||
			idgen_die "user \"$IDGEN_RUN_USER\" does not exist (set IDGEN_RUN_USER)"
		runuser -u "$IDGEN_RUN_USER" -- \
			env PATH="$PATH" PG_CONFIG="$PG_CONFIG" LANG="$LANG" "$@"
	else
		"$@"
	fi
}

# Files that are build or test outputs, never copied into a work tree.
IDGEN_COPY_EXCLUDES=(
	--exclude=./.git
	--exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude='*.a'
	--exclude=./results --exclude='./regression.*'
	--exclude='./tmp_check*' --exclude=./output_iso --exclude=./log
	--exclude=./bench/out --exclude=node_modules
	--exclude=./.idgen-build
)

_idgen_workcopy_cleanup()
{
	[ -n "${IDGEN_WORKDIR:-}" ] || return 0
	[ "$IDGEN_WORKDIR" != "$IDGEN_ROOT" ] || return 0
	if [ "${IDGEN_KEEP:-0}" = 1 ]; then
		idgen_log "kept work tree $IDGEN_WORKDIR"
	else
		rm -rf -- "$IDGEN_WORKDIR"
	fi
}

idgen_workcopy()
{
	if ! idgen_is_root; then
		IDGEN_WORKDIR=$IDGEN_ROOT
		return 0
	fi
	IDGEN_WORKDIR=$(mktemp -d /tmp/idgen-work.XXXXXX)
	idgen_on_exit _idgen_workcopy_cleanup
	tar -C "$IDGEN_ROOT" "${IDGEN_COPY_EXCLUDES[@]}" -cf - . |
		tar -C "$IDGEN_WORKDIR" -xf -
	chown -R "$IDGEN_RUN_USER:" "$IDGEN_WORKDIR"
	export IDGEN_WORKDIR
}

# ---- throwaway clusters ------------------------------------------------------

idgen_tail()
{
	local file=$1 n=${2:-40}
	[ -f "$file" ] || return 0
	printf '\n----- %s (last %s lines) -----\n' "$file" "$n"
	tail -n "$n" -- "$file"
}

# A TCP port nobody listens on (the cluster listens on its private socket only,
# but a port in use elsewhere would still confuse anyone reading the logs).
_idgen_free_port()
{
	local port i
	for ((i = 0; i < 200; i++)); do
		port=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	idgen_die "could not find a free port"
}

idgen_pg_ctl()
{
	[ -n "${IDGEN_PGDATA:-}" ] || idgen_die "no cluster is running"
	(cd "$IDGEN_CLUSTER_DIR" && idgen_as_user pg_ctl -D "$IDGEN_PGDATA" "$@")
}

idgen_cluster_conf()
{
	[ -n "${IDGEN_PGDATA:-}" ] || idgen_die "no cluster is running"
	printf '%s\n' "$@" >>"$IDGEN_PGDATA/postgresql.conf"
}

idgen_cluster_start()
{
	local dir=${1-} port line
	shift || true
	[ -z "${IDGEN_PGDATA:-}" ] || idgen_die "a cluster is already running in $IDGEN_CLUSTER_DIR"

	if [ -z "$dir" ]; then
		dir=$(mktemp -d /tmp/idgen-pg.XXXXXX)
	else
		mkdir -p -- "$dir"
		[ -z "$(ls -A -- "$dir")" ] || idgen_die "cluster directory $dir is not empty"
		dir=$(cd "$dir" && pwd)
	fi
	# unix socket paths are limited to 107 bytes
	[ ${#dir} -le 80 ] || idgen_die "cluster directory path too long for a socket: $dir"
	idgen_is_root && chown "$IDGEN_RUN_USER:" "$dir"
	chmod 700 "$dir"

	IDGEN_CLUSTER_DIR=$dir
	IDGEN_PGDATA=$dir/data
	IDGEN_PGLOG=$dir/server.log
	if [ -z "${_IDGEN_CLUSTER_HOOK:-}" ]; then
		idgen_on_exit idgen_cluster_stop
		_IDGEN_CLUSTER_HOOK=1
	fi

	if ! (cd "$dir" && idgen_as_user initdb -D "$IDGEN_PGDATA" -U postgres \
		-A trust --no-locale -E UTF8 >"$dir/initdb.log" 2>&1); then
		cat "$dir/initdb.log" >&2
		idgen_die "initdb failed"
	fi

	port=$(_idgen_free_port)
	{
		echo ""
		echo "# added by scripts/lib.sh (idgen_cluster_start)"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir'"
		echo "port = $port"
		echo "shared_preload_libraries = 'idgen'"
		for line in "$@"; do
			printf '%s\n' "$line"
		done
	} >>"$IDGEN_PGDATA/postgresql.conf"

	if ! idgen_pg_ctl -w -t 60 -l "$IDGEN_PGLOG" start >/dev/null; then
		idgen_tail "$IDGEN_PGLOG" 30 >&2
		idgen_die "could not start the cluster in $dir"
	fi

	export PGHOST=$dir PGPORT=$port PGUSER=postgres PGDATABASE=postgres
	export IDGEN_CLUSTER_DIR IDGEN_PGDATA IDGEN_PGLOG
}

idgen_cluster_stop()
{
	[ -n "${IDGEN_PGDATA:-}" ] || return 0
	if [ -f "$IDGEN_PGDATA/postmaster.pid" ]; then
		idgen_pg_ctl -w -t 60 -m fast stop >/dev/null 2>&1 ||
			idgen_pg_ctl -w -m immediate stop >/dev/null 2>&1 ||
			idgen_warn "could not stop the cluster in $IDGEN_CLUSTER_DIR"
	fi
	if [ "${IDGEN_KEEP:-0}" = 1 ]; then
		idgen_log "kept cluster directory $IDGEN_CLUSTER_DIR"
	else
		rm -rf -- "$IDGEN_CLUSTER_DIR"
	fi
	unset IDGEN_CLUSTER_DIR IDGEN_PGDATA IDGEN_PGLOG PGHOST PGPORT PGUSER PGDATABASE
}

idgen_psql()
{
	psql -X -v ON_ERROR_STOP=1 -P pager=off "$@"
}
