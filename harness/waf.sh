#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make waf": what stream IDs buy in write amplification.  The workloads
# run in a guest on the built kernel, each without stream IDs and with
# them, traced at the disk; flashsim replays each trace on a flash device
# of the disk's size at several over-provisionings.  Prints one table and
# writes it and PNG plots to build/waf/.  Not part of "make check".
set -euo pipefail
. "$(dirname "$0")/common.sh"

MIB=${STREAMID_WAF_MIB:-1024}		# the disk, and the modelled device
WRITES=${STREAMID_WAF_WRITES:-5}	# device writes per run
SKIP=${STREAMID_WAF_SKIP:-2}		# device writes before steady state
OPS=7,14,28
WORKLOADS=(writers-ext4 writers-xfs cache rocksdb-ext4 rocksdb-xfs
	dbfile-ext4 dbfile-xfs)

W=$OUT/waf
"$TOP/harness/setup.sh"
[ -f "$OUT/bzImage" ] || die "no $OUT/bzImage: run 'make' first"
rm -rf "$W"
mkdir -p "$W"
make -s -C "$TOP/tools/streamid" OUTPUT="$W/"
gcc -O2 -Wall -o "$W/waf-load" "$TOP/harness/waf-load.c"

start=$SECONDS
"$TOP/$SELFTESTS/vm.sh" -t 5400 -m 4096 -k "$W" -o "$W/vm" "$OUT/bzImage" -- \
	"$TOP/harness/waf-guest.sh" /run/vm "$W" "$MIB" "$WRITES" \
	"${WORKLOADS[@]}" > "$W/guest.log" 2>&1 ||
	{ tail -n 30 "$W/guest.log" >&2; die "the workloads failed in the guest"; }
echo "waf: guest runs took $((SECONDS - start))s" >&2

# sim TRACE OPTIONS...: flashsim on a trace of the disk, key=value lines.
sim()
{
	local trace=$1

	shift
	"$W/flashsim" -c "${MIB}M" -s "$SKIP" -o "$OPS" -k "$@" "$trace"
}

kv()	# kv KEY LINE
{
	sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< " $2"
}

table=$W/table.txt
{
	printf '%-14s %4s %12s %12s %7s\n' workload OP "WAF without" "WAF with" ratio
	for w in "${WORKLOADS[@]}"; do
		mapfile -t none < <(sim "$W/vm/share/$w-none.trace" -m single)
		mapfile -t with < <(sim "$W/vm/share/$w-streams.trace" -m streams \
			-l "$W/$w.lifetimes")
		for i in "${!none[@]}"; do
			dw=$(kv device_writes "${with[i]}")
			awk -v d="$dw" 'BEGIN { exit !(d >= 3) }' ||
				die "$w: the device was written only $dw times"
			a=$(kv waf "${none[i]}") b=$(kv waf "${with[i]}")
			printf '%-14s %3s%% %12.3f %12.3f %7.2f\n' "$w" \
				"$(kv op "${none[i]}")" "$a" "$b" \
				"$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')"
		done
	done
} | tee "$table"

"$TOP/harness/waf-plot.sh" "$W" "${WORKLOADS[@]}"
echo "waf: plots in $W/waf-op.png and $W/waf-lifetimes.png" >&2
