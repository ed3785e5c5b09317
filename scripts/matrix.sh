#!/usr/bin/env bash
# scripts/matrix.sh -- every test suite on every PostgreSQL idgen supports,
# each from nothing
#
#	bash scripts/matrix.sh            # 15, 17, 18 and 19, the package, PGXN, Citus
#	bash scripts/matrix.sh 18         # one version (or several)
#	bash scripts/matrix.sh deb pgxn   # only the package, only the PGXN archive
#	bash scripts/matrix.sh --bases    # only make the pristine bases
#
# Each job runs in a Debian root that starts pristine: a base made once with
# debootstrap holding only that release's PostgreSQL server, as a fresh
# machine has it, is overlaid afresh for every run (overlayfs, in a private
# mount namespace) and thrown away after it, so nothing installed on this
# machine or left by an earlier run can make a job pass.  Inside, the
# README's test command, scripts/test.sh, installs everything else itself
# with apt-get and runs every suite with warnings as errors (-Wextra -Werror):
#	15    Debian 12 "bookworm", after the README's other command, the demo;
#	      the only job with the nemesis, poolers and monitoring suites
#	      (t/nemesis/, test/poolers/, test/monitoring/)
#	17    Debian 13 "trixie", idgen built with its assertions on
#	      (-DUSE_ASSERT_CHECKING, against Debian's server, built without)
#	18    Debian unstable "sid", with the frameworks suite (as 15 has it)
#	      and the analyze suite (clang's scan-build, zero reports)
#	19    "sid" with Debian's "experimental" suite for PostgreSQL
#	deb   bookworm: the Debian package built from debian/ in one fresh root,
#	      installed into another, preloaded, and the suites run against it:
#	      regress, isolation and pgTAP whole, and of TAP the files that
#	      touch what the package puts in place (deb_tap_tests below); job
#	      15 runs every TAP file on the same PostgreSQL
#	pgxn  bookworm: make dist's zip installed with pgxnclient and checked
#	      with `pgxn check`
#	citus17, citus18
#	      trixie, sid: Citus built from its source archive inside the root
#	      (scripts/citus.sh), then the citus suite (t/citus/) only
# Bases are kept under $IDGEN_MATRIX_CACHE and made again when missing, made
# by an older recipe, or broken; downloaded .debs are kept there too.  The
# jobs 15, deb and pgxn test installing from nothing, and install everything
# in every run.  17, 18, 19 and the Citus jobs test the suites: they start
# from a cached layer over the pristine base holding what scripts/setup.sh
# (and, for Citus, scripts/citus.sh) installed when run in it, made again
# when the base, those scripts or Citus's archive change.  A run's mounts and processes
# are gone when it ends, whatever happened.  A job whose base cannot be made
# counts as failed.
#
# PostgreSQL 16 is in no Debian suite reachable here: it is not tested.
#
# Needs root (debootstrap, mounts, chroot).  Environment:
#	IDGEN_MATRIX_CACHE      where bases are kept (/var/cache/idgen-matrix)
#	IDGEN_MATRIX_REBUILD=1  make every base afresh
#	IDGEN_SUITES, PROVE_TESTS, PROVE_FLAGS, IDGEN_KEEP, IDGEN_TAP_JOBS and
#	IDGEN_NEMESIS_SEEDS, _SECONDS, _SERVERS  passed to scripts/test.sh
#	IDGEN_MATRIX_PARALLEL   jobs at once (2); each runs IDGEN_TAP_JOBS TAP
#	                        files at once, 2 where jobs run side by side
#	IDGEN_CITUS_TARBALL     Citus's source archive for the citus jobs, with
#	                        its .sha256 beside it (default
#	                        $IDGEN_ROOT/../shared/vendor/citus-14.0.1.tar.gz,
#	                        or the same beside the repository this one was
#	                        cloned from); without it those jobs say SKIP

set -euo pipefail

IDGEN_PROG="matrix"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

IDGEN_MATRIX_JOBS=(15 17 18 19 deb pgxn citus17 citus18)
cache=${IDGEN_MATRIX_CACHE:-/var/cache/idgen-matrix}
# Bump when make_base changes: bases made by an older recipe are made again.
base_recipe=2

idgen_is_root || idgen_die "needs root: it makes Debian roots with debootstrap and runs in them"

