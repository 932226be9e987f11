// SPDX-License-Identifier: GPL-2.0
/*
 * flashsim: the model of a flash device.
 *
 * The model is page-mapped: every logical page maps to a physical page;
 * physical pages are grouped in erase blocks (reclaim units) that are
 * written in order by a write frontier and erased whole by garbage
 * collection (GC), which first moves the block's valid pages elsewhere.
 * WAF is media page writes (host writes and GC moves) over host page
 * writes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flashsim.h"

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

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

void host_write(struct model *m, u32 lpn, unsigned int stream)
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

void model_init(struct model *m, const struct config *cfg)
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

void model_free(struct model *m)
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

void run_op(struct model *m, const struct op *o, size_t i)
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
