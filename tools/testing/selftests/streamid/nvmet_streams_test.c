// SPDX-License-Identifier: GPL-2.0
/*
 * The NVMe target's Streams directive, over its loop and TCP transports
 * (fixture nvmet, the host driver leaving streams alone): a namespace
 * backed by a null_blk device with streams, its Identify and Streams
 * directives driven with admin commands (and nvme-cli), writes with the
 * Streams directive counted per stream at the target and at the backing
 * device, every invalid field answered with its status, the state gone
 * after a controller reset, random directive commands that leave the
 * target working, two controllers of one host, the namespace disabled
 * under them, and all of that at once.
 */
#define _GNU_SOURCE
#include <endian.h>

#include "nvmet.h"
#include "nvme_host.h"

#define MSL		4
#define BIO_QUEUE	TRACING "/events/block/block_bio_queue"

#define SC_INVALID_NS		0x400b
#define SC_INTERNAL_PATH_ERROR	0x0300
#define SC_STREAM_ALLOC_FAILED	0x417f

/* Disable and enable the target namespace, with @streams streams. */
static int ns_cycle(const struct host *h, const char *streams)
{
	return ns_cycle_fdp(h, streams, NULL);
}

FIXTURE(nvmet) {
	struct host h;
};

FIXTURE_VARIANT(nvmet) {
	const char *transport;
};

FIXTURE_VARIANT_ADD(nvmet, loop) { .transport = "loop" };
FIXTURE_VARIANT_ADD(nvmet, tcp) { .transport = "tcp" };

FIXTURE_SETUP(nvmet)
{
	nvmet_up(_metadata, &self->h, variant->transport, MSL, false, 64);
}

FIXTURE_TEARDOWN(nvmet)
{
	nvmet_down(&self->h);
}

/* What Identify Controller, the effects log and the directives show. */
TEST_F(nvmet, discovery)
{
	__u32 effects_send, effects_recv;
	struct streams_params p;
	int oacs, sup, en;

	ASSERT_EQ(0, directive_support(self->h.fd, &oacs, &effects_send,
				       &effects_recv));
	EXPECT_EQ(1, oacs);
	EXPECT_EQ(1, effects_send & 1);	/* CSUPP */
	EXPECT_EQ(1, effects_recv & 1);

	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(3, sup);	/* Identify and Streams */
	EXPECT_EQ(1, en);	/* Identify only, until Streams is enabled */
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(MSL, p.msl);
	EXPECT_EQ(MSL, p.nssa);
	EXPECT_EQ(0, p.nsso);
	EXPECT_EQ(8, p.sws);	/* 4 KiB in 512-byte blocks */
	EXPECT_EQ(256, p.sgs);
	EXPECT_EQ(0, p.nsa);
	EXPECT_EQ(0, p.nso);
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(3, en);
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 0));
	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(1, en);
	/* NSID FFFFFFFFh: all namespaces. */
	ASSERT_EQ(0, enable_streams(self->h.fd, 0xffffffff, 1));
	ASSERT_EQ(0, identify_dirs(self->h.fd, 0xffffffff, &sup, &en));
	EXPECT_EQ(3, en);
}

/* nvme-cli shows and changes what the target holds. */
TEST_F(nvmet, nvme_cli)
{
	const char *dev = self->h.dev;

	EXPECT_EQ(0, cli_count("dir-receive", dev, "-D 0 -O 1 -H",
			       "Stream Directive *: disabled", ANY_LINES));
	ASSERT_EQ(0, cli_count("dir-send", dev, "-D 0 -O 1 -T 1 -e 1", NULL, 0));
	EXPECT_EQ(0, cli_count("dir-receive", dev, "-D 0 -O 1 -H",
			       "Stream Directive *: enabled", ANY_LINES));
	EXPECT_EQ(0, cli_count("dir-receive", dev, "-D 1 -O 1 -H",
			       "Max Streams Limit *(MSL): 4$", ANY_LINES));

	ASSERT_EQ(0, write_dir(self->h.fd, 0, DIR_STREAMS, 2, 2));
	ASSERT_EQ(0, write_dir(self->h.fd, 1, DIR_STREAMS, 4, 4));
	EXPECT_EQ(0, cli_count("dir-receive", dev, "-D 1 -O 2 -H",
			       "Stream Identifier .*: [24]$", 2));
	ASSERT_EQ(0, cli_count("dir-send", dev, "-D 1 -O 1 -S 2", NULL, 0));
	EXPECT_EQ(0, cli_count("dir-receive", dev, "-D 1 -O 2 -H",
			       "Open Stream Count *: 1$", ANY_LINES));
}

