// The TCPX backend engine of NIXL: a thin C++ layer over libtcpx4j_nixl_bridge, which runs the
// tcpx4j engine (Java) in this process. Every method is one bridge call; the Java side keeps the
// state, so this class holds only the bridge handle.
#ifndef TCPX4J_NIXL_TCPX_BACKEND_H
#define TCPX4J_NIXL_TCPX_BACKEND_H

#include <cstdint>
#include <string>

#include "backend/backend_engine.h"
#include "tcpx4j_nixl_bridge.h"

// Metadata of a registration, a loaded local target or a loaded remote region: the Java side's id.
class nixlTcpxMetadata : public nixlBackendMD {
public:
    nixlTcpxMetadata(bool is_private, int64_t id) : nixlBackendMD(is_private), id(id) {}
    const int64_t id;
};

// A prepared transfer: the Java side's handle id.
class nixlTcpxRequest : public nixlBackendReqH {
public:
    explicit nixlTcpxRequest(int64_t id) : id(id) {}
    const int64_t id;
};

class nixlTcpxEngine : public nixlBackendEngine {
public:
    explicit nixlTcpxEngine(const nixlBackendInitParams *init_params);
    ~nixlTcpxEngine() override;

    bool supportsRemote() const override { return true; }
    bool supportsLocal() const override { return true; }
    bool supportsNotif() const override { return true; }
    nixl_mem_list_t getSupportedMems() const override { return {DRAM_SEG, VRAM_SEG}; }

    nixl_status_t registerMem(const nixlBlobDesc &mem, const nixl_mem_t &nixl_mem, nixlBackendMD *&out) override;
    nixl_status_t deregisterMem(nixlBackendMD *meta) override;

    nixl_status_t connect(const std::string &remote_agent) override;
    nixl_status_t disconnect(const std::string &remote_agent) override;
    nixl_status_t unloadMD(nixlBackendMD *input) override;

    nixl_status_t prepXfer(const nixl_xfer_op_t &operation, const nixl_meta_dlist_t &local,
                           const nixl_meta_dlist_t &remote, const std::string &remote_agent,
                           nixlBackendReqH *&handle, const nixl_opt_b_args_t *opt_args = nullptr) const override;
    nixl_status_t postXfer(const nixl_xfer_op_t &operation, const nixl_meta_dlist_t &local,
                           const nixl_meta_dlist_t &remote, const std::string &remote_agent,
                           nixlBackendReqH *&handle, const nixl_opt_b_args_t *opt_args = nullptr) const override;
    nixl_status_t checkXfer(nixlBackendReqH *handle) const override;
    nixl_status_t releaseReqH(nixlBackendReqH *handle) const override;

    nixl_status_t getPublicData(const nixlBackendMD *meta, std::string &str) const override;
    nixl_status_t getConnInfo(std::string &str) const override;
    nixl_status_t loadRemoteConnInfo(const std::string &remote_agent, const std::string &remote_conn_info) override;
    nixl_status_t loadRemoteMD(const nixlBlobDesc &input, const nixl_mem_t &nixl_mem,
                               const std::string &remote_agent, nixlBackendMD *&output) override;
    nixl_status_t loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) override;

    nixl_status_t getNotifs(notif_list_t &notif_list) override;
    nixl_status_t genNotif(const std::string &remote_agent, const std::string &msg) const override;

    nixl_status_t estimateXferCost(const nixl_xfer_op_t &operation, const nixl_meta_dlist_t &local,
                                   const nixl_meta_dlist_t &remote, const std::string &remote_agent,
                                   nixlBackendReqH *const &handle, std::chrono::microseconds &duration,
                                   std::chrono::microseconds &err_margin, nixl_cost_t &method,
                                   const nixl_opt_args_t *extra_params = nullptr) const override;

private:
    nixl_status_t fail(const char *what, int status) const;

    tcpx4j_nixl *bridge_ = nullptr;
};

#endif
