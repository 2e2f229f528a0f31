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

// The keys the backend accepts with their advertised defaults ("" = the engine's default), from the
// bridge's static table: answering must not start the Java VM. A host that passes a default back
// unchanged leaves the key to TCPX4J_NIXL_<KEY> (docs/NIXL.md).
nixl_b_params_t backendOptions() {
    size_t n = 0;
    const tcpx4j_param *p = tcpx4j_nixl_advertised_params(&n);
    nixl_b_params_t options;
    for (size_t i = 0; i < n; i++) {
        options.emplace(p[i].key, p[i].value);
    }
    return options;
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
