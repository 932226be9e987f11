// SPDX-License-Identifier: GPL-2.0
/*
 * The stacks users run, on null_blk members with streams: dm-linear,
 * dm-stripe, dm-crypt (LUKS), md linear, raid0, raid1 (also with
 * write-behind), raid10 and raid5, and dm-flakey, alone and in a table
 * with dm-linear.  A stack that carries the stream ID shows the members'
 * max_write_streams, and ext4 on it puts all of each file's data, buffered and
 * O_DIRECT, in the file's stream at the members, once for each copy the
 * stack keeps.  A stack that does not carry it (raid5, a table with a
 * dm-flakey target, a dm table without devices) shows 0, and its members
 * get the data in no stream.  The files read back after a remount and
 * e2fsck finds the file system clean.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "fs.h"

#define STREAMS		8
#define MEMBER_MIB	128
#define MAX_MEMBERS	3
#define FILE_MIB	4
#define FILE_SECTORS	(FILE_MIB * 2048ULL)
#define MNT		"/tmp/stack_test"
#define LOG		"/tmp/stack_test.log"
#define MD		"/dev/md100"
#define DM		"/dev/mapper/stack_test"
#define TABLE		" /tmp/stack_test.table"
/* A dm-linear table of $1 then $2, both of $s sectors, in TABLE. */
#define LINEAR_TABLE	"printf '0 %s linear %s 0\\n%s %s linear %s 0\\n' " \
			"$s $1 $s $s $2 >" TABLE

/*
 * Run the shell command that @fmt makes, with the members as $1...; its
 * output goes to the test's log if it fails.  0 on success.
 */
static int sh(struct __test_metadata *_metadata, char (*dev)[64], int n,
	      const char *fmt, ...)
{
	char cmd[2048], line[256];
	size_t len;
	va_list ap;
	FILE *f;
	int i, ret;

	va_start(ap, fmt);
	len = snprintf(cmd, sizeof(cmd), "exec >" LOG " 2>&1 </dev/null; set -- ");
	for (i = 0; i < n; i++)
		len += snprintf(cmd + len, sizeof(cmd) - len, "%s ", dev[i]);
	len += snprintf(cmd + len, sizeof(cmd) - len, "; ");
	vsnprintf(cmd + len, sizeof(cmd) - len, fmt, ap);
	va_end(ap);
	ret = system(cmd);
	if (ret) {
		TH_LOG("failed (%d): %s", ret, cmd);
		f = fopen(LOG, "r");
		while (f && fgets(line, sizeof(line), f))
			TH_LOG("  %s", strtok(line, "\n") ?: "");
		if (f)
			fclose(f);
	}
	return ret;
}

/* The max_write_streams of the device node @dev, or -1. */
static long long node_max_write_streams(const char *dev)
{
	return queue_limit(dev, "max_write_streams");
}

/* How a stack is built on its members ($1...) and what it keeps. */
struct stack {
	int members;
	/* shell commands run in turn, while each succeeds */
	const char *up[4];
	const char *down;
	const char *node;
	/* copies of each byte of data on the members; 0: no ID carried */
	int copies;
	/* members one after another: a small file may be on one alone */
	bool concatenated;
};

FIXTURE(stack) {
	char dir[MAX_MEMBERS][256];
	char dev[MAX_MEMBERS][64];
	bool up, mounted;
};

FIXTURE_VARIANT(stack) {
	struct stack s;
};

/* Members concatenated, half of the file system on each. */
FIXTURE_VARIANT_ADD(stack, dm_linear) { .s = {
	.members = 2, .copies = 1, .node = DM, .concatenated = true,
	.up = { "s=$(blockdev --getsz $1)",
		LINEAR_TABLE, "dmsetup create stack_test " TABLE },
	.down = "dmsetup remove stack_test",
} };

FIXTURE_VARIANT_ADD(stack, dm_stripe) { .s = {
	.members = 2, .copies = 1, .node = DM,
	.up = { "s=$(blockdev --getsz $1)",
		"echo 0 $((2 * s)) striped 2 128 $1 0 $2 0 >" TABLE,
		"dmsetup create stack_test " TABLE },
	.down = "dmsetup remove stack_test",
} };

/* LUKS2, its key derived quickly: the test is of the writes. */
FIXTURE_VARIANT_ADD(stack, dm_crypt) { .s = {
	.members = 1, .copies = 1, .node = DM,
	.up = { "k=/tmp/stack_test.key; echo -n stack_test >$k",
		"o='--type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000'",
		"cryptsetup luksFormat -q $o -d $k $1",
		"cryptsetup open -d $k $1 stack_test" },
	.down = "cryptsetup close stack_test",
} };

#define MDADM "mdadm --create " MD " --run --metadata=1.2 --assume-clean "
#define MD_RAID1 MDADM "--level=1 --bitmap=none --raid-devices=2 $1 $2"

FIXTURE_VARIANT_ADD(stack, md_linear) { .s = {
	.members = 2, .copies = 1, .node = MD, .concatenated = true,
	.up = { MDADM "--level=linear --raid-devices=2 $1 $2" },
	.down = "mdadm --stop " MD,
} };

