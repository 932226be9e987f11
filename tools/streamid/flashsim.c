// SPDX-License-Identifier: GPL-2.0
/*
 * flashsim - a model of a flash device, to measure the write amplification
 * (WAF) that a block trace causes with and without write streams.
 *
 * The model is page-mapped: every logical page maps to a physical page;
 * physical pages are grouped in erase blocks (reclaim units) that are
 * written in order by a write frontier and erased whole by garbage
 * collection (GC), which first moves the block's valid pages elsewhere.
 * WAF is media page writes (host writes and GC moves) over host page
 * writes.  See usage() for the trace format and the options.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char u8;

#define NR_STREAMS	256
#define NONE		0xffffffffU
#define HIST_BINS	64

enum op_type { OP_WRITE, OP_DISCARD, OP_FLUSH };
enum gc_policy { GC_GREEDY, GC_COST_BENEFIT, GC_FIFO, GC_RANDOM };
enum placement { PLACE_SINGLE, PLACE_STREAMS, PLACE_FOLD };

struct op {
	u64 sector;		/* 512-byte sectors */
	u32 nr_sectors;
	u8 type;
	u8 stream;
};

struct config {
	u64 capacity;		/* bytes, logical */
	u32 page_size;		/* bytes */
	u32 block_size;		/* bytes, erase block / reclaim unit */
	double op;			/* over-provisioning, percent */
	double skip;			/* device writes before steady state */
	enum gc_policy gc;
	enum placement place;
	unsigned int fold;		/* streams of the folded placement */
	u64 seed;
};

struct block {
	u32 valid;			/* valid pages */
	u32 written;		/* pages written so far */
	u32 prev, next;		/* in the list of its valid count */
	u32 pos;			/* index in closed[], NONE if not closed */
	u64 stamp;			/* host pages written when closed */
};

struct frontier {
	u32 block;			/* NONE: none open */
};

struct stream_stats {
	u64 host;			/* pages written by the host */
	u64 moved;			/* pages of it moved by GC */
	u64 hist[HIST_BINS];	/* lifetimes, log2 of host pages */
	u64 ended;			/* pages overwritten or discarded */
	u64 host0, moved0;		/* host and moved when steady began */
};

struct model {
	const struct config *cfg;
	u32 pages_per_block;
	u32 nr_lpages;		/* logical pages */
	u32 nr_blocks;		/* physical erase blocks */
	u32 *l2p;			/* logical page -> physical, NONE */
	u32 *p2l;			/* physical page -> logical */
	u8 *stream;		/* stream of each logical page's data */
	u64 *born;			/* host pages written when written */
	struct block *blocks;
	u32 *bucket;		/* closed blocks by valid count */
	u32 min_bucket;		/* no closed block has fewer valid */
	u32 *closed;		/* closed blocks, in any order */
	u32 nr_closed;
	u32 *free;			/* free blocks, a stack */
	u32 nr_free;
	unsigned int nr_classes;
	unsigned int nr_open;		/* frontiers with a block open */
	struct frontier *host_front;	/* per placement class */
	struct frontier *gc_front;
	u64 host_pages, media_pages, gc_runs, discarded, flushes;
	u64 steady_host, steady_media;	/* when the steady state began */
	bool steady;
	u64 rng;
	struct stream_stats *st;
};

static const char *prog = "flashsim";

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

