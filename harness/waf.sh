#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make waf": what stream IDs buy in write amplification.  The workloads
# run in a guest on the built kernel, each without stream IDs, with them,
# and with them through an NVMe host and an nvmet namespace with Flexible
# Data Placement on the disk, traced at the disk; flashsim replays each
# trace on a flash device of the disk's size at several
# over-provisionings, and at the first of them with erase blocks of
# several sizes.  Prints the two tables (table.txt, table-eb.txt) and
# writes them and PNG plots to build/waf/.  Not part of "make check".
# With --model, only the modelling, on the traces kept
# (build/waf/traces/).  WORKLOAD (make waf WORKLOAD="rocksdb-ext4 cache")
# runs only those workloads, keeping the traces of the others: the table
# and plots show every workload traced in all modes;
# STREAMID_WAF_MIB, _WRITES, _SKIP and _EBS change the disk size, device
# writes, steady state and erase blocks of the second table;
# STREAMID_WAF_MODES (some of none,streams,fdp) runs only those, keeping
# the traces of the others from the last run.
set -euo pipefail
. "$(dirname "$0")/common.sh"

MIB=${STREAMID_WAF_MIB:-1024}		# the disk, and the modelled device
WRITES=${STREAMID_WAF_WRITES:-5}	# device writes per run
SKIP=${STREAMID_WAF_SKIP:-2}		# device writes before steady state
OPS=7,14,28
# Erase block (reclaim unit) sizes of the second table, at the first OP:
# what placement is worth depends on how many files share a block.
EBS=${STREAMID_WAF_EBS:-1M,4M,16M}
ALL="writers-ext4 writers-xfs cache rocksdb-ext4 rocksdb-xfs \
	rocksdb-ext4-discard rocksdb-xfs-discard pgbench-ext4 pgbench-xfs \
	dbfile-ext4 dbfile-xfs tenants-ext4 tenants-xfs"
read -r -a all <<< "$ALL"
read -r -a WORKLOADS <<< "${WORKLOAD:-${STREAMID_WAF_WORKLOADS:-$ALL}}"
for w in "${WORKLOADS[@]}"; do
	[[ " ${all[*]} " == *" $w "* ]] ||
		die "no workload $w; there are: ${all[*]}"
done
VM_CPUS=2 VM_MEM=4096	# the guest's CPUs and MiB
MODES=${STREAMID_WAF_MODES:-none,streams,fdp}
for m in ${MODES//,/ }; do
	case $m in
	none|streams|fdp) ;;
	*) die "no mode $m; there are: none streams fdp" ;;
	esac
done

W=$OUT/waf
model_only=
case ${1:-} in
--model) model_only=1 ;;	# the traces kept, modelled again
"") ;;
*) die "usage: waf.sh [--model]" ;;
esac
"$TOP/harness/setup.sh"
if [ -z "$model_only" ] && [[ " ${WORKLOADS[*]}" == *" pgbench-"* ]]; then
	"$TOP/harness/setup.sh" "$TOP/harness/waf-packages"
fi
mkdir -p "$W/traces"
make -s -C "$TOP/tools/streamid" OUTPUT="$W/"
gcc -O2 -Wall -o "$W/waf-load" "$TOP/harness/waf-load.c"

# Before anything is run or removed: traces of a disk of another size
# are not modelled with these, and every erase block must be one that
# flashsim models on this disk.
if [ -f "$W/traces/mib" ] && [ "$(cat "$W/traces/mib")" != "$MIB" ]; then
	die "build/waf/traces/ holds traces of a $(cat "$W/traces/mib") MiB" \
		"disk: remove them or set STREAMID_WAF_MIB to that"
