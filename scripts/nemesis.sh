#!/usr/bin/env bash
# scripts/nemesis.sh -- the nemesis suite (t/nemesis/) by hand, longer
#
#	bash scripts/nemesis.sh                          # the seeds CI runs
#	bash scripts/nemesis.sh --seed 7 --minutes 10    # one long run
#	bash scripts/nemesis.sh --seed 1,2,3 --servers 5
#	bash scripts/nemesis.sh --faults partition,several
#
# Servers minting under a seeded nemesis, every ID a client was given
# counted (see t/nemesis/001_unique_ids.pl); the same seed draws the same
# schedule of faults.  Builds and installs like scripts/test.sh, then runs
# only that suite, as the unprivileged server user.
#
#	--seed N[,N...]   the seeds, one run each (1,2)
#	--minutes M       minutes of each run (CI runs 40 s: 0.67)
#	--servers K       minting servers (3)
#	--faults F[,F...] the faults to draw from (all of them)

set -euo pipefail

IDGEN_PROG="nemesis"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

usage()
{
	sed -n '3,6p' "${BASH_SOURCE[0]}" | sed 's/^#\t//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
		--seed) [ $# -ge 2 ] || usage; export IDGEN_NEMESIS_SEEDS=$2; shift 2 ;;
		--minutes)
			[ $# -ge 2 ] || usage
			[[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] || idgen_die "--minutes takes a number, not '$2'"
			IDGEN_NEMESIS_SECONDS=$(awk -v m="$2" 'BEGIN { printf "%d", m * 60 }')
			export IDGEN_NEMESIS_SECONDS
			shift 2
			;;
		--servers)
			[ $# -ge 2 ] || usage
			[[ $2 =~ ^[1-9][0-9]*$ ]] || idgen_die "--servers takes a positive number, not '$2'"
			export IDGEN_NEMESIS_SERVERS=$2
			shift 2
			;;
		--faults)
			[ $# -ge 2 ] || usage
			[[ $2 =~ ^[a-z_0-9]+(,[a-z_0-9]+)*$ ]] || idgen_die "--faults takes names separated by commas, not '$2'"
			export IDGEN_NEMESIS_FAULTS=$2
			shift 2
			;;
		*) usage ;;
	esac
done
[[ ${IDGEN_NEMESIS_SEEDS:-1} =~ ^[0-9]+(,[0-9]+)*$ ]] ||
	idgen_die "--seed takes numbers separated by commas, not '$IDGEN_NEMESIS_SEEDS'"

IDGEN_SUITES=nemesis exec bash "$here/test.sh"
