// SPDX-License-Identifier: GPL-2.0
/*
 * The NVMe host using the Flexible Data Placement of an nvmet namespace,
 * over the loop and TCP transports (fixture fdp_host: FDP_HANDLES
 * placement handles, the host using them): max_write_streams is their number;
 * stream s goes out with DTYPE 2 and the placement identifier of handle
 * s - 1, on the wire and at the target, and reaches the null_blk device
 * as stream s; through resets, a second path, the FDP feature failing,
 * and FDP turned off and on under the host.  A namespace with both FDP
 * and Streams uses FDP.  The stream of one io_uring write goes out as
 * mainline sends it, and the stream of a cgroup (io.stream) as any other.
 */
#define _GNU_SOURCE
#include "cgroup.h"
#include "nvmet.h"
#include "nvme_host.h"
#include "uring.h"

#ifndef F_SET_RW_HINT
#define F_SET_RW_HINT	(1024 + 12)
#endif

FIXTURE(fdp_host) {
	struct host h;
};

FIXTURE_VARIANT(fdp_host) {
	const char *transport;
};

FIXTURE_VARIANT_ADD(fdp_host, loop) { .transport = "loop" };
FIXTURE_VARIANT_ADD(fdp_host, tcp) { .transport = "tcp" };

FIXTURE_SETUP(fdp_host)
{
	nvmet_up_ns(_metadata, &self->h, variant->transport, 0, FDP_HANDLES,
		    true, 64);
}

FIXTURE_TEARDOWN(fdp_host)
{
	nvmet_down(&self->h);
	trace_scans(false);
	write_attr(SETUP_CMD, "enable", "0");
}

/*
 * The writes of the trace that carry a directive, by DTYPE and DSPEC, in
 * @dtype2 (placement identifier) and @dtype1 (stream); -1 if the trace
 * lost events.
 */
static int wire_directives(int *dtype1, int *dtype2)
{
	struct wire w;
	int ret = wire_writes(&w);

	memcpy(dtype1, w.writes[1], sizeof(w.writes[1]));
	memcpy(dtype2, w.writes[2], sizeof(w.writes[2]));
	return ret;
}

TEST_F(fdp_host, placed_writes)
{
	static const struct { int id, stream; } w[] = {
		{ 1, 1 }, { 2, 2 }, { 6, 6 }, { 0, 0 }, { 9, 3 }, { 200, 2 },
	};
	int dtype1[MAX_IDS] = { 0 }, dtype2[MAX_IDS] = { 0 };
	unsigned long long want[MAX_IDS] = { 0 };
	struct stats target, backing;
	int i, fd;

	EXPECT_EQ(FDP_HANDLES, max_write_streams(self->h.dev));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(self->h.nullb, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, w[i].id);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, write_at(fd, i * 8192, 8192, w[i].id));
		close(fd);
		want[w[i].stream] += 16;
	}
	/* Buffered: written back with the ID of the disk's inode. */
	fd = open_stream(self->h.dev, O_WRONLY, 5);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 1 << 20, 65536, 5));
	ASSERT_EQ(0, fsync(fd));
	close(fd);
	want[5] += 128;
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));

	ASSERT_EQ(0, read_stats(self->h.ns, &target));
	ASSERT_EQ(0, read_stats(self->h.nullb, &backing));
	for (i = 0; i <= FDP_HANDLES; i++) {
		EXPECT_EQ(want[i], target.sectors[i]) TH_LOG("stream %d", i);
		EXPECT_EQ(want[i], backing.sectors[i]) TH_LOG("stream %d", i);
	}
	ASSERT_EQ(0, wire_directives(dtype1, dtype2));
	/* Placement identifier s - 1 for stream s; never Streams. */
	for (i = 1; i <= FDP_HANDLES; i++)
		EXPECT_EQ(want[i] ? 1 : 0, !!dtype2[i - 1]) TH_LOG("PID %d", i - 1);
	for (i = FDP_HANDLES; i < MAX_IDS; i++)
		EXPECT_EQ(0, dtype2[i]);
	for (i = 0; i < MAX_IDS; i++)
		EXPECT_EQ(0, dtype1[i]);
	for (i = 0; i < ARRAY_SIZE(w); i++)
		EXPECT_EQ(0, check_at(self->h.dev, i * 8192, 8192, w[i].id));
	EXPECT_EQ(0, check_at(self->h.dev, 1 << 20, 65536, 5));
}