/*
 * Writes with the Streams directive land in their stream at the target
 * and at the null_blk device behind it; Get Status lists the streams
 * they opened; the data reads back.
 */
TEST_F(nvmet, writes_per_stream)
{
	static const int dspec[] = { 0, 1, 2, 3, 4, 1, 3, 0 };
	struct stats target, backing;
	__u16 status[8] = { 0 };
	struct streams_params p;
	int i;

	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(self->h.nullb, "stream_stats", "0"));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, write_dir(self->h.fd, i, dspec[i] ? DIR_STREAMS : 0,
				       dspec[i], dspec[i]));

	ASSERT_EQ(0, read_stats(self->h.ns, &target));
	ASSERT_EQ(0, read_stats(self->h.nullb, &backing));
	for (i = 0; i <= MSL; i++) {
		int n = i == 0 || i == 1 || i == 3 ? 2 : 1;

		EXPECT_EQ(n, target.requests[i]) TH_LOG("stream %d", i);
		EXPECT_EQ(n * 8, target.sectors[i]) TH_LOG("stream %d", i);
		EXPECT_EQ(n * 8, backing.sectors[i]) TH_LOG("stream %d", i);
	}
	EXPECT_EQ(-1, only(&target, (const int []){ 0, 1, 2, 3, 4, -1 }));
	EXPECT_EQ(-1, only(&backing, (const int []){ 0, 1, 2, 3, 4, -1 }));

	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 2, 0, status,
			      sizeof(status), 0, NULL));
	EXPECT_EQ(4, status[0]);
	for (i = 1; i <= 4; i++)
		EXPECT_EQ(i, status[i]);
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(4, p.nso);
	EXPECT_EQ(4, p.nsso);
	/* Release Identifier closes a stream. */
	ASSERT_EQ(0, dir_send(self->h.fd, 1, DIR_STREAMS, 1, 3, 0));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 2, 0, status,
			      sizeof(status), 0, NULL));
	EXPECT_EQ(3, status[0]);
	EXPECT_EQ(4, status[3]);

	for (i = 0; i < 8; i++)
		EXPECT_EQ(0, check_at(self->h.dev, i * 4096, 4096, dspec[i]));
}

/* Allocate and release stream resources; Allocation Failed when none. */
TEST_F(nvmet, resources)
{
	struct streams_params p;
	__u32 granted = ~0U;

	/* Streams not enabled yet. */
	EXPECT_EQ(SC_INVALID_FIELD, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0,
					     NULL, 0, 1, NULL));
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 3,
			      &granted));
	EXPECT_EQ(3, granted);
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 3,
			      &granted));
	EXPECT_EQ(MSL, granted);	/* NSA: 3 and the 1 that was left */
	EXPECT_EQ(SC_STREAM_ALLOC_FAILED,
		  dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 1, NULL));
	EXPECT_EQ(SC_INVALID_FIELD,	/* NSR 0 */
		  dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 0, NULL));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(MSL, p.nsa);
	EXPECT_EQ(0, p.nssa);
	ASSERT_EQ(0, dir_send(self->h.fd, 1, DIR_STREAMS, 2, 0, 0));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(0, p.nsa);
	EXPECT_EQ(MSL, p.nssa);
}

