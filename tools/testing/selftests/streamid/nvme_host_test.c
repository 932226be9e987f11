// SPDX-License-Identifier: GPL-2.0
/*
 * The NVMe host using the Streams directive of an nvmet namespace, over
 * the loop and TCP transports (fixture host): the driver enables the
 * streams, gets them, and sends the stream ID of each write as the
 * Streams directive, as the target, the backing device and the
 * tracepoints on both sides see; lifetime hints, nvme_core.streams=0, a
 * reset while writing, the Enable or Identify directive failing in a
 * reset, writers that run through all of that, two hosts and two
 * namespaces, and an Invalid Field the stream did not cause.  And the
 * defaults of the host's switches.
 */
#define _GNU_SOURCE
#include <linux/fs.h>

#include "nvmet.h"
#include "nvme_host.h"
#include "uring.h"

#ifndef F_SET_RW_HINT
#define F_SET_RW_HINT	(1024 + 12)
#endif

FIXTURE(host) {
	struct host h;
};

FIXTURE_VARIANT(host) {
	const char *transport;
};

FIXTURE_VARIANT_ADD(host, loop) { .transport = "loop" };
FIXTURE_VARIANT_ADD(host, tcp) { .transport = "tcp" };

/* A namespace of HOST_MSL streams. */
FIXTURE_SETUP(host)
{
	nvmet_up(_metadata, &self->h, variant->transport, HOST_MSL, true, 64);
}

FIXTURE_TEARDOWN(host)
{
	nvmet_down(&self->h);
	write_attr(TRACING "/events/nvme/nvme_setup_cmd", "enable", "0");
	write_attr(TRACING "/events/nvmet/nvmet_req_init", "enable", "0");
}

/*
 * The host enables the Streams directive of no device unless told to
 * (nvme_core.streams=1); it uses FDP wherever the device has it enabled.
 */
TEST(host_defaults)
{
	char buf[8];

	if (access(NVME_CORE, F_OK))
		SKIP(return, "no nvme_core");
	ASSERT_LT(0, read_file(NVME_CORE "/streams", buf, sizeof(buf)));
	EXPECT_STREQ("N", buf);
	ASSERT_LT(0, read_file(NVME_CORE "/fdp", buf, sizeof(buf)));
	EXPECT_STREQ("Y", buf);
}

/*
 * The host enables Streams and uses the shared pool without allocating
 * from it; max_write_streams shows all its streams, on the disk and on its
 * path, and write_stream_granularity SGS * SWS blocks, in bytes.
 */
TEST_F(host, discovers_streams)
{
	struct streams_params p;
	int sup, en;

	EXPECT_EQ(HOST_STREAMS, max_write_streams(self->h.dev));
	EXPECT_EQ(HOST_STREAMS, path_max_write_streams(&self->h, self->h.ctrl, 1));
	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(3, en);
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(0, p.nsa);
	EXPECT_EQ(HOST_MSL, p.nssa);
	EXPECT_LT(0, (long long)p.sgs * p.sws);
	EXPECT_EQ((long long)p.sgs * p.sws *
		  queue_limit(self->h.dev, "logical_block_size"),
		  queue_limit(self->h.dev, "write_stream_granularity"));
}

/*
 * The stream of one io_uring write to the disk's node goes out as the
 * Streams directive with that stream; one above max_write_streams fails
 * with EINVAL and nothing reaches the target.
 */
TEST_F(host, per_io_streams)
{
	struct stats st;
	int s, fd;

	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 1);
	ASSERT_LE(0, fd);
	for (s = 2; s <= HOST_MSL; s++)
		ASSERT_EQ(4096, uring_write(fd, s * 4096, 4096, s, s));
	EXPECT_EQ(-EINVAL, uring_write(fd, 0, 4096, 0, HOST_MSL + 1));
	close(fd);
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	for (s = 2; s <= HOST_MSL; s++) {
		EXPECT_EQ(8, st.sectors[s]) TH_LOG("stream %d", s);
		EXPECT_EQ(0, check_at(self->h.dev, s * 4096, 4096, s));
	}
	EXPECT_EQ(0, st.requests[0] + st.requests[1]);
}

