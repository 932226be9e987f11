// SPDX-License-Identifier: GPL-2.0
/*
 * flashsim - a model of a flash device, to measure the write amplification
 * (WAF) that a block trace causes with and without write streams.
 *
 * This is its command line and its report; trace.c reads the traces and
 * makes the synthetic workloads, model.c is the device.  See usage() for
 * the trace format and the options.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flashsim.h"

static const char *prog = "flashsim";

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* --- Output ------------------------------------------------------------- */

static const char * const gc_names[] = {
	[GC_GREEDY] = "greedy", [GC_COST_BENEFIT] = "cost-benefit",
	[GC_FIFO] = "fifo", [GC_RANDOM] = "random",
};

static double waf(u64 media, u64 host)
{
	return host ? (double)media / host : 0;
}

static void placement_name(const struct config *cfg, char *buf, size_t len)
{
	if (cfg->place == PLACE_FOLD)
		snprintf(buf, len, "fold:%u", cfg->fold);
	else
		snprintf(buf, len, "%s",
			 cfg->place == PLACE_SINGLE ? "single" : "streams");
}

/*
 * The median lifetime of a stream's data that died, in host pages
 * written, from its histogram: the middle of the bin that holds it.
 */
static double median_life(const struct stream_stats *st)
{
	u64 seen = 0;
	unsigned int i;

	for (i = 0; i < HIST_BINS; i++) {
		seen += st->hist[i];
		if (2 * seen >= st->ended)
			break;
	}
	return i ? 1.5 * (1ULL << i) : 1;
}

static void report(const struct model *m, bool kv, FILE *hist)
{
	const struct config *cfg = m->cfg;
	double steady = m->steady ?
		waf(m->media_pages - m->steady_media,
		    m->host_pages - m->steady_host) : NAN;
	char place[32];
	unsigned int s, i;

	placement_name(cfg, place, sizeof(place));
	if (kv) {
		printf("op=%g gc=%s placement=%s waf=%.4f all_waf=%.4f ",
		       cfg->op, gc_names[cfg->gc], place, steady,
		       waf(m->media_pages, m->host_pages));
		printf("host_pages=%llu media_pages=%llu device_writes=%.2f gc_runs=%llu\n",
		       m->host_pages, m->media_pages,
		       (double)m->host_pages / m->nr_lpages, m->gc_runs);
	} else {
		printf("device: %llu bytes, %u pages of %u bytes; ",
		       (u64)m->nr_lpages * cfg->page_size, m->nr_lpages,
		       cfg->page_size);
		printf("%u erase blocks of %u pages; over-provisioning %g %%\n",
		       m->nr_blocks, m->pages_per_block, cfg->op);
		printf("gc: %s, placement: %s\n", gc_names[cfg->gc], place);
		printf("host writes: %llu pages (%.2f device writes), ",
		       m->host_pages, (double)m->host_pages / m->nr_lpages);
		printf("discarded %llu, flushes %llu\n", m->discarded,
		       m->flushes);
		printf("media writes: %llu pages, gc: %llu blocks collected\n",
		       m->media_pages, m->gc_runs);
		if (m->steady)
			printf("waf: %.4f after %g device writes (steady state); %.4f in all\n",
			       steady, cfg->skip,
			       waf(m->media_pages, m->host_pages));
		else
			printf("waf: no steady state (fewer than %g device writes); %.4f in all\n",
			       cfg->skip, waf(m->media_pages, m->host_pages));
		printf("stream  host pages  share   moved pages  waf*    median lifetime\n");
		for (s = 0; s < NR_STREAMS; s++) {
			const struct stream_stats *st = &m->st[s];

			if (!st->host)
				continue;
			printf("%6u  %10llu  %5.1f%%  %11llu  %.4f  ",
			       s, st->host, 100.0 * st->host / m->host_pages,
			       st->moved, m->steady ?
			       (st->host > st->host0 ?
				waf(st->host - st->host0 + st->moved - st->moved0,
				    st->host - st->host0) : NAN) :
			       waf(st->host + st->moved, st->host));
			if (st->ended)
				printf("%.3g device writes\n",
				       median_life(st) / m->nr_lpages);
			else
				printf("-\n");
		}
		printf("* at steady state where there is one: (host + moved) / host\n");
	}
	if (!hist)
		return;
	fprintf(hist, "# op=%g placement=%s capacity_pages=%u: ",
		cfg->op, place, m->nr_lpages);
	fprintf(hist, "stream, lifetime from (host pages written), to, pages\n");
	for (s = 0; s < NR_STREAMS; s++)
		for (i = 0; i < HIST_BINS; i++)
			if (m->st[s].hist[i])
				fprintf(hist, "%u %llu %llu %llu\n",
					s, (u64)(i ? 1ULL << i : 0),
					(u64)((2ULL << i) - 1),
					m->st[s].hist[i]);
}