/* Every invalid field gets its status, and nothing is counted. */
TEST_F(nvmet, invalid_fields)
{
	struct stats st;
	__u8 buf[4096];

	/* Writes: Streams not enabled, DSPEC above MSL, unknown DTYPE. */
	EXPECT_EQ(SC_INVALID_FIELD, write_dir(self->h.fd, 0, DIR_STREAMS, 1, 1));
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	EXPECT_EQ(SC_INVALID_FIELD,
		  write_dir(self->h.fd, 0, DIR_STREAMS, MSL + 1, 1));
	EXPECT_EQ(SC_INVALID_FIELD, write_dir(self->h.fd, 0, 2, 1, 1));
	EXPECT_EQ(SC_INVALID_FIELD, write_dir(self->h.fd, 0, 0xf, 1, 1));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_EQ(-1, only(&st, (const int []){ -1 }));

	/* Directive Send: operation, types, stream ID, namespace. */
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, DIR_IDENTIFY, 2, 0,
					     DIR_STREAMS << 8 | 1));
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, DIR_IDENTIFY, 1, 0,
					     DIR_IDENTIFY << 8 | 1));
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, DIR_IDENTIFY, 1, 0,
					     2 << 8 | 1));
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, DIR_STREAMS, 3, 0, 0));
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, DIR_STREAMS, 1, 0, 0));
	EXPECT_EQ(SC_INVALID_FIELD,
		  dir_send(self->h.fd, 1, DIR_STREAMS, 1, MSL + 1, 0));
	EXPECT_EQ(SC_INVALID_FIELD, dir_send(self->h.fd, 1, 2, 1, 0, 0));
	EXPECT_EQ(SC_INVALID_NS, dir_send(self->h.fd, 2, DIR_STREAMS, 2, 0, 0));
	EXPECT_EQ(SC_INVALID_NS, dir_send(self->h.fd, 0, DIR_STREAMS, 2, 0, 0));
	EXPECT_EQ(SC_INVALID_NS,
		  dir_send(self->h.fd, 0xffffffff, DIR_STREAMS, 2, 0, 0));

	/* Directive Receive: operation, type, namespace. */
	EXPECT_EQ(SC_INVALID_FIELD, dir_recv(self->h.fd, 1, DIR_IDENTIFY, 2, 0,
					     buf, sizeof(buf), 0, NULL));
	EXPECT_EQ(SC_INVALID_FIELD, dir_recv(self->h.fd, 1, DIR_STREAMS, 4, 0,
					     buf, 32, 0, NULL));
	EXPECT_EQ(SC_INVALID_FIELD, dir_recv(self->h.fd, 1, 3, 1, 0, buf, 32, 0,
					     NULL));
	EXPECT_EQ(SC_INVALID_NS, dir_recv(self->h.fd, 9, DIR_STREAMS, 1, 0, buf,
					  32, 0, NULL));
}

/* A controller reset ends what the host had enabled and allocated. */
TEST_F(nvmet, reset_controller)
{
	struct streams_params p;
	int sup, en, fd;

	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 2,
			      NULL));
	ASSERT_EQ(0, write_dir(self->h.fd, 0, DIR_STREAMS, 1, 1));

	/* The host leaves the streams alone: its disk has none. */
	ASSERT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, 0));
	fd = open(self->h.dev, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, identify_dirs(fd, 1, &sup, &en));
	EXPECT_EQ(1, en);
	ASSERT_EQ(0, streams_params(fd, &p));
	EXPECT_EQ(0, p.nsa);
	EXPECT_EQ(0, p.nso);
	EXPECT_EQ(MSL, p.nssa);
	EXPECT_EQ(0, p.nsso);
	EXPECT_EQ(SC_INVALID_FIELD, write_dir(fd, 0, DIR_STREAMS, 1, 1));
	close(fd);
}

/*
 * What the target does with a directive command, as
 * Documentation/block/write-streams.rst and the specification say: the
 * model of one host and namespace 1 of MSL streams, the only namespace.
 */
struct dir_model {
	bool enabled;
	unsigned int allocated;
};

struct dir_cmd {
	bool send;
	__u32 nsid, dtype, doper, dspec, len, numd, cdw12;
};

#define SC_SGL_INVALID_DATA	0x400f