# The PostgreSQL version and the Debian suite of each job.
version_of()
{
	case $1 in
		deb|pgxn) echo 15 ;;
		citus*) echo "${1#citus}" ;;
		*) echo "$1" ;;
	esac
}

suite_of()
{
	case $(version_of "$1") in
		15) echo bookworm ;;
		17) echo trixie ;;
		18) echo sid ;;
		19) echo experimental ;;
		16) idgen_die "PostgreSQL 16 is in no Debian suite reachable here; it is not tested" ;;
		*) idgen_die "$1 is not in the matrix (${IDGEN_MATRIX_JOBS[*]})" ;;
	esac
}

bases_only=0
if [ "${1:-}" = --bases ]; then
	bases_only=1
	shift
fi
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=("${IDGEN_MATRIX_JOBS[@]}")
for j in "${jobs[@]}"; do
	suite_of "$j" >/dev/null
done

export DEBIAN_FRONTEND=noninteractive
export PG_CFLAGS="${PG_CFLAGS:+$PG_CFLAGS }-Werror"

# The Debian archives this machine's apt uses ("URI SUITE" lines read from
# apt-cache policy), for debootstrap and the roots.
archive_uri()
{
	local want=$1 out uri
	out=$(apt-cache policy 2>/dev/null || true)
	uri=$(awk -v s=" $want/main " 'index($0, s) { print $2; exit }' <<<"$out")
	if [ -z "$uri" ]; then
		apt-get -q update >/dev/null
		out=$(apt-cache policy 2>/dev/null || true)
		uri=$(awk -v s=" $want/main " 'index($0, s) { print $2; exit }' <<<"$out")
	fi
	echo "$uri"
}