static u64 rng_next(u64 *s)
{
	/* splitmix64 */
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static u64 rng_below(u64 *s, u64 n)
{
	return (u64)(((__uint128_t)rng_next(s) * n) >> 64);
}

/* --- The trace ---------------------------------------------------------- */

struct trace {
	struct op *ops;
	size_t nr, alloc;
	u64 end;			/* highest sector written or discarded */
	int dev_major, dev_minor;	/* ftrace input: device filter, or -1 */
	bool dev_seen[2];		/* several devices seen without a filter */
	int first_major, first_minor;
	u64 lost;			/* ftrace: events lost, from the trace */
};

static void trace_add(struct trace *t, int type, u64 sector,
		      u32 nr, unsigned int stream)
{
	struct op *o;

	if (t->nr == t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 1 << 16;
		t->ops = realloc(t->ops, t->alloc * sizeof(*t->ops));
		if (!t->ops)
			die("out of memory for the trace");
	}
	o = &t->ops[t->nr++];
	o->type = type;
	o->sector = sector;
	o->nr_sectors = nr;
	o->stream = stream;
	if (type != OP_FLUSH && sector + nr > t->end)
		t->end = sector + nr;
}

/*
 * One line of the kernel's block_rq_issue event as the trace file shows
 * it: "... block_rq_issue: 259,0 WS 4096 () 2048 + 8 none,0,0 [fio]
 * stream=3".  Returns false if the line is no such event.
 */
static bool parse_ftrace(struct trace *t, const char *line,
			 const char *file, unsigned long lineno)
{
	const char *p = strstr(line, " block_rq_issue: ");
	unsigned int bytes, stream = 0;
	unsigned long long sector;
	int major, minor, n = 0;
	char rwbs[16], *s;
	unsigned int nr;

	if (!p)
		return false;
	p += strlen(" block_rq_issue: ");
	if (sscanf(p, "%d,%d %15s %u ()%n", &major, &minor, rwbs, &bytes,
		   &n) < 4 || !n) {
		/* A command string in the parentheses: skip it. */
		const char *q = strchr(p, ')');

		if (sscanf(p, "%d,%d %15s %u", &major, &minor, rwbs,
			   &bytes) != 4 || !q)
			die("%s:%lu: cannot read this block_rq_issue event",
			    file, lineno);
		n = q + 1 - p;
	}
	if (sscanf(p + n, " %llu + %u", &sector, &nr) != 2)
		die("%s:%lu: cannot read this block_rq_issue event",
		    file, lineno);
	s = strstr(p + n, " stream=");
	if (s)
		stream = strtoul(s + 8, NULL, 10);
	if (stream >= NR_STREAMS)
		die("%s:%lu: stream %u out of range", file, lineno, stream);
	if (t->dev_major >= 0) {
		if (major != t->dev_major || minor != t->dev_minor)
			return true;
	} else if (!t->dev_seen[0]) {
		t->dev_seen[0] = true;
		t->first_major = major;
		t->first_minor = minor;
	} else if (major != t->first_major || minor != t->first_minor) {
		die("%s:%lu: events of devices %d,%d and %d,%d: choose one with -d",
		    file, lineno, t->first_major, t->first_minor, major, minor);
	}
	/* blk_fill_rwbs(): F for a preflush, then the operation. */
	s = rwbs;
	if (s[0] == 'F' && strchr("WRDN", s[1]) && s[1])
		s++;
	switch (s[0]) {
	case 'W':
		if (nr)
			trace_add(t, OP_WRITE, sector, nr, stream);
		if (rwbs[0] == 'F')
			trace_add(t, OP_FLUSH, 0, 0, 0);
		break;
	case 'D':
		/* A discard, or a secure erase ("DE"): the data is gone. */
		if (nr)
			trace_add(t, OP_DISCARD, sector, nr, 0);
		break;
	case 'F':
		trace_add(t, OP_FLUSH, 0, 0, 0);
		break;
	default:			/* reads and the rest */
		break;
	}
	return true;
}

static void parse_line(struct trace *t, char *line, const char *file,
		       unsigned long lineno)
{
	unsigned long long sector, lost;
	unsigned int nr, stream;
	char *p = line, extra;
	int n;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\n' || *p == '\0')
		return;
	/*
	 * The header of the tracefs "trace" file: fewer entries in the
	 * buffer than were written means the oldest were overwritten.
	 */
	if (sscanf(p, "# entries-in-buffer/entries-written: %llu/%llu",
		   &sector, &lost) == 2) {
		if (sector < lost)
			t->lost += lost - sector;
		return;
	}
	if (*p == '#')
		return;
	/* Where the ring buffer overflowed, the trace says how much it lost. */
	if (!strncmp(p, "CPU:", 4) && strstr(p, " [LOST ")) {
		if (sscanf(strstr(p, " [LOST ") + 7, "%llu", &lost) != 1)
			lost = 1;
		t->lost += lost ? lost : 1;
		return;
	}
	if (parse_ftrace(t, p, file, lineno))
		return;
	switch (*p) {
	case 'W':
		n = sscanf(p + 1, "%llu %u %u %c", &sector, &nr, &stream, &extra);
		if (n == 2)
			stream = 0;
		if (n < 2 || n > 3 || stream >= NR_STREAMS || !nr)
			break;
		trace_add(t, OP_WRITE, sector, nr, stream);
		return;
	case 'D':
		if (sscanf(p + 1, "%llu %u %c", &sector, &nr, &extra) != 2 ||
		    !nr)
			break;
		trace_add(t, OP_DISCARD, sector, nr, 0);
		return;
	case 'F':
		if (sscanf(p + 1, " %c", &extra) == 1)
			break;
		trace_add(t, OP_FLUSH, 0, 0, 0);
		return;
	}
	die("%s:%lu: not a trace line: %s", file, lineno, line);
}

static void read_trace(struct trace *t, const char *file)
{
	unsigned long lineno = 0;
	size_t size = 0;
	char *line = NULL;
	FILE *f;

	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f)
		die("%s: %s", file, strerror(errno));
	while (getline(&line, &size, f) > 0)
		parse_line(t, line, file, ++lineno);
	if (ferror(f))
		die("%s: %s", file, strerror(errno));
	free(line);
	if (f != stdin)
		fclose(f);
}

