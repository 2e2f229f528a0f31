#include "tcpx_bench_util.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace tcpx_bench {

namespace {

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
        size_t end = s.find(sep, start);
        out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) {
            return out;
        }
        start = end + 1;
    }
}

long parseInt(const std::string &flag, const std::string &v, long min) {
    char *end = nullptr;
    errno = 0;
    long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || n < min) {
        throw UsageError(flag + " wants an integer >= " + std::to_string(min) + ", not '" + v + "'");
    }
    return n;
}

std::string upper(std::string s) {
    for (auto &c : s) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return s;
}

void addParam(Options &o, const std::string &backend, const std::string &kv, const std::string &flag) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
        throw UsageError(flag + " wants KEY=VALUE, not '" + kv + "'");
    }
    o.params[backend][kv.substr(0, eq)] = kv.substr(eq + 1);
}

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t load(const unsigned char *p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

void store(unsigned char *p, uint64_t v) {
    std::memcpy(p, &v, 8);
}

} // namespace

const char *usage() {
    return R"(tcpx_bench: WRITE and READ through a NIXL agent between two processes, per backend.

  target:     tcpx_bench --role target [--host 127.0.0.1] [--port 18515]
  initiator:  tcpx_bench [--role initiator] [--host H] [--port P] [options]

The initiator connects to the target's control port (retrying until --timeout), sends it the
backend set-up, and both exchange agent metadata over that connection. Options (initiator):
  --backend LIST      TCPX, UCX or TCPX,UCX (both in each agent; rows alternate)  [TCPX]
  --op LIST           WRITE, READ or WRITE,READ                                   [WRITE,READ]
  --sizes LIST        block sizes, multiples of 8 (4K, 64K, 1M, 64M, ...)         [4K,64K,1M,64M]
  --batch LIST        descriptors per transfer                                    [1,64]
  --iters N           timed transfers per row                                     [200]
  --warmup N          untimed transfers before them                               [20]
  --row-bytes SIZE    cut iterations so that a row moves at most this much        [4G]
  --min-iters N       ... but never below N                                       [10]
  --max-bytes SIZE    bytes per transfer; a larger batch is cut to fit            [256M]
  --rounds N          repeat the whole table                                      [1]
  --param B:KEY=VAL   backend parameter for backend B (repeatable), e.g. TCPX:channels=4
  --progress MODE     TCPX's progress=inline|thread (same as --param TCPX:progress=MODE)
  --prog-thread       NIXL agent progress thread (nixlAgentConfig::useProgThread), both agents
  --target-poll-us N  target sleeps N us between notification polls; 0 spins  [0]
  --initiator-poll-us N  the same for the initiator's getXferStatus (timed)  [0]
  --timeout S         limit on one transfer or notification, and on connecting  [30]
  --json FILE         also write the rows as JSON
Each row: avg/p50/p99 latency of one transfer (postXferReq until getXferStatus says SUCCESS),
the average time in postXferReq, GB/s (bytes of one transfer / average latency), and the average
time from postXferReq until the target's getNotifs returned that transfer's notification.
)";
}

size_t parseSize(const std::string &text) {
    if (text.empty()) {
        throw UsageError("empty size");
    }
    size_t mul = 1;
    std::string num = text;
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K': mul = size_t(1) << 10; break;
    case 'M': mul = size_t(1) << 20; break;
    case 'G': mul = size_t(1) << 30; break;
    default: break;
    }
    if (mul != 1) {
        num.pop_back();
    }
    long n = parseInt("a size", num, 1);
    return static_cast<size_t>(n) * mul;
}

std::string sizeText(size_t b) {
    if (b % (size_t(1) << 30) == 0) return std::to_string(b >> 30) + "G";
    if (b % (size_t(1) << 20) == 0) return std::to_string(b >> 20) + "M";
    if (b % (size_t(1) << 10) == 0) return std::to_string(b >> 10) + "K";
    return std::to_string(b);
}