/*
 * The stream of one write, as a program written for mainline chooses it
 * (io_uring's write_stream, O_DIRECT to the disk's node): stream s goes
 * out with placement identifier s - 1, as mainline sends it, reaches the
 * target's handle s - 1 and the null_blk device as stream s; a stream
 * above the handles fails with EINVAL and sends nothing.  A lifetime
 * hint is the stream of its number, as in mainline: MEDIUM (3) is
 * placement identifier 2.  The granularity is the reclaim unit size.
 */
TEST_F(fdp_host, per_io_streams)
{
	int dtype1[MAX_IDS] = { 0 }, dtype2[MAX_IDS] = { 0 }, s, fd, n = 0;
	unsigned long long want[MAX_IDS] = { 0 };
	struct stats target, backing;
	__u64 hint = 3, unset = 0;

	EXPECT_EQ(FDP_HANDLES, max_write_streams(self->h.dev));
	EXPECT_EQ(FDP_RU_SIZE,
		  queue_limit(self->h.dev, "write_stream_granularity"));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(self->h.nullb, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
	fd = open(self->h.dev, O_WRONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	for (s = 1; s <= FDP_HANDLES; s++) {
		ASSERT_EQ(8192, uring_write(fd, s * 8192, 8192, s, s));
		want[s] += 16;
	}
	EXPECT_EQ(-EINVAL, uring_write(fd, 0, 8192, 0, FDP_HANDLES + 1));
	ASSERT_EQ(0, fcntl(fd, F_SET_RW_HINT, &hint));
	ASSERT_EQ(0, write_at(fd, 1 << 20, 8192, 3));
	ASSERT_EQ(0, fcntl(fd, F_SET_RW_HINT, &unset));
	want[3] += 16;
	close(fd);
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));

	ASSERT_EQ(0, read_stats(self->h.ns, &target));
	ASSERT_EQ(0, read_stats(self->h.nullb, &backing));
	for (s = 0; s <= FDP_HANDLES; s++) {
		EXPECT_EQ(want[s], target.sectors[s]) TH_LOG("stream %d", s);
		EXPECT_EQ(want[s], backing.sectors[s]) TH_LOG("stream %d", s);
	}
	EXPECT_EQ(-1, only(&target, (const int []){ 1, 2, 3, 4, 5, 6, -1 }));
	ASSERT_EQ(0, wire_directives(dtype1, dtype2));
	for (s = 1; s <= FDP_HANDLES; s++)
		EXPECT_EQ(s == 3 ? 2 : 1, dtype2[s - 1]) TH_LOG("PID %d", s - 1);
	for (s = 0; s < MAX_IDS; s++) {
		n += dtype2[s];
		EXPECT_EQ(0, dtype1[s]);
	}
	EXPECT_EQ(FDP_HANDLES + 1, n);
	for (s = 1; s <= FDP_HANDLES; s++)
		EXPECT_EQ(0, check_at(self->h.dev, s * 8192, 8192, s));
	EXPECT_EQ(0, check_at(self->h.dev, 1 << 20, 8192, 3));
}

/* Write 8 KiB of the pattern for 4 at 1 MiB of the device @dev. */
static int write_direct(void *dev)
{
	int fd = open(dev, O_WRONLY | O_DIRECT), ret;

	if (fd < 0)
		return -1;
	ret = write_at(fd, 1 << 20, 8192, 4);
	return close(fd) || ret ? -1 : 0;
}