/*
 * fadvise-tagged writes to the NVMe disk, O_DIRECT from several files and
 * buffered, arrive in their streams at the target and at the null_blk
 * device behind it; IDs above max_write_streams fold to (id - 1) % 12 + 1.
 */
TEST_F(host, tagged_writes)
{
	static const struct { int id, stream; size_t len; } w[] = {
		{ 1, 1, 65536 }, { 2, 2, 8192 }, { 3, 3, 12288 },
		{ 0, 0, 8192 }, { 14, 2, 4096 }, { 200, 8, 4096 },
		{ 8, 8, 16384 },
	};
	unsigned long long want[MAX_IDS] = { 0 };
	struct stats target, backing;
	off_t off = 0;
	int i, fd;

	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(self->h.nullb, "stream_stats", "0"));
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, w[i].id);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, write_at(fd, off, w[i].len, w[i].id));
		close(fd);
		want[w[i].stream] += w[i].len / 512;
		off += w[i].len;
	}
	/* Buffered: written back with the ID of the disk's inode. */
	fd = open_stream(self->h.dev, O_WRONLY, 3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 1 << 20, 65536, 3));
	ASSERT_EQ(0, fsync(fd));
	close(fd);
	want[3] += 128;

	ASSERT_EQ(0, read_stats(self->h.ns, &target));
	ASSERT_EQ(0, read_stats(self->h.nullb, &backing));
	for (i = 0; i <= HOST_MSL; i++) {
		EXPECT_EQ(want[i], target.sectors[i]) TH_LOG("stream %d", i);
		EXPECT_EQ(want[i], backing.sectors[i]) TH_LOG("stream %d", i);
	}
	EXPECT_EQ(-1, only(&target, (const int []){ 0, 1, 2, 3, 8, -1 }));

	for (off = 0, i = 0; i < ARRAY_SIZE(w); off += w[i].len, i++)
		EXPECT_EQ(0, check_at(self->h.dev, off, w[i].len, w[i].id));
	EXPECT_EQ(0, check_at(self->h.dev, 1 << 20, 65536, 3));
}

/*
 * On the wire, at the host (nvme_setup_cmd) and at the target
 * (nvmet_req_init): a tagged write has DTYPE 1 (ctrl 0x10) and its stream
 * in DSPEC (dsmgmt >> 16); an untagged write, reads, flushes and
 * discards carry no directive.
 */
TEST_F(host, on_the_wire)
{
	static const char *const events[] = {
		TRACING "/events/nvme/nvme_setup_cmd",
		TRACING "/events/nvmet/nvmet_req_init",
	};
	unsigned long long range[2] = { 2 << 20, 1 << 20 };
	int i, fd, writes[2][2] = { { 0 } }, others[2] = { 0 }, bad = 0;
	char *buf = malloc(1 << 20), *line;
	void *data;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, trace_clear());
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, write_attr(events[i], "enable", "1"));

	fd = open_stream(self->h.dev, O_RDWR | O_DIRECT, 5);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 4096, 5));
	close(fd);
	fd = open_stream(self->h.dev, O_RDWR | O_DIRECT, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 4096, 4096, 0));
	ASSERT_EQ(0, posix_memalign(&data, 4096, 4096));
	ASSERT_EQ(4096, pread(fd, data, 4096, 0));
	free(data);
	ASSERT_EQ(0, fsync(fd));
	EXPECT_EQ(0, ioctl(fd, BLKDISCARD, range));
	close(fd);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, write_attr(events[i], "enable", "0"));

	ASSERT_LT(0, read_file(TRACING "/trace", buf, 1 << 20));
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		int target = !!strstr(line, "nvmet_req_init");
		unsigned int ctrl = 0, dsmgmt = 0;
		char *cmd = strstr(line, "cmd=(nvme_cmd_");
		char *f = cmd ? strstr(cmd, "ctrl=0x") : NULL;

		if (!cmd)
			continue;
		if (f)
			sscanf(f, "ctrl=0x%x, dsmgmt=%u", &ctrl, &dsmgmt);
		/* "nvme_cmd_write " at the host, "nvme_cmd_write," at the target */
		if (!strncmp(cmd, "cmd=(nvme_cmd_write", 19) &&
		    (cmd[19] == ' ' || cmd[19] == ',')) {
			if (ctrl == 0x10 && dsmgmt >> 16 == 5)
				writes[target][1]++;
			else if (!(ctrl & 0xf0) && !(dsmgmt >> 16))
				writes[target][0]++;
			else
				bad++;
		} else {
			/* read, flush, dsm: no directive */
			others[target]++;
			if ((ctrl & 0xf0) || (dsmgmt >> 16))
				bad++;
		}
	}
	free(buf);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(1, writes[i][1]) TH_LOG("%s", events[i]);
		EXPECT_EQ(1, writes[i][0]) TH_LOG("%s", events[i]);
		EXPECT_LE(2, others[i]) TH_LOG("%s", events[i]);
	}
	EXPECT_EQ(0, bad);
}

