// Two NIXL agents in one process moving host memory through the TCPX backend: WRITE and READ with
// notifications, a local copy, and invalidation. Every byte is checked. Also: what an agent sees
// for a bad TCPX parameter, and that NIXL's own plugins (UCX) still load beside TCPX. Build with
// the plugin (`./tcpx4j nixl install --examples`, or meson -Dexamples=true); installed into NIXL's
// own plugin directory it needs no environment at all (docs/NIXL.md).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <algorithm>
#include <thread>
#include <vector>

#include "nixl.h"

namespace {

int failures = 0;

void check(bool ok, const char *what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    failures += ok ? 0 : 1;
}

void fill(std::vector<unsigned char> &v, unsigned seed) {
    for (auto &b : v) {
        seed = seed * 1103515245u + 12345u;
        b = static_cast<unsigned char>(seed >> 16);
    }
}

nixl_status_t wait(nixlAgent &agent, nixlXferReqH *req, nixl_status_t posted) {
    nixl_status_t s = posted;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (s == NIXL_IN_PROG && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        s = agent.getXferStatus(req);
    }
    return s;
}

// Polls until `want` notifications from `from` arrived, then a little longer for extra ones.
std::vector<std::string> notifs(nixlAgent &agent, const std::string &from, size_t want) {
    std::vector<std::string> got;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto poll = [&] {
        nixl_notifs_t n;
        agent.getNotifs(n);
        for (auto &[who, msgs] : n) {
            for (auto &m : msgs) {
                got.push_back(who + ":" + m);
            }
        }
    };
    while (got.size() < want && std::chrono::steady_clock::now() < deadline) {
        poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    poll();
    (void) from;
    return got;
}

nixl_xfer_dlist_t xferList(const std::vector<unsigned char> &buf) {
    nixl_xfer_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0));
    return l;
}

} // namespace