FIXTURE_VARIANT_ADD(stack, md_raid0) { .s = {
	.members = 2, .copies = 1, .node = MD,
	.up = { MDADM "--level=0 --chunk=64 --raid-devices=2 $1 $2" },
	.down = "mdadm --stop " MD,
} };

FIXTURE_VARIANT_ADD(stack, md_raid1) { .s = {
	.members = 2, .copies = 2, .node = MD,
	.up = { MD_RAID1 },
	.down = "mdadm --stop " MD,
} };

/* The second member write-mostly: it gets its writes from a copy. */
FIXTURE_VARIANT_ADD(stack, md_raid1_write_behind) { .s = {
	.members = 2, .copies = 2, .node = MD,
	.up = { MDADM "--level=1 --bitmap=internal --write-behind=256 -n 2 $1 --write-mostly $2" },
	.down = "mdadm --stop " MD,
} };

/* Two copies over three members. */
FIXTURE_VARIANT_ADD(stack, md_raid10) { .s = {
	.members = 3, .copies = 2, .node = MD,
	.up = { MDADM "--level=10 --layout=n2 --chunk=64 --bitmap=none --raid-devices=3 $1 $2 $3" },
	.down = "mdadm --stop " MD,
} };

/*
 * dm-flakey, always up, does not pass the ID: the stack shows no streams,
 * so the ID is dropped where the writes enter it.
 */
FIXTURE_VARIANT_ADD(stack, dm_flakey) { .s = {
	.members = 1, .copies = 0, .node = DM,
	.up = { "s=$(blockdev --getsz $1)",
		"echo 0 $s flakey $1 0 1 0 >" TABLE,
		"dmsetup create stack_test " TABLE },
	.down = "dmsetup remove stack_test",
} };

/* One target of a table that does not pass the ID is enough for none. */
FIXTURE_VARIANT_ADD(stack, dm_linear_and_flakey) { .s = {
	.members = 2, .copies = 0, .node = DM,
	.up = { "s=$(blockdev --getsz $1)",
		"printf '0 %s linear %s 0\\n%s %s flakey %s 0 1 0\\n' $s $1 $s $s $2 >" TABLE,
		"dmsetup create stack_test " TABLE },
	.down = "dmsetup remove stack_test",
} };

/* Writes the stripes in bios of its own: no streams. */
FIXTURE_VARIANT_ADD(stack, md_raid5) { .s = {
	.members = 3, .copies = 0, .node = MD,
	.up = { MDADM "--level=5 --chunk=64 --bitmap=none --raid-devices=3 $1 $2 $3" },
	.down = "mdadm --stop " MD,
} };

FIXTURE_SETUP(stack)
{
	char name[32], cmd[1024], gran[16];
	size_t len = 0;
	int i;

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	/* libdevmapper makes the nodes itself: the guest runs no udev. */
	setenv("DM_DISABLE_UDEV", "1", 1);
	/* Members of stream granularities 1, 2 and 3 MiB. */
	for (i = 0; i < variant->s.members; i++) {
		snprintf(name, sizeof(name), "stack%d", i);
		snprintf(gran, sizeof(gran), "%d", (i + 1) << 20);
		ASSERT_EQ(0, nullb_new(name, MEMBER_MIB, STREAMS, self->dir[i],
				       sizeof(self->dir[i])));
		ASSERT_EQ(0, write_attr(self->dir[i], "stream_granularity",
					gran));
		ASSERT_EQ(0, nullb_power_on(self->dir[i], self->dev[i],
					    sizeof(self->dev[i])));
	}
	for (i = 0; i < 4 && variant->s.up[i]; i++)
		len += snprintf(cmd + len, sizeof(cmd) - len, "%s%s",
				i ? " && " : "", variant->s.up[i]);
	ASSERT_EQ(0, sh(_metadata, self->dev, variant->s.members, "%s", cmd));
	self->up = true;
}

FIXTURE_TEARDOWN(stack)
{
	int i;

	if (self->mounted)
		umount(MNT);
	if (self->up)
		EXPECT_EQ(0, sh(_metadata, self->dev, 0, "%s", variant->s.down));
	for (i = 0; i < MAX_MEMBERS; i++)
		if (self->dir[i][0])
			EXPECT_EQ(0, nullb_remove(self->dir[i]));
}

/*
 * A stack shows its members' streams only if it carries the ID, and then
 * as stream granularity the least common multiple of its members' (of
 * 1, 2 and 3 MiB).
 */
TEST_F(stack, max_write_streams)
{
	static const long long lcm_mib[MAX_MEMBERS + 1] = { 0, 1, 2, 6 };

	EXPECT_EQ(variant->s.copies ? STREAMS : 0,
		  node_max_write_streams(variant->s.node));
	EXPECT_EQ(variant->s.copies ? lcm_mib[variant->s.members] << 20 : 0,
		  queue_limit(variant->s.node, "write_stream_granularity"));
}

