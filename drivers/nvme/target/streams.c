// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe over Fabrics target: the Streams directive.
 *
 * A namespace whose "streams" attribute is not 0 offers that many streams
 * (MSL) through the Identify and Streams directives, counts the writes it
 * receives per stream in "stream_stats" and passes the stream of each
 * write on to its backing block device.  The state the NVMe base
 * specification keeps per host (whether Streams is enabled, the streams
 * allocated and those open) is kept per controller and namespace, so it
 * goes with a controller reset.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#include <linux/bitmap.h>
#include <linux/slab.h>
#include "nvmet.h"

/* What one controller holds of the streams of one namespace. */
struct nvmet_streams_state {
	bool		enabled;
	u16		allocated;	/* NSA */
	DECLARE_BITMAP(open, NVMET_MAX_STREAMS + 1);
};

struct nvmet_stream_stats {
	atomic64_t	requests;
	atomic64_t	sectors;
};

bool nvmet_subsys_has_streams(struct nvmet_subsys *subsys)
{
	struct nvmet_ns *ns;
	unsigned long idx;

	xa_for_each(&subsys->namespaces, idx, ns)
		if (ns->streams)
			return true;
	return false;
}

int nvmet_streams_ns_enable(struct nvmet_ns *ns)
{
	if (!ns->streams)
		return 0;
	ns->stream_stats = kcalloc(ns->streams + 1, sizeof(*ns->stream_stats),
				   GFP_KERNEL);
	return ns->stream_stats ? 0 : -ENOMEM;
}

/*
 * The streams all controllers hold of @ns: allocated (what the subsystem
 * no longer has available) and open.  Called with the subsystem lock held.
 */
static void nvmet_streams_held(struct nvmet_ns *ns, unsigned int *allocated,
			       unsigned int *open)
{
	struct nvmet_streams_state *state;
	struct nvmet_ctrl *ctrl;

	*allocated = 0;
	*open = 0;
	list_for_each_entry(ctrl, &ns->subsys->ctrls, subsys_entry) {
		state = xa_load(&ctrl->streams, ns->nsid);
		if (!state)
			continue;
		*allocated += state->allocated;
		*open += bitmap_weight(state->open, NVMET_MAX_STREAMS + 1);
	}
}

/*
 * The namespace is going: no command uses it any more.  Drop what every
 * controller holds of it.  Called with the subsystem lock held.
 */
void nvmet_streams_ns_disable(struct nvmet_ns *ns)
{
	struct nvmet_ctrl *ctrl;

	list_for_each_entry(ctrl, &ns->subsys->ctrls, subsys_entry)
		kfree(xa_erase(&ctrl->streams, ns->nsid));
	kfree(ns->stream_stats);
	ns->stream_stats = NULL;
}

/*
 * The controller is off the subsystem's list: what it held no longer
 * counts, and no namespace can reach its state.
 */
void nvmet_streams_ctrl_free(struct nvmet_ctrl *ctrl)
{
	struct nvmet_streams_state *state;
	unsigned long nsid;

	xa_for_each(&ctrl->streams, nsid, state)
		kfree(state);
	xa_destroy(&ctrl->streams);
}

static void nvmet_stream_count(struct nvmet_ns *ns, u16 stream, u32 sectors)
{
	atomic64_inc(&ns->stream_stats[stream].requests);
	atomic64_add(sectors, &ns->stream_stats[stream].sectors);
}

/*
 * A command to a namespace with streams: a write with the Streams
 * directive must name a stream the namespace has, with Streams enabled
 * by this controller; the stream is then open.  Every write is counted
 * under its stream, 0 for none.
 */