/* --- Options ------------------------------------------------------------ */

static const char usage_text[] =
"Usage: %s [options] TRACE...\n"
"       %s [options] -S WORKLOAD\n"
"\n"
"Replays a block trace on a model of a flash device and prints its write\n"
"amplification (WAF = media page writes / host page writes), in all and\n"
"per stream ID.  The model is page-mapped; erase blocks are written in\n"
"order by write frontiers and erased by garbage collection (GC), which\n"
"moves their valid pages first.  GC starts when the free blocks run low\n"
"and moves pages to a GC frontier of their own placement.\n"
"\n"
"Options:\n"
"  -c SIZE     logical capacity in bytes (suffix K, M, G, T); default:\n"
"              the end of the highest sector the trace touches\n"
"  -o OP[,OP]  over-provisioning in percent of the capacity (default 7);\n"
"              several give one run each\n"
"  -b SIZE     erase block (reclaim unit) size (default 1M)\n"
"  -p SIZE     page size (default 4K)\n"
"  -g GC       greedy (fewest valid pages, the default), cost-benefit\n"
"              ((1-u)/2u times the time since the block was filled), fifo (oldest\n"
"              block), random (any block: only to show what GC is worth)\n"
"  -m MODE     single: one frontier for all data (a device without\n"
"              streams); streams: one per stream ID (a device that keeps\n"
"              every stream apart, the default); fold:N: N streams, the\n"
"              IDs above N folded as the NVMe host folds them,\n"
"              (id - 1) %% N + 1, and ID 0 apart\n"
"  -s N        the steady state begins after N device writes (default 1)\n"
"  -d MAJ,MIN  of a kernel trace, read the events of this device only\n"
"  -S WORKLOAD instead of a trace, the device written once in order, then\n"
"              page writes of a synthetic workload:\n"
"              uniform (random over the device), seq (sequential\n"
"              overwrites), hotcold:W:S (a share W of the writes to a\n"
"              share S of the device, stream 1, the rest stream 2)\n"
"  -n N        synthetic workloads: N page writes after the first device\n"
"              write (default 10 device writes)\n"
"  -r SEED     random seed of the synthetic workloads and of random GC\n"
"  -l FILE     write per stream the lifetimes of its data, a histogram\n"
"              in powers of two of host pages written: lines\n"
"              'stream from to pages'\n"
"  -k          one line of key=value per run, for scripts\n"
"  -h          this text\n"
"\n"
"Trace format: text, one request per line, sectors of 512 bytes:\n"
"  W SECTOR SECTORS [STREAM]   a write, stream ID 0 to 255 (default 0)\n"
"  D SECTOR SECTORS            a discard (deallocates the pages it covers\n"
"                              whole)\n"
"  F                           a flush (counted only)\n"
"  # ...                       a comment\n"
"The kernel's own trace is read as well: the block_rq_issue events of\n"
"the tracefs 'trace' file, whose 'stream=' field gives the stream ID.\n"
"A trace whose ring buffer lost events is refused.  A write covering part\n"
"of a page writes the whole page.\n"
"\n"
"Exit status: 0, or 1 on an error (bad input, device too small for its\n"
"open frontiers).\n";

static void usage(FILE *f)
{
	fprintf(f, usage_text, prog, prog);
}

static u64 parse_size(const char *s, const char *opt)
{
	char *end;
	u64 v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end && strchr("KMGTkmgt", *end)) {
		/* K is 2^10, M 2^20, G 2^30, T 2^40. */
		v <<= 10 * (strchr("KMGT", toupper(*end)) - "KMGT" + 1);
		end++;
	}
	if (errno || end == s || *end || !v)
		die("%s %s: not a size", opt, s);
	return v;
}