ensure_host_tools()
{
	local need=()
	command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
	command -v unshare >/dev/null 2>&1 || need+=(util-linux)
	[ ${#need[@]} -eq 0 ] && return 0
	idgen_log "installing on this machine: ${need[*]}"
	apt-get -q update >/dev/null
	apt-get -q install -y --no-install-recommends "${need[@]}" >/dev/null
}

# in_root ROOT CMD...: run CMD in ROOT (used while a base is made), in new
# mount and PID namespaces with /proc, /dev and a private /dev/shm.
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

# Nothing stays mounted under a directory: the namespaces see to it, this
# checks it before anything is removed.
check_unmounted()
{
	local dir=$1 out m
	out=$(findmnt -rn -o TARGET || true)
	m=$(grep -F "$dir/" <<<"$out" || true)
	[ -z "$m" ] && return 0
	idgen_warn "still mounted under $dir, unmounting: $m"
	umount -R -l "$dir"/* 2>/dev/null || true
}

base_dir()
{
	echo "$cache/base-pg$(version_of "$1")-$(suite_of "$1")"
}

base_stamp()
{
	echo "recipe $base_recipe: postgresql-$(version_of "$1") on $(suite_of "$1")"
}

base_ok()
{
	local base
	base=$(base_dir "$1")
	[ -f "$base/.idgen-base" ] &&
		[ "$(cat "$base/.idgen-base")" = "$(base_stamp "$1")" ] &&
		in_root "$base" "/usr/lib/postgresql/$(version_of "$1")/bin/postgres" --version >/dev/null 2>&1
}

# make_base JOB: debootstrap a minimal root and install PostgreSQL's server
# in it, nothing else: what a fresh machine of that release has.  The apt
# lists are then removed, so the test command has to read them itself.
make_base()
{
	local j=$1 v suite dist base tmp uri sec log
	v=$(version_of "$j")
	suite=$(suite_of "$j")
	dist=$suite
	[ "$suite" = experimental ] && dist=sid
	base=$(base_dir "$j")
	tmp=$base.new
	log=$cache/base-pg$v-$suite.log
	uri=$(archive_uri bookworm)
	[ -n "$uri" ] || idgen_die "no Debian archive in this machine's apt sources"
	sec=$(archive_uri bookworm-security)

	check_unmounted "$tmp"
	rm -rf -- "$tmp"
	mkdir -p -- "$cache"
	idgen_log "PostgreSQL $v: making a pristine Debian $suite base in $base (log: $log)"
	{
		debootstrap --variant=minbase "$dist" "$tmp" "$uri" ||
			{ rm -rf -- "$tmp" && debootstrap --variant=minbase "$dist" "$tmp" "$uri"; }

		# sid and experimental Release files may be past their Valid-Until
		cat >"$tmp/etc/apt/apt.conf.d/90idgen-matrix" <<-EOT
			Acquire::Check-Valid-Until "false";
			APT::Install-Recommends "false";
		EOT
		{
			echo "deb $uri $dist main"
			echo "deb-src $uri $dist main"
			if [ "$dist" = bookworm ]; then
				echo "deb $uri bookworm-updates main"
				[ -z "$sec" ] || echo "deb $sec bookworm-security main"
			fi
			if [ "$suite" = experimental ]; then
				echo "deb $uri experimental main"
				echo "deb-src $uri experimental main"
			fi
		} >"$tmp/etc/apt/sources.list"
		if [ "$suite" = experimental ]; then
			# only the server's packages come from experimental
			cat >"$tmp/etc/apt/preferences.d/90idgen-matrix" <<-EOT
				Package: postgresql-$v* postgresql-client-$v postgresql-server-dev-$v libpq5 libpq-dev
				Pin: release a=experimental
				Pin-Priority: 990
			EOT
		fi
		# no services started, no "main" cluster made inside the root
		printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
		chmod 755 "$tmp/usr/sbin/policy-rc.d"
		mkdir -p "$tmp/etc/postgresql-common"
		echo "create_main_cluster = false" >"$tmp/etc/postgresql-common/createcluster.conf"

		in_root "$tmp" apt-get -q update &&
			in_root "$tmp" apt-get -q install -y "postgresql-$v" &&
			in_root "$tmp" apt-get -q clean &&
			find "$tmp/var/lib/apt/lists" -mindepth 1 -delete
	} >"$log" 2>&1 || {
		idgen_tail "$log" 40 >&2
		check_unmounted "$tmp"
		rm -rf -- "$tmp"
		return 1
	}
	check_unmounted "$tmp"
	base_stamp "$j" >"$tmp/.idgen-base"
	check_unmounted "$base"
	rm -rf -- "$base"
	mv -- "$tmp" "$base"
}

ensure_base()
{
	local j=$1
	if [ "${IDGEN_MATRIX_REBUILD:-0}" != 1 ] && base_ok "$j"; then
		idgen_log "$j: the pristine $(suite_of "$j") base in $(base_dir "$j")"
		return 0
	fi
	make_base "$j" || {
		idgen_warn "$j: could not make the base"
		return 1
	}
}

# in_overlay LOWER UPPER DEBS SRC OUT CMD...: CMD as root in an overlay whose
# read-only layers are LOWER (dir:dir, the first on top) and whose writes go to
# UPPER, with the download cache DEBS, the directory SRC at /var/tmp/idgen-src
# and OUT at /var/tmp/idgen-out (both on this machine, so what is written there
# outlives the run), in new mount and PID namespaces.  UPPER is left to the
# caller: a job throws it away, a layer keeps it.
in_overlay()
{
	local lower=$1 upper=$2 debs=$3 src=$4 out=$5 run rc=0
	shift 5
	mkdir -p -- "$debs" "$upper"
	# the root directory takes the upper layer's mode: mktemp's 0700 would
	# shut every user but root out of the whole root
	chmod 755 "$upper"
	run=$(mktemp -d "$cache/run.XXXXXX")
	mkdir -p -- "$run/work" "$run/root" "$run/debs" "$run/debs-work"
	unshare --mount --pid --fork --kill-child --propagation private -- \
		bash -c '
			lower=$1 upper=$2 run=$3 debs=$4 src=$5 out=$6
			shift 6
			r=$run/root
			mount -t overlay overlay \
				-o "lowerdir=$lower,upperdir=$upper,workdir=$run/work" "$r" &&
				mount -t proc proc "$r/proc" &&
				mount --rbind /dev "$r/dev" &&
				mount -t tmpfs -o mode=1777 tmpfs "$r/dev/shm" &&
				mount -t overlay overlay \
					-o "lowerdir=$debs,upperdir=$run/debs,workdir=$run/debs-work" \
					"$r/var/cache/apt/archives" &&
				mkdir -p "$r/var/tmp/idgen-src" "$r/var/tmp/idgen-out" &&
				mount --bind "$src" "$r/var/tmp/idgen-src" &&
				mount --bind "$out" "$r/var/tmp/idgen-out" || exit 1
			# the certificate authorities this machine trusts locally (a
			# TLS proxy in front of the npm registry, say) are trusted
			# inside too: the root is this machine, freshly installed
			ca=()
			if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
				mkdir -p "$r/usr/local/share/ca-certificates" &&
					cp /usr/local/share/ca-certificates/*.crt "$r/usr/local/share/ca-certificates/" &&
					cat /usr/local/share/ca-certificates/*.crt >"$r/etc/idgen-local-ca.crt" || exit 1
				ca=(NODE_EXTRA_CA_CERTS=/etc/idgen-local-ca.crt)
			fi
			exec chroot "$r" /usr/bin/env -i \
				PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
				HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "${ca[@]}" "$@"
		' in_overlay "$lower" "$upper" "$run" "$debs" "$src" "$out" "$@" || rc=$?
	check_unmounted "$run"
	keep_debs "$run/debs" "$debs"
	rm -rf -- "$run"
	return $rc
}

# run_fresh JOB SRC OUT CMD...: CMD in a fresh overlay of JOB's base (and of
# its layer, for the jobs that have one), thrown away afterwards: the base
# and the layer never change.
run_fresh()
{
	local j=$1 src=$2 out=$3 lower upper rc=0
	shift 3
	lower=$(base_dir "$j")
	[ -z "$(layer_of "$j")" ] || lower=$(layer_dir "$j"):$lower
	upper=$(mktemp -d "$cache/upper.XXXXXX")
	in_overlay "$lower" "$upper" "$cache/debs-$(suite_of "$j")" "$src" "$out" "$@" || rc=$?
	rm -rf -- "$upper"
	return $rc
}

# suites_of JOB: the suites of a job that runs scripts/test.sh's default set
# in part (IDGEN_SUITES when given).  The nemesis suite runs on 15 alone: it
# proves the same mechanisms on every version, and takes two minutes; so
# does the poolers suite: pgbouncer passes idgen's SQL through unchanged,
# whatever the server's version.  The
# frameworks suite runs on 15 (Debian 12's frameworks, through the README's
# command) and 18 (sid's, the newest): the frameworks test idgen's SQL, which
# is the same on every server.  The monitoring suite runs on 15 alone:
# Debian 12's exporter, the one monitoring/ is written for, reads the same
# views on every server.
# The analyze suite runs on 18 alone, with sid's clang, the newest
# analyser; it reads the same code on every version.
suites_of()
{
	if [ -n "${IDGEN_SUITES:-}" ]; then
		echo "$IDGEN_SUITES"
		return
	fi
	case $1 in
		18) echo "regress isolation tap pgtap clients frameworks citus analyze" ;;
		citus*) echo citus ;;
		*) echo "regress isolation tap pgtap clients citus" ;;
	esac
}

# ---- cached layers -----------------------------------------------------------
# The jobs that test the suites, not the installation (17, 18, 19 and the
# Citus jobs), start from a layer over the pristine base holding what
# scripts/setup.sh installs (and, for Citus, Citus built by scripts/citus.sh).
# The layer is made by those scripts themselves in a fresh overlay of the
# base, its apt lists removed as in the base, and kept until the base, the
# scripts or Citus's archive change: a package the scripts stop installing is
# gone from the next layer.  The jobs that test installing from nothing stay
# pristine: 15 (the README's two commands), deb and pgxn.
layer_recipe=1

layer_of()
{
	case $1 in
		17|18|19) echo tools ;;
		citus*) echo citus ;;
	esac
}

layer_dir()
{
	echo "$cache/layer-$(layer_of "$1")-pg$(version_of "$1")-$(suite_of "$1")"
}

# layer_stamp JOB: what the layer was made from
layer_stamp()
{
	local j=$1 base
	base=$(base_dir "$j")
	echo "layer recipe $layer_recipe: $(base_stamp "$j"), base made $(stat -c %Y "$base/.idgen-base"), for $(suites_of "$j")"
	(cd "$tree_snapshot" && sha256sum scripts/setup.sh scripts/lib.sh)
	if [ "$(layer_of "$j")" = citus ]; then
		(cd "$tree_snapshot" && sha256sum scripts/citus.sh)
		cat -- "$(citus_tarball).sha256"
	fi
}

layer_ok()
{
	local dir
	dir=$(layer_dir "$1")
	[ -d "$dir" ] && [ -f "$dir.stamp" ] && [ "$(cat -- "$dir.stamp")" = "$(layer_stamp "$1")" ]
}

# make_layer JOB: JOB's layer, made afresh
make_layer()
{
	local j=$1 v dir tmp log cmd
	v=$(version_of "$j")
	dir=$(layer_dir "$j")
	log=$dir.log
	tmp=$(mktemp -d "$cache/layer.XXXXXX")
	mkdir -p -- "$tmp/out"
	copy_tree "$tmp/src"
	cmd="IDGEN_PACKAGES_ONLY=1 IDGEN_SUITES='$(suites_of "$j")' bash /var/tmp/idgen-src/scripts/setup.sh"
	if [ "$(layer_of "$j")" = citus ]; then
		cp -- "$(citus_tarball)" "$(citus_tarball).sha256" "$tmp/out/"
		cmd+=" && bash /var/tmp/idgen-src/scripts/citus.sh /var/tmp/idgen-out/$(basename "$(citus_tarball)")"
	fi
	cmd+=' && apt-get -q clean && find /var/lib/apt/lists -mindepth 1 -delete'
	idgen_log "$j: making its layer of packages in $dir (log: $log)"
	if ! in_overlay "$(base_dir "$j")" "$tmp/upper" "$cache/debs-$(suite_of "$j")" \
		"$tmp/src" "$tmp/out" env PG_CONFIG="/usr/lib/postgresql/$v/bin/pg_config" \
		bash -c "$cmd" >"$log" 2>&1; then
		idgen_tail "$log" 40 >&2
		rm -rf -- "$tmp"
		return 1
	fi
	rm -rf -- "$dir" "$dir.stamp"
	mv -- "$tmp/upper" "$dir"
	layer_stamp "$j" >"$dir.stamp"
	rm -rf -- "$tmp"
}

ensure_layer()
{
	local j=$1
	[ -n "$(layer_of "$j")" ] || return 0
	if [ "$(layer_of "$j")" = citus ] && ! citus_tarball >/dev/null; then
		return 0	# the job says SKIP
	fi
	if [ "${IDGEN_MATRIX_REBUILD:-0}" != 1 ] && layer_ok "$j"; then
		idgen_log "$j: its layer of packages in $(layer_dir "$j")"
		return 0
	fi
	make_layer "$j" || {
		idgen_warn "$j: could not make its layer"
		return 1
	}
}

# keep_debs UPPER CACHE: the .debs a run downloaded (its overlay's upper
# layer) into the shared cache.  Each root sees the cache through an overlay
# of its own, so that two jobs of one Debian release never contend for apt's
# lock on it; a rename is atomic, so the same file kept by both is whole.
keep_debs()
{
	local f
	for f in "$1"/*.deb; do
		[ -f "$f" ] || continue
		[ -e "$2/${f##*/}" ] || mv -f -- "$f" "$2/" || true
	done
}

# copy_tree DIR: the tree, without build outputs, into DIR
# The tree as it was when the matrix started (snapshot_tree): every job
# tests that one tree, even if the work tree changes while they run.
tree_snapshot=
tree_head=

snapshot_tree()
{
	tree_snapshot=$1
	mkdir -p -- "$tree_snapshot"
	tar -C "$IDGEN_ROOT" "${IDGEN_COPY_EXCLUDES[@]}" -cf - . | tar -C "$tree_snapshot" -xf -
	tree_head=$(git -C "$IDGEN_ROOT" rev-parse HEAD) ||
		idgen_die "$IDGEN_ROOT is not a git checkout"
}

copy_tree()
{
	mkdir -p -- "$1"
	tar -C "$tree_snapshot" -cf - . | tar -C "$1" -xf -
}

# clone_head DIR: a clone of the repository at the HEAD the matrix started
# with (make dist archives HEAD;
# a clone also works from a git worktree, whose .git is only a pointer)
clone_head()
{
	git clone -q --no-checkout "$IDGEN_ROOT" "$1" &&
		git -C "$1" checkout -q --detach "$tree_head"
}

# The job whose idgen is built with its Assert()s compiled in, against
# Debian's server (built without them: ExceptionalCondition is there all the
# same).  One job is enough, as the code is the same on every version, and
# it costs that job nothing measurable; 17, the shortest, keeps the
# matrix's time.
assert_job=17

# test_env JOB: the environment JOB's scripts run with
test_env()
{
	local name cflags=$PG_CFLAGS
	[ "$1" != "$assert_job" ] || cflags="$cflags -DUSE_ASSERT_CHECKING"
	printf '%s\n' "PG_CFLAGS=$cflags" "CI=${CI:-}"
	for name in IDGEN_SUITES PROVE_TESTS PROVE_FLAGS IDGEN_KEEP IDGEN_TAP_JOBS \
		IDGEN_NEMESIS_SEEDS IDGEN_NEMESIS_SECONDS IDGEN_NEMESIS_SERVERS; do
		[ -z "${!name:-}" ] || printf '%s\n' "$name=${!name}"
	done
}

# citus_tarball: Citus's source archive, kept beside the repository (or the
# repository this one was cloned from) in shared/vendor, or where
# IDGEN_CITUS_TARBALL says
citus_tarball()
{
	local name=citus-14.0.1.tar.gz origin c
	local candidates=("$IDGEN_ROOT/../shared/vendor/$name")
	origin=$(git -C "$IDGEN_ROOT" remote get-url origin 2>/dev/null || true)
	[ -z "$origin" ] || [ ! -d "$origin" ] || candidates+=("$origin/../shared/vendor/$name")
	[ -z "${IDGEN_CITUS_TARBALL:-}" ] || candidates=("$IDGEN_CITUS_TARBALL")
	for c in "${candidates[@]}"; do
		if [ -f "$c" ] && [ -f "$c.sha256" ]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

# run_job JOB WORKDIR: one job, in fresh roots.
run_job()
{
	local j=$1 w=$2 v env=()
	v=$(version_of "$j")
	mapfile -t env < <(test_env "$j")
	ensure_base "$j" || return 1
	ensure_layer "$j" || return 1
	mkdir -p -- "$w/out"
	case $j in
		deb)
			# built in one fresh root, installed and tested in another
			copy_tree "$w/src"
			run_fresh "$j" "$w/src" "$w/out" env "${env[@]}" \
				bash /var/tmp/idgen-src/scripts/deb.sh build /var/tmp/idgen-out || return 1
			rm -rf -- "$w/src"
			copy_tree "$w/src"
			run_fresh "$j" "$w/src" "$w/out" env "${env[@]}" \
				PROVE_TESTS="${PROVE_TESTS:-$deb_tap_tests}" \
				bash /var/tmp/idgen-src/scripts/deb.sh test /var/tmp/idgen-out
			;;
		pgxn)
			clone_head "$w/src" || return 1
			run_fresh "$j" "$w/src" "$w/out" env "${env[@]}" \
				PG_CONFIG="/usr/lib/postgresql/$v/bin/pg_config" \
				bash /var/tmp/idgen-src/scripts/pgxn.sh
			;;
		citus*)
			# Citus is a test dependency, never part of the tree: its
			# archive, checked here and again inside, goes in beside the
			# outputs, is built there, and only its suite runs
			local tarball
			tarball=$(citus_tarball) || {
				# outside the tree: a clone elsewhere may not have it
				idgen_warn "$j: no Citus source archive (and .sha256) found; set IDGEN_CITUS_TARBALL"
				printf '  %-10s SKIP   no Citus source archive\n' citus
				return 0
			}
			(cd "$(dirname "$tarball")" && sha256sum --quiet -c "$(basename "$tarball").sha256") || {
				idgen_warn "$j: $tarball does not match its checksum"
				return 1
			}
			cp -- "$tarball" "$tarball.sha256" "$w/out/"
			copy_tree "$w/src"
			run_fresh "$j" "$w/src" "$w/out" env "${env[@]}" \
				PG_CONFIG="/usr/lib/postgresql/$v/bin/pg_config" IDGEN_SUITES="$(suites_of "$j")" \
				bash -c 'bash /var/tmp/idgen-src/scripts/citus.sh "/var/tmp/idgen-out/$1" &&
					bash /var/tmp/idgen-src/scripts/test.sh' citus "$(basename "$tarball")"
			;;
		15)
			# Debian 12, the machine the README's two commands are written
			# for: the first one, the demo, from nothing, then the second
			copy_tree "$w/src"
			run_fresh "$j" "$w/src" "$w/out" env "${env[@]}" \
				PG_CONFIG="/usr/lib/postgresql/$v/bin/pg_config" \
				bash -c 'bash /var/tmp/idgen-src/scripts/demo.sh &&
					bash /var/tmp/idgen-src/scripts/test.sh'
			;;
		*)
			copy_tree "$w/src"
			run_fresh "$j" "$w/src" "$w/out" env "${env[@]}" \
				PG_CONFIG="/usr/lib/postgresql/$v/bin/pg_config" \
				IDGEN_SUITES="$(suites_of "$j")" \
				bash /var/tmp/idgen-src/scripts/test.sh
			;;
	esac
}

