#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The plots of "make waf", with gnuplot: WAF against over-provisioning
# per workload, without and with stream IDs, directly and over FDP
# (waf-op.png), the same against the erase block size (waf-eb.png), and
# per workload and stream the lifetimes of the data (waf-lifetimes.png).
#
# Usage: waf-plot.sh DIR WORKLOAD...  (DIR holds table.txt, table-eb.txt
# and the WORKLOAD.lifetimes files that waf.sh wrote)
set -euo pipefail

dir=$1
shift
n=$#
cols=$(( n < 3 ? n : 3 ))
rows=$(( (n + cols - 1) / cols ))

# Per workload, "OP without with over-FDP" rows, and the same against
# the erase block size in MiB.
for w in "$@"; do
	awk -v w="$w" '$1 == w { sub(/%/, "", $2); print $2, $3, $4, $6 }' \
		"$dir/table.txt" > "$dir/$w.op"
	awk -v w="$w" '$1 == w { print $2, $3, $4, $6 }' \
		"$dir/table-eb.txt" > "$dir/$w.eb"
	# The lifetimes at the first over-provisioning, in device writes
	# (pages over the capacity), as a share of each stream's pages.
	# A bin is plotted at its top (to + 1 host pages).
	awk '/^# op=/ { if (on) exit; on = 1; for (i = 1; i <= NF; i++)
			if ($i ~ /^capacity_pages=/) cap = substr($i, 16) + 0
		     next }
	     on { s[NR] = $1; x[NR] = ($3 + 1) / cap; y[NR] = $4; tot[$1] += $4 }
	     END { for (i in s) print s[i], x[i], y[i] / tot[s[i]] }' \
		"$dir/$w.lifetimes" | sort -k1,1n -k2,2g > "$dir/$w.life"
done

# The over-provisioning of the erase block table: the first of table.txt.
op=$(awk 'NR == 2 { sub(/%/, "", $2); print $2 }' "$dir/table.txt")

{
	echo "set terminal pngcairo size $((cols * 420)),$((rows * 340)) font ',9'"
	echo "set output '$dir/waf-op.png'"
	echo "set multiplot layout $rows,$cols title 'Write amplification without and with stream IDs (flashsim, greedy GC)'"
	echo "set xlabel 'over-provisioning (%)'; set ylabel 'WAF'; set yrange [0.9:*]"
	echo "set key below; set grid"
	for w in "$@"; do
		echo "set title '$w'"
		echo "plot '$dir/$w.op' using 1:2 with linespoints title 'without', '' using 1:3 with linespoints title 'with stream IDs', '' using 1:4 with linespoints dashtype 2 title 'with stream IDs over FDP'"
	done
	echo "unset multiplot"

	echo "set output '$dir/waf-eb.png'"
	echo "set multiplot layout $rows,$cols title 'WAF against the erase block size, at $op % over-provisioning'"
	echo "set xlabel 'erase block (MiB)'; set logscale x 2; set format x '%g'"
	echo "set key below"
	for w in "$@"; do
		echo "set title '$w'"
		echo "plot '$dir/$w.eb' using 1:2 with linespoints title 'without', '' using 1:3 with linespoints title 'with stream IDs', '' using 1:4 with linespoints dashtype 2 title 'with stream IDs over FDP'"
	done
	echo "unset multiplot"
	echo "unset logscale x"

	echo "set output '$dir/waf-lifetimes.png'"
	echo "set multiplot layout $rows,$cols title 'Lifetime of the data per stream ID (written to overwritten or discarded)'"
	echo "set logscale x; set format x '%g'; set xlabel 'lifetime (device writes)'; set ylabel 'share of the stream''s pages'"
	echo "set yrange [0:*]; set key below"
	for w in "$@"; do
		echo "set title '$w'"
		# One line per stream: the blocks of the file, split by
		# stream; a stream has the same colour in every plot.
		streams=$(cut -d' ' -f1 "$dir/$w.life" | sort -un | tr '\n' ' ')
		plot=
		for s in $streams; do
			plot="$plot${plot:+, }'$dir/$w.life' using (\$1 == $s ? \$2 : 1/0):3 with linespoints linetype $((s % 8 + 1)) title 'stream $s'"
		done
		echo "plot $plot"
	done
	echo "unset multiplot"
} | gnuplot
