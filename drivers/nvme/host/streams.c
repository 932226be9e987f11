// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe host: the Streams directive.
 *
 * Each namespace whose Identify directive lists Streams is set up when
 * the controller's namespaces are scanned, after the controller is live:
 * Streams enabled for it (Enable Directive, NSID of the namespace) unless
 * it is already, and its Return Parameters read.  No stream resources are
 * allocated: the namespace uses the subsystem's shared pool, so that no
 * host or namespace takes streams from another.  It uses as many stream
 * identifiers as it may have streams open: its allocation (NSA) if
 * someone made one, else the pool (NSSA), at most MSL and at most 255.
 * Writes then carry their bio's stream ID as the Streams directive (see
 * nvme_streams_setup_write()).
 *
 * A write only carries a directive while its namespace's streams are set
 * up on the controller as it is now (NVME_NS_STREAMS): a controller reset
 * ends that, and the scan that follows sets them up again.  A write the
 * device still refuses for its directive goes out again without it (see
 * nvme_streams_refused()).  Nothing here fails a probe or a write: a
 * namespace whose set-up fails works on without streams, with one log
 * line, and a controller that lets directive commands time out twice is
 * sent no more of them.
 */
#include "nvme.h"

static bool streams = true;
module_param(streams, bool, 0644);
MODULE_PARM_DESC(streams,
		 "use the Streams directive of controllers that have it (default: true)");

/*
 * A directive command for @ns: its status, or a negative error.  One that
 * got no answer within the admin timeout costs a timeout and the recovery
 * that follows; the controller gets a second chance, as the timeout may
 * have had another cause, and after a second such command is sent no
 * more directive commands for its life.
 */
static int nvme_dir_cmd(struct nvme_ns *ns, struct nvme_command *c,
			void *buf, unsigned int len, union nvme_result *result)
{
	struct nvme_ctrl *ctrl = ns->ctrl;
	unsigned long start = jiffies;
	int ret;

	c->directive.nsid = cpu_to_le32(ns->head->ns_id);
	c->directive.numd = cpu_to_le32(len ? len / 4 - 1 : 0);
	ret = __nvme_submit_sync_cmd(ctrl->admin_q, c, result, buf, len,
				     NVME_QID_ANY, 0);
	if (ret < 0 && time_after_eq(jiffies, start + NVME_ADMIN_TIMEOUT) &&
	    test_and_set_bit(NVME_CTRL_STREAMS_TIMEOUT, &ctrl->flags) &&
	    !test_and_set_bit(NVME_CTRL_STREAMS_BROKEN, &ctrl->flags))
		dev_warn(ctrl->device,
			 "Streams not used: directive commands time out\n");
	return ret;
}

static int nvme_dir_recv(struct nvme_ns *ns, u8 dtype, u8 doper, u32 cdw12,
			 void *buf, unsigned int len, union nvme_result *result)
{
	struct nvme_command c = { };

	c.directive.opcode = nvme_admin_directive_recv;
	c.directive.dtype = dtype;
	c.directive.doper = doper;
	c.common.cdw12 = cpu_to_le32(cdw12);
	return nvme_dir_cmd(ns, &c, buf, len, result);
}

/*
 * Whether the Identify directive of @ns lists Streams as supported and
 * as enabled.  0, or the status or error of the command.
 */
static int nvme_dir_streams(struct nvme_ns *ns, bool *supported, bool *enabled)
{
	struct nvme_dir_identify_params *id;
	int ret;

	id = kzalloc(sizeof(*id), GFP_KERNEL);
	if (!id)
		return -ENOMEM;
	ret = nvme_dir_recv(ns, NVME_DIR_IDENTIFY, NVME_DIR_RCV_ID_OP_PARAM, 0,
			    id, sizeof(*id), NULL);
	*supported = !ret && (id->supported[0] & (1 << NVME_DIR_STREAMS));
	*enabled = !ret && (id->enabled[0] & (1 << NVME_DIR_STREAMS));
	kfree(id);
	return ret;
}

