#include "tcpx_backend.h"

#include <cstdlib>
#include <vector>

#include "common/nixl_log.h"

namespace {

// Statuses cross the bridge as NIXL's own numbers.
nixl_status_t status(int s) {
    return static_cast<nixl_status_t>(s);
}

int64_t mdId(const nixlBackendMD *md) {
    auto *m = dynamic_cast<const nixlTcpxMetadata *>(md);
    return m == nullptr ? 0 : m->id;  // 0 is never an id: the Java side answers NOT_FOUND
}

std::vector<tcpx4j_desc> descs(const nixl_meta_dlist_t &list) {
    std::vector<tcpx4j_desc> out(static_cast<size_t>(list.descCount()));
    for (size_t i = 0; i < out.size(); i++) {
        const nixlMetaDesc &d = list[i];
        out[i] = tcpx4j_desc{static_cast<uint64_t>(d.addr), static_cast<uint64_t>(d.len), d.devId,
                             mdId(d.metadataP)};
    }
    return out;
}

} // namespace

nixlTcpxEngine::nixlTcpxEngine(const nixlBackendInitParams *init_params) : nixlBackendEngine(init_params) {
    std::vector<const char *> keys;
    std::vector<const char *> values;
    if (init_params->customParams != nullptr) {
        for (const auto &[k, v] : *init_params->customParams) {
            keys.push_back(k.c_str());
            values.push_back(v.c_str());
        }
    }
    int s = tcpx4j_nixl_create(localAgent.c_str(), keys.data(), values.data(), keys.size(), &bridge_);
    if (s != TCPX4J_SUCCESS) {
        // NIXL's agent reports any failed backend creation as NIXL_ERR_BACKEND; the log keeps the cause
        NIXL_ERROR << "TCPX backend for agent " << localAgent << " not created ("
                   << nixlEnumStrings::statusStr(status(s)) << "): " << tcpx4j_nixl_last_error();
        bridge_ = nullptr;
        initErr = true;
    }
}

nixlTcpxEngine::~nixlTcpxEngine() {
    tcpx4j_nixl_destroy(bridge_);
}

nixl_status_t nixlTcpxEngine::fail(const char *what, int s) const {
    if (s < 0) {
        NIXL_DEBUG << "TCPX " << what << ": " << nixlEnumStrings::statusStr(status(s)) << ": "
                   << tcpx4j_nixl_last_error();
    }
    return status(s);
}

nixl_status_t nixlTcpxEngine::registerMem(const nixlBlobDesc &mem, const nixl_mem_t &nixl_mem,
                                          nixlBackendMD *&out) {
    int64_t id = 0;
    int s = tcpx4j_nixl_register_mem(bridge_, mem.addr, mem.len, mem.devId, nixl_mem, &id);
    if (s == TCPX4J_SUCCESS) {
        out = new nixlTcpxMetadata(true, id);
    }
    return fail("registerMem", s);
}

nixl_status_t nixlTcpxEngine::deregisterMem(nixlBackendMD *meta) {
    int s = tcpx4j_nixl_deregister_mem(bridge_, mdId(meta));
    delete meta;
    return fail("deregisterMem", s);
}

nixl_status_t nixlTcpxEngine::connect(const std::string &remote_agent) {
    return fail("connect", tcpx4j_nixl_connect(bridge_, remote_agent.c_str()));
}

nixl_status_t nixlTcpxEngine::disconnect(const std::string &remote_agent) {
    return fail("disconnect", tcpx4j_nixl_disconnect(bridge_, remote_agent.c_str()));
}

nixl_status_t nixlTcpxEngine::unloadMD(nixlBackendMD *input) {
    int s = tcpx4j_nixl_unload_md(bridge_, mdId(input));
    delete input;
    return fail("unloadMD", s);
}

nixl_status_t nixlTcpxEngine::prepXfer(const nixl_xfer_op_t &operation, const nixl_meta_dlist_t &local,
                                       const nixl_meta_dlist_t &remote, const std::string &remote_agent,
                                       nixlBackendReqH *&handle, const nixl_opt_b_args_t *) const {
    std::vector<tcpx4j_desc> l = descs(local);
    std::vector<tcpx4j_desc> r = descs(remote);
    int64_t id = 0;
    int s = tcpx4j_nixl_prep_xfer(bridge_, operation, local.getType(), l.data(), l.size(), remote.getType(),
                                  r.data(), r.size(), remote_agent.c_str(), &id);
    if (s == TCPX4J_SUCCESS) {
        handle = new nixlTcpxRequest(id);
    }
    return fail("prepXfer", s);
}

nixl_status_t nixlTcpxEngine::postXfer(const nixl_xfer_op_t &operation, const nixl_meta_dlist_t &local,
                                       const nixl_meta_dlist_t &remote, const std::string &remote_agent,
                                       nixlBackendReqH *&handle, const nixl_opt_b_args_t *opt_args) const {
    if (handle == nullptr) {
        nixl_status_t p = prepXfer(operation, local, remote, remote_agent, handle, opt_args);
        if (p != NIXL_SUCCESS) {
            return p;
        }
    }
    auto *req = static_cast<nixlTcpxRequest *>(handle);
    bool notify = opt_args != nullptr && opt_args->hasNotif;
    int s = tcpx4j_nixl_post_xfer(bridge_, req->id, notify ? 1 : 0, notify ? opt_args->notifMsg.data() : nullptr,
                                  notify ? opt_args->notifMsg.size() : 0);
    return fail("postXfer", s);
}