# The package's TAP files: the preload and the library's path, its state
# file in the data directory across restarts and a lost file, a standby,
# and pg_upgrade with the package's binaries.  The rest test the code, which
# is the same as job 15's, not the package.
deb_tap_tests="t/001_preload.pl t/002_standby.pl t/004_restart.pl t/009_state_file.pl t/033_layout_pg_upgrade.pl"

# make_bases JOB...: every base the jobs need, made side by side (the time
# goes to downloads, not to the processors); fails if one could not be made.
# Each layer is made by its job (run_job), the only one that uses it, so
# that the pristine jobs run meanwhile.
make_bases()
{
	local j key pids=() rc=0 pid
	declare -A seen=()
	for j in "$@"; do
		key=$(base_dir "$j")
		[ -z "${seen[$key]:-}" ] || continue
		seen[$key]=1
		ensure_base "$j" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || rc=1
	done
	return $rc
}

ensure_host_tools
logs=$(mktemp -d "${TMPDIR:-/tmp}/idgen-matrix.XXXXXX")
idgen_on_exit rm -rf -- "$logs"
snapshot_tree "$logs/tree"
if [ "$bases_only" = 1 ]; then
	make_bases "${jobs[@]}"
	exit
fi
# a base that failed here is tried again, alone, by its job
make_bases "${jobs[@]}" || true
bases_seconds=$SECONDS