Options parseOptions(int argc, char **argv) {
    Options o;
    bool paramsGiven = false;
    for (int i = 0; i < argc; i++) {
        std::string flag = argv[i];
        std::string value;
        bool inlineValue = false;
        if (size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
            inlineValue = true;
        }
        auto next = [&]() -> std::string {
            if (inlineValue) {
                return value;
            }
            if (i + 1 >= argc) {
                throw UsageError(flag + " needs a value");
            }
            return argv[++i];
        };
        if (flag == "-h" || flag == "--help") {
            throw UsageError("");
        } else if (flag == "--role") {
            std::string r = next();
            if (r != "initiator" && r != "target") {
                throw UsageError("--role is initiator or target, not '" + r + "'");
            }
            o.target = r == "target";
        } else if (flag == "--host") {
            o.host = next();
        } else if (flag == "--port") {
            o.port = static_cast<int>(parseInt(flag, next(), 1));
        } else if (flag == "--backend") {
            o.backends.clear();
            for (auto &b : split(next(), ',')) {
                std::string u = upper(b);
                if (u.empty() || std::find(o.backends.begin(), o.backends.end(), u) != o.backends.end()) {
                    throw UsageError("--backend: empty or repeated name in the list");
                }
                o.backends.push_back(u);
            }
        } else if (flag == "--op") {
            o.ops.clear();
            for (auto &op : split(next(), ',')) {
                std::string u = upper(op);
                if (u != "WRITE" && u != "READ") {
                    throw UsageError("--op takes WRITE and READ, not '" + op + "'");
                }
                o.ops.push_back(u);
            }
        } else if (flag == "--sizes") {
            o.sizes.clear();
            for (auto &s : split(next(), ',')) {
                size_t n = parseSize(s);
                if (n % 8 != 0) {
                    throw UsageError("--sizes: " + s + " is not a multiple of 8 bytes");
                }
                o.sizes.push_back(n);
            }
        } else if (flag == "--batch") {
            o.batches.clear();
            for (auto &s : split(next(), ',')) {
                o.batches.push_back(static_cast<size_t>(parseInt(flag, s, 1)));
            }
        } else if (flag == "--iters") {
            o.iters = static_cast<int>(parseInt(flag, next(), 1));
        } else if (flag == "--warmup") {
            o.warmup = static_cast<int>(parseInt(flag, next(), 0));
        } else if (flag == "--min-iters") {
            o.minIters = static_cast<int>(parseInt(flag, next(), 1));
        } else if (flag == "--row-bytes") {
            o.rowBytes = parseSize(next());
        } else if (flag == "--max-bytes") {
            o.maxBytes = parseSize(next());
        } else if (flag == "--rounds") {
            o.rounds = static_cast<int>(parseInt(flag, next(), 1));
        } else if (flag == "--param") {
            std::string p = next();
            size_t colon = p.find(':');
            if (colon == std::string::npos || colon == 0) {
                throw UsageError("--param wants BACKEND:KEY=VALUE, not '" + p + "'");
            }
            addParam(o, upper(p.substr(0, colon)), p.substr(colon + 1), flag);
            paramsGiven = true;
        } else if (flag == "--progress") {
            std::string m = next();
            if (m != "inline" && m != "thread") {
                throw UsageError("--progress is inline or thread, not '" + m + "'");
            }
            o.params["TCPX"]["progress"] = m;
            paramsGiven = true;
        } else if (flag == "--prog-thread") {
            o.progThread = true;
        } else if (flag == "--target-poll-us") {
            o.targetPollUs = static_cast<int>(parseInt(flag, next(), 0));
        } else if (flag == "--initiator-poll-us") {
            o.initiatorPollUs = static_cast<int>(parseInt(flag, next(), 0));
        } else if (flag == "--timeout") {
            o.timeoutS = static_cast<double>(parseInt(flag, next(), 1));
        } else if (flag == "--json") {
            o.json = next();
        } else {
            throw UsageError(std::string("unknown option '") + argv[i] + "'");
        }
    }
    for (auto &[b, kv] : o.params) {
        if (std::find(o.backends.begin(), o.backends.end(), b) == o.backends.end()) {
            throw UsageError("a parameter for backend " + b + ", which --backend does not name");
        }
    }
    if (o.target && (paramsGiven || o.progThread)) {
        throw UsageError("the target takes its set-up from the initiator: give backend options to the initiator");
    }
    return o;
}

// ---- Channel ----