u16 nvmet_streams_parse_io_cmd(struct nvmet_req *req)
{
	struct nvme_rw_command *rw = &req->cmd->rw;
	struct nvmet_streams_state *state;
	struct nvmet_ns *ns = req->ns;
	u8 dtype;
	u16 dspec;

	if (rw->opcode != nvme_cmd_write)
		return NVME_SC_SUCCESS;
	dtype = nvmet_rw_dtype(rw);
	dspec = 0;
	if (dtype) {
		if (dtype != NVME_DIR_STREAMS) {
			req->error_loc = offsetof(struct nvme_rw_command,
						  control);
			return NVME_SC_INVALID_FIELD | NVME_STATUS_DNR;
		}
		state = xa_load(&req->sq->ctrl->streams, ns->nsid);
		if (!state || !READ_ONCE(state->enabled)) {
			req->error_loc = offsetof(struct nvme_rw_command,
						  control);
			return NVME_SC_INVALID_FIELD | NVME_STATUS_DNR;
		}
		dspec = le32_to_cpu(rw->dsmgmt) >> 16;
		if (dspec > ns->streams) {
			req->error_loc = offsetof(struct nvme_rw_command,
						  dsmgmt);
			return NVME_SC_INVALID_FIELD | NVME_STATUS_DNR;
		}
		if (dspec)
			set_bit(dspec, state->open);
	}
	nvmet_stream_count(ns, dspec, nvmet_rw_data_len(req) >> SECTOR_SHIFT);
	return NVME_SC_SUCCESS;
}