int main(int argc, char **argv)
{
	struct config cfg = {
		.page_size = 4096, .block_size = 1 << 20, .skip = 1,
		.gc = GC_GREEDY, .place = PLACE_STREAMS, .seed = 1,
	};
	const char *ops_arg = "7", *synth_arg = NULL, *hist_file = NULL;
	struct trace t = { .dev_major = -1, .dev_minor = -1 };
	u64 nr_synth = 0;
	FILE *hist = NULL;
	bool kv = false;
	char *p, *end, *arg;
	int c;

	while ((c = getopt(argc, argv, "c:o:b:p:g:m:s:d:S:n:r:l:kh")) != -1) {
		switch (c) {
		case 'c':
			cfg.capacity = parse_size(optarg, "-c");
			break;
		case 'o':
			ops_arg = optarg;
			break;
		case 'b':
			cfg.block_size = parse_size(optarg, "-b");
			break;
		case 'p':
			cfg.page_size = parse_size(optarg, "-p");
			break;
		case 'g':
			for (cfg.gc = 0; cfg.gc <= GC_RANDOM; cfg.gc++)
				if (!strcmp(optarg, gc_names[cfg.gc]))
					break;
			if (cfg.gc > GC_RANDOM)
				die("-g %s: greedy, cost-benefit, fifo or random",
				    optarg);
			break;
		case 'm':
			if (!strcmp(optarg, "single")) {
				cfg.place = PLACE_SINGLE;
			} else if (!strcmp(optarg, "streams")) {
				cfg.place = PLACE_STREAMS;
			} else if (!strncmp(optarg, "fold:", 5)) {
				cfg.place = PLACE_FOLD;
				cfg.fold = strtoul(optarg + 5, &end, 10);
				if (*end || !cfg.fold || cfg.fold > 255)
					die("-m %s: fold:N, N from 1 to 255",
					    optarg);
			} else {
				die("-m %s: single, streams or fold:N", optarg);
			}
			break;
		case 's':
			cfg.skip = strtod(optarg, &end);
			if (*end || cfg.skip < 0)
				die("-s %s: a number of device writes", optarg);
			break;
		case 'd':
			if (sscanf(optarg, "%d,%d", &t.dev_major,
				   &t.dev_minor) != 2)
				die("-d %s: MAJOR,MINOR", optarg);
			break;
		case 'S':
			synth_arg = optarg;
			break;
		case 'n':
			nr_synth = parse_size(optarg, "-n");
			break;
		case 'r':
			cfg.seed = strtoull(optarg, NULL, 0);
			break;
		case 'l':
			hist_file = optarg;
			break;
		case 'k':
			kv = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (cfg.page_size % 512 || cfg.block_size % cfg.page_size ||
	    cfg.block_size / cfg.page_size < 2)
		die("pages are multiples of 512 bytes, erase blocks of pages");
	if (synth_arg ? optind != argc : optind == argc) {
		usage(stderr);
		return 1;
	}
	if (synth_arg && !cfg.capacity)
		die("-S needs the capacity (-c)");
	for (; optind < argc; optind++)
		read_trace(&t, argv[optind]);
	if (t.lost)
		die("the trace lost %llu events: its ring buffer was too small",
		    t.lost);
	if (!cfg.capacity)
		cfg.capacity = (t.end * 512 + cfg.page_size - 1) /
			       cfg.page_size * cfg.page_size;
	cfg.capacity -= cfg.capacity % cfg.page_size;
	if (hist_file) {
		hist = fopen(hist_file, "w");
		if (!hist)
			die("%s: %s", hist_file, strerror(errno));
	}

	arg = strdup(ops_arg);
	if (!arg)
		die("out of memory");
	for (p = strtok(arg, ","); p; p = strtok(NULL, ",")) {
		struct model m;
		size_t i;

		cfg.op = strtod(p, &end);
		if (*end || cfg.op <= 0 || cfg.op > 1000)
			die("-o %s: over-provisioning in percent", p);
		model_init(&m, &cfg);
		if (synth_arg) {
			struct synth sy;
			u32 lpn = 0;
			u8 stream = 0;

			parse_synth(&sy, synth_arg);
			sy.nr = nr_synth ?: 10ULL * m.nr_lpages;
			sy.rng = cfg.seed * 0x2545f4914f6cdd1dULL;
			while (synth_next(&sy, m.nr_lpages, &lpn, &stream))
				host_write(&m, lpn, stream);
		} else {
			for (i = 0; i < t.nr; i++)
				run_op(&m, &t.ops[i], i);
		}
		if (!kv && p != arg)
			putchar('\n');
		report(&m, kv, hist);
		model_free(&m);
	}
	free(arg);
	free(t.ops);
	if (hist && fclose(hist))
		die("%s: %s", hist_file, strerror(errno));
	return 0;
}
