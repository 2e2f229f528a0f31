// The C++ plugin's own code, driven the way NIXL's agent drives a backend plugin: load
// libplugin_TCPX.so with dlopen, take its descriptor from nixl_plugin_init, pass the advertised
// options back, create two engines and move bytes between them with a notification. The plugin is
// compiled against nixl-api/nixl_api_surface.h here (NIXL itself is absent in CI), so this checks
// the plugin's logic, not NIXL's binary interface. Usage: plugin_test PATH/libplugin_TCPX.so
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend_plugin.h"

namespace {

int failures = 0;

void check(bool ok, const std::string &what) {
    if (!ok) {
        std::fprintf(stderr, "FAIL %s\n", what.c_str());
        failures++;
    }
}

nixlBackendEngine *create(nixlBackendPlugin *plugin, const std::string &agent, nixl_b_params_t &params) {
    nixlBackendInitParams init;
    init.localAgent = agent;
    init.type = "TCPX";
    init.customParams = &params;
    return plugin->create_engine(&init);
}

nixl_meta_dlist_t list(nixl_mem_t mem, void *p, size_t n, nixlBackendMD *md) {
    nixl_meta_dlist_t l(mem);
    l.addDesc(nixlMetaDesc(reinterpret_cast<uintptr_t>(p), n, 0, md));
    return l;
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: plugin_test PATH/libplugin_TCPX.so\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        std::fprintf(stderr, "FAIL dlopen: %s\n", dlerror());
        return 1;
    }
    auto init = reinterpret_cast<nixlBackendPlugin *(*) ()>(dlsym(lib, "nixl_plugin_init"));
    auto fini = reinterpret_cast<void (*)()>(dlsym(lib, "nixl_plugin_fini"));
    check(init != nullptr && fini != nullptr, "nixl_plugin_init and nixl_plugin_fini are exported");
    if (init == nullptr) {
        return 1;
    }
    nixlBackendPlugin *plugin = init();
    check(plugin != nullptr && plugin->api_version == NIXL_PLUGIN_API_VERSION, "plugin descriptor, API version 1");
    check(std::string(plugin->get_plugin_name()) == "TCPX", "plugin name TCPX");
    nixl_b_params_t options = plugin->get_backend_options();
    check(options.count("transport") == 1 && options["transport"] == "loopback" && options.count("cuda") == 1,
          "options advertise transport=loopback and cuda");
    nixl_mem_list_t mems = plugin->get_backend_mems();
    check(mems.size() == 2 && mems[0] == DRAM_SEG && mems[1] == VRAM_SEG, "mems DRAM_SEG, VRAM_SEG");

    // an unknown key: the engine reports an init error (the agent turns it into NIXL_ERR_BACKEND)
    nixl_b_params_t bad = {{"no_such_key", "1"}};
    nixlBackendEngine *x = create(plugin, "X", bad);
    check(x != nullptr && x->getInitErr(), "unknown parameter: init error");
    plugin->destroy_engine(x);

    // the advertised options passed back unchanged, as nixlbench does
    nixlBackendEngine *a = create(plugin, "A", options);
    nixlBackendEngine *b = create(plugin, "B", options);
    check(a != nullptr && !a->getInitErr() && b != nullptr && !b->getInitErr(), "engines A and B created");
    if (failures > 0) {
        return 1;
    }
    check(a->supportsRemote() && a->supportsLocal() && a->supportsNotif(), "supports remote, local, notif");

    std::string ca, cb;
    check(a->getConnInfo(ca) == NIXL_SUCCESS && b->getConnInfo(cb) == NIXL_SUCCESS && !ca.empty(), "getConnInfo");
    check(a->loadRemoteConnInfo("B", cb) == NIXL_SUCCESS && b->loadRemoteConnInfo("A", ca) == NIXL_SUCCESS,
          "loadRemoteConnInfo");
    check(a->connect("B") == NIXL_SUCCESS, "connect");

    const size_t n = 2 * 1024 * 1024 + 17;
    std::vector<unsigned char> src(n), dst(n, 0);
    unsigned seed = 7;
    for (auto &v : src) {
        seed = seed * 1103515245u + 12345u;
        v = static_cast<unsigned char>(seed >> 16);
    }
    nixlBackendMD *mdA = nullptr, *mdB = nullptr, *remote = nullptr;
    check(a->registerMem(nixlBlobDesc(reinterpret_cast<uintptr_t>(src.data()), n, 0, ""), DRAM_SEG, mdA) ==
              NIXL_SUCCESS,
          "registerMem at A");
    check(b->registerMem(nixlBlobDesc(reinterpret_cast<uintptr_t>(dst.data()), n, 0, ""), DRAM_SEG, mdB) ==
              NIXL_SUCCESS,
          "registerMem at B");
    std::string pub;
    check(b->getPublicData(mdB, pub) == NIXL_SUCCESS, "getPublicData at B");
    check(a->loadRemoteMD(nixlBlobDesc(reinterpret_cast<uintptr_t>(dst.data()), n, 0, pub), DRAM_SEG, "B", remote) ==
              NIXL_SUCCESS,
          "loadRemoteMD at A");

    nixl_meta_dlist_t local = list(DRAM_SEG, src.data(), n, mdA);
    nixl_meta_dlist_t far = list(DRAM_SEG, dst.data(), n, remote);
    nixlBackendReqH *h = nullptr;
    nixl_opt_b_args_t args;
    args.hasNotif = true;
    args.notifMsg = "block-7";
    check(a->prepXfer(NIXL_WRITE, local, far, "B", h, &args) == NIXL_SUCCESS && h != nullptr, "prepXfer WRITE");
    nixl_status_t s = a->postXfer(NIXL_WRITE, local, far, "B", h, &args);
    check(s == NIXL_IN_PROG || s == NIXL_SUCCESS, "postXfer WRITE: " + std::to_string(s));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (s == NIXL_IN_PROG && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        s = a->checkXfer(h);
    }
    check(s == NIXL_SUCCESS, "WRITE completes: " + std::to_string(s));
    notif_list_t notifs;
    while (notifs.empty() && std::chrono::steady_clock::now() < deadline) {
        check(b->getNotifs(notifs) == NIXL_SUCCESS, "getNotifs");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    b->getNotifs(notifs);
    check(notifs.size() == 1 && notifs[0].first == "A" && notifs[0].second == "block-7",
          "exactly one notification 'block-7' from A at B (got " + std::to_string(notifs.size()) + ")");
    check(std::memcmp(src.data(), dst.data(), n) == 0, "every byte landed at B");

    std::chrono::microseconds duration{0}, margin{0};
    nixl_cost_t method{};
    check(a->estimateXferCost(NIXL_WRITE, local, far, "B", h, duration, margin, method) == NIXL_SUCCESS &&
              duration.count() > 0,
          "estimateXferCost");
    check(a->releaseReqH(h) == NIXL_SUCCESS, "releaseReqH");
    check(a->unloadMD(remote) == NIXL_SUCCESS, "unloadMD");
    check(a->deregisterMem(mdA) == NIXL_SUCCESS && b->deregisterMem(mdB) == NIXL_SUCCESS, "deregisterMem");
    check(a->disconnect("B") == NIXL_SUCCESS, "disconnect");
    plugin->destroy_engine(a);
    plugin->destroy_engine(b);
    fini();
    std::printf("plugin_test: %d failed\n", failures);
    return failures == 0 ? 0 : 1;
}