/* --- Synthetic workloads, to check the model against theory -------------- */

struct synth {
	enum { SYN_UNIFORM, SYN_SEQ, SYN_HOTCOLD } kind;
	double hot_writes;		/* hot/cold: share of writes that are hot */
	double hot_space;		/* and share of the space that is */
	u64 nr;			/* page writes */
	u64 done, next_seq, rng;
};

static void parse_synth(struct synth *sy, const char *arg)
{
	char extra;

	memset(sy, 0, sizeof(*sy));
	if (!strcmp(arg, "uniform")) {
		sy->kind = SYN_UNIFORM;
	} else if (!strcmp(arg, "seq")) {
		sy->kind = SYN_SEQ;
	} else if (sscanf(arg, "hotcold:%lf:%lf%c", &sy->hot_writes,
			  &sy->hot_space, &extra) == 2 &&
		   sy->hot_writes > 0 && sy->hot_writes < 1 &&
		   sy->hot_space > 0 && sy->hot_space < 1) {
		sy->kind = SYN_HOTCOLD;
	} else {
		die("-S %s: uniform, seq or hotcold:WRITES:SPACE (fractions)",
		    arg);
	}
}

/* The next page write of a synthetic workload, in pages. */
static bool synth_next(struct synth *sy, u32 lpages, u32 *lpn,
		       u8 *stream)
{
	u32 hot = lpages * sy->hot_space;

	if (sy->done == sy->nr + lpages)
		return false;
	/* First the whole device, in order, as a drive is preconditioned. */
	if (sy->done < lpages) {
		*lpn = sy->done++;
		*stream = sy->kind == SYN_HOTCOLD ? (*lpn < hot ? 1 : 2) : 0;
		return true;
	}
	sy->done++;
	switch (sy->kind) {
	case SYN_UNIFORM:
		*lpn = rng_below(&sy->rng, lpages);
		*stream = 0;
		break;
	case SYN_SEQ:
		*lpn = sy->next_seq++ % lpages;
		*stream = 0;
		break;
	case SYN_HOTCOLD:
		if (rng_below(&sy->rng, 1000000) < sy->hot_writes * 1000000) {
			*lpn = rng_below(&sy->rng, hot);
			*stream = 1;
		} else {
			*lpn = hot + rng_below(&sy->rng, lpages - hot);
			*stream = 2;
		}
		break;
	}
	return true;
}

