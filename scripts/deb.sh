#!/usr/bin/env bash
# scripts/deb.sh -- build the Debian package postgresql-N-idgen, or test it
#
#	bash scripts/deb.sh build OUTDIR   build the .debs, copy them to OUTDIR
#	bash scripts/deb.sh test DEBDIR    install DEBDIR's .debs, run debian/tests
#
# As root, on Debian (a machine or a root with only minbase and
# postgresql-N): each command apt-get installs what it needs itself.
#
# build: copies the tree (no .git, no build outputs) to a fresh directory,
# installs debian/control's Build-Depends (apt-get build-dep) and
# postgresql-server-dev-N for each server N installed here, makes
# debian/control for those versions (pg_buildext updatecontrol) and runs
# dpkg-buildpackage -us -uc -b.  PG_SUPPORTED_VERSIONS="15 17" builds for
# other versions; with no server installed, for Debian's default one.
#
# test: installs the .debs (reinstalling over any copy already there) and
# each test's Depends from debian/tests/control, then runs the tests from
# this tree as autopkgtest does: as root, in the source tree, with
# AUTOPKGTEST_TMP set.  A test whose Depends cannot be installed fails,
# unless it is marked skippable (then it is skipped).  The last line says
# how many tests passed, failed and were skipped.

set -euo pipefail

IDGEN_PROG="deb"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

usage()
{
	echo "usage: bash scripts/deb.sh build OUTDIR | test DEBDIR" >&2
	exit 2
}

