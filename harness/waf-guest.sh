#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make waf", in the guest: each workload runs three times on a fresh
# null_blk disk, without stream IDs, with them, and with them through
# Flexible Data Placement (an NVMe host on the loop transport, an nvmet
# namespace on the disk with 8 placement handles, which passes handle + 1
# on as the disk's stream), while the disk's block_rq_issue events are
# traced: every write, discard and flush that reaches it, with its
# stream.  A run whose trace lost events, or whose writes per stream
# differ from what the disk itself counted, fails.
#
# The tenants workload places its data only by the io.stream of its two
# cgroups, which "streams" and "fdp" set and "none" does not.  The rocksdb
# workloads fill the file system first and then run at steady state,
# mounted without online discard and trimmed by fstrim now and then, as
# distributions run them, or with discard (rocksdb-*-discard).
#
# Usage: waf-guest.sh OUTDIR BINDIR MIB DEVICE_WRITES MODES WORKLOAD...
# BINDIR holds waf-load and hint2stream.so; MODES is some of
# none,streams,fdp.  Writes OUTDIR/WORKLOAD-MODE.trace and .stats.
set -euo pipefail

out=$1 bin=$2 mib=$3 writes=$4 modes=$5
shift 5
load=$bin/waf-load
T=/sys/kernel/tracing
nullb=/sys/kernel/config/nullb/waf
nvmet=/sys/kernel/config/nvmet
nqn=streamid-waf
handles=8
mnt=/tmp/waf

disk_up()
{
	mkdir "$nullb"
	echo "$mib" > "$nullb/size"
	echo 4096 > "$nullb/blocksize"
	echo 1 > "$nullb/memory_backed"
	echo 1 > "$nullb/discard"
	echo 255 > "$nullb/streams"
	echo 1 > "$nullb/power"
	disk=/dev/waf dev=/dev/waf
}

disk_down()
{
	echo 0 > "$nullb/power"
	rmdir "$nullb"
}