/* --- The model ----------------------------------------------------------- */

static void bucket_add(struct model *m, u32 b)
{
	struct block *blk = &m->blocks[b];
	u32 v = blk->valid;

	blk->prev = NONE;
	blk->next = m->bucket[v];
	if (blk->next != NONE)
		m->blocks[blk->next].prev = b;
	m->bucket[v] = b;
	if (v < m->min_bucket)
		m->min_bucket = v;
}

static void bucket_del(struct model *m, u32 b)
{
	struct block *blk = &m->blocks[b];

	if (blk->prev != NONE)
		m->blocks[blk->prev].next = blk->next;
	else
		m->bucket[blk->valid] = blk->next;
	if (blk->next != NONE)
		m->blocks[blk->next].prev = blk->prev;
}

static void close_block(struct model *m, u32 b)
{
	struct block *blk = &m->blocks[b];

	blk->stamp = m->host_pages;
	blk->pos = m->nr_closed;
	m->closed[m->nr_closed++] = b;
	bucket_add(m, b);
}

static void unclose_block(struct model *m, u32 b)
{
	struct block *blk = &m->blocks[b];
	u32 last = m->closed[--m->nr_closed];

	bucket_del(m, b);
	m->closed[blk->pos] = last;
	m->blocks[last].pos = blk->pos;
	blk->pos = NONE;
}

static unsigned int class_of(const struct model *m, unsigned int stream)
{
	switch (m->cfg->place) {
	case PLACE_SINGLE:
		return 0;
	case PLACE_STREAMS:
		return stream;
	case PLACE_FOLD:
		/* As the NVMe host folds IDs above its streams. */
		return stream ? (stream - 1) % m->cfg->fold + 1 : 0;
	}
	return 0;
}

static void invalidate(struct model *m, u32 lpn)
{
	u32 ppn = m->l2p[lpn], b;
	struct stream_stats *st;
	struct block *blk;
	u64 age;
	int bin = 0;

	if (ppn == NONE)
		return;
	m->l2p[lpn] = NONE;
	b = ppn / m->pages_per_block;
	blk = &m->blocks[b];
	if (blk->pos != NONE) {
		bucket_del(m, b);
		blk->valid--;
		bucket_add(m, b);
	} else {
		blk->valid--;
	}
	st = &m->st[m->stream[lpn]];
	age = m->host_pages - m->born[lpn];
	while (age >>= 1)
		bin++;
	st->hist[bin]++;
	st->ended++;
}

static u32 pick_victim(struct model *m)
{
	u32 i, b, best = NONE;
	double score, best_score = -1;

	if (!m->nr_closed)
		return NONE;
	switch (m->cfg->gc) {
	case GC_GREEDY:
		while (m->bucket[m->min_bucket] == NONE)
			m->min_bucket++;
		return m->bucket[m->min_bucket];
	case GC_RANDOM:
		/* Any block, but not one GC cannot gain anything from. */
		for (i = 0; i < 64; i++) {
			b = m->closed[rng_below(&m->rng, m->nr_closed)];
			if (m->blocks[b].valid < m->pages_per_block)
				break;
		}
		return b;
	case GC_FIFO:
		for (i = 0; i < m->nr_closed; i++) {
			b = m->closed[i];
			if (best == NONE || m->blocks[b].stamp < m->blocks[best].stamp)
				best = b;
		}
		return best;
	case GC_COST_BENEFIT:
		/*
		 * Benefit over cost as Kawaguchi et al. (1995) put it for
		 * flash, (1 - u) / 2u times the age of the block, counted from
		 * when it was filled.
		 */
		for (i = 0; i < m->nr_closed; i++) {
			struct block *blk = &m->blocks[m->closed[i]];
			double u = (double)blk->valid / m->pages_per_block;

			if (!blk->valid)
				return m->closed[i];
			score = (1 - u) / (2 * u) *
				(double)(m->host_pages - blk->stamp + 1);
			if (score > best_score) {
				best_score = score;
				best = m->closed[i];
			}
		}
		return best;
	}
	return NONE;
}