[ $# -eq 2 ] || usage
action=$1
dir=$2
idgen_is_root || idgen_die "needs root: it installs packages with apt-get"
command -v apt-get >/dev/null 2>&1 || idgen_die "needs Debian's apt-get"
export DEBIAN_FRONTEND=noninteractive

apt_update()
{
	idgen_log "apt-get update"
	apt-get -q update >/dev/null ||
		idgen_die "apt-get update failed: check the apt sources"
}

apt_install()
{
	apt-get -q install -y --no-install-recommends "$@"
}

# The PostgreSQL majors whose server is installed here.
installed_servers()
{
	local p
	for p in /usr/lib/postgresql/*/bin/postgres; do
		[ -x "$p" ] || continue
		p=${p#/usr/lib/postgresql/}
		echo "${p%%/*}"
	done | sort -n
}

do_build()
{
	local out work src versions v
	mkdir -p -- "$dir"
	out=$(cd "$dir" && pwd)
	apt_update
	work=$(mktemp -d /tmp/idgen-deb.XXXXXX)
	idgen_on_exit rm -rf -- "$work"
	src=$work/idgen
	mkdir "$src"
	tar -C "$IDGEN_ROOT" "${IDGEN_COPY_EXCLUDES[@]}" \
		--exclude='./build-*' --exclude=./debian/.debhelper \
		--exclude='./debian/postgresql-*-idgen' -cf - . |
		tar -C "$src" -xf -
	cd "$src"

	idgen_log "installing the Build-Depends"
	apt-get -q build-dep -y --no-install-recommends ./ ||
		idgen_die "apt-get build-dep failed"

	versions=${PG_SUPPORTED_VERSIONS:-$(installed_servers | xargs)}
	if [ -n "$versions" ]; then
		# Debian's postgresql-server-dev-all brings only its default version
		for v in $versions; do
			apt_install "postgresql-server-dev-$v" ||
				idgen_die "cannot install postgresql-server-dev-$v"
		done
		export PG_SUPPORTED_VERSIONS="$versions"
	fi
	pg_buildext updatecontrol
	idgen_log "building for PostgreSQL $(pg_buildext supported-versions | xargs)"
	# pg_buildext gives each version its pg_config; lib.sh's default (15's)
	# would make every make use 15, or fail where 15 is not installed
	env -u PG_CONFIG dpkg-buildpackage -us -uc -b
	cp -- "$work"/*.deb "$out"/
	idgen_log "built into $out:"
	(cd "$out" && ls -1 -- *.deb)
}

# debian/tests/control as lines "NAME<TAB>DEPENDS<TAB>RESTRICTIONS", one a test.
read_tests_control()
{
	awk '
		function flush() {
			if (tests != "") {
				n = split(tests, t, /[ \t]+/)
				for (i = 1; i <= n; i++)
					if (t[i] != "") print t[i] "\t" deps "\t" restr
			}
			tests = deps = restr = ""; field = ""
		}
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[ \t]/ {
			sub(/^[ \t]+/, " ")
			if (field == "tests") tests = tests $0
			else if (field == "depends") deps = deps $0
			else if (field == "restrictions") restr = restr $0
			next
		}
		{
			field = tolower(substr($0, 1, index($0, ":") - 1))
			val = substr($0, index($0, ":") + 1)
			if (field == "tests") tests = val
			else if (field == "depends") deps = val
			else if (field == "restrictions") restr = val
		}
		END { flush() }
	' debian/tests/control
}

do_test()
{
	local debdir debs=() pkgs=() f name deps restr want d tmp
	local pass=0 failed=0 skipped=0
	declare -A result=()
	local order=()
	debdir=$(cd "$dir" && pwd)
	for f in "$debdir"/*.deb; do
		[ -f "$f" ] || continue
		case $f in *-dbgsym_*) continue ;; esac
		debs+=("$f")
		pkgs+=("$(dpkg-deb -f "$f" Package)")
	done
	[ ${#debs[@]} -gt 0 ] || idgen_die "no .deb in $debdir"
	apt_update
	idgen_log "installing ${pkgs[*]}"
	apt_install --reinstall "${debs[@]}" || idgen_die "cannot install the packages"

	cd "$IDGEN_ROOT"
	[ -f debian/tests/control ] || idgen_die "no debian/tests/control"
	while IFS=$'\t' read -r name deps restr; do
		order+=("$name")
		# "@" is the packages built from this source; alternatives take the
		# first; version constraints are left to apt's resolution
		want=()
		IFS=',' read -ra ds <<<"$deps"
		for d in "${ds[@]}"; do
			d=${d%%|*}
			d=${d%%(*}
			read -r d <<<"$d" || true	# trims blanks
			case $d in
				'') ;;
				@) want+=("${pkgs[@]}") ;;
				@*) idgen_die "debian/tests/control: $d is not supported here" ;;
				*) want+=("$d") ;;
			esac
		done
		printf '\n===== autopkgtest %s =====\n' "$name"
		if ! apt_install "${want[@]}" </dev/null; then
			case " $restr " in
				*[\ ,]skippable[\ ,]*)
					result[$name]="SKIP (Depends not installable)"
					skipped=$((skipped + 1)) ;;
				*)
					result[$name]="FAIL (Depends not installable)"
					failed=$((failed + 1)) ;;
			esac
			continue
		fi
		tmp=$(mktemp -d /tmp/idgen-autopkgtest.XXXXXX)
		set +e
		AUTOPKGTEST_TMP=$tmp "debian/tests/$name" </dev/null
		rc=$?
		set -e
		rm -rf -- "$tmp"
		if [ "$rc" -eq 0 ]; then
			result[$name]=PASS
			pass=$((pass + 1))
		elif [ "$rc" -eq 77 ] && [[ " $restr " == *skippable* ]]; then
			result[$name]=SKIP
			skipped=$((skipped + 1))
		else
			result[$name]="FAIL (exit $rc)"
			failed=$((failed + 1))
		fi
	done < <(read_tests_control)

	printf '\n===== autopkgtest summary: %s =====\n' "${pkgs[*]}"
	for name in "${order[@]}"; do
		printf '  %-14s %s\n' "$name" "${result[$name]}"
	done
	echo
	echo "autopkgtest: $pass passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
}

case $action in
	build) do_build ;;
	test) do_test ;;
	*) usage ;;
esac
