// Plugin entry points NIXL's plugin manager looks up in libplugin_TCPX.so.
#include "backend/backend_plugin.h"
#include "tcpx_backend.h"

namespace {

nixlBackendEngine *createEngine(const nixlBackendInitParams *init_params) {
    try {
        return new nixlTcpxEngine(init_params);
    } catch (const std::exception &e) {
        NIXL_ERROR << "TCPX backend creation failed: " << e.what();
        return nullptr;
    }
}

void destroyEngine(nixlBackendEngine *engine) {
    delete engine;
}

const char *pluginName() {
    return "TCPX";
}

const char *pluginVersion() {
    return TCPX4J_VERSION;
}

// The keys NixlBackendConfig accepts, with their defaults ("" = engine default).
nixl_b_params_t backendOptions() {
    return {{"transport", "loopback"},  {"cuda", "auto"},          {"listen_host", "127.0.0.1"},
            {"listen_port", "0"},       {"advertise_host", ""},    {"channels", ""},
            {"chunk_size", ""},         {"cost_network_gbps", ""}, {"cost_local_gbps", ""},
            {"cost_latency_us", ""}};
}

nixl_mem_list_t backendMems() {
    return {DRAM_SEG, VRAM_SEG};
}

nixlBackendPlugin plugin = {NIXL_PLUGIN_API_VERSION, createEngine, destroyEngine, pluginName,
                            pluginVersion,           backendOptions, backendMems};

} // namespace

extern "C" NIXL_PLUGIN_EXPORT nixlBackendPlugin *nixl_plugin_init() {
    return &plugin;
}

extern "C" NIXL_PLUGIN_EXPORT void nixl_plugin_fini() {
    // The Java VM cannot be unloaded from a process; backends were closed when NIXL destroyed them.
}
