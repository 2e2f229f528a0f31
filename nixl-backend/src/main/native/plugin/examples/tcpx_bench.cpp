// tcpx_bench: times WRITE and READ through real NIXL agents in two processes, over block sizes
// and batch sizes, for one backend or several (TCPX and UCX: the same binary compares them, rows
// alternating between backends of the same agents). Every transfer is checked: its stamps (see
// Pattern) at the destination after each transfer, every byte after the last one of a row, and
// exactly one notification per post at the target, from the initiator.
//
// Two roles: the target listens on a TCP control port (127.0.0.1:18515 by default); the
// initiator connects, sends the set-up (backends, parameters, buffer size), and the two agents
// exchange metadata (getLocalMD / loadRemoteMD) over that connection. The control connection
// then sequences each transfer outside the timed part: the target is told what to stamp (READ)
// or to check (WRITE), and reports when its getNotifs returned the transfer's notification.
// Timed: postXferReq until getXferStatus returns SUCCESS, one transfer in flight, the initiator
// spinning on getXferStatus and the target spinning on getNotifs, as nixlbench does.
//
// Build: meson -Dexamples=true (./tcpx4j nixl install --examples). docs/NIXL.md has how to run it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <link.h>
#include <memory>
#include <sched.h>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "nixl.h"
#include "tcpx_bench_util.h"

using namespace tcpx_bench;

namespace {

using Clock = std::chrono::steady_clock;

// CLOCK_MONOTONIC, which both processes of one host share: the target's notification times are
// comparable with the initiator's post times.
int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

std::string str(nixl_status_t s) {
    return nixlEnumStrings::statusStr(s);
}

std::string cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        return "?";
    }
    std::string out;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &set)) {
            if (!out.empty()) out += ',';
            out += std::to_string(c);
        }
    }
    return out;
}

std::string env(const char *name) {
    const char *v = std::getenv(name);
    return v == nullptr ? "(unset)" : v;
}

// The directory NIXL searched for plugins: NIXL_PLUGIN_DIR, else <directory of libnixl.so>/plugins.
std::string pluginDir() {
    if (const char *d = std::getenv("NIXL_PLUGIN_DIR"); d != nullptr && *d != '\0') {
        return std::string(d) + " (NIXL_PLUGIN_DIR)";
    }
    std::string lib;
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *out) {
            std::string name = info->dlpi_name == nullptr ? "" : info->dlpi_name;
            if (name.size() >= 11 && name.compare(name.size() - 11, 11, "/libnixl.so") == 0) {
                *static_cast<std::string *>(out) = name.substr(0, name.size() - 11);
                return 1;
            }
            return 0;
        },
        &lib);
    return (lib.empty() ? std::string("<directory of libnixl.so>") : lib) + "/plugins (NIXL's own; NIXL_PLUGIN_DIR unset)";
}

// The set-up both processes share: the backends and their parameters, buffer size, agent config.
struct Setup {
    std::vector<std::string> backends;
    std::map<std::string, std::map<std::string, std::string>> params;
    size_t bufBytes = 0;
    bool progThread = false;
    int targetPollUs = 0;
    double timeoutS = 30;
};