# The disk as an nvmet namespace with FDP, and the NVMe host connected
# to it: the workload writes to the host's namespace ($dev).
fdp_up()
{
	local s=$nvmet/subsystems/$nqn port=$nvmet/ports/1 b n

	mkdir "$s"
	echo 1 > "$s/attr_allow_any_host"
	mkdir "$s/namespaces/1"
	echo "$disk" > "$s/namespaces/1/device_path"
	echo "$handles" > "$s/namespaces/1/fdp_handles"
	echo 1 > "$s/namespaces/1/enable"
	mkdir "$port"
	echo loop > "$port/addr_trtype"
	ln -s "$s" "$port/subsystems/$nqn"
	nvme connect -t loop -n "$nqn" > /dev/null
	dev=
	for n in $(seq 100); do
		for b in /sys/block/nvme*; do
			[ "$(cat "$b/hidden" 2>/dev/null)" != 1 ] &&
			[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$nqn" ] &&
			[ -b "/dev/${b##*/}" ] && dev=/dev/${b##*/}
		done
		[ -z "$dev" ] || break
		sleep 0.1
	done
	[ -n "$dev" ] || { echo "waf-guest: no NVMe host for $nqn" >&2; return 1; }
	# Every handle is a stream.
	n=$(cat "/sys/block/${dev#/dev/}/queue/max_write_streams")
	[ "$n" = "$handles" ] || {
		echo "waf-guest: $dev has $n streams, not $handles" >&2
		return 1
	}
}

fdp_down()
{
	local s=$nvmet/subsystems/$nqn port=$nvmet/ports/1

	nvme disconnect -n "$nqn" > /dev/null
	rm "$port/subsystems/$nqn"
	rmdir "$port"
	echo 0 > "$s/namespaces/1/enable"
	rmdir "$s/namespaces/1" "$s"
	dev=$disk
}

trace_start()
{
	local devt

	devt=$(stat -L -c '%t %T' "$disk")
	read -r major minor <<< "$devt"
	echo 0 > $T/tracing_on
	echo > $T/trace
	echo 65536 > $T/buffer_size_kb
	echo "dev == $(((0x$major << 20) | 0x$minor))" \
		> $T/events/block/block_rq_issue/filter
	echo 1 > $T/events/block/block_rq_issue/enable
	cat $T/trace_pipe > /tmp/trace &
	reader=$!
	echo 1 > $T/tracing_on
}

# Stop tracing, let the reader empty the ring buffer, and fail if the
# buffer lost events.
trace_stop()
{
	local f lost=0 n

	echo 0 > $T/tracing_on
	echo 0 > $T/events/block/block_rq_issue/enable
	# The reader ends by itself once it has emptied the buffer, as
	# tracing is off; only one that never read anything waits on.
	for f in $T/per_cpu/cpu*/stats; do
		n=0
		while [ "$(awk '/^entries:/ { print $2 }' "$f")" != 0 ]; do
			kill -0 "$reader" 2>/dev/null && [ $n -lt 600 ] || {
				echo "waf-guest: the trace reader left events" >&2
				return 1
			}
			sleep 0.2
			n=$((n + 1))
		done
	done
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$reader" 2>/dev/null || break
		sleep 0.5
	done
	kill "$reader" 2>/dev/null || true
	wait "$reader" || true
	for f in $T/per_cpu/cpu*/stats; do
		n=$(awk '/^(overrun|dropped events):/ { s += $NF } END { print s + 0 }' "$f")
		lost=$((lost + n))
	done
	if [ "$lost" -ne 0 ] || grep -q 'LOST.*EVENTS' /tmp/trace; then
		echo "waf-guest: the trace lost $lost events" >&2
		return 1
	fi
}

# The writes per stream in the trace must be what the disk counted.
trace_matches_disk()
{
	local got want

	got=$(awk '{
			for (i = 1; i < NF; i++)
				if ($i == "block_rq_issue:")
					break
			if (i == NF || $(i + 2) !~ /^F?W/)
				next
			for (; i < NF; i++)
				if ($i == "+")
					n = $(i + 1)
			s = substr($NF, 8)
			req[s]++; sec[s] += n
		} END { for (s in req) print s, req[s], sec[s] }' /tmp/trace |
		sort -n)
	want=$(sort -n "$nullb/stream_stats")
	if [ "$got" != "$want" ]; then
		echo "waf-guest: the trace has per stream" $got >&2
		echo "waf-guest: the disk counted" $want >&2
		return 1
	fi
}

# Sectors the disk has written.
written()
{
	awk '{ print $7 }' /sys/block/waf/stat
}

# RocksDB's db_bench, unchanged, at steady state: fillrandom, so that the
# file system is 84 to 86 % full at its fullest (df; about half live
# data, the rest the LSM's obsolete and in-flight files), then
# overwrite, 100,000 random keys per run of db_bench, until the disk has
# been written 4 times more; with streams, its lifetime hints become
# stream IDs through hint2stream.so.
# Levels sized from the last (level_compaction_dynamic_level_bytes,
# RocksDB's default since 8.4 and what production sets: obsolete versions
# take a tenth of the space, where static sizes take as much again as the
# data) from 8 MiB, files of 2 MiB, compactions of at most 4 of them, and
# writes slowed at 8 files in level 0 and stopped at 12: compactions and
# a level 0 that waits for them must take as small a share of the free
# space as they do with the default sizes on a disk of terabytes, or a
# full file system cannot hold them (with the defaults, 36 files of level
# 0 alone fill half a small disk when compaction lags, as under TCG).
# Writes OUTDIR/WORKLOAD-MODE.skip, the device writes at the end of the
# fill plus one (where the steady state begins), and .tput, the
# overwrite's keys per second.
dbfail()	# what went wrong, from db_bench's log: its errors go first
{
	grep -i -m 5 'error\|fail\|space\|corrupt' /tmp/db_bench.log >&2 || true
	tail -n 5 /tmp/db_bench.log >&2
	df $mnt >&2
}

rocksdb()	# rocksdb WORKLOAD -s|""
{
	local num=$((mib * 1150)) preload= opts end ops=0 t0 t1 b

	[ "$2" = -s ] && preload=$bin/hint2stream.so
	opts="--db=$mnt/db --num=$num --key_size=16 --value_size=400
		--compression_type=none --write_buffer_size=$((4 << 20))
		--target_file_size_base=$((2 << 20))
		--max_bytes_for_level_base=$((8 << 20))
		--max_compaction_bytes=$((8 << 20))
		--level_compaction_dynamic_level_bytes=true
		--level0_slowdown_writes_trigger=8
		--level0_stop_writes_trigger=12
		--max_background_jobs=2 --threads=1 --statistics=0
		--histogram=0"
	# shellcheck disable=SC2086
	env ${preload:+LD_PRELOAD=$preload HINT2STREAM_LOG=/tmp/hints} \
		db_bench $opts --benchmarks=fillrandom --seed=1 \
		> /tmp/db_bench.log 2>&1 ||
		{ dbfail; return 1; }
	grep '^fillrandom ' /tmp/db_bench.log >&2
	awk -v s="$(written)" -v d=$((mib * 2048)) \
		'BEGIN { printf "%.3f\n", s / d + 1 }' > "$out/$1-$mode.skip"
	end=$(($(written) + 4 * mib * 2048))
	t0=$(date +%s.%N)
	for ((b = 2; $(written) < end; b++)); do
		# shellcheck disable=SC2086
		env ${preload:+LD_PRELOAD=$preload HINT2STREAM_LOG=/tmp/hints} \
			db_bench $opts --benchmarks=overwrite --use_existing_db=1 \
			--writes=100000 --seed=$b > /tmp/db_bench.log 2>&1 ||
			{ dbfail; return 1; }
		ops=$((ops + 100000))
	done
	t1=$(date +%s.%N)
	awk -v n=$ops -v t0="$t0" -v t1="$t1" \
		'BEGIN { printf "%.0f\n", n / (t1 - t0) }' > "$out/$1-$mode.tput"
	echo "waf-guest: overwrite: $ops keys, $(cat "$out/$1-$mode.tput")" \
		"keys/s" >&2
	if [ -n "$preload" ]; then
		echo "waf-guest: hints: $(awk '{ n[$2 "->" $3]++ }
			END { for (h in n) printf "%s x%d ", h, n[h] }' /tmp/hints)" >&2
		rm /tmp/hints
	fi
}

# PostgreSQL 15 under pgbench, unchanged, at steady state: pgbench -i
# fills the file system to about 60 % (its tables grow with updates),
# then pgbench runs its TPC-B-like transactions, 4 clients, until the disk
# has been written 4 times more.  Debian's settings but for the WAL's
# size, scaled to the disk as the file sizes of rocksdb are (64 MiB, as
# 1 GiB is to a database of some tens of GiB), and the socket.  With
# streams, the administrator gives the WAL directory ID 1 and the data
# directory ID 2 before initdb creates them: nothing else changes.
# Writes .skip and .tput (transactions per second) as rocksdb does.
pgbench_run()	# pgbench_run WORKLOAD -s|""
{
	local pg=/usr/lib/postgresql/15/bin scale=$((mib * 35 / 1024)) end
	local n=0 t0 t1

	mkdir $mnt/data $mnt/wal
	chown postgres: $mnt/data $mnt/wal
	if [ "$2" = -s ]; then
		python3 -c 'import os, sys
for d, i in ((sys.argv[1], 1), (sys.argv[2], 2)):
	fd = os.open(d, os.O_RDONLY)
	os.posix_fadvise(fd, i, 0, 8)
	os.close(fd)' $mnt/wal $mnt/data
	fi
	runuser -u postgres -- $pg/initdb -D $mnt/data -X $mnt/wal \
		--locale=C -E UTF8 -A trust > /tmp/pg.log 2>&1 ||
		{ tail /tmp/pg.log >&2; return 1; }
	cat >> $mnt/data/postgresql.conf <<-EOF
	listen_addresses = ''
	unix_socket_directories = '/tmp'
	max_wal_size = 64MB
	min_wal_size = 32MB
	EOF
	# The server's log, which the server (not root) creates.
	runuser -u postgres -- $pg/pg_ctl -D $mnt/data -w \
		-l /tmp/pg-server.log start > /dev/null ||
		{ tail /tmp/pg-server.log >&2 || true; return 1; }
	runuser -u postgres -- $pg/pgbench -h /tmp -i -q -s "$scale" \
		postgres > /tmp/pgbench.log 2>&1 ||
		{ tail /tmp/pgbench.log >&2; return 1; }
	runuser -u postgres -- $pg/psql -h /tmp -q -c CHECKPOINT postgres
	awk -v s="$(written)" -v d=$((mib * 2048)) \
		'BEGIN { printf "%.3f\n", s / d + 1 }' > "$out/$1-$mode.skip"
	end=$(($(written) + 4 * mib * 2048))
	t0=$(date +%s.%N)
	while [ "$(written)" -lt "$end" ]; do
		runuser -u postgres -- $pg/pgbench -h /tmp -c 4 -j 2 -t 2500 \
			postgres > /tmp/pgbench.log 2>&1 ||
			{ tail /tmp/pgbench.log >&2; return 1; }
		n=$((n + 10000))
	done
	t1=$(date +%s.%N)
	runuser -u postgres -- $pg/pg_ctl -D $mnt/data -w stop > /dev/null
	awk -v n=$n -v t0="$t0" -v t1="$t1" \
		'BEGIN { printf "%.0f\n", n / (t1 - t0) }' > "$out/$1-$mode.tput"
	echo "waf-guest: pgbench: $n transactions, $(cat "$out/$1-$mode.tput")" \
		"per second" >&2
}

# Without online discard, fstrim runs as fstrim.timer would: here, each
# time the disk has been written once more (the timer's week is one to
# several device writes on a disk written 0.15 to 1 times a day: trimming
# this often favours the run without streams).  Also notes the fullest
# the file system was, in OUTDIR/WORKLOAD-MODE.full (percent).
trim_start()	# trim_start WORKLOAD
{
	(
		next=$(($(written) + mib * 2048)) full=0
		while sleep 2; do
			u=$(df --output=pcent $mnt | tail -n 1 | tr -dc 0-9)
			[ "$u" -le "$full" ] || { full=$u; echo "$u" > "$out/$1-$mode.full"; }
			[ "$(written)" -ge "$next" ] || continue
			fstrim $mnt
			next=$(($(written) + mib * 2048))
		done
	) &
	trimmer=$!
}

trim_stop()
{
	kill "$trimmer"
	wait "$trimmer" 2>/dev/null || true
}

# Two cgroups for the tenants workload, with io.stream 1 and 2 when the
# mode places data, 0 for "none": the programs place nothing themselves.
cg=/sys/fs/cgroup
tenants_up()
{
	local i

	grep -q "^cgroup2 $cg " /proc/mounts || mount -t cgroup2 cgroup2 $cg
	echo "+io +memory" > $cg/cgroup.subtree_control
	for i in 1 2; do
		mkdir $cg/waf$i
		if [ "$1" = none ]; then
			echo 0 > $cg/waf$i/io.stream
		else
			echo $i > $cg/waf$i/io.stream
		fi
	done
}

tenants_down()
{
	rmdir $cg/waf1 $cg/waf2
}

# fs_up ext4|xfs [nodiscard]: a new file system on the disk, mounted with
# online discard unless told not to
fs_up()
{
	case $1 in
	ext4) mkfs.ext4 -q -F -E nodiscard "$dev" ;;
	xfs) mkfs.xfs -q -f -K "$dev" ;;
	*) echo "waf-guest: no file system $1" >&2; return 1 ;;
	esac
	mkdir -p $mnt
	mount -o "${2:-discard}" "$dev" $mnt
}

