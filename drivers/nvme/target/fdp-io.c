// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe over Fabrics target: the I/O of Flexible Data Placement.
 *
 * The writes to a namespace with placement handles (see fdp.c), and I/O
 * Management Receive and Send.  A write with the Data Placement
 * directive is counted in "stream_stats" under its handle plus one and
 * passed on to the backing block device as that stream.
 *
 * The specification leaves some things to the controller; here:
 * - a write with an invalid placement identifier is not failed: it goes
 *   to placement handle 0, and the Invalid Placement Identifier event is
 *   logged if handle 0 has it enabled;
 * - a write with the Data Placement directive while FDP is disabled is
 *   failed with Invalid Field in Command, as a write with any directive
 *   that is not enabled.
 *
 * Writes are the hot path: a write with a valid placement identifier, or
 * none, takes no lock and writes no memory other CPUs write; it is
 * counted in per-CPU counters only.  How much of its current reclaim unit
 * a handle has written follows from those: the sectors written to it
 * since it last moved to a new unit by an update, modulo the unit's
 * size, worked out only when a host asks (Reclaim Unit Handle Status and
 * Update).  A write with an invalid placement identifier, which may log
 * an event, takes the lock.
 *
 * Locking: see fdp.c.
 */
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/unaligned.h>
#include "fdp.h"

/* Log a host event; the FDP lock held. */
static void nvmet_fdp_event(struct nvmet_ns *ns, u8 type, u16 pid,
			    bool located)
{
	struct nvmet_ns_fdp *fdp = ns->fdp;
	struct nvme_fdp_event *ev;

	lockdep_assert_held(&fdp->lock);
	if (fdp->nr_events == NVME_FDP_EVENTS_MAX) {
		/* Full: the oldest goes. */
		fdp->first_event = (fdp->first_event + 1) % NVME_FDP_EVENTS_MAX;
		fdp->nr_events--;
	}
	ev = &fdp->events[(fdp->first_event + fdp->nr_events++) %
			  NVME_FDP_EVENTS_MAX];
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->flags = NVME_FDP_EVENT_F_PIV | NVME_FDP_EVENT_F_NSIDV;
	ev->pid = cpu_to_le16(pid);
	/* The Timestamp feature's format: milliseconds in bits 47:0. */
	put_unaligned_le64(div_u64(ktime_get_real_ns(), NSEC_PER_MSEC),
			   ev->timestamp);
	ev->nsid = cpu_to_le32(ns->nsid);
	if (located) {
		ev->flags |= NVME_FDP_EVENT_F_LV;
		ev->ruhid = pid;
	}
}

/* Whether @handle has event @type enabled; the FDP lock held. */
static bool nvmet_fdp_event_enabled(struct nvmet_ns_fdp *fdp,
				    unsigned int handle, u8 type)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nvmet_fdp_event_types); i++)
		if (nvmet_fdp_event_types[i] == type)
			return fdp->handles[handle].events & (1 << i);
	return false;
}

/*
 * A write with placement identifier @pid that is not valid: it goes to
 * handle 0, and logs an event where handle 0 has that enabled.
 */
static void nvmet_fdp_invalid_pid(struct nvmet_ns *ns, u16 pid)
{
	struct nvmet_ns_fdp *fdp = ns->fdp;
	unsigned long flags;

	spin_lock_irqsave(&fdp->lock, flags);
	if (nvmet_fdp_event_enabled(fdp, 0, NVME_FDP_EVENT_PID))
		nvmet_fdp_event(ns, NVME_FDP_EVENT_PID, pid, false);
	spin_unlock_irqrestore(&fdp->lock, flags);
}

/*
 * The placement handle of a write with the Data Placement directive: its
 * placement identifier, or 0 where that is not valid.
 */
static inline unsigned int nvmet_fdp_handle(struct nvmet_ns *ns, u16 pid)
{
	return pid < ns->fdp->nr_handles ? pid : 0;
}

/*
 * The stream of the backing device that a write with placement
 * identifier @pid goes to: its handle plus one, at most 255.
 */
u8 nvmet_fdp_stream(struct nvmet_ns *ns, u16 pid)
{
	return nvmet_fdp_handle(ns, pid) + 1;
}

/* A write of @len bytes with placement identifier @pid. */
static void nvmet_fdp_write(struct nvmet_ns *ns, u16 pid, u32 len)
{
	struct nvmet_fdp_cpu __percpu *cpu = ns->fdp->cpu;
	unsigned int handle = nvmet_fdp_handle(ns, pid);

	if (unlikely(pid != handle))
		nvmet_fdp_invalid_pid(ns, pid);
	/*
	 * Under the stream of its handle; that counts the writes of the
	 * handle's reclaim units too (see nvmet_fdp_ru_written()).
	 */
	this_cpu_inc(cpu->stats[handle + 1].requests);
	this_cpu_add(cpu->stats[handle + 1].sectors, len >> SECTOR_SHIFT);
}

