// SPDX-License-Identifier: GPL-2.0
/*
 * The file systems through the NVMe target, with Streams or FDP (fixture
 * fs, over the loop transport, the host using the streams): files with
 * their own IDs written at once land, all of each file's data, in their
 * streams at the target; on the wire the host's write commands carry
 * those streams for exactly as many blocks, and nothing of a file goes
 * to another stream.
 */
#define _GNU_SOURCE
#include "nvmet.h"
#include "nvme_host.h"
#include "fs.h"

#define FS_FILES	3
#define FS_MIB		4

FIXTURE(fs) {
	struct host h;
	struct fs_dirty dirty;
	char mnt[64];
};

FIXTURE_VARIANT(fs) {
	const struct fs_type *fs;
	enum fs_flush flush;
	bool fdp;	/* FDP placement handles, not Streams */
};

FIXTURE_VARIANT_ADD(fs, ext4_fsync) { &fs_ext4, FLUSH_FSYNC };
FIXTURE_VARIANT_ADD(fs, ext4_sync) { &fs_ext4, FLUSH_SYNC };
FIXTURE_VARIANT_ADD(fs, ext4_background) { &fs_ext4, FLUSH_BACKGROUND };
FIXTURE_VARIANT_ADD(fs, ext4_direct) { &fs_ext4, FLUSH_DIRECT };
FIXTURE_VARIANT_ADD(fs, xfs_fsync) { &fs_xfs, FLUSH_FSYNC };
FIXTURE_VARIANT_ADD(fs, xfs_sync) { &fs_xfs, FLUSH_SYNC };
FIXTURE_VARIANT_ADD(fs, xfs_background) { &fs_xfs, FLUSH_BACKGROUND };
FIXTURE_VARIANT_ADD(fs, xfs_direct) { &fs_xfs, FLUSH_DIRECT };
FIXTURE_VARIANT_ADD(fs, btrfs_fsync) { &fs_btrfs, FLUSH_FSYNC };
FIXTURE_VARIANT_ADD(fs, btrfs_sync) { &fs_btrfs, FLUSH_SYNC };
FIXTURE_VARIANT_ADD(fs, btrfs_background) { &fs_btrfs, FLUSH_BACKGROUND };
FIXTURE_VARIANT_ADD(fs, btrfs_direct) { &fs_btrfs, FLUSH_DIRECT };
FIXTURE_VARIANT_ADD(fs, ext4_fdp_fsync) { &fs_ext4, FLUSH_FSYNC, true };
FIXTURE_VARIANT_ADD(fs, ext4_fdp_direct) { &fs_ext4, FLUSH_DIRECT, true };
FIXTURE_VARIANT_ADD(fs, xfs_fdp_fsync) { &fs_xfs, FLUSH_FSYNC, true };
FIXTURE_VARIANT_ADD(fs, xfs_fdp_direct) { &fs_xfs, FLUSH_DIRECT, true };
FIXTURE_VARIANT_ADD(fs, btrfs_fdp_fsync) { &fs_btrfs, FLUSH_FSYNC, true };
FIXTURE_VARIANT_ADD(fs, btrfs_fdp_direct) { &fs_btrfs, FLUSH_DIRECT, true };

FIXTURE_SETUP(fs)
{
	char out[4096];

	if (variant->fdp)
		nvmet_up_ns(_metadata, &self->h, "loop", 0, FDP_HANDLES, true,
			    512);
	else
		nvmet_up(_metadata, &self->h, "loop", HOST_MSL, true, 512);
	close(self->h.fd);
	self->h.fd = -1;
	ASSERT_EQ(variant->fdp ? FDP_HANDLES : HOST_STREAMS,
		  max_write_streams(self->h.dev));
	ASSERT_EQ(0, run_cmd(out, sizeof(out), variant->fs->mkfs, self->h.dev))
		TH_LOG("%s", out);
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/nvmet_fs.%d", getpid());
	ASSERT_EQ(0, mkdir(self->mnt, 0755));
	ASSERT_EQ(0, fs_mount(variant->fs, self->h.dev, self->mnt, NULL));
	ASSERT_EQ(0, fs_dirty_save(&self->dirty));
	sync();
	ASSERT_EQ(0, write_attr(self->h.ns, "stream_stats", "0"));
	ASSERT_EQ(0, write_attr(TRACING, "buffer_size_kb", "4096"));
	ASSERT_EQ(0, trace_clear());
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "1"));
}

FIXTURE_TEARDOWN(fs)
{
	write_attr(SETUP_CMD, "enable", "0");
	EXPECT_EQ(0, fs_dirty_restore(&self->dirty));
	if (self->mnt[0]) {
		umount(self->mnt);
		rmdir(self->mnt);
	}
	nvmet_cleanup();
}

/*
 * The blocks written per stream on the wire, in @blocks: by DSPEC with
 * Streams, or with @fdp by placement identifier, of handle stream - 1;
 * -1 if a write carries the other directive.
 */
static int wire_blocks(unsigned long long *blocks, bool fdp)
{
	struct wire w;
	int ret = wire_writes(&w), s;

	blocks[0] = w.blocks[0][0];
	for (s = 1; s < MAX_IDS; s++)
		blocks[s] = fdp ? w.blocks[2][s - 1] : w.blocks[1][s];
	for (s = 0; s < MAX_IDS; s++)
		if (w.writes[fdp ? 1 : 2][s])
			ret = -1;
	return ret;
}

TEST_F(fs, files_in_streams)
{
	static const int ids[FS_FILES] = { 2, 3, 4 };
	unsigned long long wire[MAX_IDS] = { 0 };
	const unsigned long long sectors = FS_MIB * 2048ULL;
	struct stats st;
	char out[4096];
	int i;

	ASSERT_EQ(0, fs_write_files(self->mnt, ids, FS_FILES, FS_MIB,
				    variant->flush));
	ASSERT_EQ(0, write_attr(SETUP_CMD, "enable", "0"));
	ASSERT_EQ(0, read_stats(self->h.ns, &st));
	ASSERT_EQ(0, wire_blocks(wire, variant->fdp));
	for (i = 0; i < FS_FILES; i++) {
		TH_LOG("%s stream %d: target %llu, wire %llu of %llu sectors (%.1f %%)",
		       variant->fs->name, ids[i], st.sectors[ids[i]],
		       wire[ids[i]], sectors,
		       100.0 * st.sectors[ids[i]] / sectors);
		EXPECT_EQ(sectors, st.sectors[ids[i]]);
		EXPECT_EQ(sectors, wire[ids[i]]);
	}
	TH_LOG("%s stream 0 (metadata, journal): target %llu, wire %llu",
	       variant->fs->name, st.sectors[0], wire[0]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, 3, 4, -1 }));
	for (i = 5; i < MAX_IDS; i++)
		EXPECT_EQ(0, wire[i]) TH_LOG("stream %d on the wire", i);

	ASSERT_EQ(0, umount(self->mnt));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), variant->fs->fsck, self->h.dev))
		TH_LOG("%s", out);
	ASSERT_EQ(0, fs_mount(variant->fs, self->h.dev, self->mnt, NULL));
	EXPECT_EQ(0, fs_check_files(self->mnt, ids, FS_FILES, FS_MIB));
}

TEST_HARNESS_MAIN