/* A direct write of a process whose cgroup has io.stream 4: handle 3. */
TEST_F(fdp_host, cgroup_stream)
{
	int dtype1[MAX_IDS] = { 0 }, dtype2[MAX_IDS] = { 0 }, s, n = 0;
	struct stats target, backing;

	ASSERT_EQ(0, cg_setup());
	ASSERT_EQ(0, cg_make("fdp_host", 4));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(self->h.nullb, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
	EXPECT_EQ(0, cg_run("fdp_host", write_direct, self->h.dev));
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
	EXPECT_EQ(0, cg_remove("fdp_host"));

	ASSERT_EQ(0, read_stats(self->h.ns, &target));
	ASSERT_EQ(0, read_stats(self->h.nullb, &backing));
	EXPECT_EQ(16, target.sectors[4]);
	EXPECT_EQ(16, backing.sectors[4]);
	EXPECT_EQ(-1, only(&target, (const int []){ 4, -1 }));
	ASSERT_EQ(0, wire_directives(dtype1, dtype2));
	for (s = 0; s < MAX_IDS; s++)
		n += dtype1[s] + dtype2[s];
	EXPECT_EQ(1, dtype2[3]);
	EXPECT_EQ(1, n);
	EXPECT_EQ(0, check_at(self->h.dev, 1 << 20, 8192, 4));
}

/*
 * A namespace that offers both FDP and the Streams directive: FDP is
 * used.  255 placement handles, the most: max_write_streams 255, and
 * stream 255 goes to placement identifier 254.
 */
TEST_F(fdp_host, bounds_and_both)
{
	int dtype1[MAX_IDS] = { 0 }, dtype2[MAX_IDS] = { 0 };
	int fd;

	ASSERT_EQ(0, ns_cycle_under_host(&self->h, "8", "255"));
	ASSERT_EQ(0, wait_max_write_streams(self->h.dev, 255));
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
	fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 255);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 4096, 255));
	close(fd);
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
	ASSERT_EQ(0, wire_directives(dtype1, dtype2));
	EXPECT_EQ(1, dtype2[254]);
	for (fd = 0; fd < MAX_IDS; fd++)
		EXPECT_EQ(0, dtype1[fd]);
}

/*
 * A second port of @transport, its ANA group in @ana_state, and a second
 * controller of this host connected through it; its name in @ctrl.
 */