ssize_t nvmet_stream_stats_read(struct nvmet_ns *ns, char *buf, size_t size)
{
	char line[48];	/* "255 <u64> <u64>\n" */
	size_t len = 0;
	unsigned int id;
	int n;

	if (!ns->stream_stats)
		return 0;
	for (id = 0; id <= ns->streams; id++) {
		u64 requests = atomic64_read(&ns->stream_stats[id].requests);
		u64 sectors = atomic64_read(&ns->stream_stats[id].sectors);

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
	return len;
}

void nvmet_stream_stats_reset(struct nvmet_ns *ns)
{
	unsigned int id;

	if (!ns->stream_stats)
		return;
	for (id = 0; id <= ns->streams; id++) {
		atomic64_set(&ns->stream_stats[id].requests, 0);
		atomic64_set(&ns->stream_stats[id].sectors, 0);
	}
}

/* --- Directive Send and Directive Receive. */

static u16 nvmet_dir_invalid(struct nvmet_req *req, size_t loc)
{
	req->error_loc = loc;
	return NVME_SC_INVALID_FIELD | NVME_STATUS_DNR;
}

#define DIR_LOC(field)	offsetof(struct nvme_directive_cmd, field)

/* The state of @req's controller for @ns, made on first use. */
static struct nvmet_streams_state *nvmet_streams_state(struct nvmet_req *req,
						       struct nvmet_ns *ns)
{
	struct nvmet_ctrl *ctrl = req->sq->ctrl;
	struct nvmet_streams_state *state, *old;

	state = xa_load(&ctrl->streams, ns->nsid);
	if (state)
		return state;
	state = kzalloc(sizeof(*state), GFP_KERNEL);
	if (!state)
		return NULL;
	old = xa_cmpxchg(&ctrl->streams, ns->nsid, NULL, state, GFP_KERNEL);
	if (old) {
		kfree(state);
		return xa_is_err(old) ? NULL : old;
	}
	return state;
}

/* Enable Directive: Streams on or off for @ns; subsystem lock held. */
static u16 nvmet_streams_enable(struct nvmet_req *req, struct nvmet_ns *ns,
				bool enable)
{
	struct nvmet_streams_state *state;

	state = nvmet_streams_state(req, ns);
	if (!state)
		return NVME_SC_INTERNAL;
	if (!enable) {
		state->allocated = 0;
		bitmap_zero(state->open, NVMET_MAX_STREAMS + 1);
	}
	WRITE_ONCE(state->enabled, enable);
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
		return nvmet_dir_invalid(req, DIR_LOC(doper));
	/* Only Streams can be enabled: Identify always is. */
	if (cmd->tdtype != NVME_DIR_STREAMS)
		return nvmet_dir_invalid(req, DIR_LOC(tdtype));

	mutex_lock(&subsys->lock);
	if (req->ns) {
		status = req->ns->streams ?
			nvmet_streams_enable(req, req->ns, enable) :
			nvmet_dir_invalid(req, DIR_LOC(tdtype));
	} else {
		/* NSID FFFFFFFFh: every namespace that has streams. */
		status = nvmet_dir_invalid(req, DIR_LOC(tdtype));
		xa_for_each(&subsys->namespaces, idx, ns) {
			if (!ns->streams)
				continue;
			status = nvmet_streams_enable(req, ns, enable);
			if (status)
				break;
		}
	}
	mutex_unlock(&subsys->lock);
	return status;
}

static u16 nvmet_dir_streams_send(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	struct nvmet_ns *ns = req->ns;
	struct nvmet_streams_state *state;
	u16 status = NVME_SC_SUCCESS;
	u16 id;

	mutex_lock(&ns->subsys->lock);
	state = xa_load(&req->sq->ctrl->streams, ns->nsid);
	if (!state || !state->enabled) {
		status = nvmet_dir_invalid(req, DIR_LOC(dtype));
		goto out;
	}
	switch (cmd->doper) {
	case NVME_DIR_SND_ST_OP_REL_ID:
		id = le16_to_cpu(cmd->dspec);
		if (!id || id > ns->streams) {
			status = nvmet_dir_invalid(req, DIR_LOC(dspec));
			break;
		}
		clear_bit(id, state->open);
		break;
	case NVME_DIR_SND_ST_OP_REL_RSC:
		state->allocated = 0;
		break;
	default:
		status = nvmet_dir_invalid(req, DIR_LOC(doper));
	}
out:
	mutex_unlock(&ns->subsys->lock);
	return status;
}

static void nvmet_execute_dir_send(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	u16 status;

	/* No operation of Identify or Streams sends data. */
	if (!nvmet_check_transfer_len(req, 0))
		return;

	switch (cmd->dtype) {
	case NVME_DIR_IDENTIFY:
		status = nvmet_dir_identify_send(req);
		break;
	case NVME_DIR_STREAMS:
		status = req->ns && req->ns->streams ?
			nvmet_dir_streams_send(req) :
			nvmet_dir_invalid(req, DIR_LOC(dtype));
		break;
	default:
		status = nvmet_dir_invalid(req, DIR_LOC(dtype));
	}
	nvmet_req_complete(req, status);
}

/* Copy @len bytes of @buf to the host, then zeroes to what it asked for. */
static u16 nvmet_dir_copy(struct nvmet_req *req, const void *buf, size_t len)
{
	u16 status;

	len = min(len, req->transfer_len);
	status = nvmet_copy_to_sgl(req, 0, buf, len);
	if (!status && len < req->transfer_len)
		status = nvmet_zero_sgl(req, len, req->transfer_len - len);
	return status;
}

static u16 nvmet_dir_identify_params(struct nvmet_req *req)
{
	struct nvmet_subsys *subsys = nvmet_req_subsys(req);
	struct nvme_dir_identify_params *id;
	struct nvmet_streams_state *state;
	bool supported = false, enabled = true;
	struct nvmet_ns *ns;
	unsigned long idx;
	u16 status;

	if (req->cmd->directive.doper != NVME_DIR_RCV_ID_OP_PARAM)
		return nvmet_dir_invalid(req, DIR_LOC(doper));
	id = kzalloc(sizeof(*id), GFP_KERNEL);
	if (!id)
		return NVME_SC_INTERNAL;

	mutex_lock(&subsys->lock);
	xa_for_each(&subsys->namespaces, idx, ns) {
		if (!ns->streams || (req->ns && req->ns != ns))
			continue;
		state = xa_load(&req->sq->ctrl->streams, ns->nsid);
		supported = true;
		enabled &= state && state->enabled;
	}
	mutex_unlock(&subsys->lock);

	id->supported[0] = 1 << NVME_DIR_IDENTIFY;
	id->enabled[0] = 1 << NVME_DIR_IDENTIFY;
	if (supported)
		id->supported[0] |= 1 << NVME_DIR_STREAMS;
	if (supported && enabled)
		id->enabled[0] |= 1 << NVME_DIR_STREAMS;
	status = nvmet_dir_copy(req, id, sizeof(*id));
	kfree(id);
	return status;
}

/* The stream write size: 4 KiB in logical blocks; granularity 1 MiB. */
#define NVMET_STREAM_WRITE_SIZE		4096
#define NVMET_STREAM_GRANULARITY	256

static u16 nvmet_dir_streams_recv(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	struct nvmet_ns *ns = req->ns;
	struct nvmet_streams_state *state;
	struct streams_directive_params params = { };
	unsigned int id, n = 0, allocated, opened;
	u16 status = NVME_SC_SUCCESS;
	__le16 *open = NULL;
	u16 want;

	mutex_lock(&ns->subsys->lock);
	state = xa_load(&req->sq->ctrl->streams, ns->nsid);
	nvmet_streams_held(ns, &allocated, &opened);
	switch (cmd->doper) {
	case NVME_DIR_RCV_ST_OP_PARAM:
		params.msl = cpu_to_le16(ns->streams);
		params.nssa = cpu_to_le16(ns->streams - allocated);
		params.nsso = cpu_to_le16(opened);
		params.sws = cpu_to_le32(max(1U, NVMET_STREAM_WRITE_SIZE >>
					     ns->blksize_shift));
		params.sgs = cpu_to_le16(NVMET_STREAM_GRANULARITY);
		if (state) {
			n = bitmap_weight(state->open, NVMET_MAX_STREAMS + 1);
			params.nsa = cpu_to_le16(state->allocated);
			params.nso = cpu_to_le16(n);
		}
		mutex_unlock(&ns->subsys->lock);
		return nvmet_dir_copy(req, &params, sizeof(params));
	case NVME_DIR_RCV_ST_OP_STATUS:
		if (!state || !state->enabled)
			break;
		open = kcalloc(NVMET_MAX_STREAMS + 1, sizeof(*open), GFP_KERNEL);
		if (!open) {
			status = NVME_SC_INTERNAL;
			goto out;
		}
		for_each_set_bit(id, state->open, NVMET_MAX_STREAMS + 1)
			open[++n] = cpu_to_le16(id);
		open[0] = cpu_to_le16(n);
		mutex_unlock(&ns->subsys->lock);
		status = nvmet_dir_copy(req, open, (n + 1) * sizeof(*open));
		kfree(open);
		return status;
	case NVME_DIR_RCV_ST_OP_RESOURCE:
		if (!state || !state->enabled)
			break;
		/* NSR: CDW12 bits 15:0 */
		want = cmd->endir | cmd->tdtype << 8;
		if (!want) {
			status = nvmet_dir_invalid(req, DIR_LOC(endir));
			goto out;
		}
		want = min_t(unsigned int, want, ns->streams - allocated);
		if (!want) {
			status = NVME_SC_STREAM_ALLOC_FAILED | NVME_STATUS_DNR;
			goto out;
		}
		state->allocated += want;
		req->cqe->result.u32 = cpu_to_le32(want);
		break;
	default:
		status = nvmet_dir_invalid(req, DIR_LOC(doper));
		goto out;
	}
	/* Get Status and Allocate Resources need Streams enabled. */
	if (!state || !state->enabled)
		status = nvmet_dir_invalid(req, DIR_LOC(dtype));
out:
	mutex_unlock(&ns->subsys->lock);
	return status;
}

static void nvmet_execute_dir_recv(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	u16 status;

	if (!nvmet_check_transfer_len(req, nvmet_dir_recv_len(req)))
		return;

	switch (cmd->dtype) {
	case NVME_DIR_IDENTIFY:
		status = nvmet_dir_identify_params(req);
		break;
	case NVME_DIR_STREAMS:
		status = req->ns && req->ns->streams ?
			nvmet_dir_streams_recv(req) :
			nvmet_dir_invalid(req, DIR_LOC(dtype));
		break;
	default:
		status = nvmet_dir_invalid(req, DIR_LOC(dtype));
	}
	nvmet_req_complete(req, status);
}

/*
 * Directive Send and Receive exist where some namespace of the subsystem
 * has streams.  NSID FFFFFFFFh stands for all namespaces where the
 * specification allows it (Identify); other commands name one.
 */
u16 nvmet_parse_directive_cmd(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	u16 status;

	BUILD_BUG_ON(sizeof(struct nvme_dir_identify_params) != 4096);
	BUILD_BUG_ON(sizeof(struct streams_directive_params) != 32);

	if (!nvmet_subsys_has_streams(nvmet_req_subsys(req)))
		return nvmet_report_invalid_opcode(req);

	if (!(cmd->dtype == NVME_DIR_IDENTIFY &&
	      le32_to_cpu(cmd->nsid) == NVME_NSID_ALL)) {
		status = nvmet_req_find_ns(req);
		if (status)
			return status;
	}
	if (cmd->opcode == nvme_admin_directive_send)
		req->execute = nvmet_execute_dir_send;
	else
		req->execute = nvmet_execute_dir_recv;
	return NVME_SC_SUCCESS;
}