# ---- jobs side by side -------------------------------------------------------
# A job spends most of its time waiting (servers starting, leases expiring,
# clocks passing), so IDGEN_MATRIX_PARALLEL jobs (2) run at once, each in its
# own fresh root with its own output file, longest first so that the short
# ones fill the end.  Jobs share nothing but the download caches, and each
# root sees those through an overlay of its own (run_fresh).  The Citus
# jobs listen on 127.0.0.1, the only suites that do: two roots share one
# network, and PostgreSQL::Test::Cluster can only keep its own nodes' ports
# apart, so those two never run at once.
parallel=${IDGEN_MATRIX_PARALLEL:-2}
# Two jobs of four TAP files each put eight servers' clocks, starts and
# lease renewals on two cores, and the tests that measure them (a clock set
# 2 s behind a start, a lease renewed within a third of its length) failed
# by contention in 18 and 19 side by side; two files a job keep four at
# once, as one job of four did.
export IDGEN_TAP_JOBS=${IDGEN_TAP_JOBS:-$((parallel > 1 ? 2 : 4))}
[[ $parallel =~ ^[1-9][0-9]*$ ]] || idgen_die "IDGEN_MATRIX_PARALLEL must be a positive number, not '$parallel'"
longest_first=(15 18 19 17 deb citus17 citus18 pgxn)