/*
 * Lifetime hints (F_SET_RW_HINT, fio --write_hint), as in mainline: a
 * direct write to the disk's node without a stream goes to the stream of
 * its hint's number, NONE 1 to EXTREME 5; a stream ID, where set, wins.
 * Buffered writes get no stream from a hint.
 */
TEST_F(host, write_hints)
{
	static const struct { __u64 hint; int id, stream; } w[] = {
		{ 2, 0, 2 }, { 3, 0, 3 }, { 4, 0, 4 }, { 5, 0, 5 },
		{ 1, 0, 1 }, { 2, 7, 7 }, { 0, 13, 1 }, { 2, 12, 12 },
	};
	unsigned long long want[MAX_IDS] = { 0 };
	struct stats st;
	char out[1024];
	__u64 none = 0;
	int i, fd;

	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, w[i].id);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, fcntl(fd, F_SET_RW_HINT, &w[i].hint));
		ASSERT_EQ(0, write_at(fd, i * 4096, 4096, 0));
		ASSERT_EQ(0, fcntl(fd, F_SET_RW_HINT, &none));
		close(fd);
		want[w[i].stream] += 8;
	}
	/*
	 * fio sets the hint with F_SET_RW_HINT for buffered I/O (for
	 * direct I/O it uses F_SET_FILE_RW_HINT, which is gone); the disk's
	 * inode must have no stream ID, which would win.  The disk stays
	 * open, so the ID last set is still the inode's; a file clears the
	 * inode's ID only if it set it.
	 */
	fd = open(self->h.dev, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, 1, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_STREAMID));
	close(fd);
	ASSERT_EQ(0, run_cmd(out, sizeof(out),
			     "fio --name=hint --filename=%s --rw=write --bs=4k --size=64k --offset=1m --end_fsync=1 --write_hint=medium --output=/dev/null",
			     self->h.dev)) TH_LOG("%s", out);
	want[0] += 128;

	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	for (i = 0; i <= HOST_MSL; i++)
		EXPECT_EQ(want[i], st.sectors[i]) TH_LOG("stream %d", i);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 1, 2, 3, 4, 5, 7, 12, -1 }));
}

/*
 * nvme_core.streams=0: after a reset the host sends no directive command
 * and the disk has no streams; tagged writes arrive untagged.
 */
TEST_F(host, streams_off)
{
	char *buf = malloc(1 << 20);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, write_attr(NVME_CORE, "streams",
				"N"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(TRACING "/events/nvme/nvme_setup_cmd",
				"enable", "1"));
	ASSERT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, 0));
	ASSERT_EQ(0, write_attr(TRACING "/events/nvme/nvme_setup_cmd",
				"enable", "0"));
	ASSERT_LT(0, read_file(TRACING "/trace", buf, 1 << 20));
	EXPECT_NE(NULL, strstr(buf, "nvme_admin_identify"));
	EXPECT_EQ(NULL, strstr(buf, "nvme_admin_directive"));
	free(buf);

	untagged_at_target(_metadata, &self->h);
}

/*
 * A controller reset in the middle of tagged writing, O_DIRECT and
 * buffered: no write fails, the writes go to their streams or, until the
 * host has set the streams up again, to none, the streams are back
 * afterwards and the data reads back.  The writers run before and after
 * the reset, so it happened while they wrote.
 */
