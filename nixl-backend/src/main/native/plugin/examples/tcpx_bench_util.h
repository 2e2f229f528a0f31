// Support for tcpx_bench (see tcpx_bench.cpp): options, the control channel between the two
// processes, the data pattern that verifies every transfer, and the result table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcpx_bench {

// A usage error: printed with the usage text, exit code 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Anything else that stops the run: printed, exit code 1.
struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Options {
    bool target = false;                       // --role target
    std::string host = "127.0.0.1";
    int port = 18515;
    std::vector<std::string> backends = {"TCPX"};
    std::vector<std::string> ops = {"WRITE", "READ"};
    std::vector<size_t> sizes = {4096, 65536, 1 << 20, 64 << 20};
    std::vector<size_t> batches = {1, 64};
    int iters = 200;
    int warmup = 20;
    size_t maxBytes = size_t(256) << 20;       // per transfer; a larger batch is cut to fit
    size_t rowBytes = size_t(4) << 30;         // per row; iterations are cut to fit (at least minIters)
    int minIters = 10;
    int rounds = 1;
    std::map<std::string, std::map<std::string, std::string>> params;  // backend -> key -> value
    bool progThread = false;                   // nixlAgentConfig::useProgThread, both agents
    int targetPollUs = 0;                      // target's sleep between notification polls; 0 spins
    int initiatorPollUs = 0;                   // initiator's sleep between getXferStatus calls; 0 spins
    double timeoutS = 30;
    std::string json;                          // write the rows as JSON here
};

// Parses argv (without argv[0]); throws UsageError.
Options parseOptions(int argc, char **argv);
const char *usage();
size_t parseSize(const std::string &text);
std::string sizeText(size_t bytes);

// A TCP connection carrying text lines and length-prefixed blobs. Blocking unless said otherwise.
class Channel {
  public:
    static Channel connectTo(const std::string &host, int port, double timeoutS);
    static Channel acceptOn(const std::string &host, int port);
    Channel(Channel &&other) noexcept;
    Channel &operator=(Channel &&) = delete;
    ~Channel();

    void send(const std::string &line);
    void sendBlob(const std::string &tag, const std::string &blob);
    std::string line();
    // A complete line if one has arrived, without waiting.
    bool tryLine(std::string &out);
    std::string blob(const std::string &tag);
    // Sends the request, reads the answer; "ERR ..." from the peer becomes a Failure.
    std::string call(const std::string &request);

  private:
    explicit Channel(int fd) : fd_(fd) {}
    void write(const std::string &bytes);
    bool fill(bool wait);
    int fd_;
    std::string in_;
};

// The content of a source buffer: 64-bit words that depend on the row (gen) and the word index,
// plus per-iteration stamps at four positions of every descriptor (its first and last word and
// two drawn from the iteration), so that every transfer leaves a mark no earlier one left.
// Descriptor j of the source lands in descriptor (batch-1-j) of the destination.
class Pattern {
  public:
    Pattern(uint64_t gen, size_t size, size_t batch) : gen_(gen), words_(size / 8), batch_(batch) {}
    void fillSource(unsigned char *buf) const;
    void stamp(unsigned char *buf, int iter) const;    // source, iteration iter
    void unstamp(unsigned char *buf, int iter) const;  // back to the base words
    // Checks the destination after iteration iter; full: every word, else the stamps and two
    // unstamped words per descriptor. Returns "" or what is wrong.
    std::string check(const unsigned char *dst, int iter, bool full) const;

  private:
    uint64_t base(size_t word) const;
    uint64_t stampValue(size_t word, int iter) const;
    void positions(size_t desc, int iter, size_t out[4]) const;
    uint64_t gen_;
    size_t words_;
    size_t batch_;
};

struct Row {
    int round = 0;
    std::string backend, op;
    size_t size = 0, batch = 0;
    int iters = 0;
    double avgUs = 0, p50Us = 0, p99Us = 0, postUs = 0, gbps = 0, notifUs = 0;
};

std::vector<double> sortedCopy(std::vector<double> v);
double percentile(const std::vector<double> &sorted, double p);
void printHeader();
void printRow(const Row &r);
void writeJson(const std::string &path, const std::vector<Row> &rows, const std::string &header);

} // namespace tcpx_bench