Channel Channel::connectTo(const std::string &host, int port, double timeoutS) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
        throw UsageError("--host wants an IPv4 address, not '" + host + "'");
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutS);
    while (true) {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) {
            throw Failure(std::string("socket: ") + std::strerror(errno));
        }
        if (::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return Channel(fd);
        }
        int err = errno;
        ::close(fd);
        if (std::chrono::steady_clock::now() > deadline) {
            throw Failure("no target at " + host + ":" + std::to_string(port) + " (" + std::strerror(err) +
                          "): start `tcpx_bench --role target --port " + std::to_string(port) + "` first");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

Channel Channel::acceptOn(const std::string &host, int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
        throw UsageError("--host wants an IPv4 address, not '" + host + "'");
    }
    int ls = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(ls, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || ::listen(ls, 1) != 0) {
        int err = errno;
        ::close(ls);
        throw Failure("cannot listen on " + host + ":" + std::to_string(port) + ": " + std::strerror(err) +
                      " (choose another --port)");
    }
    int fd = ::accept(ls, nullptr, nullptr);
    int err = errno;
    ::close(ls);
    if (fd < 0) {
        throw Failure(std::string("accept: ") + std::strerror(err));
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return Channel(fd);
}

Channel::Channel(Channel &&other) noexcept : fd_(other.fd_), in_(std::move(other.in_)) {
    other.fd_ = -1;
}

Channel::~Channel() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

void Channel::send(const std::string &line) {
    write(line + "\n");
}

void Channel::write(const std::string &s) {
    size_t off = 0;
    while (off < s.size()) {
        ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            throw Failure(std::string("control connection lost: ") + std::strerror(errno));
        }
        off += static_cast<size_t>(n);
    }
}

void Channel::sendBlob(const std::string &tag, const std::string &blob) {
    write(tag + " " + std::to_string(blob.size()) + "\n" + blob);
}

