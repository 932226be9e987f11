// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe over Fabrics target: the Streams directive.
 *
 * A namespace whose "streams" attribute is not 0 offers that many streams
 * (MSL) through the Identify and Streams directives.  Here are its set-up,
 * the state of its hosts and the Streams operations of Directive Send and
 * Receive; directive.c dispatches those, streams-io.c has the writes.
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
 * Locking: the subsystem lock guards the hosts' states coming and going
 * (the namespace's list of them and each struct nvmet_host_streams) and,
 * with the namespace's spinlock, whether Streams is enabled and the
 * allocations; the spinlock alone guards the open streams, which writes
 * change.  Writes look a host's state up under RCU, so that it is freed
 * only after a grace period: a write on one controller of a host may
 * race with the end of the host's state on another.
 */
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include "streams.h"

/* Whether some enabled namespace has streams; subsystem lock held. */
bool nvmet_subsys_has_streams(struct nvmet_subsys *subsys)
{
	struct nvmet_ns *ns;
	unsigned long idx;

	nvmet_for_each_enabled_ns(&subsys->namespaces, idx, ns)
		if (ns->streams_state)
			return true;
	return false;
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
void nvmet_streams_close(struct nvmet_ns_streams *sd,
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

/*
 * Give host @h an allocation of @n streams; the subsystem lock and the
 * namespace's lock held.
 */
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
struct nvmet_streams_host *
nvmet_streams_pool_victim(struct nvmet_ns_streams *sd)
{
	struct nvmet_streams_host *h;

	lockdep_assert_held(&sd->lock);
	list_for_each_entry(h, &sd->hosts, entry)
		if (!h->allocated && h->nr_open)
			return h;
	return NULL;
}

/* --- The Streams operations of Directive Send and Directive Receive. */

#define DIR_LOC(field)	offsetof(struct nvme_directive_cmd, field)

/*
 * Enable Directive of the Identify directive: Streams on or off for @ns;
 * subsystem lock held.
 */
u16 nvmet_streams_enable(struct nvmet_req *req, struct nvmet_ns *ns,
			 bool enable)
{
	struct nvmet_streams_host *h;

	lockdep_assert_held(&ns->subsys->lock);
	if (enable)
		return nvmet_streams_get_host(req, ns) ?
			NVME_SC_SUCCESS : NVME_SC_INTERNAL;
	/* Disabled, the host holds nothing: its state ends. */
	h = nvmet_streams_find_host(req->sq->ctrl, ns);
	if (h)
		nvmet_streams_host_free(h);
	return NVME_SC_SUCCESS;
}

/*
 * Whether @ctrl's host has Streams enabled in @ns, for Return Parameters
 * of the Identify directive; subsystem lock held.
 */
bool nvmet_streams_host_enabled(struct nvmet_ctrl *ctrl, struct nvmet_ns *ns)
{
	lockdep_assert_held(&ns->subsys->lock);
	return nvmet_streams_find_host(ctrl, ns);
}

/* Directive Send to a namespace with streams. */
u16 nvmet_streams_dir_send(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	struct nvmet_ns *ns = req->ns;
	struct nvmet_ns_streams *sd = ns->streams_state;
	struct nvmet_streams_host *h;
	u16 status = NVME_SC_SUCCESS;
	unsigned long flags;
	u16 id;

	/* Every operation needs Streams enabled: a state of the host. */
	mutex_lock(&ns->subsys->lock);
	h = nvmet_streams_find_host(req->sq->ctrl, ns);
	if (!h) {
		status = nvmet_invalid_field(req, DIR_LOC(dtype));
		goto out;
	}
	switch (cmd->doper) {
	case NVME_DIR_SND_ST_OP_REL_ID:
		id = le16_to_cpu(cmd->dspec);
		if (!id || id > sd->nr) {
			status = nvmet_invalid_field(req, DIR_LOC(dspec));
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
		status = nvmet_invalid_field(req, DIR_LOC(doper));
	}
out:
	mutex_unlock(&ns->subsys->lock);
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

	BUILD_BUG_ON(sizeof(params) != 32);

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
		return nvmet_invalid_field(req, DIR_LOC(endir));
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
	/* NSA: what the host has now, as Return Parameters reports it. */
	req->cqe->result.u32 = cpu_to_le32(h->allocated);
	return NVME_SC_SUCCESS;
}

/* Directive Receive from a namespace with streams. */
u16 nvmet_streams_dir_recv(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	struct nvmet_subsys *subsys = req->ns->subsys;
	struct nvmet_streams_host *h;
	u16 status;

	if (cmd->doper == NVME_DIR_RCV_ST_OP_PARAM)
		return nvmet_streams_params(req);
	if (cmd->doper != NVME_DIR_RCV_ST_OP_STATUS &&
	    cmd->doper != NVME_DIR_RCV_ST_OP_RESOURCE)
		return nvmet_invalid_field(req, DIR_LOC(doper));

	/* Status and Allocate Resources need Streams enabled. */
	mutex_lock(&subsys->lock);
	h = nvmet_streams_find_host(req->sq->ctrl, req->ns);
	if (!h)
		status = nvmet_invalid_field(req, DIR_LOC(dtype));
	else if (cmd->doper == NVME_DIR_RCV_ST_OP_STATUS)
		status = nvmet_streams_status(req, h);
	else
		status = nvmet_streams_allocate(req, h);
	mutex_unlock(&subsys->lock);
	return status;
}