TEST_F(host, reset_while_writing)
{
	struct writers w = { };
	struct stats st;

	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, writers_start(&w, self->h.dev));
	EXPECT_EQ(0, writers_progress(&w, 64));
	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, HOST_STREAMS));
	EXPECT_EQ(0, writers_progress(&w, 64));
	/* Once set up again, the streams are used again. */
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	EXPECT_EQ(0, writers_stop(&w));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, 3, -1 }));
	EXPECT_EQ(HOST_STREAMS, max_write_streams(self->h.dev));
	EXPECT_EQ(0, writers_check(self->h.dev));
}

/*
 * The controller fails the Enable directive of a reset (the host's fault
 * injection turns its completion into Invalid Field): the host says so
 * once, the disk has no streams, tagged writes go out without a
 * directive, and the next reset brings the streams back.
 */
TEST_F(host, enable_fails)
{
	char *buf = malloc(1 << 20);

	ASSERT_NE(NULL, buf);
	if (!have_fault_injection(self->h.ctrl))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	EXPECT_EQ(0, reset_failing(self->h.ctrl, self->h.dev,
				   "nvme_admin_directive_send", HOST_STREAMS,
				   0, buf));
	free(buf);
	EXPECT_EQ(1, dmesg_count("Streams not used"));
	EXPECT_EQ(1, dmesg_count("Streams not used: enabling them failed"));
	EXPECT_EQ(0, max_write_streams(self->h.dev));

	untagged_at_target(_metadata, &self->h);

	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, HOST_STREAMS));
}

/*
 * A controller that has Directives in OACS but rejects the Identify
 * directive's Return Parameters (the host's fault injection turns its
 * completion into Invalid Field) has no streams: the host sends it no
 * Enable and logs nothing.
 */
TEST_F(host, identify_rejected)
{
	char *buf = malloc(1 << 20);

	ASSERT_NE(NULL, buf);
	if (!have_fault_injection(self->h.ctrl))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	EXPECT_EQ(0, reset_failing(self->h.ctrl, self->h.dev,
				   "nvme_admin_directive_recv", HOST_STREAMS,
				   0, buf));
	EXPECT_NE(NULL, strstr(buf, "nvme_admin_directive_recv"));
	EXPECT_EQ(NULL, strstr(buf, "nvme_admin_directive_send"));
	free(buf);
	EXPECT_EQ(0, dmesg_count("Streams"));
	EXPECT_EQ(0, max_write_streams(self->h.dev));

	untagged_at_target(_metadata, &self->h);

	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, HOST_STREAMS));
}

/*
 * No write fails because of its stream, O_DIRECT or buffered, while
 * tagged writers run through (a) a controller reset whose Enable fails,
 * (b) the target namespace disabled and enabled again, which ends the
 * host's Streams state there, (c) a new stream count on the target and
 * (d) the target dropping the state of its own; after each the streams
 * come back, and the data reads back.
 */
TEST_F_TIMEOUT(host, writes_never_fail, 120)
{
	struct writers w = { };
	struct stats st;
	char msl[16], *buf = malloc(1 << 20);

	ASSERT_NE(NULL, buf);
	if (!have_fault_injection(self->h.ctrl))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");

	ASSERT_EQ(0, writers_start(&w, self->h.dev));
	EXPECT_EQ(0, writers_progress(&w, 64));

	/* (a) */
	EXPECT_EQ(0, reset_failing(self->h.ctrl, self->h.dev,
				   "nvme_admin_directive_send", HOST_STREAMS,
				   0, buf));
	free(buf);
	EXPECT_EQ(0, writers_progress(&w, 64));
	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, HOST_STREAMS));
	EXPECT_EQ(0, writers_progress(&w, 64));

	/* (b) */
	snprintf(msl, sizeof(msl), "%d", HOST_MSL);
	ASSERT_EQ(0, ns_cycle_under_host(&self->h, msl, NULL));
	EXPECT_EQ(0, writers_progress(&w, 256));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]) TH_LOG("streams back after (b)");
	/* A scan sees the streams kept: they may be set up again later. */
	ASSERT_EQ(0, rescan_and_wait(&self->h));

	/* (c): 6 streams, fewer than 8, so none kept for hints. */
	ASSERT_EQ(0, ns_cycle_under_host(&self->h, "6", NULL));
	EXPECT_EQ(0, wait_max_write_streams(self->h.dev, 6));
	EXPECT_EQ(0, writers_progress(&w, 256));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]) TH_LOG("streams back after (c)");
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, 3, -1 }));

	ASSERT_EQ(0, rescan_and_wait(&self->h));

	/*
	 * (d) The device drops the host's Streams state of its own (an
	 * Enable Directive with Streams off, behind the driver's back), with
	 * max_retries 0: the retry of a refused write does not depend on it.
	 */
	ASSERT_EQ(0, write_attr(NVME_CORE, "max_retries", "0"));
	ASSERT_EQ(0, kmsg_clear());
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 0));
	EXPECT_EQ(0, writers_progress(&w, 256));
	/* Nothing else set the streams up again: writes were refused. */
	EXPECT_EQ(1, dmesg_count("a write was refused for its stream"));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]) TH_LOG("streams back after (d)");
	EXPECT_EQ(0, write_attr(NVME_CORE, "max_retries", "5"));

	EXPECT_EQ(0, writers_stop(&w));
	EXPECT_EQ(0, writers_check(self->h.dev));
}