# uses_tcp JOB: whether JOB's suites listen on 127.0.0.1
uses_tcp()
{
	case $1 in citus*) return 0 ;; esac
	return 1
}

queue=()
for j in "${longest_first[@]}"; do
	case " ${jobs[*]} " in *" $j "*) queue+=("$j") ;; esac
done
for j in "${jobs[@]}"; do
	case " ${queue[*]} " in *" $j "*) ;; *) queue+=("$j") ;; esac
done

# start_job JOB: JOB in the background, its output in $logs/JOB.out
declare -A status=() seconds=() started=() pid_job=()
start_job()
{
	local j=$1 pid
	mkdir -p -- "$logs/$j"
	started[$j]=$SECONDS
	(
		idgen_on_exit_reset
		run_job "$j" "$logs/$j" >"$logs/$j.out" 2>&1
	) &
	pid=$!
	pid_job[$pid]=$j
	idgen_log "$j (PostgreSQL $(version_of "$j"), $(suite_of "$j")) started, output in $logs/$j.out"
}

# next_job: the first queued job that may run beside those running, or none
next_job()
{
	local j p running_tcp=0
	for p in "${!pid_job[@]}"; do
		uses_tcp "${pid_job[$p]}" && running_tcp=1
	done
	for j in "${queue[@]}"; do
		if [ "$running_tcp" = 1 ] && uses_tcp "$j"; then
			continue
		fi
		echo "$j"
		return 0
	done
}