bool Channel::fill(bool wait) {
    char buf[65536];
    ssize_t n;
    do {
        n = ::recv(fd_, buf, sizeof buf, wait ? 0 : MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
        in_.append(buf, static_cast<size_t>(n));
        return true;
    }
    if (n < 0 && !wait && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return false;
    }
    throw Failure(n == 0 ? "the other process closed the control connection (see its output)"
                         : std::string("control connection: ") + std::strerror(errno));
}

bool Channel::tryLine(std::string &out) {
    size_t nl = in_.find('\n');
    if (nl == std::string::npos && fill(false)) {
        nl = in_.find('\n');
    }
    if (nl == std::string::npos) {
        return false;
    }
    out = in_.substr(0, nl);
    in_.erase(0, nl + 1);
    return true;
}

std::string Channel::line() {
    size_t nl;
    while ((nl = in_.find('\n')) == std::string::npos) {
        fill(true);
    }
    std::string out = in_.substr(0, nl);
    in_.erase(0, nl + 1);
    return out;
}

std::string Channel::blob(const std::string &tag) {
    std::string head = line();
    if (head.rfind("ERR ", 0) == 0) {
        throw Failure("the other side: " + head.substr(4));
    }
    if (head.rfind(tag + " ", 0) != 0) {
        throw Failure("control protocol: expected " + tag + ", got '" + head + "'");
    }
    size_t n = std::stoull(head.substr(tag.size() + 1));
    while (in_.size() < n) {
        fill(true);
    }
    std::string out = in_.substr(0, n);
    in_.erase(0, n);
    return out;
}

std::string Channel::call(const std::string &request) {
    send(request);
    std::string reply = line();
    if (reply.rfind("ERR ", 0) == 0) {
        throw Failure("target: " + reply.substr(4));
    }
    if (reply.rfind("OK", 0) != 0) {
        throw Failure("control protocol: '" + request + "' answered '" + reply + "'");
    }
    return reply.size() > 3 ? reply.substr(3) : "";
}

// ---- Pattern ----

uint64_t Pattern::base(size_t word) const {
    return mix((gen_ << 40) ^ word);
}

uint64_t Pattern::stampValue(size_t word, int iter) const {
    return base(word) ^ (mix((gen_ << 32) ^ (static_cast<uint64_t>(iter) << 1) ^ (word << 24)) | 1);
}

void Pattern::positions(size_t desc, int iter, size_t out[4]) const {
    uint64_t r = mix((gen_ << 48) ^ (static_cast<uint64_t>(iter) << 20) ^ desc);
    out[0] = 0;
    out[1] = words_ - 1;
    out[2] = r % words_;
    out[3] = mix(r) % words_;
}

void Pattern::fillSource(unsigned char *buf) const {
    size_t n = words_ * batch_;
    for (size_t w = 0; w < n; w++) {
        store(buf + 8 * w, base(w));
    }
}

void Pattern::stamp(unsigned char *buf, int iter) const {
    for (size_t j = 0; j < batch_; j++) {
        size_t p[4];
        positions(j, iter, p);
        for (size_t k = 0; k < 4; k++) {
            size_t w = j * words_ + p[k];
            store(buf + 8 * w, stampValue(w, iter));
        }
    }
}

void Pattern::unstamp(unsigned char *buf, int iter) const {
    for (size_t j = 0; j < batch_; j++) {
        size_t p[4];
        positions(j, iter, p);
        for (size_t k = 0; k < 4; k++) {
            size_t w = j * words_ + p[k];
            store(buf + 8 * w, base(w));
        }
    }
}

std::string Pattern::check(const unsigned char *dst, int iter, bool full) const {
    for (size_t k = 0; k < batch_; k++) {
        size_t j = batch_ - 1 - k;  // source descriptor that lands in destination descriptor k
        size_t p[4];
        positions(j, iter, p);
        auto expected = [&](size_t pos) {
            size_t w = j * words_ + pos;
            return std::find(p, p + 4, pos) != p + 4 ? stampValue(w, iter) : base(w);
        };
        auto verify = [&](size_t pos) -> std::string {
            uint64_t got = load(dst + 8 * (k * words_ + pos));
            if (got == expected(pos)) {
                return "";
            }
            char msg[200];
            std::snprintf(msg, sizeof msg,
                          "iteration %d: descriptor %zu, byte %zu holds %016llx, expected %016llx", iter, k,
                          8 * pos, static_cast<unsigned long long>(got),
                          static_cast<unsigned long long>(expected(pos)));
            return msg;
        };
        if (full) {
            for (size_t pos = 0; pos < words_; pos++) {
                if (auto e = verify(pos); !e.empty()) return e;
            }
        } else {
            uint64_t r = mix(~((gen_ << 48) ^ (static_cast<uint64_t>(iter) << 20) ^ j));
            size_t extra[2] = {static_cast<size_t>(r % words_), static_cast<size_t>(mix(r) % words_)};
            for (size_t pos : {p[0], p[1], p[2], p[3], extra[0], extra[1]}) {
                if (auto e = verify(pos); !e.empty()) return e;
            }
        }
    }
    return "";
}

// ---- results ----

std::vector<double> sortedCopy(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v;
}

double percentile(const std::vector<double> &sorted, double p) {
    if (sorted.empty()) {
        return 0;
    }
    size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
    return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

void printHeader() {
    std::printf("%-5s %-7s %-5s %10s %6s %6s %11s %11s %11s %10s %9s %11s\n", "round", "backend", "op",
                "block", "batch", "iters", "avg_us", "p50_us", "p99_us", "post_us", "GB/s", "notif_us");
    std::fflush(stdout);
}

void printRow(const Row &r) {
    std::printf("%-5d %-7s %-5s %10s %6zu %6d %11.1f %11.1f %11.1f %10.1f %9.3f %11.1f\n", r.round,
                r.backend.c_str(), r.op.c_str(), sizeText(r.size).c_str(), r.batch, r.iters, r.avgUs, r.p50Us,
                r.p99Us, r.postUs, r.gbps, r.notifUs);
    std::fflush(stdout);
}

void writeJson(const std::string &path, const std::vector<Row> &rows, const std::string &header) {
    std::ofstream f(path);
    if (!f) {
        throw Failure("cannot write --json " + path);
    }
    std::string escaped;
    for (char c : header) {
        if (c == '"' || c == '\\') escaped += '\\';
        escaped += c;
    }
    f << "{\"setup\": \"" << escaped << "\",\n \"rows\": [\n";
    for (size_t i = 0; i < rows.size(); i++) {
        const Row &r = rows[i];
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "  {\"round\": %d, \"backend\": \"%s\", \"op\": \"%s\", \"block_bytes\": %zu, \"batch\": %zu, "
                      "\"iters\": %d, \"avg_us\": %.2f, \"p50_us\": %.2f, \"p99_us\": %.2f, \"post_us\": %.2f, "
                      "\"gb_per_s\": %.4f, \"notif_us\": %.2f}%s\n",
                      r.round, r.backend.c_str(), r.op.c_str(), r.size, r.batch, r.iters, r.avgUs, r.p50Us,
                      r.p99Us, r.postUs, r.gbps, r.notifUs, i + 1 < rows.size() ? "," : "");
        f << buf;
    }
    f << "]}\n";
}

} // namespace tcpx_bench
