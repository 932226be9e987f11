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
 * and namespace where the host has Streams enabled, shared by every
 * controller of that host, over several ports or across a reconnect:
 * the controllers of a host share one struct nvmet_host_streams, which
 * finds the host's state by NSID.  It ends, as the Identify directive
 * says it does not persist across a reset, when the last controller of
 * its host is reset or shut down (CC.EN cleared, CC.SHN set) or goes
 * away, or the host disables Streams; the namespace being disabled ends
 * all of it.  What has ended is freed: a host that has Streams enabled
 * nowhere holds no memory for it but that shared by its controllers.
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
 * Writes are the hot path, and a write to a stream its host has open
 * takes no lock and writes no memory that other CPUs write: its
 * controller finds the host's state with one lookup by NSID, under RCU,
 * tests the stream's bit, and counts the write in per-CPU counters.  Only
 * a write that opens its stream takes the namespace's spinlock.
 *
 * Locking: the subsystem lock guards the hosts' states coming and going
 * (the namespace's list of them and each struct nvmet_host_streams) and,
 * with the namespace's spinlock, whether Streams is enabled and the
 * allocations; the spinlock alone guards the open streams, which writes
 * change.  Writes look a host's state up under RCU, so that it is freed
 * only after a grace period: a write on one controller of a host may
 * race with the end of the host's state on another.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#include <linux/bitmap.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include "nvmet.h"

/*
 * The Streams state of one host in a subsystem, shared by its
 * controllers: by NSID, the struct nvmet_streams_host of each namespace
 * where the host has Streams enabled.
 */
struct nvmet_host_streams {
	struct xarray		ns;
	unsigned int		nr_ctrls;	/* sharing it */
};

/* What one host holds of the streams of one namespace. */
struct nvmet_streams_host {
	struct list_head	entry;		/* in nvmet_ns_streams.hosts */
	struct nvmet_host_streams *hs;
	struct nvmet_ns_streams	*sd;
	u32			nsid;
	bool			enabled;	/* until it ends */
	u16			allocated;	/* NSA */
	u16			nr_open;	/* NSO */
	DECLARE_BITMAP(open, NVMET_MAX_STREAMS + 1);
	struct rcu_head		rcu;
};

/*
 * The writes of a stream.  Per CPU, counted since the namespace was
 * enabled; "stream_stats" shows them less what they were at its last
 * reset.
 */
struct nvmet_stream_stats {
	u64	requests;
	u64	sectors;
};

/* The Streams state of an enabled namespace with streams. */
struct nvmet_ns_streams {
	struct list_head	hosts;
	spinlock_t		lock;		/* the hosts' open streams */
	u16			allocated;	/* all hosts' NSA */
	u16			nr_open;	/* NSSO */
	u16			pool_open;	/* of hosts without NSA */
	u16			nr;		/* streams, fixed while enabled */
	struct nvmet_stream_stats __percpu *stats; /* by stream, 0 for none */
	struct nvmet_stream_stats zero[];	/* the sums at the last reset */
};

bool nvmet_subsys_has_streams(struct nvmet_subsys *subsys)
{
	struct nvmet_ns *ns;
	unsigned long idx;

	nvmet_for_each_enabled_ns(&subsys->namespaces, idx, ns)
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
	sd = kzalloc(struct_size(sd, zero, ns->streams + 1), GFP_KERNEL);
	if (!sd)
		return -ENOMEM;
	sd->stats = __alloc_percpu(sizeof(*sd->stats) * (ns->streams + 1),
				   __alignof__(*sd->stats));
	if (!sd->stats) {
		kfree(sd);
		return -ENOMEM;
	}
	INIT_LIST_HEAD(&sd->hosts);
	spin_lock_init(&sd->lock);
	sd->nr = ns->streams;
	ns->streams_state = sd;
	return 0;
}

/*
 * The state of @ctrl's host in @ns, NULL if it has none: under RCU, or
 * with the subsystem lock held.
 */
static struct nvmet_streams_host *
nvmet_streams_find_host(struct nvmet_ctrl *ctrl, struct nvmet_ns *ns)
{
	if (!ctrl->host_streams)
		return NULL;
	return xa_load(&ctrl->host_streams->ns, ns->nsid);
}

/*
 * The state of @req's host in @ns, made on first use, with Streams
 * enabled; subsystem lock held.
 */
static struct nvmet_streams_host *nvmet_streams_get_host(struct nvmet_req *req,
							 struct nvmet_ns *ns)
{
	struct nvmet_host_streams *hs = req->sq->ctrl->host_streams;
	struct nvmet_ns_streams *sd = ns->streams_state;
	struct nvmet_streams_host *h;
	unsigned long flags;

	lockdep_assert_held(&ns->subsys->lock);
	h = nvmet_streams_find_host(req->sq->ctrl, ns);
	if (h || !hs)
		return h;
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return NULL;
	h->hs = hs;
	h->sd = sd;
	h->nsid = ns->nsid;
	h->enabled = true;
	/* On the list before writes can find it and open streams. */
	spin_lock_irqsave(&sd->lock, flags);
	list_add_tail(&h->entry, &sd->hosts);
	spin_unlock_irqrestore(&sd->lock, flags);
	if (xa_err(xa_store(&hs->ns, ns->nsid, h, GFP_KERNEL))) {
		/* Found by nothing: it has no stream open. */
		spin_lock_irqsave(&sd->lock, flags);
		list_del(&h->entry);
		spin_unlock_irqrestore(&sd->lock, flags);
		kfree(h);
		return NULL;
	}
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

/*
 * The state of host @h in its namespace ends: its streams are released,
 * it is taken off the namespace's list and its controllers' lookup, and
 * freed once no write that may have found it is left.  Subsystem lock
 * held.
 */
static void nvmet_streams_host_free(struct nvmet_streams_host *h)
{
	struct nvmet_ns_streams *sd = h->sd;
	unsigned long flags;

	/*
	 * Under the spinlock, so that a write that found it and is about
	 * to open a stream sees it ended, and the pool is not searched in
	 * it any more.
	 */
	spin_lock_irqsave(&sd->lock, flags);
	WRITE_ONCE(h->enabled, false);
	nvmet_streams_set_allocated(sd, h, 0);
	list_del(&h->entry);
	spin_unlock_irqrestore(&sd->lock, flags);
	xa_erase(&h->hs->ns, h->nsid);
	kfree_rcu(h, rcu);
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
	list_for_each_entry_safe(h, next, &sd->hosts, entry)
		nvmet_streams_host_free(h);
	ns->streams_state = NULL;
	free_percpu(sd->stats);
	kfree(sd);
}

/*
 * The Streams state of @ctrl's host ends, in every namespace, if no other
 * controller of the host is left to use it.  Subsystem lock held.
 */
static void nvmet_streams_host_end(struct nvmet_ctrl *ctrl)
{
	struct nvmet_host_streams *hs = ctrl->host_streams;
	struct nvmet_streams_host *h;
	struct nvmet_ctrl *other;
	unsigned long idx;

	lockdep_assert_held(&ctrl->subsys->lock);
	if (!hs)
		return;
	/* Controllers that are reset or shut down themselves hold nothing. */
	list_for_each_entry(other, &ctrl->subsys->ctrls, subsys_entry)
		if (other != ctrl && other->host_streams == hs &&
		    (READ_ONCE(other->cc) & NVME_CC_ENABLE) &&
		    !(READ_ONCE(other->cc) & NVME_CC_SHN_MASK))
			return;
	xa_for_each(&hs->ns, idx, h)
		nvmet_streams_host_free(h);
}

/* A controller was reset or shut down (CC.EN cleared, CC.SHN set). */
void nvmet_streams_ctrl_reset(struct nvmet_ctrl *ctrl)
{
	mutex_lock(&ctrl->subsys->lock);
	nvmet_streams_host_end(ctrl);
	mutex_unlock(&ctrl->subsys->lock);
}

/*
 * A new controller of an NVM subsystem, its host identifier known: it
 * shares the Streams state of the other controllers of its host, if
 * there are any.  Before the controller is enabled, so before its first
 * command that uses that state.
 */
int nvmet_streams_ctrl_connect(struct nvmet_ctrl *ctrl)
{
	struct nvmet_subsys *subsys = ctrl->subsys;
	struct nvmet_host_streams *hs = NULL;
	struct nvmet_ctrl *other;
	int ret = 0;

	if (nvmet_is_disc_subsys(subsys))
		return 0;
	mutex_lock(&subsys->lock);
	list_for_each_entry(other, &subsys->ctrls, subsys_entry) {
		if (other != ctrl && other->host_streams &&
		    uuid_equal(&other->hostid, &ctrl->hostid)) {
			hs = other->host_streams;
			break;
		}
	}
	if (!hs) {
		hs = kzalloc(sizeof(*hs), GFP_KERNEL);
		if (!hs) {
			ret = -ENOMEM;
			goto out;
		}
		xa_init(&hs->ns);
	}
	hs->nr_ctrls++;
	ctrl->host_streams = hs;
out:
	mutex_unlock(&subsys->lock);
	return ret;
}

/*
 * A controller is gone, off the subsystem's list, without a reset or
 * shutdown maybe: the host's Streams state ends if it was the last
 * controller using it, and what the controllers of the host shared goes
 * with the last of them.
 */
void nvmet_streams_ctrl_free(struct nvmet_ctrl *ctrl)
{
	struct nvmet_host_streams *hs = ctrl->host_streams;

	mutex_lock(&ctrl->subsys->lock);
	nvmet_streams_host_end(ctrl);
	if (hs && !--hs->nr_ctrls) {
		/* The host's state ended with its last controller. */
		WARN_ON_ONCE(!xa_empty(&hs->ns));
		xa_destroy(&hs->ns);
		kfree(hs);
	}
	ctrl->host_streams = NULL;
	mutex_unlock(&ctrl->subsys->lock);
}

/* A host without an allocation that has pool streams open. */
static struct nvmet_streams_host *
nvmet_streams_pool_victim(struct nvmet_ns_streams *sd)
{
	struct nvmet_streams_host *h;

	lockdep_assert_held(&sd->lock);
	list_for_each_entry(h, &sd->hosts, entry)
		if (!h->allocated && h->nr_open)
			return h;
	return NULL;
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
		/* DSPEC: CDW13 bits 31:16, byte 54 of the command. */
		dspec = nvmet_rw_dspec(rw);
		/* The host's state may end meanwhile on another controller. */
		rcu_read_lock();
		h = nvmet_streams_find_host(req->sq->ctrl, ns);
		if (!h || !READ_ONCE(h->enabled)) {
			rcu_read_unlock();
			return nvmet_streams_invalid(req,
				offsetof(struct nvme_rw_command, control));
		}
		if (dspec > sd->nr) {
			rcu_read_unlock();
			return nvmet_streams_invalid(req,
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

/* The writes of stream @id of @sd on all CPUs, since it was enabled. */
static void nvmet_streams_sum(struct nvmet_ns_streams *sd, unsigned int id,
			      struct nvmet_stream_stats *sum)
{
	const struct nvmet_stream_stats *st;
	int cpu;

	sum->requests = 0;
	sum->sectors = 0;
	for_each_possible_cpu(cpu) {
		st = per_cpu_ptr(sd->stats, cpu) + id;
		sum->requests += READ_ONCE(st->requests);
		sum->sectors += READ_ONCE(st->sectors);
	}
}

/*
 * "stream_stats": "<id> <write requests> <sectors>" per stream that got
 * writes; nothing while the namespace is disabled.  With @buf NULL, the
 * length only.
 *
 * The counters are per CPU, summed here, without stopping the writes: a
 * write that races with reading or resetting them may or may not be
 * counted in what is read (and on 32-bit, may tear a count).  They are
 * for tests, which read them with no write in flight.
 */
ssize_t nvmet_stream_stats_read(struct nvmet_ns *ns, char *buf, size_t size)
{
	char line[48];	/* "255 <u64> <u64>\n" */
	struct nvmet_stream_stats sum;
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
			nvmet_streams_sum(sd, id, &sum);
			requests = sum.requests - sd->zero[id].requests;
			sectors = sum.sectors - sd->zero[id].sectors;
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

/* Reset: what the counters are now is what is zero from now on. */
void nvmet_stream_stats_reset(struct nvmet_ns *ns)
{
	struct nvmet_ns_streams *sd;
	unsigned int id;

	mutex_lock(&ns->subsys->lock);
	sd = ns->streams_state;
	for (id = 0; sd && id <= sd->nr; id++)
		nvmet_streams_sum(sd, id, &sd->zero[id]);
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

	if (enable)
		return nvmet_streams_get_host(req, ns) ?
			NVME_SC_SUCCESS : NVME_SC_INTERNAL;
	/* Disabled, the host holds nothing: its state ends. */
	h = nvmet_streams_find_host(req->sq->ctrl, ns);
	if (h)
		nvmet_streams_host_free(h);
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
		nvmet_for_each_enabled_ns(&subsys->namespaces, idx, ns) {
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

/*
 * Streams operations other than Return Parameters need Streams enabled:
 * the host has a state in the namespace only while it is.
 */
static struct nvmet_streams_host *nvmet_streams_enabled(struct nvmet_req *req)
{
	return nvmet_streams_find_host(req->sq->ctrl, req->ns);
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
 * with NSID FFFFFFFFh stands for all of them.
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
	nvmet_for_each_enabled_ns(&subsys->namespaces, idx, ns) {
		if (req->ns && req->ns != ns)
			continue;
		/* Data Placement is enabled with FDP, not by a directive. */
		if (ns->fdp) {
			fdp = true;
			fdp_enabled &= READ_ONCE(ns->fdp_enabled);
		}
		if (!ns->streams_state)
			continue;
		h = nvmet_streams_find_host(req->sq->ctrl, ns);
		supported = true;
		enabled &= !!h;
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
	h = nvmet_streams_find_host(req->sq->ctrl, ns);
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