// One agent with its backends and one registered DRAM buffer that all rows use.
class Side {
  public:
    Side(const std::string &name, const Setup &s) : setup_(s) {
        agent_ = std::make_unique<nixlAgent>(name, nixlAgentConfig(s.progThread));
        std::vector<nixl_backend_t> avail;
        agent_->getAvailPlugins(avail);
        // UCX before TCPX: TCPX starts a JVM, and libraries that install signal handlers after it
        // takes them from the JVM (docs/NIXL.md, "Signals"); UCX installs its own when it starts.
        std::vector<std::string> order = s.backends;
        std::stable_sort(order.begin(), order.end(), [](auto &a, auto &b) { return a != "TCPX" && b == "TCPX"; });
        for (const auto &b : order) {
            nixl_mem_list_t mems;
            nixl_b_params_t params;
            if (nixl_status_t st = agent_->getPluginParams(b, mems, params); st != NIXL_SUCCESS) {
                std::string found;
                for (auto &p : avail) found += " " + p;
                throw Failure("NIXL has no plugin for backend " + b + " (" + str(st) + "); it searched " +
                              pluginDir() + " and found:" + (found.empty() ? " nothing" : found) +
                              ". Install TCPX there (./tcpx4j nixl install) or point NIXL_PLUGIN_DIR at the "
                              "directory that holds libplugin_" + b + ".so");
            }
            if (b == "TCPX") {
                params["cuda"] = "off";  // DRAM only: no CUDA probe and no warning about it
            }
            if (auto it = s.params.find(b); it != s.params.end()) {
                for (auto &[k, v] : it->second) params[k] = v;
            }
            nixlBackendH *h = nullptr;
            if (nixl_status_t st = agent_->createBackend(b, params, h); st != NIXL_SUCCESS) {
                throw Failure("createBackend(" + b + ") on agent " + name + ": " + str(st) +
                              " (NIXL reports every failed creation so; the log above names the cause)");
            }
            handles_[b] = h;
            params_[b] = params;
        }
        // touched now, so that page faults stay out of the timed transfers
        buf_ = static_cast<unsigned char *>(std::aligned_alloc(4096, (s.bufBytes + 4095) / 4096 * 4096));
        if (buf_ == nullptr) {
            throw Failure("cannot allocate " + sizeText(s.bufBytes) + " (lower --max-bytes)");
        }
        std::memset(buf_, 0, s.bufBytes);
        reg_.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf_), s.bufBytes, 0, ""));
        if (nixl_status_t st = agent_->registerMem(reg_); st != NIXL_SUCCESS) {
            throw Failure("registerMem of " + sizeText(s.bufBytes) + " on agent " + name + ": " + str(st));
        }
        registered_ = true;
    }

    ~Side() {
        if (registered_) agent_->deregisterMem(reg_);
        agent_.reset();  // destroys the backends while the buffer is still allocated
        std::free(buf_);
    }

    std::string metadata() const {
        std::string md;
        if (nixl_status_t st = agent_->getLocalMD(md); st != NIXL_SUCCESS) {
            throw Failure("getLocalMD: " + str(st));
        }
        return md;
    }

    void loadPeer(const std::string &md, const std::string &expected) {
        std::string name;
        if (nixl_status_t st = agent_->loadRemoteMD(md, name); st != NIXL_SUCCESS || name != expected) {
            throw Failure("loadRemoteMD of " + expected + "'s metadata: " + str(st) + " (name '" + name + "')");
        }
    }

    std::string describe(const std::string &b) const {
        std::string out = b + ":";
        std::map<std::string, std::string> sorted(params_.at(b).begin(), params_.at(b).end());
        for (auto &[k, v] : sorted) out += " " + k + "=" + v;
        return out;
    }

    nixlAgent &agent() { return *agent_; }
    nixlBackendH *handle(const std::string &b) const { return handles_.at(b); }
    unsigned char *buf() const { return buf_; }

  private:
    Setup setup_;
    std::unique_ptr<nixlAgent> agent_;
    std::map<std::string, nixlBackendH *> handles_;
    std::map<std::string, nixl_b_params_t> params_;
    unsigned char *buf_ = nullptr;
    nixl_reg_dlist_t reg_{DRAM_SEG};
    bool registered_ = false;
};

// ---- target ----

// The notifications of the current row, by message, with the time getNotifs first returned each.
class NotifLog {
  public:
    void reset(nixlBackendH *backend) {
        seen_.clear();
        backend_ = backend;
    }

    void poll(nixlAgent &agent) {
        nixl_notifs_t n;
        nixl_opt_args_t opt;
        opt.backends.push_back(backend_);
        if (nixl_status_t st = agent.getNotifs(n, &opt); st != NIXL_SUCCESS) {
            throw Failure("getNotifs: " + str(st));
        }
        int64_t t = nowNs();
        for (auto &[who, msgs] : n) {
            for (auto &m : msgs) {
                if (who != "initiator") {
                    throw Failure("a notification from '" + who + "', expected 'initiator' ('" + m + "')");
                }
                auto &e = seen_[m];
                if (e.count++ == 0) e.atNs = t;
            }
        }
    }

    // Waits for msg, polling; returns when getNotifs first returned it.
    int64_t await(nixlAgent &agent, const std::string &msg, double timeoutS, int pollUs) {
        auto deadline = Clock::now() + std::chrono::duration<double>(timeoutS);
        while (seen_.find(msg) == seen_.end()) {
            if (Clock::now() > deadline) {
                throw Failure("no notification '" + msg + "' within " + std::to_string(int(timeoutS)) + " s");
            }
            poll(agent);
            if (pollUs > 0) std::this_thread::sleep_for(std::chrono::microseconds(pollUs));
        }
        return seen_[msg].atNs;
    }