static int nvme_dir_enable_streams(struct nvme_ns *ns)
{
	struct nvme_command c = { };

	c.directive.opcode = nvme_admin_directive_send;
	c.directive.dtype = NVME_DIR_IDENTIFY;
	c.directive.doper = NVME_DIR_SND_ID_OP_ENABLE;
	c.directive.tdtype = NVME_DIR_STREAMS;
	c.directive.endir = NVME_DIR_ENDIR;
	return nvme_dir_cmd(ns, &c, NULL, 0, NULL);
}

/*
 * The controller is being (re)initialized: whatever Streams state it had
 * is gone, so no namespace uses streams until the scan that follows sets
 * them up again.  I/O is quiesced.
 */
void nvme_streams_init_ctrl(struct nvme_ctrl *ctrl)
{
	struct nvme_ns *ns;
	int srcu_idx;

	srcu_idx = srcu_read_lock(&ctrl->srcu);
	list_for_each_entry_srcu(ns, &ctrl->namespaces, list,
				 srcu_read_lock_held(&ctrl->srcu)) {
		clear_bit(NVME_NS_STREAMS, &ns->flags);
		clear_bit(NVME_NS_STREAMS_REFUSED, &ns->flags);
		clear_bit(NVME_NS_STREAMS_RETRIED, &ns->flags);
	}
	srcu_read_unlock(&ctrl->srcu, srcu_idx);
}

/*
 * How many streams @ns may use, from its Streams Return Parameters: its
 * allocation, else the shared pool, at most MSL and BLK_MAX_STREAMS.
 */
static u16 nvme_streams_count(struct nvme_ns *ns, const char **why, int *err)
{
	struct streams_directive_params *p;
	u16 n;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return 0;
	*err = nvme_dir_recv(ns, NVME_DIR_STREAMS, NVME_DIR_RCV_ST_OP_PARAM, 0,
			     p, sizeof(*p), NULL);
	if (*err) {
		*why = "parameters failed";
		n = 0;
	} else {
		n = le16_to_cpu(p->nsa) ?: le16_to_cpu(p->nssa);
		n = min3(n, le16_to_cpu(p->msl), (u16)BLK_MAX_STREAMS);
		if (!n)
			*why = "no stream resources available";
		/*
		 * Said when the count changes, not applied: io_min and io_opt
		 * stay as they were.
		 */
		else if (n != ns->nr_streams)
			dev_info(ns->ctrl->device,
				 "nsid %u: %u streams, write size %u blocks, granularity %u\n",
				 ns->head->ns_id, n, le32_to_cpu(p->sws),
				 le16_to_cpu(p->sgs));
	}
	kfree(p);
	return n;
}

/* How many streams @ns may use: 0 if none, with the reason in @why. */
static u16 nvme_streams_setup(struct nvme_ns *ns, const char **why, int *err)
{
	bool supported, enabled;
	int ret;

	*why = NULL;
	*err = 0;
	if (!streams ||
	    test_bit(NVME_CTRL_STREAMS_BROKEN, &ns->ctrl->flags) ||
	    !(ns->ctrl->oacs & NVME_CTRL_OACS_DIRECTIVES))
		return 0;
	/* A device that rejects the Identify directive has no Streams. */
	ret = nvme_dir_streams(ns, &supported, &enabled);
	if (ret || !supported)
		return 0;

	/*
	 * After a refused write: set up again once where the device lost its
	 * state (the namespace went and came back); none until the next
	 * reset where it refused although enabled, or lost it again before
	 * a scan saw it keep it.
	 */
	if (test_bit(NVME_NS_STREAMS_REFUSED, &ns->flags)) {
		if (enabled ||
		    test_and_set_bit(NVME_NS_STREAMS_RETRIED, &ns->flags))
			return 0;
		clear_bit(NVME_NS_STREAMS_REFUSED, &ns->flags);
	} else if (enabled) {
		clear_bit(NVME_NS_STREAMS_RETRIED, &ns->flags);
	}
	if (!enabled) {
		ret = nvme_dir_enable_streams(ns);
		if (ret) {
			*why = "enabling them failed";
			*err = ret;
			return 0;
		}
	}

	return nvme_streams_count(ns, why, err);
}