static int connect_second_path(const char *transport, const char *ana_state,
			       char *ctrl, size_t len)
{
	char opts[256];
	int fd, n, instance;

	if (mkdir(PORT2_DIR, 0755) ||
	    write_attr(PORT2_DIR, "addr_trtype", transport) ||
	    write_attr(PORT2_DIR "/ana_groups/1", "ana_state", ana_state))
		return -1;
	if (!strcmp(transport, "tcp") &&
	    (write_attr(PORT2_DIR, "addr_adrfam", "ipv4") ||
	     write_attr(PORT2_DIR, "addr_traddr", "127.0.0.1") ||
	     write_attr(PORT2_DIR, "addr_trsvcid", TCP_PORT2)))
		return -1;
	/* A loop port is told apart by its address. */
	if (strcmp(transport, "tcp") && write_attr(PORT2_DIR, "addr_traddr", "2"))
		return -1;
	if (symlink(NQN_DIR, PORT2_DIR "/subsystems/" NQN))
		return -1;
	fd = open("/dev/nvme-fabrics", O_RDWR);
	if (fd < 0)
		return -1;
	n = snprintf(opts, sizeof(opts), "transport=%s,traddr=%s%s,nqn=%s",
		     transport, strcmp(transport, "tcp") ? "2" : "127.0.0.1",
		     strcmp(transport, "tcp") ? "" : ",trsvcid=" TCP_PORT2, NQN);
	if (write(fd, opts, n) != n) {
		close(fd);
		return -1;
	}
	n = read(fd, opts, sizeof(opts) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	opts[n] = 0;
	if (sscanf(opts, "instance=%d", &instance) != 1)
		return -1;
	snprintf(ctrl, len, "nvme%d", instance);
	return 0;
}

/*
 * Multipath: a second path, whose port's ANA group is inaccessible when
 * it connects, cannot report its placement handles (I/O Management
 * Receive is an I/O command); it does not take the multipath disk's
 * streams down to none.  Once the group is optimized, the path is
 * scanned again and has them too.
 */
TEST_F(fdp_host, inaccessible_path)
{
	char ctrl2[64];

	ASSERT_EQ(0, connect_second_path(variant->transport, "inaccessible",
					 ctrl2, sizeof(ctrl2)));
	wait_until(path_max_write_streams(&self->h, ctrl2, 1) >= 0, 10000);
	EXPECT_EQ(0, path_max_write_streams(&self->h, ctrl2, 1));
	EXPECT_EQ(FDP_HANDLES, path_max_write_streams(&self->h, self->h.ctrl, 1));
	EXPECT_EQ(FDP_HANDLES, max_write_streams(self->h.dev));

	ASSERT_EQ(0, write_attr(PORT2_DIR "/ana_groups/1", "ana_state",
				"optimized"));
	wait_until(path_max_write_streams(&self->h, ctrl2, 1) == FDP_HANDLES, 10000);
	EXPECT_EQ(FDP_HANDLES, path_max_write_streams(&self->h, ctrl2, 1));
	EXPECT_EQ(FDP_HANDLES, max_write_streams(self->h.dev));
}

/*
 * reset_and_wait(), and then wait until the scan that follows the reset
 * has asked for the FDP feature (Get Features 1Dh) and has ended, having
 * acted on the answer; 0 once it has.
 */
static int reset_and_scan(const struct host *h, long long want)
{
	char *buf = malloc(1 << 20);
	int ret = -1;

	if (!buf || trace_clear() || write_attr(SETUP_CMD, "enable", "1") ||
	    trace_scans(true) || reset_and_wait(h->ctrl, h->dev, want))
		goto out;
	if (!wait_until(read_file(TRACING "/trace", buf, 1 << 20) > 0 &&
			strstr(buf, "fid=0x1d"), 5000) &&
	    !wait_scans() && max_write_streams(h->dev) == want)
		ret = 0;
out:
	trace_scans(false);
	write_attr(SETUP_CMD, "enable", "0");
	free(buf);
	return ret;
}

/*
 * Get Features FDP fails in a reset (the host's fault injection turns its
 * completion into Invalid Field) on a namespace that also offers the
 * Streams directive: the host uses Streams, with no line about FDP (the
 * namespace is not new), and the next reset brings FDP back.
 */
TEST_F(fdp_host, get_features_fails)
{
	int dtype1[MAX_IDS] = { 0 }, dtype2[MAX_IDS] = { 0 };
	char *buf = malloc(1 << 20);
	int fd;

	ASSERT_NE(NULL, buf);
	if (!have_fault_injection(self->h.ctrl))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	ASSERT_EQ(0, trace_scans(true));
	ASSERT_EQ(0, ns_cycle_under_host(&self->h, "8", "6"));
	ASSERT_EQ(0, wait_max_write_streams(self->h.dev, FDP_HANDLES));
	/* FDP_HANDLES before as after: the scan has ended. */
	ASSERT_EQ(0, wait_scans());
	/* Then the Streams directive, with 8 streams. */
	EXPECT_EQ(0, reset_failing(self->h.ctrl, self->h.dev,
				   "nvme_admin_get_features fid=0x1d",
				   FDP_HANDLES, 8, buf));
	free(buf);
	EXPECT_EQ(0, dmesg_count("FDP not used"));

	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
	fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 4096, 3));
	close(fd);
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
	ASSERT_EQ(0, wire_directives(dtype1, dtype2));
	EXPECT_EQ(1, dtype1[3]);
	for (fd = 0; fd < MAX_IDS; fd++)
		EXPECT_EQ(0, dtype2[fd]);

	EXPECT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, FDP_HANDLES));
	EXPECT_EQ(0, check_at(self->h.dev, 0, 4096, 3));
}