/* The status the target must return for @c; @m follows its effect. */
static int dir_expect(struct dir_model *m, const struct dir_cmd *c)
{
	bool identify_all = c->dtype == DIR_IDENTIFY && c->nsid == 0xffffffff;
	__u32 want_len = c->send || (c->dtype == DIR_STREAMS && c->doper == 3) ?
			 0 : (c->numd + 1) * 4;
	__u32 nsr = c->cdw12 & 0xffff, id = c->dspec;

	/* The data transfer first, then the namespace. */
	if (c->len != want_len)
		return SC_SGL_INVALID_DATA;
	if (!identify_all && c->nsid != 1)
		return SC_INVALID_NS;
	if (c->dtype == DIR_IDENTIFY) {
		if (c->doper != 1)
			return SC_INVALID_FIELD;
		if (!c->send)
			return SC_SUCCESS;
		if ((c->cdw12 >> 8 & 0xff) != DIR_STREAMS)
			return SC_INVALID_FIELD;
		m->enabled = c->cdw12 & 1;
		if (!m->enabled)
			m->allocated = 0;
		return SC_SUCCESS;
	}
	if (c->dtype != DIR_STREAMS)
		return SC_INVALID_FIELD;
	if (!c->send && c->doper == 1)
		return SC_SUCCESS;
	if (c->doper < 1 || c->doper > (c->send ? 2U : 3U) || !m->enabled)
		return SC_INVALID_FIELD;
	if (c->send && c->doper == 1)
		return id && id <= MSL ? SC_SUCCESS : SC_INVALID_FIELD;
	if (c->send) {
		m->allocated = 0;
		return SC_SUCCESS;
	}
	if (c->doper == 2)
		return SC_SUCCESS;
	if (!nsr)
		return SC_INVALID_FIELD;
	if (m->allocated == MSL)
		return SC_STREAM_ALLOC_FAILED;
	m->allocated += nsr < MSL - m->allocated ? nsr : MSL - m->allocated;
	return SC_SUCCESS;
}

/*
 * Random Directive Send and Receive commands: each gets the status the
 * target's rules give it, and the target still serves I/O and directives
 * correctly afterwards.
 */
TEST_F_TIMEOUT(nvmet, random_directives, 600)
{
	static const __u32 nsids[] = { 1, 0, 2, 0xffffffff, 1, 1 };
	__u8 *buf = malloc(1 << 16);
	struct dir_model m = { };
	struct streams_params p;
	int i, wrong = 0, ok = 0, kinds = 0;
	struct stats st;

	ASSERT_NE(NULL, buf);
	srand(1);
	for (i = 0; i < 10000; i++) {
		/* Mostly valid types and operations, so that most get far. */
		struct dir_cmd c = {
			.dtype = rand() % 4 ? rand() % 3 : rand() % 256,
			.doper = rand() % 4 ? rand() % 4 : rand() % 256,
			.dspec = rand() % 4 ? rand() % 8 : rand() % 65536,
			.len = rand() % 4 ? (rand() % 2 ? 32 : 4096) : 0,
		};
		int ret, want;

		c.numd = rand() % 8 ? (c.len ? c.len / 4 - 1 : 0) :
			 rand() % 4 ? rand() % 1024 : rand();
		c.cdw12 = rand() % 3 ? rand() % 512 : rand();
		c.send = rand() % 2;
		/* A Directive Send carries no data in Identify or Streams. */
		if (c.send && rand() % 8)
			c.len = 0;
		c.nsid = nsids[rand() % 6];
		ret = admin(self->h.fd, c.send ? 0x19 : 0x1a, c.nsid, buf,
			    c.len, c.numd, c.doper | c.dtype << 8 | c.dspec << 16,
			    c.cdw12, NULL);
		want = dir_expect(&m, &c);
		ASSERT_LE(0, ret) TH_LOG("command %d: %s", i, strerror(-ret));
		if (ret != want && wrong++ < 10) {
			char what[128];

			snprintf(what, sizeof(what),
				 "%s nsid %#x dtype %u doper %u dspec %u",
				 c.send ? "send" : "receive", c.nsid, c.dtype,
				 c.doper, c.dspec);
			TH_LOG("command %d: %s len %u numd %u cdw12 %#x: status %#x, want %#x",
			       i, what, c.len, c.numd, c.cdw12, ret, want);
		}
		ok += !ret;
		/* Which of the 8 operations of each direction succeeded. */
		if (!ret && c.dtype < 2 && c.doper < 4)
			kinds |= 1 << (c.send * 8 + c.dtype * 4 + c.doper);
	}
	TH_LOG("10000 random directive commands: %d succeeded, %d not as the rules say",
	       ok, wrong);
	EXPECT_EQ(0, wrong);
	/*
	 * The commands got far: every operation there is succeeded at least
	 * once: Identify Return Parameters; Streams Return Parameters, Get
	 * Status, Allocate Resources; Enable Directive; Release Identifier,
	 * Release Resources.
	 */
	EXPECT_EQ(1 << 1 | 1 << 5 | 1 << 6 | 1 << 7 | 1 << 9 | 1 << 13 |
		  1 << 14, kinds);
	free(buf);

	/* Still correct: directives, stream writes, data. */
	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(MSL, p.msl);
	EXPECT_EQ(m.allocated, p.nsa);
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_dir(self->h.fd, 5, DIR_STREAMS, 2, 2));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_EQ(8, st.sectors[2]);
	EXPECT_EQ(0, check_at(self->h.dev, 5 * 4096, 4096, 2));
}