    // Exactly one notification "<gen>:<i>" for each i < posts, and no other.
    std::string verify(uint64_t gen, int posts) const {
        for (auto &[m, e] : seen_) {
            if (e.count != 1) return "notification '" + m + "' arrived " + std::to_string(e.count) + " times";
        }
        for (int i = 0; i < posts; i++) {
            if (seen_.find(std::to_string(gen) + ":" + std::to_string(i)) == seen_.end()) {
                return "no notification for post " + std::to_string(i);
            }
        }
        if (seen_.size() != static_cast<size_t>(posts)) {
            return std::to_string(seen_.size() - posts) + " notifications that no post of this row carried";
        }
        return "";
    }

  private:
    struct Entry {
        int count = 0;
        int64_t atNs = 0;
    };
    std::map<std::string, Entry> seen_;
    nixlBackendH *backend_ = nullptr;
};

int runTarget(const Options &o) {
    std::printf("tcpx_bench target: waiting for the initiator on %s:%d\n", o.host.c_str(), o.port);
    std::fflush(stdout);
    Channel ch = Channel::acceptOn(o.host, o.port);
    Setup s;
    std::unique_ptr<Side> side;
    try {
        for (std::string l = ch.line(); l != "SETUP"; l = ch.line()) {
            std::istringstream in(l);
            std::string what;
            in >> what;
            if (what == "CONFIG") {
                in >> s.bufBytes >> s.progThread >> s.targetPollUs >> s.timeoutS;
            } else if (what == "BACKEND") {
                std::string b;
                in >> b;
                s.backends.push_back(b);
            } else if (what == "PARAM") {
                std::string b, k, v;
                in >> b >> k;
                std::getline(in >> std::ws, v);
                s.params[b][k] = v;
            } else {
                throw Failure("control protocol: unexpected '" + l + "'");
            }
        }
        side = std::make_unique<Side>("target", s);
    } catch (const std::exception &e) {
        ch.send(std::string("ERR ") + e.what());
        throw;
    }
    ch.send("ADDR " + std::to_string(reinterpret_cast<uintptr_t>(side->buf())) + " " + cpus() + " " + env("UCX_TLS"));
    ch.sendBlob("MD", side->metadata());
    side->loadPeer(ch.blob("MD"), "initiator");
    ch.send("OK");

    NotifLog notifs;
    std::unique_ptr<Pattern> pattern;
    uint64_t gen = 0;
    int stamped = -1;
    while (true) {
        std::string l;
        while (!ch.tryLine(l)) {
            if (pattern) notifs.poll(side->agent());
            if (s.targetPollUs > 0) std::this_thread::sleep_for(std::chrono::microseconds(s.targetPollUs));
        }
        std::istringstream in(l);
        std::string what;
        in >> what;
        try {
            if (what == "ROW") {
                std::string backend, op;
                size_t size, batch;
                in >> backend >> op >> gen >> size >> batch;
                pattern = std::make_unique<Pattern>(gen, size, batch);
                notifs.reset(side->handle(backend));
                if (op == "READ") pattern->fillSource(side->buf());
                stamped = -1;
                ch.send("OK");
            } else if (what == "PREP") {  // READ: stamp the source for this iteration
                int it;
                in >> it;
                if (stamped >= 0) pattern->unstamp(side->buf(), stamped);
                pattern->stamp(side->buf(), stamped = it);
                ch.send("OK");
            } else if (what == "CHECK") {  // WRITE: the notification, then the bytes it vouches for
                int it, full;
                in >> it >> full;
                int64_t at = notifs.await(side->agent(), std::to_string(gen) + ":" + std::to_string(it), s.timeoutS,
                                          s.targetPollUs);
                std::string err = pattern->check(side->buf(), it, full != 0);
                ch.send(err.empty() ? "OK " + std::to_string(at) : "ERR WRITE landed wrong bytes at the target: " + err);
            } else if (what == "NOTIF") {  // READ: the notification at the agent read from
                int it;
                in >> it;
                ch.send("OK " + std::to_string(notifs.await(side->agent(), std::to_string(gen) + ":" + std::to_string(it),
                                                            s.timeoutS, s.targetPollUs)));
            } else if (what == "ENDROW") {
                int posts;
                in >> posts;
                notifs.poll(side->agent());
                std::string err = notifs.verify(gen, posts);
                pattern.reset();
                ch.send(err.empty() ? "OK" : "ERR " + err);
            } else if (what == "BYE") {
                ch.send("OK");
                return 0;
            } else {
                throw Failure("control protocol: unexpected '" + l + "'");
            }
        } catch (const Failure &e) {
            ch.send(std::string("ERR ") + e.what());
            throw;
        }
    }
}