int main() {
    const size_t n = 8 * 1024 * 1024 + 4097;
    nixlAgentConfig cfg(true);
    nixlAgent a("A", cfg);
    nixlAgent b("B", cfg);

    std::vector<nixl_backend_t> plugins;
    a.getAvailPlugins(plugins);
    std::sort(plugins.begin(), plugins.end());
    std::printf("     plugins NIXL found:");
    for (auto &p : plugins) {
        std::printf(" %s", p.c_str());
    }
    std::printf("\n");

    nixl_mem_list_t mems;
    nixl_b_params_t params;
    check(a.getPluginParams("TCPX", mems, params) == NIXL_SUCCESS, "TCPX plugin found (getPluginParams)");
    std::printf("     TCPX mems: %zu, options:", mems.size());
    for (auto &[k, v] : params) {
        std::printf(" %s=%s", k.c_str(), v.c_str());
    }
    std::printf("\n");
    // a misspelt key: the agent reports any failed backend creation as NIXL_ERR_BACKEND (the log names the key)
    {
        nixlAgentConfig plain(false);  // no progress thread: a UCX built without multi-threading accepts it
        nixlAgent c("C", plain);
        nixlBackendH *bc = nullptr;
        nixl_b_params_t typo = {{"trasnport", "tcpx"}};
        check(c.createBackend("TCPX", typo, bc) == NIXL_ERR_BACKEND, "unknown TCPX parameter -> NIXL_ERR_BACKEND");
        if (std::find(plugins.begin(), plugins.end(), "UCX") != plugins.end()) {
            nixl_mem_list_t um;
            nixl_b_params_t up;
            check(c.getPluginParams("UCX", um, up) == NIXL_SUCCESS && c.createBackend("UCX", up, bc) == NIXL_SUCCESS,
                  "NIXL's own UCX plugin still loads beside TCPX");
        }
    }

    // the advertised options passed back as they are (TCPX4J_NIXL_* in the environment still apply), cuda off
    nixl_b_params_t init = params;
    init["cuda"] = "off";
    nixlBackendH *ba = nullptr, *bb = nullptr;
    check(a.createBackend("TCPX", init, ba) == NIXL_SUCCESS, "createBackend TCPX on A");
    check(b.createBackend("TCPX", init, bb) == NIXL_SUCCESS, "createBackend TCPX on B");
    if (ba == nullptr || bb == nullptr) {
        return 1;
    }

    std::vector<unsigned char> aSrc(n), aDst(n), bBuf(n), bSrc(n);
    fill(aSrc, 1);
    fill(bSrc, 2);
    nixl_opt_args_t withA, withB;
    withA.backends.push_back(ba);
    withB.backends.push_back(bb);
    nixl_reg_dlist_t ra(DRAM_SEG), rb(DRAM_SEG);
    for (auto *v : {&aSrc, &aDst}) ra.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(v->data()), n, 0, ""));
    for (auto *v : {&bBuf, &bSrc}) rb.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(v->data()), n, 0, ""));
    check(a.registerMem(ra, &withA) == NIXL_SUCCESS, "registerMem on A");
    check(b.registerMem(rb, &withB) == NIXL_SUCCESS, "registerMem on B");

    std::string mdA, mdB, name;
    check(a.getLocalMD(mdA) == NIXL_SUCCESS && b.getLocalMD(mdB) == NIXL_SUCCESS, "getLocalMD");
    check(a.loadRemoteMD(mdB, name) == NIXL_SUCCESS && name == "B", "A loads B's metadata");
    check(b.loadRemoteMD(mdA, name) == NIXL_SUCCESS && name == "A", "B loads A's metadata");

    // WRITE A -> B with a notification
    nixl_opt_args_t wargs;
    wargs.notif = std::string("write-done");
    nixlXferReqH *w = nullptr;
    check(a.createXferReq(NIXL_WRITE, xferList(aSrc), xferList(bBuf), "B", w, &wargs) == NIXL_SUCCESS,
          "createXferReq WRITE");
    nixl_status_t s = a.postXferReq(w);
    check(s == NIXL_IN_PROG || s == NIXL_SUCCESS, "postXferReq WRITE");
    auto nb = notifs(b, "A", 1);
    check(nb.size() == 1 && nb[0] == "A:write-done", "B got exactly one notification 'write-done' from A");
    check(std::memcmp(aSrc.data(), bBuf.data(), n) == 0, "WRITE: every byte landed at B");
    check(wait(a, w, NIXL_IN_PROG) == NIXL_SUCCESS, "WRITE completes at A");

    // repost the finished request
    std::memset(aSrc.data(), 0x5a, 65536);
    s = a.postXferReq(w);
    check(s == NIXL_IN_PROG || s == NIXL_SUCCESS, "repost WRITE");
    check(wait(a, w, s) == NIXL_SUCCESS, "repost completes");
    nb = notifs(b, "A", 1);
    check(nb.size() == 1, "repost: exactly one more notification");
    check(std::memcmp(aSrc.data(), bBuf.data(), n) == 0, "repost: every byte landed at B");
    check(a.releaseXferReq(w) == NIXL_SUCCESS, "releaseXferReq WRITE");

    // READ B -> A, notification to B
    nixl_opt_args_t rargs;
    rargs.notif = std::string("read-done");
    nixlXferReqH *r = nullptr;
    check(a.createXferReq(NIXL_READ, xferList(aDst), xferList(bSrc), "B", r, &rargs) == NIXL_SUCCESS,
          "createXferReq READ");
    s = a.postXferReq(r);
    check(wait(a, r, s) == NIXL_SUCCESS, "READ completes at A");
    check(std::memcmp(aDst.data(), bSrc.data(), n) == 0, "READ: every byte landed at A");
    nb = notifs(b, "A", 1);
    check(nb.size() == 1 && nb[0] == "A:read-done", "B got exactly one notification 'read-done' from A");
    check(a.releaseXferReq(r) == NIXL_SUCCESS, "releaseXferReq READ");

    // genNotif
    check(b.genNotif("A", "hello from B") == NIXL_SUCCESS, "genNotif B -> A");
    auto na = notifs(a, "B", 1);
    check(na.size() == 1 && na[0] == "B:hello from B", "A got the notification from B");

    // local copy within A
    std::memset(aDst.data(), 0, n);
    nixl_opt_args_t largs;
    largs.notif = std::string("local");
    nixlXferReqH *l = nullptr;
    check(a.createXferReq(NIXL_WRITE, xferList(aSrc), xferList(aDst), "A", l, &largs) == NIXL_SUCCESS,
          "createXferReq local WRITE");
    s = a.postXferReq(l);
    check(wait(a, l, s) == NIXL_SUCCESS, "local WRITE completes");
    check(std::memcmp(aSrc.data(), aDst.data(), n) == 0, "local: every byte copied");
    na = notifs(a, "A", 1);
    check(na.size() == 1 && na[0] == "A:local", "A got its own notification");
    check(a.releaseXferReq(l) == NIXL_SUCCESS, "releaseXferReq local");

    check(a.invalidateRemoteMD("B") == NIXL_SUCCESS, "invalidateRemoteMD (disconnect + unloadMD)");
    check(a.deregisterMem(ra, &withA) == NIXL_SUCCESS && b.deregisterMem(rb, &withB) == NIXL_SUCCESS,
          "deregisterMem");
    std::printf("%d failed\n", failures);
    return failures == 0 ? 0 : 1;
}
