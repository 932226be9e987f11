// SPDX-License-Identifier: GPL-2.0
/*
 * NVMe over Fabrics target: directives.
 *
 * Directive Send and Receive, on a controller that offers Directives:
 * the Identify directive is here, the other directives are handed to
 * theirs, Streams to streams.c.  So is the directive of a write, Streams
 * to streams-io.c and Data Placement, which is FDP's, to fdp-io.c.
 * Neither knows of the other: where both have a say, as in Return
 * Parameters of the Identify directive, this file asks each.
 */
#include "nvmet.h"

#define DIR_LOC(field)	offsetof(struct nvme_directive_cmd, field)

/*
 * Enable Directive: Streams on or off for the namespace, or with NSID
 * FFFFFFFFh for every namespace that has streams.
 */
static u16 nvmet_dir_identify_send(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;
	struct nvmet_subsys *subsys = nvmet_req_subsys(req);
	bool enable = cmd->endir & NVME_DIR_ENDIR;
	struct nvmet_ns *ns;
	unsigned long idx;
	u16 status;

	if (cmd->doper != NVME_DIR_SND_ID_OP_ENABLE)
		return nvmet_invalid_field(req, DIR_LOC(doper));
	/* Only Streams can be enabled: Identify always is. */
	if (cmd->tdtype != NVME_DIR_STREAMS)
		return nvmet_invalid_field(req, DIR_LOC(tdtype));

	mutex_lock(&subsys->lock);
	if (req->ns) {
		status = req->ns->streams_state ?
			nvmet_streams_enable(req, req->ns, enable) :
			nvmet_invalid_field(req, DIR_LOC(tdtype));
	} else {
		/* NSID FFFFFFFFh: every namespace that has streams. */
		status = nvmet_invalid_field(req, DIR_LOC(tdtype));
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
			nvmet_streams_dir_send(req) :
			nvmet_invalid_field(req, DIR_LOC(dtype));
		break;
	default:
		status = nvmet_invalid_field(req, DIR_LOC(dtype));
	}
out:
	nvmet_req_complete(req, status);
}

/*
 * Return Parameters: the directives of the namespace, or with NSID
 * FFFFFFFFh of all namespaces, that are supported, enabled for the
 * host and persistent.
 */
static u16 nvmet_dir_identify_params(struct nvmet_req *req)
{
	struct nvmet_subsys *subsys = nvmet_req_subsys(req);
	struct nvme_dir_identify_params *id;
	bool supported = false, enabled = true;
	bool fdp = false, fdp_enabled = true;
	struct nvmet_ns *ns;
	unsigned long idx;
	u16 status;

	if (req->cmd->directive.doper != NVME_DIR_RCV_ID_OP_PARAM)
		return nvmet_invalid_field(req, DIR_LOC(doper));
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
		supported = true;
		enabled &= nvmet_streams_host_enabled(req->sq->ctrl, ns);
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
			nvmet_streams_dir_recv(req) :
			nvmet_invalid_field(req, DIR_LOC(dtype));
		break;
	default:
		status = nvmet_invalid_field(req, DIR_LOC(dtype));
	}
out:
	nvmet_req_complete(req, status);
}

/*
 * Directive Send and Receive exist on a controller that offers
 * Directives (see nvmet_alloc_ctrl()).
 */
u16 nvmet_parse_directive_cmd(struct nvmet_req *req)
{
	struct nvme_directive_cmd *cmd = &req->cmd->directive;

	BUILD_BUG_ON(sizeof(struct nvme_dir_identify_params) != 4096);

	if (!req->sq->ctrl->directives)
		return nvmet_report_invalid_opcode(req);
	if (cmd->opcode == nvme_admin_directive_send)
		req->execute = nvmet_execute_dir_send;
	else
		req->execute = nvmet_execute_dir_recv;
	return NVME_SC_SUCCESS;
}

/*
 * A write to a namespace with streams, or with placement handles that
 * its controller offers: Streams checks and counts it if it has the
 * Streams directive, FDP if it has the Data Placement directive, and
 * without a directive FDP if the controller offers it, else Streams.
 * FDP counts what the host wrote, whatever the directive.  Any other
 * directive is refused.
 *
 * This runs as the command is parsed: a write that fails later, on its
 * transfer length or its range, has still opened its stream and been
 * counted.  Counting at completion instead would cost every write a
 * test there, for counters that only the administrator reads.
 */
u16 nvmet_parse_write_directive(struct nvmet_req *req)
{
	bool fdp = nvmet_req_fdp(req);
	u16 status;

	/*
	 * A namespace with placement handles only, to a controller that
	 * does not offer FDP, is a plain one: as on every namespace before
	 * directives, the directive of a write is not looked at.
	 */
	if (!fdp && !req->ns->streams_state)
		return NVME_SC_SUCCESS;
	switch (nvmet_rw_dtype(&req->cmd->rw)) {
	case 0:
		return fdp ? nvmet_fdp_parse_write(req) :
			nvmet_streams_parse_write(req);
	case NVME_DIR_STREAMS:
		if (!req->ns->streams_state)
			break;
		status = nvmet_streams_parse_write(req);
		if (!status && fdp)
			nvmet_fdp_host_write(req);
		return status;
	case NVME_DIR_FDP:
		if (fdp)
			return nvmet_fdp_parse_write(req);
		break;
	}
	return nvmet_invalid_field(req,
			offsetof(struct nvme_rw_command, control));
}