/*
 * Two controllers of one host, as multipath over two ports or a
 * reconnect before the old controller is gone gives: the Streams state is
 * the host's, so each controller sees and uses what the other set up; it
 * outlives the first controller and ends when the last is reset.
 */
TEST_F(nvmet, same_host_controllers)
{
	char opts[1024], dir[400], hostnqn[256], hostid[64], ctrl2[300];
	struct streams_params p;
	int fd2, n, sup, en;

	snprintf(dir, sizeof(dir), "/sys/class/nvme/%s", self->h.ctrl);
	ASSERT_EQ(0, sysfs_str(dir, "hostnqn", hostnqn, sizeof(hostnqn)));
	ASSERT_EQ(0, sysfs_str(dir, "hostid", hostid, sizeof(hostid)));
	fd2 = open("/dev/nvme-fabrics", O_RDWR);
	ASSERT_LE(0, fd2);
	n = snprintf(opts, sizeof(opts),
		     "transport=%s%s,nqn=%s,hostnqn=%s,hostid=%s,duplicate_connect",
		     variant->transport, strcmp(variant->transport, "tcp") ?
		     "" : ",traddr=127.0.0.1,trsvcid=" TCP_PORT, NQN, hostnqn,
		     hostid);
	ASSERT_EQ(n, write(fd2, opts, n));
	close(fd2);
	ASSERT_EQ(0, other_ctrl(self->h.ctrl, ctrl2, sizeof(ctrl2)));
	fd2 = open_ctrl(ctrl2);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, wait_ns(fd2));

	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 2,
			      NULL));
	ASSERT_EQ(0, identify_dirs(fd2, 1, &sup, &en));
	EXPECT_EQ(3, en);
	ASSERT_EQ(0, streams_params(fd2, &p));
	EXPECT_EQ(2, p.nsa);
	EXPECT_EQ(MSL - 2, p.nssa);
	EXPECT_EQ(0, rw_dir(fd2, 0x01, 0, DIR_STREAMS, 1));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(1, p.nso);

	/*
	 * The second controller goes: the state stays with the first.  (Not
	 * the first: in 6.12 the multipath head keeps using its effects log,
	 * freed with it, for passthrough commands of the other path.)
	 */
	ASSERT_EQ(0, streams_params(fd2, &p));
	EXPECT_EQ(1, p.nso);
	close(fd2);
	snprintf(dir, sizeof(dir), "/sys/class/nvme/%s", ctrl2);
	ASSERT_EQ(0, write_attr(dir, "delete_controller", "1"));
	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(3, en);
	EXPECT_EQ(0, rw_dir(self->h.fd, 0x01, 1, DIR_STREAMS, 2));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(2, p.nsa);
	EXPECT_EQ(2, p.nso);

	/* Its last controller reset, the host has no Streams state left. */
	ASSERT_EQ(0, reset_and_wait(self->h.ctrl, self->h.dev, 0));
	ASSERT_EQ(0, identify_dirs(self->h.fd, 1, &sup, &en));
	EXPECT_EQ(1, en);
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(0, p.nsa);
	EXPECT_EQ(0, p.nso);
	EXPECT_EQ(0, p.nsso);
	EXPECT_EQ(MSL, p.nssa);
}

