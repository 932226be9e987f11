/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Linux NVMe host using the streams of an nvmet namespace, for the
 * tests of Streams, FDP and file systems through it: its namespace scans,
 * its write commands on the wire, tagged writers that run through what a
 * test does under them, its kernel log lines, and its own fault
 * injection, which fails one admin command of a reset.
 *
 * Include it after nvmet.h.
 */
#ifndef STREAMID_NVME_HOST_H
#define STREAMID_NVME_HOST_H

#include <sys/klog.h>
#include <sys/mman.h>

#include "nvmet.h"

/* The namespace's streams, all of which the host shows in max_write_streams. */
#define HOST_MSL	12
#define HOST_STREAMS	HOST_MSL
/* FDP placement handles. */
#define FDP_HANDLES	6

/* A trace instance of its own, for the host's namespace scans. */
#define SCANS		TRACING "/instances/streamid_scans"

/*
 * The host's namespace scans (nvme_scan_work, of any controller) in
 * SCANS, from now on (@on) or no longer: trace_scans(true) makes it
 * afresh, trace_scans(false) removes it.
 */
static inline int trace_scans(bool on)
{
	static const char *const events[] = {
		"workqueue_queue_work", "workqueue_execute_start",
		"workqueue_execute_end",
	};
	char dir[400];
	int i;

	if (on && ((mkdir(SCANS, 0755) && errno != EEXIST) ||
		   trace_clear_in(SCANS)))
		return -1;
	for (i = 0; i < 3; i++) {
		snprintf(dir, sizeof(dir), SCANS "/events/workqueue/%s",
			 events[i]);
		if ((on && write_attr(dir, "filter",
				      "function.function == nvme_scan_work")) ||
		    write_attr(dir, "enable", on ? "1" : "0"))
			return -1;
	}
	return on || !rmdir(SCANS) ? 0 : -1;
}

/*
 * Whether trace @buf of SCANS shows a scan that ended, and every scan
 * queued since it was emptied started and ended.  A work item never runs
 * twice at once: one queued again while it runs starts once it ends.
 */
static inline bool scans_done(const char *buf)
{
	int queued = 0, running = 0, ended = 0;
	const char *p;

	for (p = buf; (p = strstr(p, "workqueue_")); p++) {
		if (!strncmp(p, "workqueue_queue_work:", 21)) {
			queued++;
		} else if (!strncmp(p, "workqueue_execute_start:", 24)) {
			running++;
			queued -= !!queued;
		} else if (!strncmp(p, "workqueue_execute_end:", 22)) {
			running -= !!running;
			ended++;
		}
	}
	return ended && !running && !queued;
}

/*
 * Wait until the scans traced since trace_scans(true) have ended, and
 * stop tracing them; 0 once they have.
 */
static inline int wait_scans(void)
{
	char *buf = malloc(1 << 20);
	int ret = -1;

	if (buf)
		ret = wait_until(read_file(SCANS "/trace", buf, 1 << 20) > 0 &&
				 scans_done(buf), 10000);
	free(buf);
	return trace_scans(false) ? -1 : ret;
}

/* Have the host scan its namespaces, and wait until the scan has ended. */
static inline int rescan_and_wait(const struct host *h)
{
	char dir[400];

	snprintf(dir, sizeof(dir), "/sys/class/nvme/%s", h->ctrl);
	if (trace_scans(true) ||
	    write_attr(dir, "rescan_controller", "1")) {
		trace_scans(false);
		return -1;
	}
	return wait_scans();
}

/*
 * A write tagged with stream 2, on a host that has no streams, reaches
 * the target as an ordinary write, and reads back.
 */
static inline void untagged_at_target(struct __test_metadata *_metadata,
				      struct host *h)
{
	struct stats st;
	int fd;

	ASSERT_EQ(0, write_attr(h->ns, "stream_stats", "0"));
	fd = open_stream(h->dev, O_WRONLY | O_DIRECT, 2);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 4096, 2));
	close(fd);
	ASSERT_EQ(0, read_stats(h->ns, &st));
	EXPECT_EQ(8, st.sectors[0]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }));
	EXPECT_EQ(0, check_at(h->dev, 0, 4096, 2));
}

/*
 * The host's write commands to its disks in the trace (nvme_setup_cmd),
 * by directive type (DTYPE in ctrl: 0 none, 1 Streams, 2 Data Placement)
 * and DSPEC (the top of dsmgmt; 0 for none): their number and blocks.
 */
struct wire {
	int writes[3][MAX_IDS];
	unsigned long long blocks[3][MAX_IDS];
};