/*
 * No write fails or is lost because of its placement while tagged
 * writers run through a controller reset, fewer handles under the host,
 * FDP turned off and on again under the host, and FDP turned off without
 * telling it; placement comes back each time.
 */
TEST_F_TIMEOUT(fdp_host, writes_never_fail, 120)
{
	struct writers w = { };
	struct stats st;
	__u32 aec;

	ASSERT_EQ(0, writers_start(&w, self->h.dev));
	EXPECT_EQ(0, writers_progress(&w, 64));
	EXPECT_EQ(0, reset_and_scan(&self->h, FDP_HANDLES));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]) TH_LOG("placement back after the reset");
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, 3, -1 }));

	/*
	 * Two handles instead of six: writes with the placement identifiers
	 * of handles gone are placed by the target on handle 0 until the
	 * host's scan; then stream 2 is handle 1, and stream 3 folds.
	 */
	ASSERT_EQ(0, ns_cycle_under_host(&self->h, "0", "2"));
	EXPECT_EQ(0, wait_max_write_streams(self->h.dev, 2));
	EXPECT_EQ(0, writers_progress(&w, 256));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 1, 2, -1 }));
	ASSERT_EQ(0, ns_cycle_under_host(&self->h, "0", "6"));
	EXPECT_EQ(0, wait_max_write_streams(self->h.dev, FDP_HANDLES));
	EXPECT_EQ(0, writers_progress(&w, 64));

	ASSERT_EQ(0, write_attr(self->h.ns, "fdp_enable", "0"));
	EXPECT_EQ(0, wait_max_write_streams(self->h.dev, 0));
	EXPECT_EQ(0, writers_progress(&w, 256));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }));

	ASSERT_EQ(0, write_attr(self->h.ns, "fdp_enable", "1"));
	EXPECT_EQ(0, wait_max_write_streams(self->h.dev, FDP_HANDLES));
	EXPECT_EQ(0, writers_progress(&w, 256));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, 3, -1 }));

	/*
	 * FDP off with no notice to the host (Namespace Attribute Notices
	 * off) and max_retries 0: a write is refused, once, and goes again
	 * without placement; the scan that follows sees FDP off.  FDP on
	 * again and a scan: placement is back, with no reset.
	 */
	ASSERT_EQ(0, admin(self->h.fd, 0x0a, 0, NULL, 0, 0x0b, 0, 0, &aec));
	ASSERT_EQ(0, admin(self->h.fd, 0x09, 0, NULL, 0, 0x0b,
			   aec & ~(1U << 8), 0, NULL));
	ASSERT_EQ(0, write_attr(NVME_CORE, "max_retries", "0"));
	ASSERT_EQ(0, kmsg_clear());
	ASSERT_EQ(0, write_attr(self->h.ns, "fdp_enable", "0"));
	EXPECT_EQ(0, wait_max_write_streams(self->h.dev, 0));
	EXPECT_EQ(0, writers_progress(&w, 256));
	EXPECT_EQ(1, dmesg_count("FDP not used: a write was refused"));
	ASSERT_EQ(0, write_attr(self->h.ns, "fdp_enable", "1"));
	ASSERT_EQ(0, rescan_and_wait(&self->h));
	EXPECT_EQ(0, wait_max_write_streams(self->h.dev, FDP_HANDLES));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	EXPECT_EQ(0, writers_progress(&w, 64));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_LT(0, st.sectors[2]) TH_LOG("placement back");
	EXPECT_EQ(0, write_attr(NVME_CORE, "max_retries", "5"));
	EXPECT_EQ(0, admin(self->h.fd, 0x09, 0, NULL, 0, 0x0b, aec, 0, NULL));

	EXPECT_EQ(0, writers_stop(&w));
	EXPECT_EQ(0, writers_check(self->h.dev));
}