/*
 * What a controller says of Directives does not change under its host:
 * with the only namespace with streams gone, OACS and the effects log
 * still list them, and Identify (for all namespaces) lists no Streams;
 * the namespace back, its streams can be enabled and used without a
 * reset.
 */
TEST_F(nvmet, namespace_goes_and_comes)
{
	__u32 effects_send, effects_recv;
	int fd, oacs, sup, en, ret;
	char msl[16];

	fd = open_ctrl(self->h.ctrl);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_attr(self->h.ns, "enable", "0"));
	ASSERT_EQ(0, directive_support(fd, &oacs, &effects_send,
				       &effects_recv));
	EXPECT_EQ(1, oacs);
	EXPECT_EQ(1, effects_send & 1);
	EXPECT_EQ(1, effects_recv & 1);
	ASSERT_EQ(0, identify_dirs(fd, 0xffffffff, &sup, &en));
	EXPECT_EQ(1, sup);
	/* A namespace that is only disabled is a path error, to retry. */
	EXPECT_EQ(SC_INTERNAL_PATH_ERROR, enable_streams(fd, 1, 1));

	snprintf(msl, sizeof(msl), "%d", MSL);
	ASSERT_EQ(0, ns_cycle(&self->h, msl));
	ASSERT_EQ(0, wait_ns(fd));
	ASSERT_EQ(0, enable_streams(fd, 1, 1));
	/*
	 * The host may take the namespace out and in once more as it
	 * scans: the controller's node then has none for I/O (ENOTTY) for
	 * a while.  A status from the target is an answer.
	 */
	wait_until((ret = rw_dir(fd, 0x01, 0, DIR_STREAMS, MSL)) >= 0, 5000);
	EXPECT_EQ(0, ret);
	close(fd);
}

/* The stream count, while the namespace is being disabled. */
TEST_F(nvmet, streams_while_disabling)
{
	change_while_disabling(_metadata, &self->h, "streams", "255");
}

/*
 * A namespace of 255 streams, the most there are: DSPEC 255 is a
 * stream, 256 is an Invalid Field whose error location, in the error
 * log, is byte 54 of the command (DSPEC: CDW13 bits 31:16).  A read with
 * a directive reaches the backing device with no stream.
 */
TEST_F(nvmet, dspec_bounds)
{
	struct { __le64 count; __u8 rest[56]; } log[16];
	char *buf = malloc(1 << 20), *p;
	int fd, i, newest = 0, reads = 0;
	struct stats st;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, ns_cycle(&self->h, "255"));
	fd = open_ctrl(self->h.ctrl);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, wait_ns(fd));
	ASSERT_EQ(0, enable_streams(fd, 1, 1));
	ASSERT_EQ(0, write_attr(self->h.nullb, "stream_stats", "0"));
	EXPECT_EQ(0, rw_dir(fd, 0x01, 0, DIR_STREAMS, 255));
	EXPECT_EQ(SC_INVALID_FIELD, rw_dir(fd, 0x01, 1, DIR_STREAMS, 256));
	ASSERT_EQ(0, read_stats(self->h.nullb, &st));
	EXPECT_EQ(8, st.sectors[255]);
	EXPECT_EQ(-1, only(&st, (const int []){ 255, -1 }));

	ASSERT_EQ(0, admin(fd, 0x02, 0xffffffff, log, sizeof(log),
			   0x01 | (sizeof(log) / 4 - 1) << 16, 0, 0, NULL));
	for (i = 1; i < 16; i++)
		if (le64toh(log[i].count) > le64toh(log[newest].count))
			newest = i;
	/* Parameter Error Location: bytes 14-15 of the entry. */
	EXPECT_EQ(54, log[newest].rest[6] | log[newest].rest[7] << 8);

	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(BIO_QUEUE, "enable", "1"));
	EXPECT_EQ(0, rw_dir(fd, 0x02, 0, DIR_STREAMS, 7));
	ASSERT_EQ(0, write_attr(BIO_QUEUE, "enable", "0"));
	ASSERT_LT(0, read_file(TRACING "/trace", buf, 1 << 20));
	for (p = buf; (p = strstr(p, "block_bio_queue: ")); p++) {
		char *nl = strchr(p, '\n'), *rwbs = strchr(p + 17, ' ');

		if (!rwbs || rwbs[1] != 'R')
			continue;
		reads++;
		EXPECT_EQ(0, strncmp(strstr(p, "stream="), "stream=0",
				     nl ? nl - strstr(p, "stream=") : 8));
	}
	EXPECT_LE(1, reads);
	free(buf);
	close(fd);
}

