// SPDX-License-Identifier: GPL-2.0
/*
 * io.stream: the write stream of the data a cgroup writes.
 *
 * A program places its writes with a write stream ID (POSIX_FADV_STREAMID,
 * io_uring's write_stream).  The administrator of a machine that several
 * tenants share knows where each tenant's data should go without changing
 * their programs: io.stream gives the data written on behalf of a cgroup a
 * stream when nothing more specific chose one (see
 * Documentation/admin-guide/cgroup-v2.rst).
 *
 * The data paths ask for it as they build their bios (blkcg_data_stream()):
 * the cgroup of a direct write is its submitter's, that of writeback the
 * owner of the inode's writeback (cgroup writeback).  File system metadata
 * and journals are written by other paths and never take it.
 */

#include <linux/blkdev.h>
#include <linux/blk-cgroup.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include "blk-cgroup.h"

static struct blkcg_policy stream_policy;

/* Set once a cgroup has had an io.stream: until then no bio pays for it. */
DEFINE_STATIC_KEY_FALSE(blkcg_stream_used);
EXPORT_SYMBOL_GPL(blkcg_stream_used);

/**
 * struct stream_blkcg - the io.stream of one cgroup
 * @cpd: blkcg_policy_data structure.
 * @stream: the stream, 1 to 255; 0 for the parent's.
 */
struct stream_blkcg {
	struct blkcg_policy_data cpd;
	u8 stream;
};

/* Every blkcg has the policy's data once the policy is registered. */
static struct stream_blkcg *css_to_stream(struct cgroup_subsys_state *css)
{
	return container_of(blkcg_to_cpd(css_to_blkcg(css), &stream_policy),
			    struct stream_blkcg, cpd);
}

static int stream_show(struct seq_file *sf, void *v)
{
	seq_printf(sf, "%u\n", css_to_stream(seq_css(sf))->stream);
	return 0;
}

static ssize_t stream_write(struct kernfs_open_file *of, char *buf,
			    size_t nbytes, loff_t off)
{
	u8 stream;

	if (kstrtou8(strstrip(buf), 10, &stream))
		return -EINVAL;
	if (stream)
		static_branch_enable(&blkcg_stream_used);
	WRITE_ONCE(css_to_stream(of_css(of))->stream, stream);
	return nbytes;
}

static struct blkcg_policy_data *stream_alloc_cpd(gfp_t gfp)
{
	struct stream_blkcg *s = kzalloc(sizeof(*s), gfp);

	return s ? &s->cpd : NULL;
}

static void stream_free_cpd(struct blkcg_policy_data *cpd)
{
	kfree(container_of(cpd, struct stream_blkcg, cpd));
}

static struct cftype stream_files[] = {
	{
		.name		= "stream",
		.flags		= CFTYPE_NOT_ON_ROOT,
		.seq_show	= stream_show,
		.write		= stream_write,
	},
	{ } /* sentinel */
};

static struct blkcg_policy stream_policy = {
	.dfl_cftypes	= stream_files,
	.cpd_alloc_fn	= stream_alloc_cpd,
	.cpd_free_fn	= stream_free_cpd,
};

/*
 * Only the data of regular files and of block devices that no file system,
 * stacked device or exclusive opener holds: a held device's page cache
 * holds the metadata of its holder.
 */
static bool inode_is_data(struct inode *inode)
{
	struct block_device *bdev;

	if (!inode || S_ISREG(inode->i_mode))
		return true;
	/* The block device's own inode, not a device node's. */
	if (!sb_is_blkdev_sb(inode->i_sb))
		return false;
	bdev = I_BDEV(inode);
	return !READ_ONCE(bdev->bd_holder) &&
	       !READ_ONCE(bdev_whole(bdev)->bd_holder);
}

/**
 * __blkcg_data_stream - the write stream of a cgroup's data
 * @css: the blkcg css the data is written for; NULL for none
 * @inode: the inode whose page cache is written back, or NULL for direct I/O
 *
 * Use blkcg_data_stream() or bio_data_stream(), which cost nothing until a
 * cgroup sets io.stream.
 *
 * Return: the io.stream of @css or of its nearest ancestor that has one; 0
 * if none has, or if @inode is neither a regular file nor a block device
 * that no one holds.
 */
u8 __blkcg_data_stream(struct cgroup_subsys_state *css, struct inode *inode)
{
	u8 stream;

	if (!inode_is_data(inode))
		return 0;
	/* A cgroup pins its parents, and the caller pins @css. */
	for (; css; css = css->parent) {
		stream = READ_ONCE(css_to_stream(css)->stream);
		if (stream)
			return stream;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(__blkcg_data_stream);

static int __init stream_init(void)
{
	return blkcg_policy_register(&stream_policy);
}
module_init(stream_init);