/* The host wrote, with or without a directive. */
void nvmet_fdp_host_write(struct nvmet_req *req)
{
	struct nvmet_ns_fdp *fdp = req->ns->fdp;

	this_cpu_add(fdp->cpu->host_bytes, nvmet_rw_data_len(req));
	this_cpu_inc(fdp->cpu->host_writes);
}

/*
 * A write to a namespace with placement handles, with the Data Placement
 * directive or none: with the directive it needs FDP enabled, and goes to
 * its placement handle.  Counted under its stream, 0 for none.
 */
u16 nvmet_fdp_parse_write(struct nvmet_req *req)
{
	struct nvme_rw_command *rw = &req->cmd->rw;
	struct nvmet_ns *ns = req->ns;
	struct nvmet_ns_fdp *fdp = ns->fdp;
	u32 len = nvmet_rw_data_len(req);

	if (nvmet_rw_dtype(rw) == NVME_DIR_FDP) {
		if (!READ_ONCE(ns->fdp_enabled))
			return nvmet_invalid_field(req,
				offsetof(struct nvme_rw_command, control));
		nvmet_fdp_write(ns, nvmet_rw_dspec(rw), len);
	} else {
		this_cpu_inc(fdp->cpu->stats[0].requests);
		this_cpu_add(fdp->cpu->stats[0].sectors, len >> SECTOR_SHIFT);
	}
	nvmet_fdp_host_write(req);
	return NVME_SC_SUCCESS;
}

/*
 * What @handle has written of its current reclaim unit, in bytes, with
 * @sectors written to it in all: a unit written full is left for a new
 * one.  The FDP lock held.
 */
static u64 nvmet_fdp_ru_written(struct nvmet_ns_fdp *fdp,
				unsigned int handle, u64 sectors)
{
	u64 rem;

	lockdep_assert_held(&fdp->lock);
	/* The only division: not per write, per question of a host. */
	div64_u64_rem(sectors - fdp->handles[handle].ru_start,
		      fdp->ru_size >> SECTOR_SHIFT, &rem);
	return rem << SECTOR_SHIFT;
}

/* The sectors written to @handle, since enabled. */
static u64 nvmet_fdp_handle_sectors(struct nvmet_ns_fdp *fdp,
				    unsigned int handle)
{
	struct nvmet_stream_stats sum;

	nvmet_stream_stats_sum(&fdp->cpu->stats[handle + 1], &sum);
	return sum.sectors;
}

/*
 * Add the writes counted under stream @id since the last reset to @sum;
 * subsystem lock held, so that the namespace stays as it is.
 */
void nvmet_fdp_stream_stats(struct nvmet_ns *ns, unsigned int id,
			    struct nvmet_stream_stats *sum)
{
	struct nvmet_stream_stats st;

	lockdep_assert_held(&ns->subsys->lock);
	if (!ns->fdp || id > ns->fdp->nr_handles)
		return;
	nvmet_stream_stats_sum(&ns->fdp->cpu->stats[id], &st);
	sum->requests += st.requests - ns->fdp->zero[id].requests;
	sum->sectors += st.sectors - ns->fdp->zero[id].sectors;
}

/* Reset: what the counters are now is what is zero from now on. */
void nvmet_fdp_stream_stats_reset(struct nvmet_ns *ns)
{
	unsigned int id;

	lockdep_assert_held(&ns->subsys->lock);
	for (id = 0; ns->fdp && id <= ns->fdp->nr_handles; id++)
		nvmet_stream_stats_sum(&ns->fdp->cpu->stats[id],
				       &ns->fdp->zero[id]);
}

/* --- I/O Management Receive and Send. */

#define MGMT_LOC(field)	offsetof(struct nvme_common_command, field)

/* Reclaim Unit Handle Status: every placement handle, in order. */
static u16 nvmet_fdp_ruh_status(struct nvmet_req *req)
{
	struct nvmet_ns *ns = req->ns;
	struct nvmet_ns_fdp *fdp = ns->fdp;
	struct nvme_fdp_ruh_status *st;
	struct nvme_fdp_ruh_status_desc *d;
	unsigned long flags;
	unsigned int i;
	u64 written;
	size_t size;
	u16 status;

	size = struct_size(st, ruhsd, ns->fdp->nr_handles);
	st = kzalloc(size, GFP_KERNEL);
	if (!st)
		return NVME_SC_INTERNAL;
	st->nruhsd = cpu_to_le16(ns->fdp->nr_handles);
	spin_lock_irqsave(&fdp->lock, flags);
	for (i = 0; i < ns->fdp->nr_handles; i++) {
		d = &st->ruhsd[i];
		d->pid = cpu_to_le16(i);
		d->ruhid = cpu_to_le16(i);
		/* Available media writes, in logical blocks. */
		written = nvmet_fdp_ru_written(fdp, i,
					       nvmet_fdp_handle_sectors(fdp, i));
		d->ruamw = cpu_to_le64((fdp->ru_size - written) >>
				       ns->blksize_shift);
	}
	spin_unlock_irqrestore(&fdp->lock, flags);
	/* A smaller buffer gets what fits of it. */
	status = nvmet_copy_reply(req, st, size);
	kfree(st);
	return status;
}

