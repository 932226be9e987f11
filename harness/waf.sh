#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make waf": what stream IDs buy in write amplification.  The workloads
# run in a guest on the built kernel, each without stream IDs, with them,
# and with them through an NVMe host and an nvmet namespace with Flexible
# Data Placement on the disk, traced at the disk; flashsim replays each
# trace on a flash device of the disk's size at several
# over-provisionings.  Prints one table and
# writes it and PNG plots to build/waf/.  Not part of "make check".
# With --model, only the modelling, on the traces of the last run
# (build/waf/traces/).  STREAMID_WAF_MIB, _WRITES, _SKIP and _WORKLOADS
# change the disk size, device writes, steady state and workloads;
# STREAMID_WAF_MODES (some of none,streams,fdp) runs only those, keeping
# the traces of the others from the last run.
set -euo pipefail
. "$(dirname "$0")/common.sh"

MIB=${STREAMID_WAF_MIB:-1024}		# the disk, and the modelled device
WRITES=${STREAMID_WAF_WRITES:-5}	# device writes per run
SKIP=${STREAMID_WAF_SKIP:-2}		# device writes before steady state
OPS=7,14,28
ALL="writers-ext4 writers-xfs cache rocksdb-ext4 rocksdb-xfs dbfile-ext4 dbfile-xfs \
	tenants-ext4 tenants-xfs"
read -r -a WORKLOADS <<< "${STREAMID_WAF_WORKLOADS:-$ALL}"
MODES=${STREAMID_WAF_MODES:-none,streams,fdp}

W=$OUT/waf
model_only=
case ${1:-} in
--model) model_only=1 ;;	# the traces of the last run, modelled again
"") ;;
*) die "usage: waf.sh [--model]" ;;
esac
"$TOP/harness/setup.sh"
if [ -z "$model_only" ]; then
	[ -f "$OUT/bzImage" ] || die "no $OUT/bzImage: run 'make' first"
	# The traces of the modes not run now stay.
	if [ "$MODES" = none,streams,fdp ]; then
		rm -rf "$W"
	else
		for f in "$W"/*; do
			[ "$f" = "$W/traces" ] || rm -rf "$f"
		done
	fi
fi
mkdir -p "$W/traces"
make -s -C "$TOP/tools/streamid" OUTPUT="$W/"
gcc -O2 -Wall -o "$W/waf-load" "$TOP/harness/waf-load.c"

if [ -z "$model_only" ]; then
	start=$SECONDS
	"$TOP/$SELFTESTS/vm.sh" -t 14400 -m 4096 -k "$W" -o "$W/vm" \
		"$OUT/bzImage" -- "$TOP/harness/waf-guest.sh" /run/vm "$W" \
		"$MIB" "$WRITES" "$MODES" "${WORKLOADS[@]}" > "$W/guest.log" \
		2>&1 || {
		tail -n 30 "$W/guest.log" >&2
		die "the workloads failed in the guest"
	}
	echo "waf: guest runs took $((SECONDS - start))s" >&2
	# Out of vm.sh's share, which its next run empties.
	mv "$W"/vm/share/*.trace "$W"/vm/share/*.stats "$W/traces/"
fi

# sim OUTFILE TRACE OPTIONS...: flashsim on a trace of the disk, one
# key=value line per over-provisioning in OUTFILE.
sim()
{
	local out=$1 trace=$2

	shift 2
	"$W/flashsim" -c "${MIB}M" -s "$SKIP" -o "$OPS" -k "$@" "$trace" \
		> "$out" || die "flashsim failed on $trace"
	[ "$(wc -l < "$out")" -eq "$(tr , '\n' <<< "$OPS" | wc -l)" ] ||
		die "flashsim gave $(wc -l < "$out") results for $trace"
}

kv()	# kv KEY LINE
{
	sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< " $2"
}

table=$W/table.txt
{
	printf '%-14s %4s %12s %12s %7s %12s\n' workload OP "WAF without" \
		"WAF with" ratio "WAF over FDP"
	for w in "${WORKLOADS[@]}"; do
		sim "$W/$w-none.kv" "$W/traces/$w-none.trace" -m single
		sim "$W/$w-streams.kv" "$W/traces/$w-streams.trace" \
			-m streams -l "$W/$w.lifetimes"
		sim "$W/$w-fdp.kv" "$W/traces/$w-fdp.trace" -m streams
		mapfile -t none < "$W/$w-none.kv"
		mapfile -t with < "$W/$w-streams.kv"
		mapfile -t fdp < "$W/$w-fdp.kv"
		for i in "${!none[@]}"; do
			for r in "${with[i]}" "${fdp[i]}"; do
				dw=$(kv device_writes "$r")
				awk -v d="$dw" 'BEGIN { exit !(d >= 3) }' ||
					die "$w: the device was written only $dw times"
			done
			a=$(kv waf "${none[i]}") b=$(kv waf "${with[i]}")
			printf '%-14s %3s%% %12.3f %12.3f %7.2f %12.3f\n' "$w" \
				"$(kv op "${none[i]}")" "$a" "$b" \
				"$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')" \
				"$(kv waf "${fdp[i]}")"
		done
	done
} | tee "$table"

"$TOP/harness/waf-plot.sh" "$W" "${WORKLOADS[@]}"
echo "waf: plots in $W/waf-op.png and $W/waf-lifetimes.png" >&2
