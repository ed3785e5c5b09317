#!/usr/bin/env bash
# scripts/matrix.sh -- every test suite on every PostgreSQL idgen supports
#
#	bash scripts/matrix.sh            # 15, 17, 18 and 19
#	bash scripts/matrix.sh 18         # one version (or several)
#
# Runs scripts/test.sh, the README's test command, once per version, with
# warnings as errors (PG_CFLAGS=-Werror):
#	15  on this machine (Debian 12 "bookworm"), as the README's command does
#	17  in a Debian 13 "trixie" root
#	18  in a Debian unstable "sid" root
#	19  in a "sid" root with Debian's "experimental" suite for PostgreSQL
# Each root is made with debootstrap from the Debian archive that this
# machine's apt already uses, with postgresql-N and postgresql-server-dev-N
# installed inside by apt-get; scripts/test.sh then installs the rest there
# as it does here.  Roots are kept between runs under $IDGEN_MATRIX_CACHE
# and made again when missing or broken.  A run in a root happens in its own
# mount and PID namespaces: /proc, /dev and /dev/shm are mounted for it, and
# the mounts and every process it started are gone when it ends, whatever
# happened.  A version whose root cannot be made counts as failed.
#
# PostgreSQL 16 is in no Debian suite reachable here: it is not tested.
#
# Needs root (debootstrap, chroot, mounts).  Environment:
#	IDGEN_MATRIX_CACHE   where roots are kept (/var/cache/idgen-matrix)
#	IDGEN_MATRIX_REBUILD=1  make every root afresh
#	IDGEN_SUITES, PROVE_TESTS, PROVE_FLAGS, IDGEN_KEEP  passed to scripts/test.sh

set -euo pipefail

IDGEN_PROG="matrix"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

IDGEN_MATRIX_VERSIONS=(15 17 18 19)
cache=${IDGEN_MATRIX_CACHE:-/var/cache/idgen-matrix}
host_codename=bookworm

idgen_is_root || idgen_die "needs root: it makes Debian roots with debootstrap and runs in them"

# Where each version comes from: "host", or the suite of a root.
suite_of()
{
	case $1 in
		15) echo host ;;
		17) echo trixie ;;
		18) echo sid ;;
		19) echo experimental ;;
		16) idgen_die "PostgreSQL 16 is in no Debian suite reachable here; it is not tested" ;;
		*) idgen_die "PostgreSQL $1 is not in the matrix (${IDGEN_MATRIX_VERSIONS[*]})" ;;
	esac
}

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=("${IDGEN_MATRIX_VERSIONS[@]}")
for v in "${versions[@]}"; do
	suite_of "$v" >/dev/null
done

export DEBIAN_FRONTEND=noninteractive
export PG_CFLAGS="${PG_CFLAGS:+$PG_CFLAGS }-Werror"

# The Debian archive this machine's apt uses, for debootstrap and the roots.
archive_uri()
{
	local uri
	uri=$(apt-cache policy 2>/dev/null |
		awk -v s=" $host_codename/main " 'index($0, s) { print $2; exit }')
	if [ -z "$uri" ]; then
		apt-get -q update >/dev/null
		uri=$(apt-cache policy 2>/dev/null |
			awk -v s=" $host_codename/main " 'index($0, s) { print $2; exit }')
	fi
	[ -n "$uri" ] || idgen_die "no Debian archive in this machine's apt sources"
	echo "$uri"
}