nixl_status_t nixlTcpxEngine::checkXfer(nixlBackendReqH *handle) const {
    return fail("checkXfer", tcpx4j_nixl_check_xfer(bridge_, static_cast<nixlTcpxRequest *>(handle)->id));
}

nixl_status_t nixlTcpxEngine::releaseReqH(nixlBackendReqH *handle) const {
    if (handle == nullptr) {
        return NIXL_SUCCESS;
    }
    int s = tcpx4j_nixl_release_req(bridge_, static_cast<nixlTcpxRequest *>(handle)->id);
    // Release never blocks on the Java side and only fails for a handle it does not know, which
    // therefore holds nothing there: the C++ object goes either way.
    delete handle;
    return s == TCPX4J_ERR_NOT_FOUND ? NIXL_SUCCESS : fail("releaseReqH", s);
}

nixl_status_t nixlTcpxEngine::getPublicData(const nixlBackendMD *meta, std::string &str) const {
    void *data = nullptr;
    size_t len = 0;
    int s = tcpx4j_nixl_get_public_data(bridge_, mdId(meta), &data, &len);
    if (s == TCPX4J_SUCCESS) {
        str.assign(static_cast<const char *>(data), len);
        tcpx4j_nixl_free(data);
    }
    return fail("getPublicData", s);
}

nixl_status_t nixlTcpxEngine::getConnInfo(std::string &str) const {
    void *data = nullptr;
    size_t len = 0;
    int s = tcpx4j_nixl_get_conn_info(bridge_, &data, &len);
    if (s == TCPX4J_SUCCESS) {
        str.assign(static_cast<const char *>(data), len);
        tcpx4j_nixl_free(data);
    }
    return fail("getConnInfo", s);
}

nixl_status_t nixlTcpxEngine::loadRemoteConnInfo(const std::string &remote_agent,
                                                 const std::string &remote_conn_info) {
    return fail("loadRemoteConnInfo",
                tcpx4j_nixl_load_remote_conn_info(bridge_, remote_agent.c_str(), remote_conn_info.data(),
                                                  remote_conn_info.size()));
}

nixl_status_t nixlTcpxEngine::loadRemoteMD(const nixlBlobDesc &input, const nixl_mem_t &nixl_mem,
                                           const std::string &remote_agent, nixlBackendMD *&output) {
    int64_t id = 0;
    int s = tcpx4j_nixl_load_remote_md(bridge_, input.addr, input.len, input.devId, nixl_mem, input.metaInfo.data(),
                                       input.metaInfo.size(), remote_agent.c_str(), &id);
    if (s == TCPX4J_SUCCESS) {
        output = new nixlTcpxMetadata(false, id);
    }
    return fail("loadRemoteMD", s);
}

nixl_status_t nixlTcpxEngine::loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) {
    int64_t id = 0;
    int s = tcpx4j_nixl_load_local_md(bridge_, mdId(input), &id);
    if (s == TCPX4J_SUCCESS) {
        output = new nixlTcpxMetadata(false, id);
    }
    return fail("loadLocalMD", s);
}

nixl_status_t nixlTcpxEngine::getNotifs(notif_list_t &notif_list) {
    auto append = [](void *ctx, const char *agent, size_t agent_len, const void *msg, size_t msg_len) {
        static_cast<notif_list_t *>(ctx)->emplace_back(std::string(agent, agent_len),
                                                       std::string(static_cast<const char *>(msg), msg_len));
    };
    return fail("getNotifs", tcpx4j_nixl_get_notifs(bridge_, append, &notif_list));
}

nixl_status_t nixlTcpxEngine::genNotif(const std::string &remote_agent, const std::string &msg) const {
    return fail("genNotif", tcpx4j_nixl_gen_notif(bridge_, remote_agent.c_str(), msg.data(), msg.size()));
}

nixl_status_t nixlTcpxEngine::estimateXferCost(const nixl_xfer_op_t &, const nixl_meta_dlist_t &,
                                               const nixl_meta_dlist_t &, const std::string &,
                                               nixlBackendReqH *const &handle, std::chrono::microseconds &duration,
                                               std::chrono::microseconds &err_margin, nixl_cost_t &method,
                                               const nixl_opt_args_t *) const {
    if (handle == nullptr) {
        return NIXL_ERR_INVALID_PARAM;
    }
    int64_t us = 0;
    int64_t margin = 0;
    int m = 0;
    int s = tcpx4j_nixl_estimate_xfer_cost(bridge_, static_cast<nixlTcpxRequest *>(handle)->id, &us, &margin, &m);
    if (s == TCPX4J_SUCCESS) {
        duration = std::chrono::microseconds(us);
        err_margin = std::chrono::microseconds(margin);
        method = static_cast<nixl_cost_t>(m);
    }
    return fail("estimateXferCost", s);
}
