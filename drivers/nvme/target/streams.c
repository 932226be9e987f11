// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe over Fabrics target: the Streams directive.
 *
 * A namespace whose "streams" attribute is not 0 offers that many streams
 * (MSL) through the Identify and Streams directives, counts the writes it
 * receives per stream in "stream_stats" and passes the stream of each
 * write on to its backing block device.
 *
 * The NVMe base specification keeps the Streams state of a namespace per
 * host: whether Streams is enabled, the streams allocated to it and those
 * open.  Here that is one struct nvmet_streams_host per host identifier
 * on the namespace's list, shared by every controller of that host, over
 * several ports or across a reconnect.  It ends, as the Identify
 * directive says it does not persist across a reset, when the last
 * controller of its host is reset or shut down (CC.EN cleared, CC.SHN
 * set) or goes away; the namespace being disabled ends all of it.
 *
 * MSL is also the number of streams of the namespace, over all hosts:
 * what the hosts' allocations (NSA) do not take is the shared pool
 * (NSSA).  A host with an allocation has at most that many streams open,
 * the hosts without one have at most NSSA open together.  A write to a
 * stream that is not open opens it; where that would pass the bound, a
 * stream is first released implicitly: the lowest its host has open,
 * else, in the pool, the lowest another host without an allocation has
 * open, never one of an allocation.  With no stream in the pool the write
 * is done without opening its stream.  A change of a host's allocation
 * releases its open streams.  No write is refused for lack of stream
 * resources.
 *
 * Locking: the subsystem lock guards the list of hosts; the namespace's
 * spinlock guards the open streams, which writes change, and with the
 * subsystem lock whether Streams is enabled and the allocations.  Entries
 * are only added to the list (with RCU, so that writes can walk it) until
 * the namespace is disabled, when no command uses it any more and all of
 * it is freed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#include <linux/bitmap.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include "nvmet.h"

/* What one host holds of the streams of one namespace. */
struct nvmet_streams_host {
	struct list_head	entry;		/* in nvmet_ns_streams.hosts */
	uuid_t			hostid;
	bool			enabled;
	u16			allocated;	/* NSA */
	u16			nr_open;	/* NSO */
	DECLARE_BITMAP(open, NVMET_MAX_STREAMS + 1);
};

struct nvmet_stream_stats {
	atomic64_t	requests;
	atomic64_t	sectors;
};

/* The Streams state of an enabled namespace with streams. */
struct nvmet_ns_streams {
	struct list_head	hosts;
	spinlock_t		lock;		/* the hosts' open streams */
	u16			allocated;	/* all hosts' NSA */
	u16			nr_open;	/* NSSO */
	u16			pool_open;	/* of hosts without NSA */
	u16			nr;		/* streams, fixed while enabled */
	struct nvmet_stream_stats stats[];	/* by stream, 0 for none */
};

bool nvmet_subsys_has_streams(struct nvmet_subsys *subsys)
{
	struct nvmet_ns *ns;
	unsigned long idx;

	xa_for_each(&subsys->namespaces, idx, ns)
		if (ns->streams_state)
			return true;
	return false;
}

/*
 * A new controller, subsystem lock held: it offers Directives (OACS and
 * the Commands Supported and Effects log) if some namespace has streams
 * or placement handles now, and FDP (CTRATT) if some namespace has
 * placement handles, and keeps saying the same until it goes, whatever
 * namespaces come and go.
 */
void nvmet_streams_ctrl_init(struct nvmet_ctrl *ctrl)
{
	lockdep_assert_held(&ctrl->subsys->lock);
	ctrl->fdp = nvmet_subsys_has_fdp(ctrl->subsys);
	ctrl->directives = ctrl->fdp || nvmet_subsys_has_streams(ctrl->subsys);
}

int nvmet_streams_ns_enable(struct nvmet_ns *ns)
{
	struct nvmet_ns_streams *sd;

	if (!ns->streams)
		return 0;
	sd = kzalloc(struct_size(sd, stats, ns->streams + 1), GFP_KERNEL);
	if (!sd)
		return -ENOMEM;
	INIT_LIST_HEAD(&sd->hosts);
	spin_lock_init(&sd->lock);
	sd->nr = ns->streams;
	ns->streams_state = sd;
	return 0;
}

/*
 * The namespace is going, subsystem lock held: no command uses it any
 * more.  Every host's state goes with it.
 */