fi
mib_of()	# mib_of SIZE: a size as flashsim takes it (4M, 512K), in MiB
{
	numfmt --from=iec "${1^^}" 2>/dev/null |
		awk '{ print $1 / 1048576 }' | grep . ||
		die "STREAMID_WAF_EBS: no size $1"
}
for b in ${EBS//,/ }; do
	mib_of "$b" > /dev/null
	"$W/flashsim" -c "${MIB}M" -b "$b" -o "${OPS%%,*}" -S uniform \
		-n 1 > /dev/null ||
		die "STREAMID_WAF_EBS: flashsim models no $b erase blocks" \
			"on a $MIB MiB device"
done

if [ -z "$model_only" ]; then
	[ -f "$OUT/bzImage" ] && [ -f "$OUT/kernel-id" ] ||
		die "no $OUT/bzImage and kernel-id: run 'make' first"
	echo "$MIB" > "$W/traces/mib"
	# What each trace was made with, so that no row compares runs of
	# different kernels, workloads, programs or machines: the kernel,
	# hashes of what defines the workloads (the guest runs a copy of
	# waf-guest.sh, so that an edit during the run does not count) and
	# of the packages they run, the run's size, and how QEMU runs (as
	# vm.sh chooses).  One line, taken before the run.
	cp "$TOP/harness/waf-guest.sh" "$W/waf-guest.sh"
	accel=tcg
	if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
		accel=kvm
	fi
	made="kernel=$(cat "$OUT/kernel-id") workload=$(cat "$W/waf-guest.sh" \
		"$TOP/harness/waf-load.c" "$TOP/tools/streamid/hint2stream.c" \
		"$TOP/$SELFTESTS/vm.sh" | sha1sum | cut -c1-12)"
	made+=" mib=$MIB writes=$WRITES vm=$accel,$VM_CPUS,$VM_MEM"
	pkgs()	# pkgs WORKLOAD: the packages it runs, with their versions
	{
		local p=(qemu-system-x86 rocksdb-tools e2fsprogs xfsprogs
			 util-linux)

		[[ $1 != pgbench-* ]] || p+=(postgresql-15)
		dpkg-query -W -f '${Package} ${Version}\n' "${p[@]}" |
			sha1sum | cut -c1-12
	}
	# What is run now goes; the traces of the other workloads and
	# modes stay.
	for w in "${WORKLOADS[@]}"; do
		for m in ${MODES//,/ }; do
			rm -f "$W/traces/$w-$m".*
		done
	done
	rm -rf "$W/vm"
	start=$SECONDS
	ok=1
	"$TOP/$SELFTESTS/vm.sh" -t 14400 -c "$VM_CPUS" -m "$VM_MEM" -k "$W" \
		-o "$W/vm" "$OUT/bzImage" -- "$W/waf-guest.sh" /run/vm "$W" \
		"$MIB" "$WRITES" "$MODES" "${WORKLOADS[@]}" > "$W/guest.log" \
		2>&1 || ok=
	# Out of vm.sh's share, which its next run empties: the traces of
	# the runs that ended, even if a later one failed; the .meta first
	# and the trace last, so that no trace is kept without its .meta.
	for f in "$W"/vm/share/*.trace; do
		[ -e "$f" ] || continue
		run=${f##*/}
		run=${run%.trace}	# WORKLOAD-MODE
		echo "$made packages=$(pkgs "${run%-*}")" > "$W/traces/$run.meta"
		for g in "${f%.trace}".{stats,skip,tput,full} "$f"; do
			[ ! -e "$g" ] || mv "$g" "$W/traces/"
		done
	done
	if [ -z "$ok" ]; then
		tail -n 30 "$W/guest.log" >&2
		die "the workloads failed in the guest (the traces of those" \
			"that ended are kept)"
	fi
	echo "waf: guest runs took $((SECONDS - start))s" >&2
fi
# A new table: none of the last one's outputs stay to be mistaken for it.
rm -f "$W"/table.txt "$W"/table-eb.txt "$W"/throughput.txt "$W"/*.png \
	"$W"/*.{lifetimes,op,eb,life,kv,txt}

# The table and plots cover every workload with the traces of all three
# modes, from this run or an earlier one, so that workloads run one at a
# time add up to the whole table; but only where the three were made
# alike (their .meta files; traces of harnesses that wrote none count
# as one unknown origin).
meta()	# meta TRACE: what the trace was made with
{
	local f=${1%.trace}.meta

	if [ -s "$f" ]; then
		echo "$(< "$f")"
	elif [ -f "$f" ]; then
		echo "empty $f"	# cut short: like no other
	else
		echo unknown
	fi
}
modelled=() untraced=() mixed=() unknown=()
for w in "${all[@]}"; do
	if [ -f "$W/traces/$w-none.trace" ] &&
	   [ -f "$W/traces/$w-streams.trace" ] &&
	   [ -f "$W/traces/$w-fdp.trace" ]; then
		origin=$(for m in none streams fdp; do
				meta "$W/traces/$w-$m.trace"
			done | sort -u)
		if [ "$(wc -l <<< "$origin")" -ne 1 ]; then
			mixed+=("$w")
			continue
		fi
		[ "$origin" != unknown ] || unknown+=("$w")
		modelled+=("$w")
	elif [[ " ${WORKLOADS[*]} " == *" $w "* ]]; then
		untraced+=("$w")
	fi
done
[ ${#untraced[@]} -eq 0 ] ||
	warn "without the traces of all modes, not in the tables: ${untraced[*]}"
[ ${#mixed[@]} -eq 0 ] ||
	warn "traces made differently (their .meta differ)," \
		"not in the tables: ${mixed[*]}"
[ ${#unknown[@]} -eq 0 ] ||
	warn "traces that do not say what made them (no .meta): ${unknown[*]}"
[ ${#modelled[@]} -gt 0 ] || die "no workload has the traces of all modes, made alike"

# skip TRACE: the device writes before the steady state of a trace: its
# .skip file (a workload that fills the disk first writes one), or SKIP.
skip()
{
	local f=${1%.trace}.skip

	if [ -f "$f" ]; then cat "$f"; else echo "$SKIP"; fi
}

# model TRACE OPTIONS...: flashsim on a trace of the disk, a device of
# its size, from the trace's steady state
model()
{
	local trace=$1

	shift
	"$W/flashsim" -c "${MIB}M" -s "$(skip "$trace")" "$@" "$trace" ||
		die "flashsim $* failed on $trace"
}

# sim OUTFILE TRACE OPTIONS...: one key=value line per over-provisioning
# in OUTFILE; and the report at the first over-provisioning, with the
# writes, discards and lifetimes per stream, in OUTFILE with .txt for .kv.
sim()
{
	local out=$1 trace=$2

	shift 2
	model "$trace" -o "$OPS" -k "$@" > "$out"
	[ "$(wc -l < "$out")" -eq "$(tr , '\n' <<< "$OPS" | wc -l)" ] ||
		die "flashsim gave $(wc -l < "$out") results for $trace"
	model "$trace" -o "${OPS%%,*}" "$@" > "${out%.kv}.txt"
}

# kv KEY LINE: the value of KEY, which must be a number
kv()
{
	local v

	v=$(sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< " $2")
	[[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "flashsim gave $1=$v"
	echo "$v"
}

ratio()	# ratio A B: A / B, B not 0
{
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) exit 1; print a / b }' ||
		die "no ratio of $1 to $2"
}

table=$W/table.txt
{
	printf '%-20s %4s %12s %12s %7s %12s\n' workload OP "WAF without" \
		"WAF with" ratio "WAF over FDP"
	for w in "${modelled[@]}"; do
		sim "$W/$w-none.kv" "$W/traces/$w-none.trace" -m single
		sim "$W/$w-streams.kv" "$W/traces/$w-streams.trace" \
			-m streams -l "$W/$w.lifetimes"
		sim "$W/$w-fdp.kv" "$W/traces/$w-fdp.trace" -m streams
		mapfile -t none < "$W/$w-none.kv"
		mapfile -t with < "$W/$w-streams.kv"
		mapfile -t fdp < "$W/$w-fdp.kv"
		for i in "${!none[@]}"; do
			for m in none streams fdp; do
				r=$(sed -n "$((i + 1))p" "$W/$w-$m.kv")
				dw=$(kv device_writes "$r")
				# At least 3 device writes in all, or at
				# steady state where the workload filled the
				# disk first.
				sk=0
				[ ! -f "$W/traces/$w-$m.skip" ] ||
					sk=$(skip "$W/traces/$w-$m.trace")
				awk -v d="$dw" -v s="$sk" \
					'BEGIN { exit !(d - s >= 3) }' ||
					die "$w: the device was written only $dw" \
						"times, $sk before the steady state"
			done
			a=$(kv waf "${none[i]}") b=$(kv waf "${with[i]}")
			f=$(kv waf "${fdp[i]}")
			r=$(ratio "$a" "$b") op=$(kv op "${none[i]}")
			printf '%-20s %3s%% %12.3f %12.3f %7.2f %12.3f\n' "$w" \
				"$op" "$a" "$b" "$r" "$f"
		done
	done
} | tee "$table"

# The workloads' own speed, where they measure it: keys (rocksdb) or
# transactions (pgbench) per second.
for w in "${modelled[@]}"; do
	[ -f "$W/traces/$w-none.tput" ] || continue
	full=	# how full the file system got, where the guest noted it
	[ ! -f "$W/traces/$w-none.full" ] ||
		full="; fullest $(cat "$W/traces/$w-none.full")%"
	printf '%-20s %s without, %s with, %s over FDP (per s)%s\n' \
		"$w" "$(cat "$W/traces/$w-none.tput")" \
		"$(cat "$W/traces/$w-streams.tput")" \
		"$(cat "$W/traces/$w-fdp.tput")" "$full"
done | tee "$W/throughput.txt"

# The same traces on devices with larger erase blocks, at the first
# over-provisioning: the first table's 1 MiB holds part of one file of
# RocksDB's, the reclaim units of today's SSDs many files.  The block
# column is in MiB.
ebwaf()	# ebwaf TRACE ERASE_BLOCK MODE: the WAF at steady state
{
	local r

	r=$(model "$1" -b "$2" -o "${OPS%%,*}" -k -m "$3")
	kv waf "$r"
}

{
	printf '%-20s %6s %12s %12s %7s %12s\n' workload MiB \
		"WAF without" "WAF with" ratio "WAF over FDP"
	for w in "${modelled[@]}"; do
		for b in ${EBS//,/ }; do
			a=$(ebwaf "$W/traces/$w-none.trace" "$b" single)
			c=$(ebwaf "$W/traces/$w-streams.trace" "$b" streams)
			f=$(ebwaf "$W/traces/$w-fdp.trace" "$b" streams)
			r=$(ratio "$a" "$c") mb=$(mib_of "$b")
			printf '%-20s %6s %12.3f %12.3f %7.2f %12.3f\n' \
				"$w" "$mb" "$a" "$c" "$r" "$f"
		done
	done
} | tee "$W/table-eb.txt"

"$TOP/harness/waf-plot.sh" "$W" "${modelled[@]}"
echo "waf: plots in $W/waf-op.png, $W/waf-eb.png and" \
	"$W/waf-lifetimes.png" >&2