/* -1 if a write carries another directive type or the trace lost events. */
static inline int wire_writes(struct wire *w)
{
	char *buf = malloc(4 << 20), *line, *p;
	unsigned int ctrl, dsmgmt, len, t, d;
	int ret = 0;

	memset(w, 0, sizeof(*w));
	if (!buf || read_file(TRACING "/trace", buf, 4 << 20) <= 0) {
		free(buf);
		return -1;
	}
	if (strstr(buf, "LOST"))
		ret = -1;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		p = strstr(line, "cmd=(nvme_cmd_write ");
		if (!p || !strstr(line, "disk=") ||
		    sscanf(p, "cmd=(nvme_cmd_write slba=%*u, len=%u, ctrl=0x%x, dsmgmt=%u",
			   &len, &ctrl, &dsmgmt) != 3)
			continue;
		t = (ctrl & 0xf0) >> 4;
		d = t ? dsmgmt >> 16 : 0;
		if (t > 2 || d >= MAX_IDS) {
			ret = -1;
			continue;
		}
		w->writes[t][d]++;
		w->blocks[t][d] += len + 1;
	}
	free(buf);
	return ret;
}

/*
 * Writers of tagged data that run until told to stop: one O_DIRECT with
 * stream 2 over the first WRITER_BLOCKS 4 KiB blocks, one buffered with
 * stream 3 over the next, with an fsync after each pass.  Each writes its
 * pattern over and over; a write or fsync that fails ends it with 1.
 */
#define WRITER_BLOCKS	1024

/* Shared with the writers: the writes each has done, and a stop flag. */
struct writers {
	pid_t pid[2];
	unsigned long *done;	/* [0], [1]: writes done; [2]: stop */
};

static inline int writer(const char *dev, int i, unsigned long *done)
{
	const off_t start = (off_t)i * WRITER_BLOCKS * 4096;
	const int id = 2 + i;
	int fd, b;

	fd = open_stream(dev, O_WRONLY | (i ? 0 : O_DIRECT), id);
	if (fd < 0)
		return 1;
	while (!__atomic_load_n(&done[2], __ATOMIC_RELAXED)) {
		for (b = 0; b < WRITER_BLOCKS; b++) {
			if (write_at(fd, start + (off_t)b * 4096, 4096, id))
				return 1;
			__atomic_add_fetch(&done[i], 1, __ATOMIC_RELAXED);
		}
		if (fsync(fd))
			return 1;
	}
	return close(fd) ? 1 : 0;
}

static inline int writers_start(struct writers *w, const char *dev)
{
	int i;

	w->done = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w->done == MAP_FAILED)
		return -1;
	for (i = 0; i < 2; i++) {
		w->pid[i] = fork();
		if (w->pid[i] < 0)
			return -1;
		if (!w->pid[i])
			_exit(writer(dev, i, w->done));
	}
	return 0;
}

/* Whether each writer has done @want[i] writes, or one ended (@ended). */
static inline bool writers_at(const struct writers *w,
			      const unsigned long *want, bool *ended)
{
	int i, status;

	for (i = 0; i < 2; i++)
		if (waitpid(w->pid[i], &status, WNOHANG))
			return *ended = true;
	return __atomic_load_n(&w->done[0], __ATOMIC_RELAXED) >= want[0] &&
	       __atomic_load_n(&w->done[1], __ATOMIC_RELAXED) >= want[1];
}

/*
 * Wait until each writer has done @n more writes than it had at the call,
 * which shows that the writers are running; 0 once they have, -1 if one
 * ended or did not within 60 s.
 */
static inline int writers_progress(struct writers *w, unsigned long n)
{
	unsigned long want[2];
	bool ended = false;
	int i;

	for (i = 0; i < 2; i++)
		want[i] = __atomic_load_n(&w->done[i], __ATOMIC_RELAXED) + n;
	if (wait_until(writers_at(w, want, &ended), 60000) || ended)
		return -1;
	return 0;
}

