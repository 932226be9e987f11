#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: what the series costs on the hot path, patched against the
# pristine base built with the same configuration, in one run.  Not a
# test: it prints figures and passes or fails nothing.
#
# 4 KiB random O_DIRECT writes (fio, psync) to a null_blk device that
# stores nothing, with no stream set and with one set.  The guests run
# under QEMU with -icount shift=0: guest time is the count of executed
# instructions (1 ns each), so a write's mean latency is the instructions
# it takes, and repeats agree far better than wall time would under TCG.
# The kernels take turns, ROUNDS boots each, RUNS fio runs per boot.
# And what the rule that writes of different stream IDs never merge
# costs where it costs most: sequential writes that would all merge,
# alternating between two IDs (harness/merge-load.c), in instructions
# and in requests per write.  And close() of a file with 64 MiB dirty,
# with an ID and without (harness/close-load.c): its guest time and the
# sectors written during it.  And open() for writing of files whose
# inodes are not cached (harness/open-load.c), on a device without
# streams and, patched only, on one with streams where the files have an
# ID from their directory, which is read at open.  And 4 KiB writes with a
# stream ID through the NVMe target over loop, to a namespace with Streams
# and to one with FDP, each against a plain namespace in the same guest
# (harness/nvmet-bench.sh, patched kernel only).
#
# Also the sizes of the structs the series touches, base and patched,
# from pahole on objects built with debug information.
set -euo pipefail
. "$(dirname "$0")/common.sh"

rounds=${BENCH_ROUNDS:-3} runs=${BENCH_RUNS:-3} writes=${BENCH_WRITES:-20000}

"$TOP/harness/setup.sh"
"$TOP/harness/tree.sh"
"$TOP/harness/build.sh"
"$TOP/harness/build.sh" --base

echo "== struct sizes (pahole): base -> patched"
sizes()
{
	kmake "$1" "$2" KCFLAGS=-g block/blk-mq.o fs/read_write.o
	for s in bio request file inode kiocb; do
		case $s in bio|request) o=block/blk-mq.o ;; *) o=fs/read_write.o ;; esac
		pahole -C "$s" "$2/$o" | awk -v s="$s" '
			/\/\* size:/ { sub(/,$/, "", $3); size = $3 }
			/\/\* sum members:/ { holes = $0 }
			END {
				n = 0; sum = 0
				if (match(holes, /holes: [0-9]+/))
					n = substr(holes, RSTART + 7, RLENGTH - 7)
				if (match(holes, /sum holes: [0-9]+/))
					sum = substr(holes, RSTART + 11, RLENGTH - 11)
				printf "%s %s %s %s\n", s, size, n, sum
			}'
	done
}
sizes "$WORK/base" "$WORK/obj-base" > "$OUT/bench-sizes-base"
sizes "$TREE" "$OBJ" > "$OUT/bench-sizes"
join "$OUT/bench-sizes-base" "$OUT/bench-sizes" | awk '
	{ printf "  struct %-8s %4d -> %4d bytes  (holes %d/%dB -> %d/%dB)%s\n",
		$1, $2, $5, $3, $4, $6, $7, $2 == $5 ? "" : "  GROWS" }'

gcc -shared -fPIC -O2 -Wall -o "$WORK/setstream.so" \
	"$TOP/harness/setstream.c" -ldl
gcc -O2 -Wall -o "$WORK/merge-load" "$TOP/harness/merge-load.c"
gcc -O2 -Wall -o "$WORK/close-load" "$TOP/harness/close-load.c"
gcc -O2 -Wall -o "$WORK/open-load" "$TOP/harness/open-load.c"

results=$OUT/bench-results
: > "$results"
vm_bench()
{
	"$TOP/$SELFTESTS/vm.sh" -t 1800 -c 1 -q -icount -q shift=0,sleep=off \
		"$1" -- "$TOP/harness/bench-guest.sh" "$2" "$runs" "$writes" \
		"$WORK/setstream.so" "$WORK/merge-load" "$WORK/close-load" \
		"$WORK/open-load" "${@:3}" | tee -a "$results" | grep '^result'
}
echo "== $writes writes per run, $runs runs per boot, $rounds boots per kernel"
for r in $(seq "$rounds"); do
	vm_bench "$OUT/bzImage-base" base unset merge0 close0 open0
	vm_bench "$OUT/bzImage" patched unset set merge0 merge1 merge2 \
		close0 close1 open0 open1
	"$TOP/$SELFTESTS/vm.sh" -t 1800 -c 1 -q -icount -q shift=0,sleep=off \
		"$OUT/bzImage" -- "$TOP/harness/nvmet-bench.sh" patched "$runs" \
		"$writes" "$WORK/setstream.so" | tee -a "$results" |
		grep '^result'
done

echo "== instructions per write (guest ns under -icount shift=0)"
python3 - "$results" <<'PY'
import statistics, sys



def show(against, cases):
    b = statistics.mean(runs[against])
    for kernel, case, name in cases:
        v = runs[(kernel, case)]
        m = statistics.mean(v)
        print("  %-26s %9.0f %7.4f  %+.2f%% .. %+.2f%% (n=%d, sd %.2f%%)"
              "  %.4f" % (
                  kernel + ", " + name, m, m / b,
                  100 * (min(v) / b - 1), 100 * (max(v) / b - 1), len(v),
                  100 * statistics.stdev(v) / m,
                  statistics.mean(reqs[(kernel, case)])))


runs, reqs = {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "result":
        runs.setdefault((f[1], f[2]), []).append(float(f[4]))
        reqs.setdefault((f[1], f[2]), []).append(float(f[5]))
print("  %-26s %9s %7s  %-38s %s" % ("case", "mean", "ratio",
                                      "spread of runs", "requests/write"))
show(("base", "unset"), (("base", "unset", "stream unset"),
                         ("patched", "unset", "stream unset"),
                         ("patched", "set", "stream set")))
print("== the merge rule: sequential writes, 16 per io_submit, alternating"
      " between two descriptors (device without streams)")
show(("base", "merge0"), (("base", "merge0", "no IDs"),
                          ("patched", "merge0", "no IDs"),
                          ("patched", "merge1", "IDs 1, 1"),
                          ("patched", "merge2", "IDs 1, 2")))
print("== close() of a file on ext4 with 64 MiB dirty, device without"
      " streams; last column: sectors written during the close")
show(("base", "close0"), (("base", "close0", "no ID"),
                          ("patched", "close0", "no ID"),
                          ("patched", "close1", "ID 1")))
print("== open() and close() of a file whose inode is not cached, on ext4;"
      " last column: sectors read during 2000 of them")
show(("base", "open0"), (("base", "open0", "no streams"),
                         ("patched", "open0", "no streams"),
                         ("patched", "open1", "streams, ID 1")))
print("== writes with stream ID 1 through the NVMe target over loop;"
      " ratio against the plain namespace")
show(("patched", "nvmet-plain"), (("patched", "nvmet-plain", "plain ns"),
                                  ("patched", "nvmet-streams", "Streams ns"),
                                  ("patched", "nvmet-fdp", "FDP ns")))
PY
