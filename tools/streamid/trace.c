// SPDX-License-Identifier: GPL-2.0
/*
 * flashsim: what it replays.  Block traces, in flashsim's own text
 * format or as the kernel's block_rq_issue events, and synthetic
 * workloads to check the model against theory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flashsim.h"

/* --- The trace ---------------------------------------------------------- */

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

void read_trace(struct trace *t, const char *file)
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

void parse_synth(struct synth *sy, const char *arg)
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
bool synth_next(struct synth *sy, u32 lpages, u32 *lpn, u8 *stream)
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