ensure_host_tools()
{
	local need=()
	command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
	command -v unshare >/dev/null 2>&1 || need+=(util-linux)
	[ ${#need[@]} -eq 0 ] && return 0
	idgen_log "installing: ${need[*]}"
	apt-get -q update >/dev/null
	apt-get -q install -y --no-install-recommends "${need[@]}" >/dev/null
}

# in_root ROOT CMD...: run CMD in ROOT, in new mount and PID namespaces with
# /proc, /dev and a private /dev/shm; all of it ends with CMD.
in_root()
{
	local root=$1
	shift
	unshare --mount --pid --fork --kill-child --propagation private -- \
		bash -c '
			root=$1
			shift
			mount -t proc proc "$root/proc" &&
				mount --rbind /dev "$root/dev" &&
				mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm" || exit 1
			exec chroot "$root" /usr/bin/env -i \
				PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
				HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
		' in_root "$root" "$@"
}

# Nothing stays mounted in a root: the namespaces see to it, this checks it.
check_unmounted()
{
	local root=$1 m
	m=$(findmnt -rn -o TARGET | grep -F "$root/" || true)
	[ -z "$m" ] && return 0
	idgen_warn "still mounted under $root, unmounting: $m"
	umount -R -l "$root/proc" "$root/dev" 2>/dev/null || true
}

root_dir()
{
	echo "$cache/pg$1-$(suite_of "$1")"
}

root_ok()
{
	local v=$1 root
	root=$(root_dir "$v")
	[ -f "$root/.idgen-matrix-ready" ] &&
		in_root "$root" "/usr/lib/postgresql/$v/bin/pg_config" --version >/dev/null 2>&1
}

# make_root VERSION: debootstrap a root and install the server and its headers.
make_root()
{
	local v=$1 suite base root tmp uri log
	suite=$(suite_of "$v")
	base=$suite
	[ "$suite" = experimental ] && base=sid
	root=$(root_dir "$v")
	tmp=$root.new
	log=$cache/pg$v-make-root.log
	uri=$(archive_uri)

	check_unmounted "$tmp"
	rm -rf -- "$tmp"
	mkdir -p -- "$cache"
	idgen_log "PostgreSQL $v: making a Debian $suite root in $root (log: $log)"
	{
		debootstrap --variant=minbase "$base" "$tmp" "$uri" ||
			{ rm -rf -- "$tmp" && debootstrap --variant=minbase "$base" "$tmp" "$uri"; }

		# sid and experimental Release files may be past their Valid-Until
		cat >"$tmp/etc/apt/apt.conf.d/90idgen-matrix" <<-EOF
			Acquire::Check-Valid-Until "false";
			APT::Install-Recommends "false";
		EOF
		{
			echo "deb $uri $base main"
			echo "deb-src $uri $base main"
			if [ "$suite" = experimental ]; then
				echo "deb $uri experimental main"
				echo "deb-src $uri experimental main"
			fi
		} >"$tmp/etc/apt/sources.list"
		if [ "$suite" = experimental ]; then
			# only the server's packages come from experimental
			cat >"$tmp/etc/apt/preferences.d/90idgen-matrix" <<-EOF
				Package: postgresql-$v* postgresql-client-$v postgresql-server-dev-$v libpq5 libpq-dev
				Pin: release a=experimental
				Pin-Priority: 990
			EOF
		fi
		# no services started, no "main" cluster made inside the root
		printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
		chmod 755 "$tmp/usr/sbin/policy-rc.d"
		mkdir -p "$tmp/etc/postgresql-common"
		echo "create_main_cluster = false" >"$tmp/etc/postgresql-common/createcluster.conf"

		in_root "$tmp" apt-get -q update &&
			in_root "$tmp" apt-get -q install -y "postgresql-$v" "postgresql-server-dev-$v"
	} >"$log" 2>&1 || {
		idgen_tail "$log" 40 >&2
		check_unmounted "$tmp"
		rm -rf -- "$tmp"
		return 1
	}
	check_unmounted "$tmp"
	touch "$tmp/.idgen-matrix-ready"
	rm -rf -- "$root"
	mv -- "$tmp" "$root"
}

# run_version VERSION: scripts/test.sh for one version.
run_version()
{
	local v=$1 root src rc=0
	local pass_env=(PG_CFLAGS="$PG_CFLAGS" CI="${CI:-}")
	local name
	for name in IDGEN_SUITES PROVE_TESTS PROVE_FLAGS IDGEN_KEEP; do
		[ -z "${!name:-}" ] || pass_env+=("$name=${!name}")
	done

	if [ "$(suite_of "$v")" = host ]; then
		env "${pass_env[@]}" PG_CONFIG="/usr/lib/postgresql/$v/bin/pg_config" \
			bash "$here/test.sh" || rc=$?
		return $rc
	fi

	root=$(root_dir "$v")
	if [ "${IDGEN_MATRIX_REBUILD:-0}" = 1 ] || ! root_ok "$v"; then
		make_root "$v" || {
			idgen_warn "PostgreSQL $v: could not make the root"
			return 1
		}
	else
		idgen_log "PostgreSQL $v: using the root in $root"
	fi

	# a copy of the tree, as scripts/test.sh copies it for the server user;
	# a directory of its own, so two runs can share a root
	src=$(mktemp -d "$root/var/tmp/idgen-src.XXXXXX")
	tar -C "$IDGEN_ROOT" "${IDGEN_COPY_EXCLUDES[@]}" -cf - . | tar -C "$src" -xf -
	in_root "$root" env "${pass_env[@]}" \
		PG_CONFIG="/usr/lib/postgresql/$v/bin/pg_config" \
		bash "/var/tmp/${src##*/}/scripts/test.sh" || rc=$?
	check_unmounted "$root"
	rm -rf -- "$src"
	return $rc
}

ensure_host_tools
logs=$(mktemp -d /tmp/idgen-matrix.XXXXXX)
idgen_on_exit rm -rf -- "$logs"

declare -A status=() seconds=()
for v in "${versions[@]}"; do
	printf '\n########## PostgreSQL %s (%s) ##########\n' "$v" "$(suite_of "$v")"
	start=$SECONDS
	if run_version "$v" 2>&1 | tee "$logs/$v.out"; then
		status[$v]=PASS
	else
		status[$v]=FAIL
	fi
	seconds[$v]=$((SECONDS - start))
done

# One table: for each version, each suite's result and how many tests it ran,
# read from the summary scripts/test.sh printed.
printf '\n########## matrix summary ##########\n'
pass=0 fail=0
for v in "${versions[@]}"; do
	printf 'PostgreSQL %s (%s, %d s): %s\n' "$v" "$(suite_of "$v")" "${seconds[$v]}" "${status[$v]}"
	summary=$(sed -n '/^===== summary/,$p' "$logs/$v.out" |
		grep -E '^  (regress|isolation|tap|pgtap|clients) ' || true)
	if [ -z "$summary" ]; then
		echo "  no suite ran"
		fail=$((fail + 1))
		continue
	fi
	printf '%s\n' "$summary"
	while read -r _ r _; do
		case $r in
			PASS) pass=$((pass + 1)) ;;
			SKIP) ;;
			*) fail=$((fail + 1)) ;;
		esac
	done <<<"$summary"
	# a version whose run failed outside the suites still fails
	if [ "${status[$v]}" != PASS ] && ! grep -qE '^  [a-z]+ +FAIL' <<<"$summary"; then
		fail=$((fail + 1))
	fi
done
echo
echo "matrix: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