static void gc(struct model *m);

/*
 * Write a logical page at the frontier, opening a block if needed, and
 * close the block when it is full.
 */
static void frontier_write(struct model *m, struct frontier *f, u32 lpn,
			   bool in_gc)
{
	struct block *blk;
	u32 ppn;

	if (f->block == NONE) {
		/* Collect first, so that GC always has a block to move to. */
		if (!in_gc)
			gc(m);
		if (!m->nr_free)
			die("no free block for %u open frontiers: too little over-provisioning",
			    m->nr_open + 1);
		f->block = m->free[--m->nr_free];
		m->nr_open++;
	}
	blk = &m->blocks[f->block];
	ppn = f->block * m->pages_per_block + blk->written++;
	m->l2p[lpn] = ppn;
	m->p2l[ppn] = lpn;
	blk->valid++;
	m->media_pages++;
	if (blk->written == m->pages_per_block) {
		close_block(m, f->block);
		f->block = NONE;
		m->nr_open--;
	}
}

static void gc(struct model *m)
{
	/*
	 * A victim holds the data of one placement: moving it opens at most
	 * one block.  Two free blocks are always enough, whatever the
	 * number of open frontiers.
	 */
	u32 want = 2, b, p, lpn, end, full = 0;
	struct block *blk;

	while (m->nr_free < want) {
		b = pick_victim(m);
		if (b == NONE)
			die("no block to collect");
		blk = &m->blocks[b];
		/* A full block gains nothing; all of them, ever, is the end. */
		if (blk->valid < m->pages_per_block)
			full = 0;
		else if (++full > m->nr_blocks)
			die("device full: every block holds only valid data");
		unclose_block(m, b);
		m->gc_runs++;
		end = (b + 1) * m->pages_per_block;
		for (p = b * m->pages_per_block; p < end && blk->valid; p++) {
			lpn = m->p2l[p];
			if (lpn == NONE || m->l2p[lpn] != p)
				continue;
			blk->valid--;
			frontier_write(m, &m->gc_front[class_of(m, m->stream[lpn])],
				       lpn, true);
			m->st[m->stream[lpn]].moved++;
		}
		for (p = b * m->pages_per_block; p < end; p++)
			m->p2l[p] = NONE;
		blk->written = 0;
		blk->valid = 0;
		m->free[m->nr_free++] = b;
	}
}

static void host_write(struct model *m, u32 lpn, unsigned int stream)
{
	unsigned int i;

	/* The steady state begins with the first write after the skip. */
	if (!m->steady && m->host_pages >= m->cfg->skip * m->nr_lpages) {
		m->steady = true;
		m->steady_host = m->host_pages;
		m->steady_media = m->media_pages;
		for (i = 0; i < NR_STREAMS; i++) {
			m->st[i].host0 = m->st[i].host;
			m->st[i].moved0 = m->st[i].moved;
		}
	}
	invalidate(m, lpn);
	m->host_pages++;
	m->stream[lpn] = stream;
	m->born[lpn] = m->host_pages;
	m->st[stream].host++;
	frontier_write(m, &m->host_front[class_of(m, stream)], lpn, false);
}