/*
 * Sectors of stream @id summed over the members, each of which got some
 * of them if @each; -1 if a member got any in a stream outside @ids.
 */
static long long member_sectors(struct __test_metadata *_metadata,
				char (*dir)[256], int members, int id,
				const int *ids, bool each)
{
	long long sum = 0;
	struct stats st;
	int i;

	for (i = 0; i < members; i++) {
		if (read_stats(dir[i], &st))
			return -1;
		TH_LOG("member %d stream %d: %llu sectors", i, id,
		       st.sectors[id]);
		if (only(&st, ids) >= 0 || (each && !st.sectors[id]))
			return -1;
		sum += st.sectors[id];
	}
	return sum;
}

/*
 * ext4 on the stack; file f3 buffered, then fsync, and f4 with O_DIRECT.
 * Each file's data reaches the members in its stream, once per copy, or
 * (a stack with no streams) in none.
 */
TEST_F(stack, files)
{
	static const int ids[] = { 3, 4 }, allowed[] = { 0, 3, 4, -1 };
	const struct stack *s = &variant->s;
	long long got, want;
	int i;

	ASSERT_EQ(0, sh(_metadata, self->dev, 0,
			"mkfs.ext4 -q -F -E %s %s",
			"nodiscard,lazy_itable_init=0,lazy_journal_init=0",
			s->node));
	mkdir(MNT, 0755);
	ASSERT_EQ(0, mount(s->node, MNT, "ext4", 0, NULL));
	self->mounted = true;
	sync();
	for (i = 0; i < s->members; i++)
		ASSERT_EQ(0, write_attr(self->dir[i], "stream_stats", "0"));

	ASSERT_EQ(0, fs_write_files(MNT, &ids[0], 1, FILE_MIB, FLUSH_FSYNC));
	ASSERT_EQ(0, fs_write_files(MNT, &ids[1], 1, FILE_MIB, FLUSH_DIRECT));
	for (i = 0; i < 2; i++) {
		got = member_sectors(_metadata, self->dir, s->members, ids[i],
				     allowed,
				     s->copies > 0 && !s->concatenated);
		want = s->copies * FILE_SECTORS;
		/* The share of the file's bytes that reached its stream. */
		TH_LOG("f%d: %.3f of each copy in stream %d", ids[i],
		       (double)got / (FILE_SECTORS * (s->copies ?: 1)), ids[i]);
		EXPECT_EQ(want, got);
	}

	ASSERT_EQ(0, umount(MNT));
	self->mounted = false;
	EXPECT_EQ(0, sh(_metadata, self->dev, 0, "e2fsck -fn %s", s->node));
	ASSERT_EQ(0, mount(s->node, MNT, "ext4", 0, NULL));
	self->mounted = true;
	EXPECT_EQ(0, fs_check_files(MNT, ids, 2, FILE_MIB));
}

/* dm-zero and dm-error have no device to keep streams. */
TEST(dm_without_devices)
{
	static const char *const targets[] = { "zero", "error" };
	int i;

	setenv("DM_DISABLE_UDEV", "1", 1);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, sh(_metadata, NULL, 0,
				"echo 0 8192 %s | dmsetup create stack_test",
				targets[i]));
		EXPECT_EQ(0, node_max_write_streams(DM));
		ASSERT_EQ(0, sh(_metadata, NULL, 0,
				"dmsetup remove stack_test"));
	}
}

/*
 * Members with different streams: dm-linear and md raid1 over members
 * with 8 and 4 show 4, and dm-linear over members with 8 and 0 shows 0,
 * the fewest of any member, since a write may go to either.
 */
TEST(fewest_streams)
{
	static const int streams[][2] = { { STREAMS, 4 }, { STREAMS, 0 } };
	char dir[2][128], dev[2][64], name[32];
	int t, i;

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	setenv("DM_DISABLE_UDEV", "1", 1);
	for (t = 0; t < 2; t++) {
		for (i = 0; i < 2; i++) {
			snprintf(name, sizeof(name), "fewest%d", i);
			ASSERT_EQ(0, nullb_create(name, MEMBER_MIB,
						  streams[t][i], 0, dir[i],
						  sizeof(dir[i]), dev[i],
						  sizeof(dev[i])));
		}
		ASSERT_EQ(0, sh(_metadata, dev, 2, "%s && %s && %s",
				"s=$(blockdev --getsz $1)",
				LINEAR_TABLE,
				"dmsetup create stack_test " TABLE));
		EXPECT_EQ(streams[t][1], node_max_write_streams(DM));
		ASSERT_EQ(0, sh(_metadata, NULL, 0,
				"dmsetup remove stack_test"));
		if (!t) {
			ASSERT_EQ(0, sh(_metadata, dev, 2, "%s", MD_RAID1));
			EXPECT_EQ(streams[t][1], node_max_write_streams(MD));
			ASSERT_EQ(0, sh(_metadata, NULL, 0, "mdadm --stop " MD));
		}
		for (i = 0; i < 2; i++)
			ASSERT_EQ(0, nullb_remove(dir[i]));
	}
}

TEST_HARNESS_MAIN