# finish_job PID RC: record the job and print its whole output, in one piece
finish_job()
{
	local pid=$1 rc=$2 j
	j=${pid_job[$pid]}
	unset "pid_job[$pid]"
	if [ "$rc" -eq 0 ]; then
		status[$j]=PASS
	else
		status[$j]=FAIL
	fi
	seconds[$j]=$((SECONDS - ${started[$j]}))
	check_unmounted "$logs/$j"
	rm -rf -- "${logs:?}/$j"
	printf '\n########## %s (PostgreSQL %s, %s): %s in %d s ##########\n' \
		"$j" "$(version_of "$j")" "$(suite_of "$j")" "${status[$j]}" "${seconds[$j]}"
	cat -- "$logs/$j.out"
}

# An interrupted matrix takes its jobs with it.  unshare --fork ignores
# SIGTERM while it waits, so it gets SIGKILL: the namespace's first process
# then dies too (--kill-child), and every process of the root with it.
stop_jobs()
{
	local p
	for p in "${!pid_job[@]}"; do
		pkill -KILL -P "$p" 2>/dev/null || true
		kill -KILL "$p" 2>/dev/null || true
	done
}
idgen_on_exit stop_jobs

while [ ${#queue[@]} -gt 0 ] || [ ${#pid_job[@]} -gt 0 ]; do
	while [ ${#pid_job[@]} -lt "$parallel" ] && [ ${#queue[@]} -gt 0 ]; do
		j=$(next_job)
		[ -n "$j" ] || break
		start_job "$j"
		rest=()
		for q in "${queue[@]}"; do
			[ "$q" = "$j" ] || rest+=("$q")
		done
		queue=("${rest[@]}")
	done
	rc=0
	wait -n -p done_pid "${!pid_job[@]}" || rc=$?
	finish_job "$done_pid" "$rc"
done

# One table: for each job, each suite's result and how many tests it ran,
# read from the summary its script printed.
printf '\n########## matrix summary ##########\n'
pass=0 fail=0 job_seconds=0
for j in "${jobs[@]}"; do
	printf '%s (PostgreSQL %s, %s, %d s): %s\n' "$j" "$(version_of "$j")" "$(suite_of "$j")" "${seconds[$j]}" "${status[$j]}"
	job_seconds=$((job_seconds + ${seconds[$j]}))
	out=$(sed -n '/^===== summary/,$p' "$logs/$j.out")
	summary=$(grep -E '^  [a-z]+ +(PASS|FAIL|SKIP)' <<<"$out" || true)
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
	# a job whose run failed outside the suites still fails
	if [ "${status[$j]}" != PASS ] && ! [[ $'\n'$summary =~ $'\n'"  "[a-z]+" "+FAIL ]]; then
		fail=$((fail + 1))
	fi
done
# Why each failed job failed, in the last lines a CI log keeps: the failed
# tests prove and pg_regress named, and any bail-out
for j in "${jobs[@]}"; do
	[ "${status[$j]}" != PASS ] || continue
	printf '\n%s failed; from %s:\n' "$j" "$logs/$j.out"
	grep -E -A1 '^#   Failed test|Bailout called|^Dubious|\(Wstat|^  Failed tests?:|^[a-z]+: (WARNING|ERROR): |^not ok |\.\.\. FAILED' \
		"$logs/$j.out" 2>/dev/null | grep -v -E '^--$' | tail -n 30 | sed 's/^/  /' || true
done
echo
echo "matrix took $SECONDS s: $bases_seconds s making the pristine bases, then the jobs, $parallel at a time, in $((SECONDS - bases_seconds)) s ($job_seconds s of jobs in all)"
echo "matrix: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
