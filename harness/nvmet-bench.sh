#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run in the guest by harness/bench.sh: 4 KiB random O_DIRECT writes
# (fio, psync) with stream ID 1 set by the preload library, through
# nvmet loop to three namespaces, each on a null_blk device that stores
# nothing: "nvmet-plain" (no streams), "nvmet-streams" (16 streams, the
# host using the Streams directive), "nvmet-fdp" (8 placement handles of
# 1 MiB, the host using FDP).  RUNS times each, one line per run and case:
# "result KERNEL CASE RUN NS_PER_WRITE REQUESTS_PER_WRITE", requests
# being those the backing device completed.
# Usage: nvmet-bench.sh KERNEL RUNS WRITES SETSTREAM_SO
set -euo pipefail
kernel=$1 runs=$2 writes=$3 so=$4
cases="plain streams fdp"
nullb=/sys/kernel/config/nullb nvmet=/sys/kernel/config/nvmet
port=$nvmet/ports/9

# The host uses what the namespaces offer: Streams and FDP.
echo Y > /sys/module/nvme_core/parameters/streams
echo Y > /sys/module/nvme_core/parameters/fdp
mkdir "$port"
echo loop > "$port/addr_trtype"
for c in $cases; do
	b=$nullb/nvb-$c sub=$nvmet/subsystems/bench-$c
	mkdir "$b"
	echo 1024 > "$b/size"
	echo 0 > "$b/memory_backed"
	echo 0 > "$b/irqmode"	# complete in the submitter's context
	echo 1 > "$b/power"
	mkdir "$sub"
	echo 1 > "$sub/attr_allow_any_host"
	mkdir "$sub/namespaces/1"
	echo "/dev/nvb-$c" > "$sub/namespaces/1/device_path"
	case $c in
	streams) echo 16 > "$sub/namespaces/1/streams" ;;
	fdp)	echo 8 > "$sub/namespaces/1/fdp_handles"
		echo 1048576 > "$sub/namespaces/1/fdp_ru_size" ;;
	esac
	echo 1 > "$sub/namespaces/1/enable"
	ln -s "$sub" "$port/subsystems/bench-$c"
	nvme connect -t loop -n "bench-$c" > /dev/null
done

# The host's disk of subsystem $1: not a hidden path under it.
disk()
{
	local d _
	for _ in $(seq 100); do
		for d in /sys/block/nvme*; do
			[ "$(cat "$d/hidden" 2>/dev/null || echo 0)" = 0 ] &&
			[ "$(cat "$d/device/subsysnqn" 2>/dev/null)" = "$1" ] &&
				{ echo "/dev/${d##*/}"; return; }
		done
		sleep 0.1
	done
	echo "bench: no disk for $1" >&2
	return 1
}

# Write requests the backing device of case $1 completed.
requests()
{
	awk '{ print $5 }' "/sys/block/nvb-$1/stat"
}

# $1 writes with stream ID 1 to $dev; prints their mean latency in ns.
job()
{
	LD_PRELOAD=$so SETSTREAM_PATH=$dev SETSTREAM_ID=1 \
		fio --name=bench --filename="$dev" --rw=randwrite --bs=4k \
		--direct=1 --ioengine=psync --size=1g --number_ios="$1" \
		--randrepeat=1 --norandommap --output-format=json \
		--output=/tmp/fio.json
	python3 -c 'import json, sys
w = json.load(open("/tmp/fio.json"))["jobs"][0]["write"]
assert w["total_ios"] == int(sys.argv[1]), w["total_ios"]
print("%.1f" % w["lat_ns"]["mean"])' "$1"
}

declare -A devs
for c in $cases; do
	dev=$(disk "bench-$c")
	devs[$c]=$dev
	stats=$nvmet/subsystems/bench-$c/namespaces/1/stream_stats
	echo 0 > "$stats"
	job 1000 > /dev/null	# warm up
	# The writes arrive tagged: in stream 1 (FDP: handle 0, counted
	# as stream 1); the plain namespace counts nothing.
	got=$(cat "$stats")
	case $c in
	plain) [ -z "$got" ] ;;
	*) grep -qx "1 1000 8000" <<< "$got" ;;
	esac || { echo "bench: $c: stream_stats '$got'" >&2; exit 1; }
done

for run in $(seq "$runs"); do
	for c in $cases; do
		dev=${devs[$c]}
		r0=$(requests "$c")
		ns=$(job "$writes")
		r1=$(requests "$c")
		echo "result $kernel nvmet-$c $run $ns $(awk -v r=$((r1 - r0)) \
			-v w="$writes" 'BEGIN { printf "%.4f", r / w }')"
	done
done

for c in $cases; do
	nvme disconnect -n "bench-$c" > /dev/null
	rm "$port/subsystems/bench-$c"
	echo 0 > "$nvmet/subsystems/bench-$c/namespaces/1/enable"
	rmdir "$nvmet/subsystems/bench-$c/namespaces/1"
	rmdir "$nvmet/subsystems/bench-$c"
	echo 0 > "$nullb/nvb-$c/power"
	rmdir "$nullb/nvb-$c"
done
rmdir "$port"