static void model_init(struct model *m, const struct config *cfg)
{
	u64 lpages = cfg->capacity / cfg->page_size, ppages;
	u32 i;

	memset(m, 0, sizeof(*m));
	m->cfg = cfg;
	m->pages_per_block = cfg->block_size / cfg->page_size;
	if (!lpages || lpages >= NONE)
		die("capacity of %llu pages: 1 to %u", lpages, NONE - 1);
	m->nr_lpages = lpages;
	ppages = ceil(lpages * (1 + cfg->op / 100));
	m->nr_blocks = (ppages + m->pages_per_block - 1) / m->pages_per_block;
	if (m->nr_blocks < 8 ||
	    (u64)m->nr_blocks * m->pages_per_block < lpages + 4ULL * m->pages_per_block)
		die("%u erase blocks of %u pages for %llu pages: too few",
		    m->nr_blocks, m->pages_per_block, lpages);
	if ((u64)m->nr_blocks * m->pages_per_block >= NONE)
		die("too many physical pages");
	m->l2p = xcalloc(lpages, sizeof(*m->l2p));
	memset(m->l2p, 0xff, lpages * sizeof(*m->l2p));
	m->stream = xcalloc(lpages, sizeof(*m->stream));
	m->born = xcalloc(lpages, sizeof(*m->born));
	ppages = (u64)m->nr_blocks * m->pages_per_block;
	m->p2l = xcalloc(ppages, sizeof(*m->p2l));
	memset(m->p2l, 0xff, ppages * sizeof(*m->p2l));
	m->blocks = xcalloc(m->nr_blocks, sizeof(*m->blocks));
	m->closed = xcalloc(m->nr_blocks, sizeof(*m->closed));
	m->free = xcalloc(m->nr_blocks, sizeof(*m->free));
	m->bucket = xcalloc(m->pages_per_block + 1, sizeof(*m->bucket));
	for (i = 0; i <= m->pages_per_block; i++)
		m->bucket[i] = NONE;
	m->min_bucket = m->pages_per_block + 1;
	for (i = 0; i < m->nr_blocks; i++) {
		m->blocks[i].pos = NONE;
		m->free[m->nr_free++] = m->nr_blocks - 1 - i;
	}
	m->nr_classes = cfg->place == PLACE_SINGLE ? 1 :
			cfg->place == PLACE_FOLD ? cfg->fold + 1 : NR_STREAMS;
	m->host_front = xcalloc(m->nr_classes, sizeof(*m->host_front));
	m->gc_front = xcalloc(m->nr_classes, sizeof(*m->gc_front));
	for (i = 0; i < m->nr_classes; i++) {
		m->host_front[i].block = NONE;
		m->gc_front[i].block = NONE;
	}
	m->st = xcalloc(NR_STREAMS, sizeof(*m->st));
	m->rng = cfg->seed;
}

static void model_free(struct model *m)
{
	free(m->l2p);
	free(m->stream);
	free(m->born);
	free(m->p2l);
	free(m->blocks);
	free(m->closed);
	free(m->free);
	free(m->bucket);
	free(m->host_front);
	free(m->gc_front);
	free(m->st);
}

static void run_op(struct model *m, const struct op *o, size_t i)
{
	u64 spp = m->cfg->page_size / 512, first, last, p;

	switch (o->type) {
	case OP_WRITE:
		first = o->sector / spp;
		last = (o->sector + o->nr_sectors - 1) / spp;
		if (last >= m->nr_lpages)
			die("write %zu at sector %llu + %u is beyond the capacity",
			    i, o->sector, o->nr_sectors);
		for (p = first; p <= last; p++)
			host_write(m, p, o->stream);
		break;
	case OP_DISCARD:
		/* Only the pages it covers whole. */
		first = (o->sector + spp - 1) / spp;
		last = (o->sector + o->nr_sectors) / spp;
		if (last > m->nr_lpages)
			last = m->nr_lpages;
		for (p = first; p < last; p++) {
			if (m->l2p[p] != NONE)
				m->discarded++;
			invalidate(m, p);
		}
		break;
	case OP_FLUSH:
		m->flushes++;
		break;
	}
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