/*
 * Open streams: a host with an allocation keeps at most that many open,
 * a write to one more releases the lowest; a change of the allocation
 * releases them all; without one, up to the pool (NSSA), at most MSL.
 */
TEST_F(nvmet, implicit_release)
{
	__u16 status[8] = { 0 };
	struct streams_params p;
	int i;

	ASSERT_EQ(0, enable_streams(self->h.fd, 1, 1));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 2,
			      NULL));
	for (i = 1; i <= 3; i++)
		ASSERT_EQ(0, write_dir(self->h.fd, i, DIR_STREAMS, i, i));
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 2, 0, status,
			      sizeof(status), 0, NULL));
	EXPECT_EQ(2, status[0]);
	EXPECT_EQ(2, status[1]);
	EXPECT_EQ(3, status[2]);
	/* Without the allocation: none open, then the pool, all MSL. */
	ASSERT_EQ(0, dir_send(self->h.fd, 1, DIR_STREAMS, 2, 0, 0));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(0, p.nso);
	EXPECT_EQ(0, p.nsso);
	for (i = 1; i <= MSL; i++)
		ASSERT_EQ(0, write_dir(self->h.fd, i, DIR_STREAMS, i, i));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(MSL, p.nso);
	EXPECT_EQ(MSL, p.nsso);
	EXPECT_EQ(MSL, p.nssa);
	/* An allocation of 1: the pool shrinks, the open streams go. */
	ASSERT_EQ(0, dir_recv(self->h.fd, 1, DIR_STREAMS, 3, 0, NULL, 0, 1,
			      NULL));
	ASSERT_EQ(0, streams_params(self->h.fd, &p));
	EXPECT_EQ(0, p.nso);
	EXPECT_EQ(MSL - 1, p.nssa);
	for (i = 1; i <= MSL; i++)
		EXPECT_EQ(0, check_at(self->h.dev, i * 4096, 4096, i));
}

/*
 * The stress test runs until the namespace has been disabled and enabled
 * this many times, with commands sent to it each time in between: under
 * QEMU without KVM, about 5 s over the loop transport and 9 s over TCP,
 * and up to 25 s over TCP on a kernel with KASAN and lockdep on a loaded
 * machine.  STRESS_MS bounds it, only so that a target that stops making
 * progress fails the test rather than hangs it.
 */
#define STRESS_CYCLES	150
#define STRESS_MS	90000

/* In the page shared with the jobs: the rounds each has done; stop. */
#define STRESS_STOP	3

static unsigned long stress_rounds(const unsigned long *run, int job)
{
	return __atomic_load_n(&run[job], __ATOMIC_RELAXED);
}

/*
 * One job of the stress test, until run[STRESS_STOP] is set: 0 reads and
 * resets stream_stats, 1 disables and enables the namespace with a new
 * stream count, 2 sends writes with streams and directive commands
 * through controller @fd.  Each counts its rounds in run[@job].  Errors
 * are expected; the kernel must stay sound.  (No controller resets: with
 * namespaces going and coming on the host, they meet a race of 6.12's
 * elevator re-registration that is not the series'.)
 */
