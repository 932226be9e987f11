// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe over Fabrics target: writes to a namespace with streams.
 *
 * A write with the Streams directive names a stream of the namespace,
 * with Streams enabled by its host, and opens it, releasing another
 * first where a bound would be passed (see streams.c).  Every write is
 * counted under its stream, 0 for none, for "stream_stats".
 *
 * Writes are the hot path, and a write to a stream its host has open
 * takes no lock and writes no memory that other CPUs write: its
 * controller finds the host's state with one lookup by NSID, under RCU,
 * tests the stream's bit, and counts the write in per-CPU counters.  Only
 * a write that opens its stream takes the namespace's spinlock.
 */
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include "streams.h"

/*
 * A write opens stream @id of host @h, releasing one first where its
 * allocation or the pool would be passed (see the top of streams.c).
 */
static void nvmet_streams_open(struct nvmet_ns *ns,
			       struct nvmet_streams_host *h, unsigned int id)
{
	struct nvmet_ns_streams *sd = ns->streams_state;
	struct nvmet_streams_host *victim = NULL;
	unsigned long flags;
	unsigned int pool;

	spin_lock_irqsave(&sd->lock, flags);
	/* Enabled checked again: the host's state may have just ended. */
	if (!h->enabled || test_bit(id, h->open))
		goto out;
	if (h->allocated) {
		if (h->nr_open >= h->allocated)
			victim = h;
	} else {
		pool = sd->nr - sd->allocated;
		if (!pool)
			goto out;
		if (sd->pool_open >= pool)
			victim = h->nr_open ? h : nvmet_streams_pool_victim(sd);
	}
	if (victim)
		nvmet_streams_close(sd, victim,
				    find_first_bit(victim->open,
						   NVMET_MAX_STREAMS + 1));
	__set_bit(id, h->open);
	h->nr_open++;
	sd->nr_open++;
	if (!h->allocated)
		sd->pool_open++;
out:
	spin_unlock_irqrestore(&sd->lock, flags);
}

/*
 * A write to a namespace with streams, with the Streams directive or
 * none: with the directive it must name a stream the namespace has, with
 * Streams enabled by its host; the stream is then open.  Every write is
 * counted under its stream, 0 for none.
 */
u16 nvmet_streams_parse_write(struct nvmet_req *req)
{
	struct nvme_rw_command *rw = &req->cmd->rw;
	struct nvmet_ns *ns = req->ns;
	struct nvmet_ns_streams *sd = ns->streams_state;
	struct nvmet_streams_host *h;
	u16 dspec = 0;

	if (nvmet_rw_dtype(rw) == NVME_DIR_STREAMS) {
		/* DSPEC: CDW13 bits 31:16, byte 54 of the command. */
		dspec = nvmet_rw_dspec(rw);
		/* The host's state may end meanwhile on another controller. */
		rcu_read_lock();
		h = nvmet_streams_find_host(req->sq->ctrl, ns);
		if (!h || !READ_ONCE(h->enabled)) {
			rcu_read_unlock();
			return nvmet_invalid_field(req,
				offsetof(struct nvme_rw_command, control));
		}
		if (dspec > sd->nr) {
			rcu_read_unlock();
			return nvmet_invalid_field(req,
				offsetof(struct nvme_rw_command, dsmgmt) + 2);
		}
		if (dspec && !test_bit(dspec, h->open))
			nvmet_streams_open(ns, h, dspec);
		rcu_read_unlock();
	}
	this_cpu_inc(sd->stats[dspec].requests);
	this_cpu_add(sd->stats[dspec].sectors,
		     nvmet_rw_data_len(req) >> SECTOR_SHIFT);
	return NVME_SC_SUCCESS;
}

/*
 * Add the writes counted under stream @id since the last reset to @sum;
 * subsystem lock held, so that the namespace stays as it is.
 */
void nvmet_streams_stream_stats(struct nvmet_ns *ns, unsigned int id,
				struct nvmet_stream_stats *sum)
{
	struct nvmet_ns_streams *sd = ns->streams_state;
	struct nvmet_stream_stats st;

	lockdep_assert_held(&ns->subsys->lock);
	if (!sd || id > sd->nr)
		return;
	nvmet_stream_stats_sum(sd->stats + id, &st);
	sum->requests += st.requests - sd->zero[id].requests;
	sum->sectors += st.sectors - sd->zero[id].sectors;
}

/* Reset: what the counters are now is what is zero from now on. */
void nvmet_streams_stream_stats_reset(struct nvmet_ns *ns)
{
	struct nvmet_ns_streams *sd = ns->streams_state;
	unsigned int id;

	lockdep_assert_held(&ns->subsys->lock);
	for (id = 0; sd && id <= sd->nr; id++)
		nvmet_stream_stats_sum(sd->stats + id, &sd->zero[id]);
}