/*
 * Before the queue is frozen, at each scan: set up the streams of @ns
 * and say how many it has.  A failure is logged once: when the namespace
 * had streams, or when it is new.
 */
void nvme_streams_query_ns(struct nvme_ns *ns, struct nvme_streams_info *si)
{
	const char *why;
	int err;

	si->max_streams = nvme_streams_setup(ns, &why, &err);
	if (si->max_streams)
		return;
	clear_bit(NVME_NS_STREAMS, &ns->flags);
	if (why && (ns->nr_streams || !test_bit(NVME_NS_READY, &ns->flags)))
		dev_info(ns->ctrl->device,
			 "nsid %u: Streams not used: %s (%d)\n",
			 ns->head->ns_id, why, err);
}

/*
 * Inside the limits update: the streams found by nvme_streams_query_ns().
 * Without multipath they are also what the namespace head has.  Of
 * those, max_streams counts the ones stream IDs go to.  Writes use them
 * from here on.
 */
void nvme_streams_set_limits(struct nvme_ns *ns, struct queue_limits *lim,
			     struct nvme_streams_info *si)
{
	WRITE_ONCE(ns->nr_streams, si->max_streams);
	lim->max_streams = nvme_streams_for_ids(si->max_streams);
	if (!nvme_ns_head_multipath(ns->head))
		WRITE_ONCE(ns->head->nr_streams, si->max_streams);
	if (si->max_streams)
		set_bit(NVME_NS_STREAMS, &ns->flags);
}

/*
 * Inside the limits update of a multipath head: the streams it offers,
 * the fewest of its paths', which every path folds stream IDs onto, so
 * that an ID goes to the same stream whichever path carries it.  Worked
 * out afresh at each update, as a path's count grows again after a reset
 * that brings its streams back.  Returns the head's max_streams.
 */
u16 nvme_streams_head_max(struct nvme_ns_head *head)
{
	u8 max = BLK_MAX_STREAMS;
	struct nvme_ns *ns;
	int srcu_idx;

	srcu_idx = srcu_read_lock(&head->srcu);
	list_for_each_entry_srcu(ns, &head->list, siblings,
				 srcu_read_lock_held(&head->srcu))
		max = min(max, READ_ONCE(ns->nr_streams));
	srcu_read_unlock(&head->srcu, srcu_idx);
	WRITE_ONCE(head->nr_streams, max);
	return nvme_streams_for_ids(max);
}

/*
 * A write that the device refused with Invalid Field while it carried the
 * Streams directive: the device no longer has Streams enabled for the
 * namespace (it was reset, or the namespace went and came back), or does
 * not take them at all.  The namespace stops using streams, with one log
 * line, and a scan sets them up again where the device merely lost its
 * state.  The caller sends the write again, whatever its retry count,
 * and it goes without directive: it can be refused so only once.
 */
bool nvme_streams_refused(struct request *req)
{
	struct nvme_ns *ns = req->q->queuedata;
	struct nvme_command *cmd = nvme_req(req)->cmd;

	if ((nvme_req(req)->status & NVME_SCT_SC_MASK) !=
	    NVME_SC_INVALID_FIELD || blk_rq_is_passthrough(req) ||
	    req_op(req) != REQ_OP_WRITE || !ns ||
	    (le16_to_cpu(cmd->rw.control) & NVME_RW_DTYPE_MASK) !=
	    NVME_RW_DTYPE_STREAMS)
		return false;
	nvme_req(req)->flags |= NVME_REQ_NO_STREAM;
	if (test_and_clear_bit(NVME_NS_STREAMS, &ns->flags)) {
		set_bit(NVME_NS_STREAMS_REFUSED, &ns->flags);
		dev_info(ns->ctrl->device,
			 "nsid %u: Streams not used: a write was refused for its stream\n",
			 ns->head->ns_id);
		nvme_queue_scan(ns->ctrl);
	}
	return true;
}