void nvmet_streams_ns_disable(struct nvmet_ns *ns)
{
	struct nvmet_ns_streams *sd = ns->streams_state;
	struct nvmet_streams_host *h, *next;

	lockdep_assert_held(&ns->subsys->lock);
	if (!sd)
		return;
	ns->streams_state = NULL;
	list_for_each_entry_safe(h, next, &sd->hosts, entry)
		kfree(h);
	kfree(sd);
}

/* The state of host @hostid in @sd, NULL if it has none. */
static struct nvmet_streams_host *
nvmet_streams_find_host(struct nvmet_ns_streams *sd, const uuid_t *hostid)
{
	struct nvmet_streams_host *h, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(h, &sd->hosts, entry) {
		if (uuid_equal(&h->hostid, hostid)) {
			found = h;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/* The state of @req's host in @ns, made on first use; subsystem lock held. */
static struct nvmet_streams_host *nvmet_streams_get_host(struct nvmet_req *req,
							 struct nvmet_ns *ns)
{
	struct nvmet_ns_streams *sd = ns->streams_state;
	const uuid_t *hostid = &req->sq->ctrl->hostid;
	struct nvmet_streams_host *h;

	lockdep_assert_held(&ns->subsys->lock);
	h = nvmet_streams_find_host(sd, hostid);
	if (h)
		return h;
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return NULL;
	uuid_copy(&h->hostid, hostid);
	list_add_tail_rcu(&h->entry, &sd->hosts);
	return h;
}

/* Release stream @id of host @h; namespace spinlock held. */
static void nvmet_streams_close(struct nvmet_ns_streams *sd,
				struct nvmet_streams_host *h, unsigned int id)
{
	lockdep_assert_held(&sd->lock);
	if (!__test_and_clear_bit(id, h->open))
		return;
	h->nr_open--;
	sd->nr_open--;
	if (!h->allocated)
		sd->pool_open--;
}

/* Release every stream host @h has open; namespace spinlock held. */
static void nvmet_streams_close_all(struct nvmet_ns_streams *sd,
				    struct nvmet_streams_host *h)
{
	unsigned int id;

	for_each_set_bit(id, h->open, NVMET_MAX_STREAMS + 1)
		nvmet_streams_close(sd, h, id);
}

/* Give host @h an allocation of @n streams; both locks held. */
static void nvmet_streams_set_allocated(struct nvmet_ns_streams *sd,
					struct nvmet_streams_host *h, u16 n)
{
	lockdep_assert_held(&sd->lock);
	nvmet_streams_close_all(sd, h);
	sd->allocated += n - h->allocated;
	h->allocated = n;
}

/* Host @h has Streams no more: nothing enabled, allocated or open. */
static void nvmet_streams_host_reset(struct nvmet_ns_streams *sd,
				     struct nvmet_streams_host *h)
{
	unsigned long flags;

	spin_lock_irqsave(&sd->lock, flags);
	WRITE_ONCE(h->enabled, false);
	nvmet_streams_set_allocated(sd, h, 0);
	spin_unlock_irqrestore(&sd->lock, flags);
}

/*
 * The Streams state of @ctrl's host ends, in every namespace, if no other
 * controller of the host is left to use it.  Subsystem lock held.
 */
static void nvmet_streams_host_end(struct nvmet_ctrl *ctrl)
{
	struct nvmet_subsys *subsys = ctrl->subsys;
	struct nvmet_streams_host *h;
	struct nvmet_ctrl *other;
	struct nvmet_ns *ns;
	unsigned long idx;

	lockdep_assert_held(&subsys->lock);
	/* Controllers that are reset or shut down themselves hold nothing. */
	list_for_each_entry(other, &subsys->ctrls, subsys_entry)
		if (other != ctrl && uuid_equal(&other->hostid, &ctrl->hostid) &&
		    (READ_ONCE(other->cc) & NVME_CC_ENABLE) &&
		    !(READ_ONCE(other->cc) & NVME_CC_SHN_MASK))
			return;
	xa_for_each(&subsys->namespaces, idx, ns) {
		if (!ns->streams_state)
			continue;
		h = nvmet_streams_find_host(ns->streams_state, &ctrl->hostid);
		if (h)
			nvmet_streams_host_reset(ns->streams_state, h);
	}
}

/*
 * A controller was reset or shut down (CC.EN cleared, CC.SHN set), or is
 * gone without either, off the subsystem's list.
 */
void nvmet_streams_ctrl_reset(struct nvmet_ctrl *ctrl)
{
	mutex_lock(&ctrl->subsys->lock);
	nvmet_streams_host_end(ctrl);
	mutex_unlock(&ctrl->subsys->lock);
}

/* A host without an allocation that has pool streams open. */
static struct nvmet_streams_host *
nvmet_streams_pool_victim(struct nvmet_ns_streams *sd)
{
	struct nvmet_streams_host *h, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(h, &sd->hosts, entry) {
		if (!h->allocated && h->nr_open) {
			found = h;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/*
 * A write opens stream @id of host @h, releasing one first where its
 * allocation or the pool would be passed (see the top of this file).
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

static u16 nvmet_streams_invalid(struct nvmet_req *req, size_t loc)
{
	req->error_loc = loc;
	return NVME_SC_INVALID_FIELD | NVME_STATUS_DNR;
}

/*
 * A command to a namespace with streams: a write with the Streams
 * directive must name a stream the namespace has, with Streams enabled
 * by its host; the stream is then open.  Every write is counted under its
 * stream, 0 for none.  Reads and other commands are left alone.
 */
u16 nvmet_streams_parse_io_cmd(struct nvmet_req *req)
{
	struct nvme_rw_command *rw = &req->cmd->rw;
	struct nvmet_ns *ns = req->ns;
	struct nvmet_ns_streams *sd = ns->streams_state;
	struct nvmet_streams_host *h;
	u16 dspec = 0;

	if (rw->opcode != nvme_cmd_write)
		return NVME_SC_SUCCESS;
	if (nvmet_rw_dtype(rw)) {
		if (nvmet_rw_dtype(rw) != NVME_DIR_STREAMS)
			return nvmet_streams_invalid(req,
				offsetof(struct nvme_rw_command, control));
		h = nvmet_streams_find_host(sd, &req->sq->ctrl->hostid);
		if (!h || !READ_ONCE(h->enabled))
			return nvmet_streams_invalid(req,
				offsetof(struct nvme_rw_command, control));
		/* DSPEC: CDW13 bits 31:16, byte 54 of the command. */
		dspec = nvmet_rw_dspec(rw);
		if (dspec > sd->nr)
			return nvmet_streams_invalid(req,
				offsetof(struct nvme_rw_command, dsmgmt) + 2);
		if (dspec && !test_bit(dspec, h->open))
			nvmet_streams_open(ns, h, dspec);
	}
	atomic64_inc(&sd->stats[dspec].requests);
	atomic64_add(nvmet_rw_data_len(req) >> SECTOR_SHIFT,
		     &sd->stats[dspec].sectors);
	return NVME_SC_SUCCESS;
}

/*
 * "stream_stats": "<id> <write requests> <sectors>" per stream that got
 * writes; nothing while the namespace is disabled.  With @buf NULL, the
 * length only.
 */
ssize_t nvmet_stream_stats_read(struct nvmet_ns *ns, char *buf, size_t size)
{
	char line[48];	/* "255 <u64> <u64>\n" */
	struct nvmet_ns_streams *sd;
	size_t len = 0;
	unsigned int id;
	int n;

	mutex_lock(&ns->subsys->lock);
	sd = ns->streams_state;
	/* Placement handles count under their stream too: handle + 1. */
	for (id = 0; id <= NVMET_MAX_STREAMS; id++) {
		u64 requests = 0, sectors = 0;

		if (sd && id <= sd->nr) {
			requests = atomic64_read(&sd->stats[id].requests);
			sectors = atomic64_read(&sd->stats[id].sectors);
		}
		nvmet_fdp_stream_stats(ns, id, &requests, &sectors);
		if (!requests)
			continue;
		n = snprintf(line, sizeof(line), "%u %llu %llu\n", id, requests,
			     sectors);
		if (buf && len + n > size)
			break;
		if (buf)
			memcpy(buf + len, line, n);
		len += n;
	}
	mutex_unlock(&ns->subsys->lock);
	return len;
}

void nvmet_stream_stats_reset(struct nvmet_ns *ns)
{
	struct nvmet_ns_streams *sd;
	unsigned int id;

	mutex_lock(&ns->subsys->lock);
	sd = ns->streams_state;
	for (id = 0; sd && id <= sd->nr; id++) {
		atomic64_set(&sd->stats[id].requests, 0);
		atomic64_set(&sd->stats[id].sectors, 0);
	}
	nvmet_fdp_stream_stats_reset(ns);
	mutex_unlock(&ns->subsys->lock);
}

/* --- Directive Send and Directive Receive. */

#define DIR_LOC(field)	offsetof(struct nvme_directive_cmd, field)

/* Enable Directive: Streams on or off for @ns; subsystem lock held. */
static u16 nvmet_streams_enable(struct nvmet_req *req, struct nvmet_ns *ns,
				bool enable)
{
	struct nvmet_streams_host *h;

	h = nvmet_streams_get_host(req, ns);
	if (!h)
		return NVME_SC_INTERNAL;
	if (enable)
		WRITE_ONCE(h->enabled, true);
	else
		nvmet_streams_host_reset(ns->streams_state, h);
	return NVME_SC_SUCCESS;
}

static u16 nvmet_dir_identify_send(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	struct nvmet_subsys *subsys = nvmet_req_subsys(req);
	bool enable = cmd->endir & NVME_DIR_ENDIR;
	struct nvmet_ns *ns;
	unsigned long idx;
	u16 status;

	if (cmd->doper != NVME_DIR_SND_ID_OP_ENABLE)
		return nvmet_streams_invalid(req, DIR_LOC(doper));
	/* Only Streams can be enabled: Identify always is. */
	if (cmd->tdtype != NVME_DIR_STREAMS)
		return nvmet_streams_invalid(req, DIR_LOC(tdtype));

	mutex_lock(&subsys->lock);
	if (req->ns) {
		status = req->ns->streams_state ?
			nvmet_streams_enable(req, req->ns, enable) :
			nvmet_streams_invalid(req, DIR_LOC(tdtype));
	} else {
		/* NSID FFFFFFFFh: every namespace that has streams. */
		status = nvmet_streams_invalid(req, DIR_LOC(tdtype));
		xa_for_each(&subsys->namespaces, idx, ns) {
			if (!ns->streams_state)
				continue;
			status = nvmet_streams_enable(req, ns, enable);
			if (status)
				break;
		}
	}
	mutex_unlock(&subsys->lock);
	return status;
}

/* Streams operations other than Return Parameters need Streams enabled. */
static struct nvmet_streams_host *nvmet_streams_enabled(struct nvmet_req *req)
{
	struct nvmet_streams_host *h;

	h = nvmet_streams_find_host(req->ns->streams_state,
				    &req->sq->ctrl->hostid);
	return h && h->enabled ? h : NULL;
}

static u16 nvmet_dir_streams_send(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	struct nvmet_ns *ns = req->ns;
	struct nvmet_ns_streams *sd = ns->streams_state;
	struct nvmet_streams_host *h;
	u16 status = NVME_SC_SUCCESS;
	unsigned long flags;
	u16 id;

	mutex_lock(&ns->subsys->lock);
	h = nvmet_streams_enabled(req);
	if (!h) {
		status = nvmet_streams_invalid(req, DIR_LOC(dtype));
		goto out;
	}
	switch (cmd->doper) {
	case NVME_DIR_SND_ST_OP_REL_ID:
		id = le16_to_cpu(cmd->dspec);
		if (!id || id > sd->nr) {
			status = nvmet_streams_invalid(req, DIR_LOC(dspec));
			break;
		}
		spin_lock_irqsave(&sd->lock, flags);
		nvmet_streams_close(sd, h, id);
		spin_unlock_irqrestore(&sd->lock, flags);
		break;
	case NVME_DIR_SND_ST_OP_REL_RSC:
		spin_lock_irqsave(&sd->lock, flags);
		nvmet_streams_set_allocated(sd, h, 0);
		spin_unlock_irqrestore(&sd->lock, flags);
		break;
	default:
		status = nvmet_streams_invalid(req, DIR_LOC(doper));
	}
out:
	mutex_unlock(&ns->subsys->lock);
	return status;
}

/*
 * The namespace a directive command names, where it names one: Identify
 * with NSID FFFFFFFFh stands for all of them.  Looked up here, in process
 * context, rather than when the command is parsed: for an NSID that is
 * not active the lookup sleeps, and some transports parse in atomic
 * context.
 */
static u16 nvmet_dir_find_ns(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;

	if (cmd->dtype == NVME_DIR_IDENTIFY &&
	    le32_to_cpu(cmd->nsid) == NVME_NSID_ALL)
		return NVME_SC_SUCCESS;
	return nvmet_req_find_ns(req);
}

static void nvmet_execute_dir_send(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	u16 status;

	/* No operation of Identify or Streams sends data. */
	if (!nvmet_check_transfer_len(req, 0))
		return;

	status = nvmet_dir_find_ns(req);
	if (status)
		goto out;
	switch (cmd->dtype) {
	case NVME_DIR_IDENTIFY:
		status = nvmet_dir_identify_send(req);
		break;
	case NVME_DIR_STREAMS:
		status = req->ns && req->ns->streams_state ?
			nvmet_dir_streams_send(req) :
			nvmet_streams_invalid(req, DIR_LOC(dtype));
		break;
	default:
		status = nvmet_streams_invalid(req, DIR_LOC(dtype));
	}
out:
	nvmet_req_complete(req, status);
}

static u16 nvmet_dir_identify_params(struct nvmet_req *req)
{
	struct nvmet_subsys *subsys = nvmet_req_subsys(req);
	const uuid_t *hostid = &req->sq->ctrl->hostid;
	struct nvme_dir_identify_params *id;
	struct nvmet_streams_host *h;
	bool supported = false, enabled = true;
	bool fdp = false, fdp_enabled = true;
	struct nvmet_ns *ns;
	unsigned long idx;
	u16 status;

	if (req->cmd->directive.doper != NVME_DIR_RCV_ID_OP_PARAM)
		return nvmet_streams_invalid(req, DIR_LOC(doper));
	id = kzalloc(sizeof(*id), GFP_KERNEL);
	if (!id)
		return NVME_SC_INTERNAL;

	mutex_lock(&subsys->lock);
	xa_for_each(&subsys->namespaces, idx, ns) {
		if (req->ns && req->ns != ns)
			continue;
		/* Data Placement is enabled with FDP, not by a directive. */
		if (ns->fdp) {
			fdp = true;
			fdp_enabled &= READ_ONCE(ns->fdp_enabled);
		}
		if (!ns->streams_state)
			continue;
		h = nvmet_streams_find_host(ns->streams_state, hostid);
		supported = true;
		enabled &= h && h->enabled;
	}
	mutex_unlock(&subsys->lock);

	id->supported[0] = 1 << NVME_DIR_IDENTIFY;
	id->enabled[0] = 1 << NVME_DIR_IDENTIFY;
	if (supported)
		id->supported[0] |= 1 << NVME_DIR_STREAMS;
	if (supported && enabled)
		id->enabled[0] |= 1 << NVME_DIR_STREAMS;
	if (fdp) {
		id->supported[0] |= 1 << NVME_DIR_FDP;
		id->persistent[0] |= 1 << NVME_DIR_FDP;
	}
	if (fdp && fdp_enabled)
		id->enabled[0] |= 1 << NVME_DIR_FDP;
	status = nvmet_copy_reply(req, id, sizeof(*id));
	kfree(id);
	return status;
}

/* The stream write size: 4 KiB in logical blocks; granularity 1 MiB. */
#define NVMET_STREAM_WRITE_SIZE		4096
#define NVMET_STREAM_GRANULARITY	256

static u16 nvmet_streams_params(struct nvmet_req *req)
{
	struct nvmet_ns *ns = req->ns;
	struct nvmet_ns_streams *sd = ns->streams_state;
	struct streams_directive_params params = { };
	struct nvmet_streams_host *h;
	unsigned long flags;

	mutex_lock(&ns->subsys->lock);
	h = nvmet_streams_find_host(sd, &req->sq->ctrl->hostid);
	params.msl = cpu_to_le16(sd->nr);
	params.nssa = cpu_to_le16(sd->nr - sd->allocated);
	params.sws = cpu_to_le32(max(1U, NVMET_STREAM_WRITE_SIZE >>
				     ns->blksize_shift));
	params.sgs = cpu_to_le16(NVMET_STREAM_GRANULARITY);
	spin_lock_irqsave(&sd->lock, flags);
	params.nsso = cpu_to_le16(sd->nr_open);
	if (h) {
		params.nsa = cpu_to_le16(h->allocated);
		params.nso = cpu_to_le16(h->nr_open);
	}
	spin_unlock_irqrestore(&sd->lock, flags);
	mutex_unlock(&ns->subsys->lock);
	return nvmet_copy_reply(req, &params, sizeof(params));
}

/* Get Status: the number of open streams, then their IDs, ascending. */
static u16 nvmet_streams_status(struct nvmet_req *req,
				struct nvmet_streams_host *h)
{
	struct nvmet_ns_streams *sd = req->ns->streams_state;
	unsigned long flags;
	unsigned int id, n = 0;
	__le16 *open;
	u16 status;

	open = kcalloc(NVMET_MAX_STREAMS + 1, sizeof(*open), GFP_KERNEL);
	if (!open)
		return NVME_SC_INTERNAL;
	spin_lock_irqsave(&sd->lock, flags);
	for_each_set_bit(id, h->open, NVMET_MAX_STREAMS + 1)
		open[++n] = cpu_to_le16(id);
	spin_unlock_irqrestore(&sd->lock, flags);
	open[0] = cpu_to_le16(n);
	status = nvmet_copy_reply(req, open, (n + 1) * sizeof(*open));
	kfree(open);
	return status;
}

/* Allocate Resources: NSR (CDW12 bits 15:0) more streams, as many as left. */
static u16 nvmet_streams_allocate(struct nvmet_req *req,
				  struct nvmet_streams_host *h)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	struct nvmet_ns *ns = req->ns;
	struct nvmet_ns_streams *sd = ns->streams_state;
	u16 want = cmd->endir | cmd->tdtype << 8;
	struct nvmet_streams_host *o;
	unsigned long flags;
	unsigned int id;

	if (!want)
		return nvmet_streams_invalid(req, DIR_LOC(endir));
	want = min_t(unsigned int, want, sd->nr - sd->allocated);
	if (!want)
		return NVME_SC_STREAM_ALLOC_FAILED | NVME_STATUS_DNR;
	spin_lock_irqsave(&sd->lock, flags);
	nvmet_streams_set_allocated(sd, h, h->allocated + want);
	/* The pool is smaller now: release what it no longer has. */
	while (sd->pool_open > sd->nr - sd->allocated) {
		o = nvmet_streams_pool_victim(sd);
		id = find_first_bit(o->open, NVMET_MAX_STREAMS + 1);
		nvmet_streams_close(sd, o, id);
	}
	spin_unlock_irqrestore(&sd->lock, flags);
	req->cqe->result.u32 = cpu_to_le32(want);
	return NVME_SC_SUCCESS;
}

static u16 nvmet_dir_streams_recv(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	struct nvmet_subsys *subsys = req->ns->subsys;
	struct nvmet_streams_host *h;
	u16 status;

	if (cmd->doper == NVME_DIR_RCV_ST_OP_PARAM)
		return nvmet_streams_params(req);
	if (cmd->doper != NVME_DIR_RCV_ST_OP_STATUS &&
	    cmd->doper != NVME_DIR_RCV_ST_OP_RESOURCE)
		return nvmet_streams_invalid(req, DIR_LOC(doper));

	mutex_lock(&subsys->lock);
	h = nvmet_streams_enabled(req);
	if (!h)
		status = nvmet_streams_invalid(req, DIR_LOC(dtype));
	else if (cmd->doper == NVME_DIR_RCV_ST_OP_STATUS)
		status = nvmet_streams_status(req, h);
	else
		status = nvmet_streams_allocate(req, h);
	mutex_unlock(&subsys->lock);
	return status;
}

static void nvmet_execute_dir_recv(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	u16 status;

	if (!nvmet_check_transfer_len(req, nvmet_dir_recv_len(req)))
		return;

	status = nvmet_dir_find_ns(req);
	if (status)
		goto out;
	switch (cmd->dtype) {
	case NVME_DIR_IDENTIFY:
		status = nvmet_dir_identify_params(req);
		break;
	case NVME_DIR_STREAMS:
		status = req->ns && req->ns->streams_state ?
			nvmet_dir_streams_recv(req) :
			nvmet_streams_invalid(req, DIR_LOC(dtype));
		break;
	default:
		status = nvmet_streams_invalid(req, DIR_LOC(dtype));
	}
out:
	nvmet_req_complete(req, status);
}

/*
 * Directive Send and Receive exist on a controller that offers
 * Directives (see nvmet_streams_ctrl_init()).
 */
u16 nvmet_parse_directive_cmd(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;

	BUILD_BUG_ON(sizeof(struct nvme_dir_identify_params) != 4096);
	BUILD_BUG_ON(sizeof(struct streams_directive_params) != 32);

	if (!req->sq->ctrl->directives)
		return nvmet_report_invalid_opcode(req);
	if (cmd->opcode == nvme_admin_directive_send)
		req->execute = nvmet_execute_dir_send;
	else
		req->execute = nvmet_execute_dir_recv;
	return NVME_SC_SUCCESS;
}
