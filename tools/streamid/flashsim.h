/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flashsim - a model of a flash device: what its files share.
 *
 * trace.c reads block traces and makes synthetic workloads, model.c is
 * the flash device and its garbage collection, flashsim.c the command
 * line and the report.
 */
#ifndef FLASHSIM_H
#define FLASHSIM_H

#include <stdbool.h>
#include <stddef.h>

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

/* The trace, as trace.c reads it. */
struct trace {
	struct op *ops;
	size_t nr, alloc;
	u64 end;			/* highest sector written or discarded */
	int dev_major, dev_minor;	/* ftrace input: device filter, or -1 */
	bool dev_seen[2];		/* several devices seen without a filter */
	int first_major, first_minor;
	u64 lost;			/* ftrace: events lost, from the trace */
};

/* A synthetic workload, to check the model against theory. */
struct synth {
	enum { SYN_UNIFORM, SYN_SEQ, SYN_HOTCOLD } kind;
	double hot_writes;		/* hot/cold: share of writes that are hot */
	double hot_space;		/* and share of the space that is */
	u64 nr;			/* page writes */
	u64 done, next_seq, rng;
};

/* flashsim.c */
void die(const char *fmt, ...);

/* trace.c */
void read_trace(struct trace *t, const char *file);
void parse_synth(struct synth *sy, const char *arg);
bool synth_next(struct synth *sy, u32 lpages, u32 *lpn, u8 *stream);

/* model.c */
void model_init(struct model *m, const struct config *cfg);
void model_free(struct model *m);
void host_write(struct model *m, u32 lpn, unsigned int stream);
void run_op(struct model *m, const struct op *o, size_t i);

/* Random numbers, of the synthetic workloads and of random GC. */
static inline u64 rng_next(u64 *s)
{
	/* splitmix64 */
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static inline u64 rng_below(u64 *s, u64 n)
{
	return (u64)(((__uint128_t)rng_next(s) * n) >> 64);
}

#endif /* FLASHSIM_H */