#define SECOND_HOST	"5e1f0000-0000-4000-8000-000000000002"

/* Connect a second host, of host ID SECOND_HOST, to the subsystem. */
static int connect_second_host(const char *transport)
{
	char opts[512];
	int fd, n;

	/* nvme-cli refuses a second connection: ask the kernel directly. */
	fd = open("/dev/nvme-fabrics", O_RDWR);
	if (fd < 0)
		return -1;
	n = snprintf(opts, sizeof(opts),
		     "transport=%s%s,nqn=%s,hostnqn=%s%s,hostid=%s",
		     transport, strcmp(transport, "tcp") ? "" :
		     ",traddr=127.0.0.1,trsvcid=" TCP_PORT, NQN,
		     "nqn.2014-08.org.nvmexpress:uuid:", SECOND_HOST,
		     SECOND_HOST);
	n = write(fd, opts, n) == n ? 0 : -1;
	close(fd);
	return n;
}

/*
 * The host's write commands in @trace on path disk @disk: how many
 * carried stream @id (tagged) and how many no directive (untagged); -1
 * if one carried anything else.
 */
static int path_writes(char *trace, const char *disk, int id, int *tagged,
		       int *untagged)
{
	char *line, *save, want[320];
	unsigned int ctrl, dsmgmt;
	int bad = 0;

	*tagged = *untagged = 0;
	snprintf(want, sizeof(want), "disk=%s,", disk);
	for (line = strtok_r(trace, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, "cmd=(nvme_cmd_write ");

		if (!p || !strstr(line, want) ||
		    sscanf(p, "cmd=(nvme_cmd_write slba=%*u, len=%*u, ctrl=0x%x, dsmgmt=%u",
			   &ctrl, &dsmgmt) != 2)
			continue;
		if ((ctrl & 0xf0) == 0x10 && dsmgmt >> 16 == (unsigned int)id)
			(*tagged)++;
		else if (!(ctrl & 0xf0) && !(dsmgmt >> 16))
			(*untagged)++;
		else
			bad++;
	}
	return bad ? -1 : 0;
}

/*
 * 16 O_DIRECT writes with stream @id through the multipath disk, which
 * sends them round-robin over both paths; on the wire, how many went
 * tagged and untagged over each (nvme<s>c<ctrl>n<head>).
 */