static void stress_job(const struct host *h, int job, int fd,
		       unsigned long *run)
{
	char buf[16384], val[16];
	__u16 status[256];
	unsigned long from;
	unsigned int i;

	srand(job + 1);
	for (i = 0; !stress_rounds(run, STRESS_STOP); i++) {
		switch (job) {
		case 0:
			snprintf(buf, sizeof(buf), "%s/stream_stats", h->ns);
			read_file(buf, buf, sizeof(buf));
			if (i % 4 == 0)
				write_attr(h->ns, "stream_stats", "0");
			break;
		case 1:
			snprintf(val, sizeof(val), "%d", 1 + rand() % 255);
			ns_cycle(h, val);
			/* Job 2 has gone a whole round against this state. */
			from = stress_rounds(run, 2);
			wait_until(stress_rounds(run, 2) >= from + 2 ||
				   stress_rounds(run, STRESS_STOP), 1000);
			break;
		default:
			rw_dir(fd, 0x01, rand() % 64, DIR_STREAMS, rand() % 300);
			enable_streams(fd, 1, rand() % 2);
			dir_recv(fd, 1, DIR_STREAMS, 3, 0, NULL, 0, rand() % 8,
				 NULL);
			dir_recv(fd, 1, DIR_STREAMS, 2, 0, status,
				 sizeof(status), 0, NULL);
			dir_send(fd, 1, DIR_STREAMS, 1 + rand() % 2,
				 rand() % 300, 0);
			break;
		}
		__atomic_add_fetch(&run[job], 1, __ATOMIC_RELAXED);
	}
}

/*
 * stream_stats read and reset, the namespace disabled and enabled with
 * other stream counts, and writes and directive commands, all at once:
 * the target stays sound (on a kernel with KASAN and lockdep, neither
 * reports anything) and works afterwards.
 */
TEST_F_TIMEOUT(nvmet, stress, 180)
{
	struct timespec start, end;
	unsigned long *run;
	pid_t pid[3];
	int fd, i, status, ret;
	char msl[16];
	struct stats st;

	fd = open_ctrl(self->h.ctrl);
	ASSERT_LE(0, fd);
	run = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, run);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < 3; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			stress_job(&self->h, i, fd, run);
			_exit(0);
		}
	}
	EXPECT_EQ(0, wait_until(stress_rounds(run, 1) >= STRESS_CYCLES,
				STRESS_MS));
	__atomic_store_n(&run[STRESS_STOP], 1, __ATOMIC_RELAXED);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	TH_LOG("%.1f s; rounds: %lu of stream_stats, %lu of the namespace, %lu of commands",
	       end.tv_sec - start.tv_sec + (end.tv_nsec - start.tv_nsec) / 1e9,
	       run[0], run[1], run[2]);
	munmap(run, 4096);

	/* Still correct: streams, counters, data. */
	snprintf(msl, sizeof(msl), "%d", MSL);
	ASSERT_EQ(0, ns_cycle(&self->h, msl));
	ASSERT_EQ(0, wait_ns(fd));
	ASSERT_EQ(0, enable_streams(fd, 1, 1));
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	/*
	 * Scans queued by the cycles above may still take the host's
	 * namespace away and bring it back: while it is away, the host
	 * refuses I/O through the controller with ENOTTY and sends nothing.
	 */
	ASSERT_EQ(0, wait_until((ret = rw_dir(fd, 0x01, 5, DIR_STREAMS, 2)) !=
				-ENOTTY, 10000));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	EXPECT_EQ(8, st.sectors[2]);
	EXPECT_EQ(-1, only(&st, (const int []){ 2, -1 }));
	close(fd);
}

/*
 * Placement handles given to a namespace after the controller connected,
 * whose CTRATT said no FDP and goes on saying so: the namespace shows that
 * controller no endurance group and refuses its placed writes and I/O
 * Management commands, as a namespace without handles does.
 */
TEST_F(nvmet, fdp_after_connect)
{
	unsigned char *id;
	char msl[16];

	ASSERT_EQ(0, posix_memalign((void **)&id, 4096, 4096));
	snprintf(msl, sizeof(msl), "%d", MSL);
	ASSERT_EQ(0, ns_cycle_under_host(&self->h, msl, "4"));
	ASSERT_EQ(0, rescan_and_wait(&self->h));
	ASSERT_EQ(0, admin(self->h.fd, 0x06, 1, id, 4096, 0, 0, 0, NULL));
	EXPECT_EQ(0, id[102] | id[103] << 8);	/* ENDGID */
	EXPECT_EQ(SC_INVALID_FIELD, write_dir(self->h.fd, 0, 2, 0, 1));
	EXPECT_NE(0, io_mgmt(self->h.fd, 0x12, 1, id, 4096));
	free(id);
}

TEST_HARNESS_MAIN