// ---- initiator ----

struct Plan {
    std::string op;
    size_t size, batch;
    int iters, warmup;
};

std::vector<Plan> plan(const Options &o) {
    std::vector<Plan> out;
    for (auto &op : o.ops) {
        for (size_t size : o.sizes) {
            for (size_t batch : o.batches) {
                Plan p{op, size, std::min(batch, std::max<size_t>(1, o.maxBytes / size)), o.iters, o.warmup};
                size_t bytes = p.size * p.batch;
                if (static_cast<double>(p.iters) * bytes > static_cast<double>(o.rowBytes)) {
                    p.iters = std::max(o.minIters, static_cast<int>(o.rowBytes / bytes));
                    p.warmup = std::min(o.warmup, std::max(2, p.iters / 4));
                }
                if (std::none_of(out.begin(), out.end(), [&](const Plan &q) {
                        return q.op == p.op && q.size == p.size && q.batch == p.batch;
                    })) {
                    out.push_back(p);
                }
            }
        }
    }
    return out;
}

Row runRow(Side &side, Channel &ch, uintptr_t remote, const std::string &backend, const Plan &p, uint64_t gen,
           double timeoutS, int pollUs) {
    const bool write = p.op == "WRITE";
    ch.call("ROW " + backend + " " + p.op + " " + std::to_string(gen) + " " + std::to_string(p.size) + " " +
            std::to_string(p.batch));
    Pattern pat(gen, p.size, p.batch);
    unsigned char *buf = side.buf();
    if (write) pat.fillSource(buf);
    nixl_xfer_dlist_t local(DRAM_SEG), rem(DRAM_SEG);
    for (size_t j = 0; j < p.batch; j++) {
        local.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(buf) + j * p.size, p.size, 0));
        rem.addDesc(nixlBasicDesc(remote + (p.batch - 1 - j) * p.size, p.size, 0));
    }
    std::string what = backend + " " + p.op + " " + sizeText(p.size) + " x " + std::to_string(p.batch);
    nixl_opt_args_t opt;
    opt.backends.push_back(side.handle(backend));
    nixlXferReqH *req = nullptr;
    if (nixl_status_t st = side.agent().createXferReq(write ? NIXL_WRITE : NIXL_READ, local, rem, "target", req, &opt);
        st != NIXL_SUCCESS) {
        throw Failure(what + ": createXferReq: " + str(st));
    }
    std::vector<double> lat, post, notif;
    const int total = p.warmup + p.iters;
    for (int it = 0; it < total; it++) {
        const bool last = it == total - 1;
        if (write) {
            if (it > 0) pat.unstamp(buf, it - 1);
            pat.stamp(buf, it);
        } else {
            ch.call("PREP " + std::to_string(it));
        }
        nixl_opt_args_t po;
        po.notif = std::to_string(gen) + ":" + std::to_string(it);
        const auto deadline = Clock::now() + std::chrono::duration<double>(timeoutS);
        const int64_t t0 = nowNs();
        nixl_status_t st = side.agent().postXferReq(req, &po);
        const int64_t t1 = nowNs();
        while (st == NIXL_IN_PROG) {
            if (pollUs > 0) std::this_thread::sleep_for(std::chrono::microseconds(pollUs));
            st = side.agent().getXferStatus(req);
            if (st == NIXL_IN_PROG && Clock::now() > deadline) {
                throw Failure(what + ": transfer " + std::to_string(it) + " still in progress after " +
                              std::to_string(int(timeoutS)) + " s");
            }
        }
        const int64_t t2 = nowNs();
        if (st != NIXL_SUCCESS) {
            throw Failure(what + ": transfer " + std::to_string(it) + ": " + str(st));
        }
        std::string reply;
        if (write) {
            reply = ch.call("CHECK " + std::to_string(it) + " " + (last ? "1" : "0"));
        } else {
            if (std::string err = pat.check(buf, it, last); !err.empty()) {
                throw Failure(what + ": READ brought wrong bytes: " + err);
            }
            reply = ch.call("NOTIF " + std::to_string(it));
        }
        if (it >= p.warmup) {
            lat.push_back((t2 - t0) / 1e3);
            post.push_back((t1 - t0) / 1e3);
            notif.push_back((std::stoll(reply) - t0) / 1e3);
        }
    }
    side.agent().releaseXferReq(req);
    ch.call("ENDROW " + std::to_string(total));

    Row r;
    r.backend = backend;
    r.op = p.op;
    r.size = p.size;
    r.batch = p.batch;
    r.iters = p.iters;
    auto avg = [](const std::vector<double> &v) {
        double s = 0;
        for (double x : v) s += x;
        return v.empty() ? 0 : s / static_cast<double>(v.size());
    };
    auto sorted = sortedCopy(lat);
    r.avgUs = avg(lat);
    r.p50Us = percentile(sorted, 50);
    r.p99Us = percentile(sorted, 99);
    r.postUs = avg(post);
    r.notifUs = avg(notif);
    r.gbps = static_cast<double>(p.size * p.batch) / (r.avgUs * 1e3);
    return r;
}