static int round_robin_writes(const struct host *h, const char *ctrl2, int id,
			      int tagged[2], int untagged[2])
{
	char *buf = malloc(1 << 20), disk[300];
	const char *ctrls[2] = { h->ctrl, ctrl2 };
	int fd, i, ret = -1;

	fd = open_stream(h->dev, O_WRONLY | O_DIRECT, id);
	if (!buf || fd < 0 || trace_clear() ||
	    write_attr(SETUP_CMD, "enable", "1"))
		goto out;
	for (i = 0; i < 16; i++)
		if (write_at(fd, (off_t)i * 4096, 4096, id))
			goto out;
	if (write_attr(SETUP_CMD, "enable", "0") ||
	    read_file(TRACING "/trace", buf, 1 << 20) <= 0)
		goto out;
	ret = 0;
	for (i = 0; i < 2; i++) {
		char *copy = strdup(buf);

		path_disk(h, ctrls[i], disk, sizeof(disk));
		ret |= !copy || path_writes(copy, disk, id, &tagged[i],
					    &untagged[i]);
		free(copy);
	}
out:
	write_attr(SETUP_CMD, "enable", "0");
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

/*
 * Two hosts and two namespaces on one subsystem, the second namespace
 * added after the first host set up its streams: every host gets the
 * streams of every namespace, from the shared pool, without a reset.  A
 * write through the multipath disk goes to the same stream over either
 * path; where one path has no streams, the disk shows none and no path
 * tags a write.
 */
TEST_F(host, two_hosts_two_namespaces)
{
	char dir[300], dev[300], disk2[300], ctrl2[300], msl[16], path[512];
	int tagged[2], untagged[2], fd, sup, en;

	/* The second namespace, with streams, for the connected host. */
	ASSERT_EQ(0, nullb_create(BACKING "2", 16, 8, 0, dir, sizeof(dir), dev,
				  sizeof(dev)));
	ASSERT_EQ(0, mkdir(NS2_DIR, 0755));
	ASSERT_EQ(0, write_attr(NS2_DIR, "device_path", dev));
	snprintf(msl, sizeof(msl), "%d", HOST_MSL);
	ASSERT_EQ(0, write_attr(NS2_DIR, "streams", msl));
	ASSERT_EQ(0, write_attr(NS2_DIR, "enable", "1"));
	snprintf(disk2, sizeof(disk2), "%.*s2", (int)strlen(self->h.dev) - 1,
		 self->h.dev);
	EXPECT_EQ(0, wait_max_write_streams(disk2, HOST_STREAMS)) TH_LOG("%s", disk2);

	/* The second host: both paths of both namespaces have streams. */
	ASSERT_EQ(0, connect_second_host(variant->transport));
	ASSERT_EQ(0, other_ctrl(self->h.ctrl, ctrl2, sizeof(ctrl2)));
	wait_until(path_max_write_streams(&self->h, ctrl2, 1) == HOST_STREAMS &&
		   path_max_write_streams(&self->h, ctrl2, 2) == HOST_STREAMS, 5000);
	EXPECT_EQ(HOST_STREAMS, path_max_write_streams(&self->h, ctrl2, 1));
	EXPECT_EQ(HOST_STREAMS, path_max_write_streams(&self->h, ctrl2, 2));
	EXPECT_EQ(HOST_STREAMS, path_max_write_streams(&self->h, self->h.ctrl, 2));
	EXPECT_EQ(HOST_STREAMS, max_write_streams(self->h.dev));
	EXPECT_EQ(HOST_STREAMS, max_write_streams(disk2));
	/* The target keeps each host's state: both have Streams enabled. */
	snprintf(path, sizeof(path), "/dev/%s", ctrl2);
	fd = open(path, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, identify_dirs(fd, 2, &sup, &en));
	EXPECT_EQ(3, en);
	close(fd);

	/* The same stream over either path. */
	snprintf(path, sizeof(path), "/sys/class/nvme-subsystem/nvme-subsys%d",
		 atoi(self->h.dev + strlen("/dev/nvme")));
	ASSERT_EQ(0, write_attr(path, "iopolicy", "round-robin"));
	ASSERT_EQ(0, round_robin_writes(&self->h, ctrl2, 5, tagged, untagged));
	EXPECT_EQ(8, tagged[0]);
	EXPECT_EQ(8, tagged[1]);
	EXPECT_EQ(0, untagged[0] + untagged[1]);

	/* The second path without streams: the disk has none, no path tags. */
	ASSERT_EQ(0, write_attr(NVME_CORE, "streams",
				"N"));
	EXPECT_EQ(0, reset_and_wait(ctrl2, self->h.dev, 0));
	ASSERT_EQ(0, write_attr(NVME_CORE, "streams",
				"Y"));
	EXPECT_EQ(0, path_max_write_streams(&self->h, ctrl2, 1));
	EXPECT_EQ(HOST_STREAMS, path_max_write_streams(&self->h, self->h.ctrl, 1));
	ASSERT_EQ(0, round_robin_writes(&self->h, ctrl2, 5, tagged, untagged));
	EXPECT_EQ(0, tagged[0] + tagged[1]);
	EXPECT_EQ(8, untagged[0]);
	EXPECT_EQ(8, untagged[1]);
	EXPECT_EQ(0, reset_and_wait(ctrl2, self->h.dev, HOST_STREAMS));
	EXPECT_EQ(0, check_at(self->h.dev, 0, 16 * 4096, 5));
}

/*
 * A second namespace, without streams, in the same subsystem: its disk
 * has none, and the host takes that quietly.
 */
TEST_F(host, namespace_without_streams)
{
	char dir[300], dev[300], disk[300];

	ASSERT_EQ(0, kmsg_clear());
	ASSERT_EQ(0, nullb_create(BACKING "2", 16, 8, 0, dir, sizeof(dir), dev,
				  sizeof(dev)));
	ASSERT_EQ(0, mkdir(NS2_DIR, 0755));
	ASSERT_EQ(0, write_attr(NS2_DIR, "device_path", dev));
	ASSERT_EQ(0, write_attr(NS2_DIR, "enable", "1"));
	/*
	 * The host learns of it from a Namespace Attribute Changed event;
	 * the disk's queue directory comes after its device node.
	 */
	snprintf(disk, sizeof(disk), "%.*s2", (int)strlen(self->h.dev) - 1,
		 self->h.dev);
	wait_until(max_write_streams(disk) >= 0, 5000);
	EXPECT_EQ(0, max_write_streams(disk)) TH_LOG("%s", disk);
	EXPECT_EQ(HOST_STREAMS, max_write_streams(self->h.dev));
	EXPECT_EQ(0, dmesg_count("Streams not used"));
}

/*
 * Make the next @times completions on the path of @h fail with Invalid
 * Field in Command and DNR (the host's fault injection); 0 turns it off.
 * -1 without fault injection.
 */
static int fail_completions(const struct host *h, int times)
{
	char fi[400], n[16], path[64];

	path_disk(h, h->ctrl, path, sizeof(path));
	snprintf(fi, sizeof(fi), "/sys/kernel/debug/%s/fault_inject", path);
	if (access(fi, F_OK))
		return -1;
	snprintf(n, sizeof(n), "%d", times);
	if (!times)
		return write_attr(fi, "probability", "0");
	return write_attr(fi, "space", "0") || write_attr(fi, "times", n) ||
	       write_attr(fi, "status", "0x2") ||
	       write_attr(fi, "dont_retry", "1") ||
	       write_attr(fi, "verbose", "1") ||
	       write_attr(fi, "probability", "100") ? -1 : 0;
}

/*
 * An Invalid Field that the directive did not cause: the write with a
 * stream is refused, and so is the same write sent again without it.
 * The error goes up as it does for a write without a stream, and the
 * namespace keeps its streams: no log line, the next write carries the
 * directive.
 */
TEST_F(host, invalid_field_not_the_stream)
{
	struct wire w;
	int fd, err;

	if (fail_completions(&self->h, 0))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	ASSERT_EQ(0, kmsg_clear());
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));

	/* Without a stream: the write fails, sent once. */
	fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fail_completions(&self->h, 1));
	EXPECT_EQ(-1, write_at(fd, 0, 4096, 0));
	err = errno;
	close(fd);

	/* With one: the same, sent with the directive, then without. */
	fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fail_completions(&self->h, 2));
	EXPECT_EQ(-1, write_at(fd, 4096, 4096, 3));
	EXPECT_EQ(err, errno);
	EXPECT_EQ(0, fail_completions(&self->h, 0));

	/* Streams stay: the next write goes in stream 3. */
	EXPECT_EQ(0, write_at(fd, 8192, 4096, 3));
	close(fd);
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
	EXPECT_EQ(0, dmesg_count("refused for its stream"));
	ASSERT_EQ(0, wire_writes(&w));
	EXPECT_EQ(2, w.writes[0][0]);
	EXPECT_EQ(2, w.writes[1][3]);
	EXPECT_EQ(0, check_at(self->h.dev, 8192, 4096, 3));
}

TEST_HARNESS_MAIN
