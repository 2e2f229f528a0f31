// The part of NIXL's backend plugin interface that libplugin_TCPX.so uses, declared by tcpx4j from
// NIXL's documented interface (type names, enum values, method signatures) so that the plugin's
// sources compile and can be exercised where NIXL is not installed (CI). It is not NIXL's header and
// does not give NIXL's binary layout: the plugin that NIXL loads is always built against an
// installed NIXL with meson (docs/NIXL.md). Keep names and signatures in step with the NIXL
// release the docs name.
#ifndef TCPX4J_NIXL_API_SURFACE_H
#define TCPX4J_NIXL_API_SURFACE_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

enum nixl_mem_t { DRAM_SEG, VRAM_SEG, BLK_SEG, OBJ_SEG, FILE_SEG };
enum nixl_xfer_op_t { NIXL_READ, NIXL_WRITE };
enum nixl_status_t {
    NIXL_IN_PROG = 1,
    NIXL_SUCCESS = 0,
    NIXL_ERR_NOT_POSTED = -1,
    NIXL_ERR_INVALID_PARAM = -2,
    NIXL_ERR_BACKEND = -3,
    NIXL_ERR_NOT_FOUND = -4,
    NIXL_ERR_MISMATCH = -5,
    NIXL_ERR_NOT_ALLOWED = -6,
    NIXL_ERR_REPOST_ACTIVE = -7,
    NIXL_ERR_UNKNOWN = -8,
    NIXL_ERR_NOT_SUPPORTED = -9,
    NIXL_ERR_REMOTE_DISCONNECT = -10,
    NIXL_ERR_CANCELED = -11,
    NIXL_ERR_NO_TELEMETRY = -12
};
enum class nixl_cost_t { ANALYTICAL_BACKEND = 0 };

using nixl_backend_t = std::string;
using nixl_blob_t = std::string;
using nixl_mem_list_t = std::vector<nixl_mem_t>;
using nixl_b_params_t = std::unordered_map<std::string, std::string>;
using notif_list_t = std::vector<std::pair<std::string, std::string>>;

namespace nixlEnumStrings {
inline std::string statusStr(const nixl_status_t &status) {
    return "status " + std::to_string(static_cast<int>(status));
}
} // namespace nixlEnumStrings

// Log streams: NIXL logs through Abseil; here each statement becomes one line on stderr, debug
// lines only with TCPX4J_SURFACE_DEBUG set.
namespace tcpx4j_surface {
inline bool debug_enabled() {
    static const bool on = std::getenv("TCPX4J_SURFACE_DEBUG") != nullptr;
    return on;
}
class Line {
public:
    explicit Line(const char *level) { std::cerr << "[" << level << "] "; }
    ~Line() { std::cerr << std::endl; }
    template <class T> Line &operator<<(const T &v) {
        std::cerr << v;
        return *this;
    }
};
} // namespace tcpx4j_surface
#define NIXL_ERROR tcpx4j_surface::Line("ERROR")
#define NIXL_WARN tcpx4j_surface::Line("WARN")
#define NIXL_INFO tcpx4j_surface::Line("INFO")
#define NIXL_DEBUG \
    if (!tcpx4j_surface::debug_enabled()) { \
    } else \
        tcpx4j_surface::Line("DEBUG")

class nixlBasicDesc {
public:
    uintptr_t addr = 0;
    size_t len = 0;
    uint64_t devId = 0;

    nixlBasicDesc() = default;
    nixlBasicDesc(const uintptr_t &a, const size_t &l, const uint64_t &dev) : addr(a), len(l), devId(dev) {}
};

class nixlBlobDesc : public nixlBasicDesc {
public:
    nixl_blob_t metaInfo;

    nixlBlobDesc() = default;
    nixlBlobDesc(const uintptr_t &a, const size_t &l, const uint64_t &dev, const nixl_blob_t &meta)
        : nixlBasicDesc(a, l, dev), metaInfo(meta) {}
};

template <class T> class nixlDescList {
protected:
    nixl_mem_t type;
    std::vector<T> descs;

public:
    explicit nixlDescList(const nixl_mem_t &t) : type(t) {}
    virtual ~nixlDescList() = default;
    nixl_mem_t getType() const { return type; }
    int descCount() const { return static_cast<int>(descs.size()); }
    const T &operator[](size_t i) const { return descs[i]; }
    void addDesc(const T &d) { descs.push_back(d); }
};

struct nixlBackendOptionalArgs {
    nixl_blob_t notifMsg;
    bool hasNotif = false;
    nixl_blob_t customParam;
};
using nixl_opt_b_args_t = nixlBackendOptionalArgs;

struct nixlAgentOptionalArgs {
    nixl_blob_t notifMsg;
    bool hasNotif = false;
};
using nixl_opt_args_t = nixlAgentOptionalArgs;

class nixlBackendInitParams {
public:
    std::string localAgent;
    nixl_backend_t type;
    nixl_b_params_t *customParams = nullptr;
};