int runInitiator(const Options &o) {
    std::vector<Plan> plans = plan(o);
    Setup s;
    s.backends = o.backends;
    s.params = o.params;
    s.progThread = o.progThread;
    s.targetPollUs = o.targetPollUs;
    s.timeoutS = o.timeoutS;
    for (auto &p : plans) s.bufBytes = std::max(s.bufBytes, p.size * p.batch);

    Side side("initiator", s);
    Channel ch = Channel::connectTo(o.host, o.port, o.timeoutS);
    ch.send("CONFIG " + std::to_string(s.bufBytes) + " " + (s.progThread ? "1" : "0") + " " +
            std::to_string(s.targetPollUs) + " " + std::to_string(int(s.timeoutS)));
    for (auto &b : s.backends) ch.send("BACKEND " + b);
    for (auto &[b, kv] : s.params) {
        for (auto &[k, v] : kv) ch.send("PARAM " + b + " " + k + " " + v);
    }
    ch.send("SETUP");
    std::string addr = ch.line();
    if (addr.rfind("ERR ", 0) == 0) {
        throw Failure("target: " + addr.substr(4));
    }
    std::istringstream in(addr);
    std::string tag, targetCpus, targetTls;
    uintptr_t remote = 0;
    in >> tag >> remote >> targetCpus >> targetTls;
    side.loadPeer(ch.blob("MD"), "target");
    ch.sendBlob("MD", side.metadata());
    if (std::string ok = ch.line(); ok != "OK") {
        throw Failure("target: " + (ok.rfind("ERR ", 0) == 0 ? ok.substr(4) : "answered '" + ok + "'"));
    }

    std::string header = "tcpx_bench: initiator cpus " + cpus() + ", target cpus " + targetCpus + "; UCX_TLS " +
                         env("UCX_TLS") + " (initiator), " + targetTls + " (target); NIXL progress thread " +
                         (s.progThread ? "on" : "off") + "; target poll " +
                         (s.targetPollUs > 0 ? std::to_string(s.targetPollUs) + " us" : "spin") + ", initiator poll " +
                         (o.initiatorPollUs > 0 ? std::to_string(o.initiatorPollUs) + " us" : "spin");
    std::printf("%s\n", header.c_str());
    for (auto &b : s.backends) {
        std::printf("  %s\n", side.describe(b).c_str());
        header += "; " + side.describe(b);
    }
    printHeader();

    std::vector<Row> rows;
    uint64_t gen = 0;
    for (int round = 1; round <= o.rounds; round++) {
        for (auto &p : plans) {
            for (auto &b : s.backends) {
                Row r = runRow(side, ch, remote, b, p, ++gen, o.timeoutS, o.initiatorPollUs);
                r.round = round;
                printRow(r);
                rows.push_back(r);
            }
        }
    }
    ch.call("BYE");
    if (!o.json.empty()) {
        writeJson(o.json, rows, header);
    }
    std::printf("all %zu rows verified: every transfer's stamps, every byte of each row's last transfer, one "
                "notification per post\n", rows.size());
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    Options o;
    try {
        o = parseOptions(argc - 1, argv + 1);
    } catch (const UsageError &e) {
        bool help = std::string(e.what()).empty();
        if (!help) std::fprintf(stderr, "tcpx_bench: %s\n\n", e.what());
        std::fputs(usage(), help ? stdout : stderr);
        return help ? 0 : 2;
    }
    try {
        return o.target ? runTarget(o) : runInitiator(o);
    } catch (const UsageError &e) {
        std::fprintf(stderr, "tcpx_bench: %s\n", e.what());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "tcpx_bench %s: error: %s\n", o.target ? "target" : "initiator", e.what());
        return 1;
    }
}