/* nvme_core.fdp=0: after a reset no FDP command and no placement. */
TEST_F(fdp_host, fdp_off)
{
	char *buf = malloc(1 << 20);
	int on;

	ASSERT_NE(NULL, buf);
	/* The trace shows the set-up with the switch on, and none off. */
	for (on = 1; on >= 0; on--) {
		ASSERT_EQ(0, write_attr(NVME_CORE, "fdp", on ? "Y" : "N"));
		ASSERT_EQ(0, trace_clear());
		ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
		ASSERT_EQ(0, trace_scans(true));
		ASSERT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev,
					    on ? FDP_HANDLES : 0));
		/* The scan after the reset, which sets FDP up, has ended. */
		ASSERT_EQ(0, wait_scans());
		ASSERT_LT(0, read_file(TRACING "/trace", buf, 1 << 20));
		ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
		EXPECT_NE(NULL, strstr(buf, "nvme_admin_identify"));
		EXPECT_EQ(!on, !strstr(buf, "nvme_cmd_io_mgmt_recv"));
		EXPECT_EQ(!on, !strstr(buf, "fid=0x1d"));
	}
	free(buf);
	untagged_at_target(_metadata, &self->h);
}

/*
 * FDP disabled in the endurance group when the host sets up (a reset):
 * no placement, no log line, writes untagged.
 */
TEST_F(fdp_host, disabled)
{
	ASSERT_EQ(0, write_attr(self->h.ns, "fdp_enable", "0"));
	ASSERT_EQ(0, wait_max_write_streams(self->h.dev, 0));
	ASSERT_EQ(0, kmsg_clear());
	ASSERT_EQ(0, reset_and_scan(&self->h, 0));
	EXPECT_EQ(0, dmesg_count("FDP not used"));
	untagged_at_target(_metadata, &self->h);
}

/*
 * A device that refuses a placed write with FDP Disabled rather than
 * Invalid Field (the host's fault injection on the path turns the
 * completion of the write into that status): the write goes again
 * without placement and succeeds, the host says so once, and the next
 * reset brings placement back.
 */
TEST_F(fdp_host, refused_fdp_disabled)
{
	int dtype1[MAX_IDS] = { 0 }, dtype2[MAX_IDS] = { 0 };
	char fi[400], path[64];
	int fd;

	path_disk(&self->h, self->h.ctrl, path, sizeof(path));
	snprintf(fi, sizeof(fi), "/sys/kernel/debug/%s/fault_inject", path);
	if (access(fi, F_OK))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	fd = open_stream(self->h.dev, O_WRONLY | O_DIRECT, 3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kmsg_clear());
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
	/* The next completion on the path, that of this write: status 29h. */
	ASSERT_EQ(0, write_attr(fi, "space", "0"));
	ASSERT_EQ(0, write_attr(fi, "times", "1"));
	ASSERT_EQ(0, write_attr(fi, "status", "0x29"));
	ASSERT_EQ(0, write_attr(fi, "verbose", "1"));
	ASSERT_EQ(0, write_attr(fi, "probability", "100"));
	EXPECT_EQ(0, write_at(fd, 0, 4096, 3));
	EXPECT_EQ(0, write_attr(fi, "probability", "0"));
	close(fd);
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
	EXPECT_EQ(1, dmesg_count("FDP not used: a write was refused"));
	/* Sent twice: with placement (handle 2), then without. */
	ASSERT_EQ(0, wire_directives(dtype1, dtype2));
	EXPECT_EQ(1, dtype2[2]);
	EXPECT_EQ(0, check_at(self->h.dev, 0, 4096, 3));
	EXPECT_EQ(0, reset_and_scan(&self->h, FDP_HANDLES));
}

TEST_HARNESS_MAIN