class nixlBackendReqH {
public:
    nixlBackendReqH() = default;
    virtual ~nixlBackendReqH() = default;
};

class nixlBackendMD {
protected:
    bool isPrivateMD;

public:
    explicit nixlBackendMD(bool isPrivate) : isPrivateMD(isPrivate) {}
    virtual ~nixlBackendMD() = default;
};

class nixlMetaDesc : public nixlBasicDesc {
public:
    nixlBackendMD *metadataP = nullptr;

    nixlMetaDesc() = default;
    nixlMetaDesc(uintptr_t a, size_t l, uint64_t dev, nixlBackendMD *md) : nixlBasicDesc(a, l, dev), metadataP(md) {}
};
using nixl_meta_dlist_t = nixlDescList<nixlMetaDesc>;

class nixlBackendEngine {
protected:
    bool initErr = false;
    const std::string localAgent;

public:
    explicit nixlBackendEngine(const nixlBackendInitParams *init_params) : localAgent(init_params->localAgent) {}
    nixlBackendEngine(const nixlBackendEngine &) = delete;
    void operator=(const nixlBackendEngine &) = delete;
    virtual ~nixlBackendEngine() = default;

    bool getInitErr() const noexcept { return initErr; }

    virtual bool supportsRemote() const = 0;
    virtual bool supportsLocal() const = 0;
    virtual bool supportsNotif() const = 0;
    virtual nixl_mem_list_t getSupportedMems() const = 0;

    virtual nixl_status_t registerMem(const nixlBlobDesc &mem, const nixl_mem_t &nixl_mem, nixlBackendMD *&out) = 0;
    virtual nixl_status_t deregisterMem(nixlBackendMD *meta) = 0;
    virtual nixl_status_t connect(const std::string &remote_agent) = 0;
    virtual nixl_status_t disconnect(const std::string &remote_agent) = 0;
    virtual nixl_status_t unloadMD(nixlBackendMD *input) = 0;
    virtual nixl_status_t prepXfer(const nixl_xfer_op_t &operation, const nixl_meta_dlist_t &local,
                                   const nixl_meta_dlist_t &remote, const std::string &remote_agent,
                                   nixlBackendReqH *&handle, const nixl_opt_b_args_t *opt_args = nullptr) const = 0;
    virtual nixl_status_t postXfer(const nixl_xfer_op_t &operation, const nixl_meta_dlist_t &local,
                                   const nixl_meta_dlist_t &remote, const std::string &remote_agent,
                                   nixlBackendReqH *&handle, const nixl_opt_b_args_t *opt_args = nullptr) const = 0;
    virtual nixl_status_t checkXfer(nixlBackendReqH *handle) const = 0;
    virtual nixl_status_t releaseReqH(nixlBackendReqH *handle) const = 0;

    virtual nixl_status_t getPublicData(const nixlBackendMD *, std::string &) const { return NIXL_ERR_BACKEND; }
    virtual nixl_status_t getConnInfo(std::string &) const { return NIXL_ERR_BACKEND; }
    virtual nixl_status_t loadRemoteConnInfo(const std::string &, const std::string &) { return NIXL_ERR_BACKEND; }
    virtual nixl_status_t loadRemoteMD(const nixlBlobDesc &, const nixl_mem_t &, const std::string &,
                                       nixlBackendMD *&) {
        return NIXL_ERR_BACKEND;
    }
    virtual nixl_status_t loadLocalMD(nixlBackendMD *, nixlBackendMD *&) { return NIXL_ERR_BACKEND; }
    virtual nixl_status_t getNotifs(notif_list_t &) { return NIXL_ERR_BACKEND; }
    virtual nixl_status_t genNotif(const std::string &, const std::string &) const { return NIXL_ERR_BACKEND; }
    virtual nixl_status_t estimateXferCost(const nixl_xfer_op_t &, const nixl_meta_dlist_t &,
                                           const nixl_meta_dlist_t &, const std::string &,
                                           nixlBackendReqH *const &, std::chrono::microseconds &,
                                           std::chrono::microseconds &, nixl_cost_t &,
                                           const nixl_opt_args_t * = nullptr) const {
        return NIXL_ERR_NOT_SUPPORTED;
    }
};

#define NIXL_PLUGIN_API_VERSION 1
#define NIXL_PLUGIN_EXPORT __attribute__((visibility("default")))

class nixlBackendPlugin {
public:
    int api_version;
    nixlBackendEngine *(*create_engine)(const nixlBackendInitParams *init_params);
    void (*destroy_engine)(nixlBackendEngine *engine);
    const char *(*get_plugin_name)();
    const char *(*get_plugin_version)();
    nixl_b_params_t (*get_backend_options)();
    nixl_mem_list_t (*get_backend_mems)();
};

extern "C" {
NIXL_PLUGIN_EXPORT nixlBackendPlugin *nixl_plugin_init();
NIXL_PLUGIN_EXPORT void nixl_plugin_fini();
}

#endif