static void nvmet_execute_io_mgmt_recv(struct nvmet_req *req)
{
	u32 cdw10 = le32_to_cpu(req->cmd->common.cdw10);
	u32 numd = le32_to_cpu(req->cmd->common.cdw11);
	u16 status;

	if (!nvmet_check_transfer_len(req, ((size_t)numd + 1) * 4))
		return;
	if (!(cdw10 & 0xff))	/* no operation */
		status = nvmet_zero_sgl(req, 0, req->transfer_len);
	else if ((cdw10 & 0xff) != NVME_IO_MGMT_RECV_MO_RUHS)
		status = nvmet_invalid_field(req, MGMT_LOC(cdw10));
	else if (!READ_ONCE(req->ns->fdp_enabled))
		status = NVME_SC_FDP_DISABLED | NVME_STATUS_DNR;
	else
		status = nvmet_fdp_ruh_status(req);
	nvmet_req_complete(req, status);
}

/*
 * Reclaim Unit Handle Update: each placement identifier listed (MOS + 1
 * of them) moves to a new reclaim unit.  All are checked first: one that
 * is not valid fails the command and changes nothing.
 */
static u16 nvmet_fdp_ruh_update(struct nvmet_req *req, unsigned int n)
{
	struct nvmet_ns *ns = req->ns;
	struct nvmet_ns_fdp *fdp = ns->fdp;
	unsigned long flags;
	unsigned int i, pid;
	__le16 *pids;
	u64 sectors;
	u16 status;

	pids = kmalloc_array(n, sizeof(*pids), GFP_KERNEL);
	if (!pids)
		return NVME_SC_INTERNAL;
	status = nvmet_copy_from_sgl(req, 0, pids, n * sizeof(*pids));
	if (status)
		goto out;
	for (i = 0; i < n; i++) {
		if (le16_to_cpu(pids[i]) >= ns->fdp->nr_handles) {
			status = nvmet_invalid_field(req, MGMT_LOC(dptr));
			goto out;
		}
	}
	spin_lock_irqsave(&fdp->lock, flags);
	for (i = 0; i < n; i++) {
		pid = le16_to_cpu(pids[i]);
		sectors = nvmet_fdp_handle_sectors(fdp, pid);
		if (nvmet_fdp_ru_written(fdp, pid, sectors) &&
		    nvmet_fdp_event_enabled(fdp, pid, NVME_FDP_EVENT_RUNFW))
			nvmet_fdp_event(ns, NVME_FDP_EVENT_RUNFW, pid, true);
		fdp->handles[pid].ru_start = sectors;
	}
	spin_unlock_irqrestore(&fdp->lock, flags);
out:
	kfree(pids);
	return status;
}

static void nvmet_execute_io_mgmt_send(struct nvmet_req *req)
{
	u32 cdw10 = le32_to_cpu(req->cmd->common.cdw10);
	unsigned int n = (cdw10 >> 16) + 1;
	u16 status;

	if (!(cdw10 & 0xff)) {		/* no operation, and no data */
		if (nvmet_check_transfer_len(req, 0))
			nvmet_req_complete(req, 0);
		return;
	}
	if ((cdw10 & 0xff) != NVME_IO_MGMT_SEND_MO_RUHU) {
		nvmet_req_complete(req,
				   nvmet_invalid_field(req, MGMT_LOC(cdw10)));
		return;
	}
	if (!nvmet_check_transfer_len(req, n * sizeof(__le16)))
		return;
	if (!READ_ONCE(req->ns->fdp_enabled))
		status = NVME_SC_FDP_DISABLED | NVME_STATUS_DNR;
	else if (n > req->ns->fdp->nr_handles)
		status = nvmet_invalid_field(req, MGMT_LOC(cdw10));
	else
		status = nvmet_fdp_ruh_update(req, n);
	nvmet_req_complete(req, status);
}

/*
 * I/O Management Receive or Send, to a namespace with placement handles
 * that its controller offers.
 */
u16 nvmet_fdp_parse_io_mgmt(struct nvmet_req *req)
{
	BUILD_BUG_ON(sizeof(struct nvme_fdp_ruh_status) != 16);
	BUILD_BUG_ON(sizeof(struct nvme_fdp_ruh_status_desc) != 32);

	if (req->cmd->common.opcode == nvme_cmd_io_mgmt_recv)
		req->execute = nvmet_execute_io_mgmt_recv;
	else
		req->execute = nvmet_execute_io_mgmt_send;
	return NVME_SC_SUCCESS;
}