/* Stop the writers; how many of them failed. */
static inline int writers_stop(struct writers *w)
{
	int i, status, bad = 0;

	__atomic_store_n(&w->done[2], 1, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++) {
		if (w->pid[i] <= 0)
			continue;
		if (waitpid(w->pid[i], &status, 0) != w->pid[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
		w->pid[i] = 0;
	}
	munmap(w->done, 4096);
	return bad;
}

/* The data of both writers reads back. */
static inline int writers_check(const char *dev)
{
	return check_at(dev, 0, WRITER_BLOCKS * 4096, 2) ||
	       check_at(dev, WRITER_BLOCKS * 4096, WRITER_BLOCKS * 4096, 3);
}

/*
 * The name of the path of the host's disk through its controller @ctrl
 * (nvmeN): the disk is nvme<subsystem>n<head>, the path
 * nvme<subsystem>c<controller>n<head>.  The head's number is the
 * namespace ID only while no earlier head of the subsystem lingers.
 */
static inline void path_disk(const struct host *h, const char *ctrl,
			     char *name, size_t len)
{
	int subsys, head;

	if (sscanf(h->dev, "/dev/nvme%dn%d", &subsys, &head) == 2)
		snprintf(name, len, "nvme%dc%dn%d", subsys,
			 atoi(ctrl + strlen("nvme")), head);
	else
		snprintf(name, len, "none");
}

/* syslog(2) actions, as "dmesg" and "dmesg -C" use them. */
#define SYSLOG_READ_ALL		3
#define SYSLOG_CLEAR		5
#define SYSLOG_SIZE_BUFFER	10

/* How many kernel log lines since the last kmsg_clear() contain @needle. */
static inline int dmesg_count(const char *needle)
{
	int size = klogctl(SYSLOG_SIZE_BUFFER, NULL, 0), len, n = 0;
	char *buf, *line, *save;

	buf = size > 0 ? malloc(size + 1) : NULL;
	len = buf ? klogctl(SYSLOG_READ_ALL, buf, size) : -1;
	if (len < 0) {
		free(buf);
		return -1;
	}
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		n += !!strstr(line, needle);
	free(buf);
	return n;
}

/* Empty the kernel log, as "dmesg -C" does; 0 on success. */
static inline int kmsg_clear(void)
{
	return klogctl(SYSLOG_CLEAR, NULL, 0) ? -1 : 0;
}

/*
 * Whether the command at @p (after "cmd=(" in a trace line) is @name: a
 * command's name, or the start of its arguments ("nvme_admin_get_features
 * fid=0x1d").
 */
static inline bool is_cmd(const char *p, const char *name)
{
	size_t n = strlen(name);

	p = strstr(p, "cmd=(");
	return p && !strncmp(p + 5, name, n) &&
	       (p[5 + n] == ' ' || p[5 + n] == ',' || p[5 + n] == ')');
}

/*
 * Which completion, counted from 1, of the commands that the controller's
 * own fault injection sees (those of no disk: admin and connect commands)
 * answers the first admin command @name in trace @buf.  Keep-alives, which
 * can come before the reset stops them, are not counted.  0 if none.
 */
static inline int completion_in(char *buf, const char *name)
{
	int n = 0, want_cid = -1, ka_cid = -1;
	unsigned int id, qid, cid;
	char *line;

	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char *setup = strstr(line, "nvme_setup_cmd: ");
		char *done = strstr(line, "nvme_complete_rq: ");
		char *p = setup ? setup + 16 : done ? done + 18 : NULL;

		/* Commands of a disk have "disk=nvme0n1, " before the qid. */
		if (!p || sscanf(p, "nvme%u: qid=%u, cmdid=%u", &id, &qid,
				 &cid) != 3)
			continue;
		if (setup) {
			if (qid)
				continue;
			if (is_cmd(p, name) && want_cid < 0)
				want_cid = cid;
			else if (is_cmd(p, "nvme_admin_keep_alive"))
				ka_cid = cid;
		} else if (!qid && (int)cid == ka_cid) {
			ka_cid = -1;
		} else {
			n++;
			if (!qid && (int)cid == want_cid)
				return n;
		}
	}
	return 0;
}

/* Whether the first admin command @name in trace @trace failed. */
static inline bool failed_in(const char *trace, const char *name)
{
	char *buf = strdup(trace), *save, *line;
	unsigned int id, qid, cid, status;
	bool failed = false;
	int want_cid = -1;

	for (line = buf ? strtok_r(buf, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *setup = strstr(line, "nvme_setup_cmd: ");
		char *done = strstr(line, "nvme_complete_rq: ");
		char *p = setup ? setup + 16 : done ? done + 18 : NULL;

		if (!p || sscanf(p, "nvme%u: qid=%u, cmdid=%u", &id, &qid,
				 &cid) != 3 || qid)
			continue;
		if (setup && want_cid < 0 && is_cmd(p, name)) {
			want_cid = cid;
		} else if (done && (int)cid == want_cid) {
			p = strstr(p, "status=");
			failed = p && sscanf(p, "status=%x", &status) == 1 &&
				 status;
			break;
		}
	}
	free(buf);
	return failed;
}

/*
 * completion_in() of a reset of @ctrl after which @dev has @want streams:
 * the streams are set up by the scan that follows the reset, so the
 * trace is read until the command is in, and the scan waited for.
 */
static inline int completion_of(const char *ctrl, const char *dev,
				const char *name, long long want)
{
	char *buf = malloc(1 << 20);
	int k = 0;

	if (!buf || trace_clear() || write_attr(SETUP_CMD, "enable", "1") ||
	    write_attr(COMPLETE_RQ, "enable", "1") || trace_scans(true) ||
	    reset_and_wait(ctrl, dev, want))
		goto out;
	wait_until(read_file(TRACING "/trace", buf, 1 << 20) > 0 &&
		   (k = completion_in(buf, name)), 10000);
	/* The scan has ended: none of its completions counts in the next. */
	if (k && wait_scans()) {
		fprintf(stderr, "# the scan after the reset did not end\n");
		k = 0;
	}
out:
	trace_scans(false);
	write_attr(SETUP_CMD, "enable", "0");
	write_attr(COMPLETE_RQ, "enable", "0");
	free(buf);
	return k;
}

#define FAULT_INJECT	"/sys/kernel/debug/%s/fault_inject"

/*
 * Make completion @k of the next reset of @ctrl fail with Invalid Field,
 * through the controller's own fault injection; 0 if it is armed.
 */
static inline int fail_completion(const char *ctrl, int k)
{
	char fi[400], space[16];

	snprintf(fi, sizeof(fi), FAULT_INJECT, ctrl);
	snprintf(space, sizeof(space), "%d", k);
	/* Say that it fails, without the stack dump a kernel bug would have. */
	return write_attr(fi, "space", space) || write_attr(fi, "times", "1") ||
	       write_attr(fi, "status", "0x2") ||
	       write_attr(fi, "verbose", "1") ||
	       write_attr(fi, "probability", "100");
}

static inline int fail_none(const char *ctrl)
{
	char fi[400];

	snprintf(fi, sizeof(fi), FAULT_INJECT, ctrl);
	return write_attr(fi, "probability", "0");
}

static inline bool have_fault_injection(const char *ctrl)
{
	char fi[400];

	snprintf(fi, sizeof(fi), FAULT_INJECT, ctrl);
	return !access(fi, F_OK);
}

/* Stop tracing the commands of a reset, and injecting faults into it. */
static inline void reset_failing_off(const char *ctrl)
{
	fail_none(ctrl);
	write_attr(SETUP_CMD, "enable", "0");
	write_attr(COMPLETE_RQ, "enable", "0");
	write_attr(SETUP_CMD, "filter", "0");
	write_attr(COMPLETE_RQ, "filter", "0");
}

/*
 * Reset @ctrl with its first admin command @name failing (Invalid Field,
 * through the controller's own fault injection), and wait until @dev has
 * @want streams; @good is what it has after a reset that goes well.  The
 * injection counts completions, and one more (a log page an event asks
 * for) can come first, so the admin commands of the reset are traced and,
 * if another command failed, the reset is done again.  The kernel log is
 * emptied before the reset, whose trace is left in @buf (1 MiB).  0 once
 * @name failed and @dev has @want streams.
 */
static inline int reset_failing(const char *ctrl, const char *dev,
				const char *name, long long good,
				long long want, char *buf)
{
	int try, k;

	for (try = 0; try < 3; try++) {
		k = completion_of(ctrl, dev, name, good);
		if (!k || kmsg_clear() || trace_clear() ||
		    write_attr(SETUP_CMD, "filter", "qid == 0") ||
		    write_attr(COMPLETE_RQ, "filter", "qid == 0") ||
		    write_attr(SETUP_CMD, "enable", "1") ||
		    write_attr(COMPLETE_RQ, "enable", "1") ||
		    fail_completion(ctrl, k))
			break;
		reset_and_wait(ctrl, dev, want);
		reset_failing_off(ctrl);
		if (read_file(TRACING "/trace", buf, 1 << 20) <= 0)
			break;
		if (failed_in(buf, name))
			return max_write_streams(dev) == want ? 0 : -1;
		fprintf(stderr, "# completion %d was not %s: again\n", k, name);
		if (reset_and_wait(ctrl, dev, good))
			break;
	}
	reset_failing_off(ctrl);
	return -1;
}

#endif /* STREAMID_NVME_HOST_H */