fs_of()	# fs_of WORKLOAD: its file system, the word after the first "-"
{
	local f=${1#*-}

	echo "${f%%-*}"
}

run()	# run WORKLOAD none|streams|fdp
{
	local w=$1 mode=$2 s=
	local start=$SECONDS

	[ "$mode" = none ] || s=-s
	disk_up
	[ "$mode" != fdp ] || fdp_up
	trace_start
	case $w in
	writers-*|dbfile-*)
		fs_up "${w#*-}"
		"$load" $s "${w%-*}" $mnt "$writes"
		umount $mnt ;;
	rocksdb-*-discard)
		fs_up "$(fs_of "$w")"
		rocksdb "$w" "$s"
		umount $mnt ;;
	rocksdb-*|pgbench-*)
		fs_up "$(fs_of "$w")" nodiscard
		trim_start "$w"
		if [ "${w%%-*}" = rocksdb ]; then
			rocksdb "$w" "$s"
		else
			pgbench_run "$w" "$s"
		fi
		trim_stop
		umount $mnt ;;
	tenants-*)
		fs_up "${w#*-}"
		tenants_up "$mode"
		"$load" tenants $mnt "$writes" $cg/waf1 $cg/waf2
		umount $mnt
		tenants_down ;;
	cache)
		"$load" $s cache "$dev" "$writes" ;;
	*)
		echo "waf-guest: no workload $w" >&2
		return 1 ;;
	esac
	[ "$mode" != fdp ] || fdp_down
	trace_stop
	trace_matches_disk
	cp /tmp/trace "$out/$w-$mode.trace"
	cat "$nullb/stream_stats" > "$out/$w-$mode.stats"
	rm /tmp/trace
	disk_down
	echo "waf-guest: $w $mode: $((SECONDS - start))s," \
		"$(grep -c block_rq_issue "$out/$w-$mode.trace") requests"
}

for w in "$@"; do
	for m in ${modes//,/ }; do
		run "$w" "$m"
	done
done
