// SPDX-License-Identifier: GPL-2.0
/*
 * Write streams for null_blk: the device says it keeps "streams" write
 * streams apart and counts, for each stream ID it receives, the write
 * requests and sectors, so that tests can see which stream every write
 * reached the device with.
 */
#include "null_blk.h"

struct nullb_stream_stats {
	atomic64_t requests;
	atomic64_t sectors;
};

/* Check the configuration and set the queue limit; counters on first use. */
int null_init_streams(struct nullb_device *dev, struct queue_limits *lim)
{
	if (dev->streams > BLK_MAX_STREAMS) {
		pr_err("streams must be 0 to %u\n", BLK_MAX_STREAMS);
		return -EINVAL;
	}
	if (dev->stream_granularity % dev->blocksize) {
		pr_err("stream_granularity must be a multiple of blocksize\n");
		return -EINVAL;
	}
	lim->max_write_streams = dev->streams;
	lim->write_stream_granularity = dev->stream_granularity;
	if (!dev->streams || dev->stream_stats)
		return 0;
	dev->stream_stats = kcalloc(BLK_MAX_STREAMS + 1,
				    sizeof(*dev->stream_stats), GFP_KERNEL);
	return dev->stream_stats ? 0 : -ENOMEM;
}

void null_free_streams(struct nullb_device *dev)
{
	kfree(dev->stream_stats);
	dev->stream_stats = NULL;
}

void null_count_stream_write(struct nullb_device *dev, struct request *rq)
{
	struct nullb_stream_stats *stats;

	stats = &dev->stream_stats[rq->bio->bi_write_stream];
	atomic64_inc(&stats->requests);
	atomic64_add(blk_rq_sectors(rq), &stats->sectors);
}

/*
 * "<id> <write requests> <sectors>\n" for each stream ID, 0 included, that
 * received writes, into @buf of @size bytes, whole lines only; with @buf
 * NULL, the length that takes.
 */
ssize_t null_stream_stats_read(struct nullb_device *dev, char *buf,
			       size_t size)
{
	char line[48];	/* "255 <u64> <u64>\n" */
	size_t len = 0;
	unsigned int id;
	int n;

	if (!dev->stream_stats)
		return 0;
	for (id = 0; id <= BLK_MAX_STREAMS; id++) {
		struct nullb_stream_stats *stats = &dev->stream_stats[id];
		u64 requests = atomic64_read(&stats->requests);
		u64 sectors = atomic64_read(&stats->sectors);

		if (!requests)
			continue;
		n = snprintf(line, sizeof(line), "%u %llu %llu\n", id, requests,
			     sectors);
		/* Writes that arrived since the length was taken wait. */
		if (buf && len + n > size)
			break;
		if (buf)
			memcpy(buf + len, line, n);
		len += n;
	}
	return len;
}

void null_stream_stats_reset(struct nullb_device *dev)
{
	unsigned int id;

	if (!dev->stream_stats)
		return;
	for (id = 0; id <= BLK_MAX_STREAMS; id++) {
		atomic64_set(&dev->stream_stats[id].requests, 0);
		atomic64_set(&dev->stream_stats[id].sectors, 0);
	}
}
