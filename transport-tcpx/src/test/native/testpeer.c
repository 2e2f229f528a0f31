/*
 * tcpx4j test peer: a test double of the GPUDirect-TCPX NCCL net plugin over loopback TCP.
 *
 * Written for tcpx4j's tests. It exports the ncclNet function table of one ABI version
 * (PEER_NET_VERSION = 5..8, default 7) and is deliberately as strict as TCPX:
 *   - 16 request slots per comm; the 17th isend/irecv fails with ncclInternalError (3);
 *   - test() only on the oldest uncompleted request of a comm (else 3); test never writes sizes;
 *   - irecv takes n == 1 only; iflush fails (TCPX must never be asked to flush);
 *   - v7+: accept says "not yet" (success, null comm) while no peer has connected, without looking at
 *     the device handle; once a peer is there it writes the device handle through the pointer it got
 *     (none when that pointer is null; a null buffer behind it is misuse, where TCPX would crash);
 *     every receive holds its slot until irecvConsumed, strictly FIFO;
 *   - v7+: receives registered as NCCL_PTR_CUDA (plain host memory here) land in scattered,
 *     permuted 4 KiB bounce pages and are reported as 16-byte fragments through an "unpack slot"
 *     that sits at the same offsets inside the request as in the 2024 TCPX plugin on x86-64
 *     (slot at 56, fragments pointer at 72, count pointer at 80);
 *   - CUDA registrations must be 4 KiB aligned; connect keeps its progress inside the caller's
 *     handle, so a caller that does not pass the same handle memory again never connects;
 *   - logs like TCPX: variadic logger, a WARN on every progress step of a host-memory receive.
 *   - a listen comm yields one comm: TCPX frees its accept state on success and a second accept
 *     frees it again (double free); here a second accept is reported as misuse (ncclInvalidUsage,
 *     counted by tcpx4j_testpeer_misuse());
 *   - CUDA registration on a device without a PCI path is misuse too (TCPX derives the NIC's PCI
 *     address from the path and crashes on a null one).
 * Two modes make it as slow as TCPX, where tests must not rely on speed: TCPX4J_TESTPEER_CONNECT_MS=<ms>,
 * read by listen, makes every connect to that listener's handle say "not yet" for that long after its
 * first call (TCPX connects on a thread of its own, socket by socket, while its connect says "not
 * yet"), and
 * TCPX4J_TESTPEER_LATE_TESTS=<n>, read by init, makes every request report done only at the n-th test
 * that finds its bytes moved (TCPX's sockets move bytes on threads of their own, so when a request
 * reports done depends on timing, not on how often it was tested).
 * Environment: TCPX4J_TESTPEER_INIT_EXIT=1 makes init call exit(1) (TCPX does that when the CUDA
 * driver fails), TCPX4J_TESTPEER_INIT_FAIL=1 makes init return ncclInternalError,
 * TCPX4J_TESTPEER_NO_BOUNCE=1
 * makes accept publish an unpack handle without a bounce buffer, TCPX4J_TESTPEER_NO_HOST_WARN=1 (read
 * by init) leaves out the WARN per host-memory receive step, which a benchmark of the call path
 * would otherwise measure.
 * Every isend, irecv, test and irecvConsumed records the arguments it received, per calling thread,
 * for tcpx4j_testpeer_last(): the tests check that each call path hands them over unchanged.
 * Build with -DPEER_NO_TABLE for a library that exports only an unsupported (v4-named) symbol,
 * with -DPEER_HOST_PTR_ONLY for a plugin that takes host memory only (TCPX built with HOST_PTR_ONLY
 * still reports the UNPACK device type; nccl-fastsocket is host-only too), with -DPEER_BLOCKING for
 * a plugin whose accept waits until a peer connected and whose connect waits until the peer accepted
 * (nccl-fastsocket's accept waits in accept(2)), and with -DPEER_NO_CONSUMED (v7+) for a table whose
 * getDeviceMr and irecvConsumed are null, with a HOST device type and receives that give their slot
 * back when they test done (aws-ofi-nccl), and with -DPEER_NULL_IO for a host-memory-only plugin that
 * moves no bytes: every request completes at its first test (receives report their posted size), so
 * what is left is the cost of calling it, and with -DPEER_NO_PCI for a plugin whose only device has no
 * PCI path, as TCPX on a virtual interface such as lo.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#if defined(PEER_NO_CONSUMED) && PEER_NET_VERSION < 7
#error "PEER_NO_CONSUMED needs ncclNet v7 or newer"
#endif
#ifdef PEER_NO_CONSUMED
#define PEER_CONSUMES 0
#else
#define PEER_CONSUMES (PEER_NET_VERSION >= 7)
#endif

#ifndef PEER_NET_VERSION
#define PEER_NET_VERSION 7
#endif

#if defined(PEER_NULL_IO) && !defined(PEER_HOST_PTR_ONLY)
#define PEER_HOST_PTR_ONLY /* no bytes move, so no bounce pages to describe */
#endif

#define EXPORT __attribute__((visibility("default")))

enum { R_OK_ = 0, R_SYSTEM = 2, R_INTERNAL = 3, R_INVALID_ARG = 4, R_INVALID_USAGE = 5 };
enum { L_VERSION = 1, L_WARN = 2, L_INFO = 3, L_TRACE = 5 };
#define SUBSYS_INIT 1UL
#define SUBSYS_NET 16UL
#define PTR_HOST 1
#define PTR_CUDA 2

typedef void (*peer_logger)(int level, unsigned long flags, const char *file, int line, const char *fmt, ...);
static peer_logger peer_log;
#define WARN(...) do { if (peer_log) peer_log(L_WARN, ~0UL, __func__, __LINE__, __VA_ARGS__); } while (0)
#define INFO(f, ...) do { if (peer_log) peer_log(L_INFO, (f), __func__, __LINE__, __VA_ARGS__); } while (0)

static volatile long misuse_count;
static int no_host_warn;
static int late_tests; /* a request reports done at the late_tests-th test that finds it finished */

/* The arguments of this thread's last data-path calls, as tcpx4j_testpeer_last() names them. */
enum {
  A_ISEND_COMM, A_ISEND_DATA, A_ISEND_SIZE, A_ISEND_TAG, A_ISEND_MHANDLE, A_ISEND_REQUEST,
  A_IRECV_COMM, A_IRECV_N, A_IRECV_DATA, A_IRECV_SIZES, A_IRECV_TAGS, A_IRECV_MHANDLES, A_IRECV_REQUEST,
  A_IRECV_DATA0, A_IRECV_SIZE0, A_IRECV_TAG0, A_IRECV_MHANDLE0,
  A_TEST_REQUEST, A_TEST_DONE, A_TEST_SIZES,
  A_CONSUMED_COMM, A_CONSUMED_N, A_CONSUMED_REQUEST,
  A_COUNT
};
static __thread long last_arg[A_COUNT];
#define RECORD(i, v) (last_arg[i] = (long)(v))
#define MISUSE(...) do { __atomic_add_fetch(&misuse_count, 1, __ATOMIC_SEQ_CST); WARN(__VA_ARGS__); } while (0)

#define SLOTS 16
#define MAX_FRAGS 2048
#define PAGE 4096
#define PAGES_PER_SLOT 2048
#define HELLO 0x74707834706a7463ULL /* arbitrary 8-byte greeting */
#define HANDLE_MAGIC 0x54435058u

/* ---- shapes shared with the Java side (verified by tcpx4j_testpeer_layout) ---- */

struct fragment {           /* one bounce-page fragment, 16 bytes */
  uint32_t src_off;
  uint32_t len;
  uint64_t dst_off;
};

struct unpack_meta {        /* host-mapped in TCPX; plain host memory here */
  struct fragment frags[SLOTS][MAX_FRAGS];
  uint64_t count[SLOTS];
};

struct unpack_handle {      /* what the device handle points at, 24 bytes */
  struct unpack_meta *meta;
  void *bounce;
  uint64_t head;
};

struct device_handle {      /* ncclNetDeviceHandle_v7_t, 32 bytes */
  int type;
  int version;
  void *handle;
  size_t size;
  int needs_proxy_progress;
};

struct props_v6 {           /* also v5 */
  char *name; char *pci_path; uint64_t guid; int ptr_support; int speed; int port;
  float latency; int max_comms; int max_recvs;
};
struct props_v7 {
  char *name; char *pci_path; uint64_t guid; int ptr_support; int speed; int port;
  float latency; int max_comms; int max_recvs; int device_type; int device_version;
};
struct props_v8 {
  char *name; char *pci_path; uint64_t guid; int ptr_support; int reg_is_global; int speed; int port;
  float latency; int max_comms; int max_recvs; int device_type; int device_version;
};

/* Where TCPX's request keeps the receive's unpack slot (2024 plugin, x86-64). */
struct unpack_view {
  bool active;
  uint64_t index;
  struct fragment *frags;
  uint64_t *count;
  uint64_t count_cache;
};

struct comm;
enum { OP_SEND = 1, OP_RECV = 2 };

struct request {
  struct comm *comm;        /*  0 */
  char *data;               /*  8 */
  int op;                   /* 16 */
  int type;                 /* 20 */
  int size;                 /* 24 posted */
  int msg_size;             /* 28 announced by the sender, -1 until the header arrived */
  int hdr_done;             /* 32 */
  int body_done;            /* 36 */
  int slot;                 /* 40 */
  int frag_done;            /* 44 bytes of the current fragment already received */
  int nfrag;                /* 48 */
  int done;                 /* 52 */
  struct unpack_view unpack;/* 56: active 56, index 64, frags 72, count 80, cache 88 */
  uint32_t hdr;
  int tests;                /* tests since its bytes moved */
};
_Static_assert(offsetof(struct request, unpack) == 56, "unpack slot at 56 like TCPX 2024");
_Static_assert(offsetof(struct request, unpack) + offsetof(struct unpack_view, frags) == 72, "fragments at 72");
_Static_assert(offsetof(struct request, unpack) + offsetof(struct unpack_view, count) == 80, "count at 80");
_Static_assert(sizeof(struct fragment) == 16, "fragment");
_Static_assert(sizeof(struct unpack_handle) == 24, "unpack handle");
_Static_assert(sizeof(struct device_handle) == 32, "device handle");

struct comm {
  int fd;
  int recv;
  int broken;
  unsigned posted;          /* requests ever posted */
  unsigned completed;       /* requests that tested done */
  unsigned released;        /* slots given back (send: at done; recv: at consume, or done before v7) */
  struct request reqs[SLOTS];
  struct unpack_meta *meta; /* v7+ receive comms */
  char *bounce;
  struct unpack_handle *uh;
};

struct mr {
  struct comm *comm;
  char *base;
  size_t size;
  int type;
};

struct conn_handle {        /* lives in the caller's 128-byte handle */
  uint32_t magic;
  uint16_t port;
  uint16_t stage;           /* connect progress kept in the handle, as NCCL socket plugins do */
  int fd;
  uint32_t connect_ms;      /* TCPX4J_TESTPEER_CONNECT_MS when the listener was made */
  uint64_t ready_ns;        /* CLOCK_MONOTONIC time before which connect says "not yet" */
};
_Static_assert(sizeof(struct conn_handle) <= 128, "handle size");

struct listen_comm {
  int fd;
  int pending;
  int hello_done;
  uint64_t hello;
  int yielded;              /* accept produced its comm */
};

/* ---- helpers ---- */

static int set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL, 0);
  return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void tune(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* bytes moved (>= 0), or -1 when the peer went away or the socket failed */
static long io_step(struct comm *c, int send_side, char *p, size_t len) {
  if (len == 0) return 0;
  ssize_t n = send_side ? send(c->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL) : recv(c->fd, p, len, MSG_DONTWAIT);
  if (n > 0) return n;
  if (n == 0 && !send_side) {
    WARN("NET/testpeer : connection closed by remote peer");
    return -1;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
  WARN("NET/testpeer : socket %s failed: %s", send_side ? "send" : "recv", strerror(errno));
  return -1;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* A non-negative integer from the environment, or 0. */
static int env_int(const char *name) {
  const char *e = getenv(name);
  if (e == NULL) return 0;
  long v = strtol(e, NULL, 10);
  return v < 0 || v > INT_MAX ? 0 : (int)v;
}

static bool devmem_receive(struct request *r) {
  return PEER_CONSUMES && r->op == OP_RECV && r->type == PTR_CUDA;
}

static bool no_pci(void) {
#ifdef PEER_NO_PCI
  return true;
#else
  return false;
#endif
}

/* ---- the ncclNet functions ---- */

static int p_init(peer_logger logger) {
  peer_log = logger;
  const char *q = getenv("TCPX4J_TESTPEER_NO_HOST_WARN");
  no_host_warn = q && q[0] == '1';
  late_tests = env_int("TCPX4J_TESTPEER_LATE_TESTS");
  INFO(SUBSYS_INIT | SUBSYS_NET, "NET/testpeer : init, ncclNet v%d, %d request slots per comm", PEER_NET_VERSION, SLOTS);
  const char *e = getenv("TCPX4J_TESTPEER_INIT_EXIT");
  if (e && e[0] == '1') {
    WARN("CU failure %s: %s", "CUDA_ERROR_NO_DEVICE", "simulated by the test peer");
    exit(1);
  }
  e = getenv("TCPX4J_TESTPEER_INIT_FAIL");
  if (e && e[0] == '1') {
    WARN("NET/testpeer : init failure requested by TCPX4J_TESTPEER_INIT_FAIL");
    return R_INTERNAL;
  }
  return R_OK_;
}

static int p_devices(int *n) {
  *n = 1;
  return R_OK_;
}

static char dev_name[] = "lo";
static char dev_pci[] = "/sys/devices/virtual/net/lo";

#if PEER_NET_VERSION >= 8
static int p_properties(int dev, struct props_v8 *p) {
#elif PEER_NET_VERSION == 7
static int p_properties(int dev, struct props_v7 *p) {
#else
static int p_properties(int dev, struct props_v6 *p) {
#endif
  if (dev != 0) return R_INTERNAL;
  p->name = dev_name;
  p->pci_path = no_pci() ? NULL : dev_pci;
  p->guid = 0x7e57;
#ifdef PEER_HOST_PTR_ONLY
  p->ptr_support = PTR_HOST;
#else
  p->ptr_support = PTR_HOST | PTR_CUDA;
#endif
  p->speed = 100000;
  p->port = 1;
  p->latency = 2.5f;
  p->max_comms = 65536;
  p->max_recvs = 1;
#if PEER_NET_VERSION >= 8
  p->reg_is_global = 0;
#endif
#if PEER_NET_VERSION >= 7
  p->device_type = PEER_CONSUMES ? 1 : 0; /* UNPACK, or HOST */
  p->device_version = PEER_CONSUMES ? 7 : 0;
#endif
  return R_OK_;
}

static int p_listen(int dev, void *handle, void **listen_comm) {
  if (dev != 0) return R_INTERNAL;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return R_SYSTEM;
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 64) || getsockname(fd, (struct sockaddr *)&a, &al)
      || set_nonblock(fd)) {
    close(fd);
    return R_SYSTEM;
  }
  struct listen_comm *l = calloc(1, sizeof *l);
  l->fd = fd;
  l->pending = -1;
  memset(handle, 0, 128);
  struct conn_handle *h = handle;
  h->magic = HANDLE_MAGIC;
  h->port = a.sin_port;
  h->fd = -1;
  h->connect_ms = (uint32_t)env_int("TCPX4J_TESTPEER_CONNECT_MS");
  *listen_comm = l;
  return R_OK_;
}

static struct comm *new_comm(int fd, int recv) {
  struct comm *c = calloc(1, sizeof *c);
  c->fd = fd;
  c->recv = recv;
  for (int i = 0; i < SLOTS; i++) c->reqs[i].comm = c;
  return c;
}

/* Waits (no time limit) until fd is ready for events; 0, or -1 on error. */
static int wait_fd(int fd, short events) {
  struct pollfd p = {fd, events, 0};
  for (;;) {
    int n = poll(&p, 1, -1);
    if (n > 0) return 0;
    if (n < 0 && errno != EINTR) return -1;
  }
}

/* Moves exactly len bytes over a non-blocking socket, waiting as long as it takes. */
static int full_io(int fd, int sending, void *buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = sending ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL)
                        : recv(fd, (char *)buf + done, len - done, 0);
    if (n > 0) { done += (size_t)n; continue; }
    if (n == 0) return -1;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    if (wait_fd(fd, sending ? POLLOUT : POLLIN)) return -1;
  }
  return 0;
}

static struct comm *new_comm(int fd, int recv);

#ifdef PEER_BLOCKING
/* nccl-fastsocket's shape: the call returns only once the other side is there. */
static int connect_common(int dev, void *handle, void **send_comm) {
  struct conn_handle *h = handle;
  *send_comm = NULL;
  if (dev != 0 || h->magic != HANDLE_MAGIC) {
    WARN("NET/testpeer : bad connect handle");
    return R_INTERNAL;
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || set_nonblock(fd)) return R_SYSTEM;
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = h->port;
  if (h->connect_ms) {
    struct timespec d = {h->connect_ms / 1000, (long)(h->connect_ms % 1000) * 1000000L};
    while (nanosleep(&d, &d) && errno == EINTR) {
    }
  }
  int err = 0;
  socklen_t el = sizeof err;
  if ((connect(fd, (struct sockaddr *)&a, sizeof a) && errno != EINPROGRESS) || wait_fd(fd, POLLOUT)
      || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) || err) {
    WARN("NET/testpeer : connect failed: %s", strerror(err ? err : errno));
    close(fd);
    return R_SYSTEM;
  }
  uint64_t hello = HELLO;
  uint8_t ack = 0;
  if (full_io(fd, 1, &hello, sizeof hello) || full_io(fd, 0, &ack, 1) || ack != 1) {
    WARN("NET/testpeer : the listener did not accept (ack %d)", ack);
    close(fd);
    return R_SYSTEM;
  }
  tune(fd);
  *send_comm = new_comm(fd, 0);
  return R_OK_;
}

static int accept_common(struct listen_comm *l, int *fd) {
  int s;
  for (;;) {
    if (wait_fd(l->fd, POLLIN)) return -1;
    s = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK);
    if (s >= 0) break;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
  }
  uint64_t hello = 0;
  uint8_t ack = 1;
  if (full_io(s, 0, &hello, sizeof hello) || hello != HELLO || full_io(s, 1, &ack, 1)) {
    close(s);
    return -1;
  }
  tune(s);
  *fd = s;
  return 1;
}
#else
static int connect_common(int dev, void *handle, void **send_comm) {
  struct conn_handle *h = handle;
  *send_comm = NULL;
  if (dev != 0 || h->magic != HANDLE_MAGIC) {
    WARN("NET/testpeer : bad connect handle");
    return R_INTERNAL;
  }
  if (h->stage == 0) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || set_nonblock(fd)) return R_SYSTEM;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = h->port;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) && errno != EINPROGRESS) {
      WARN("NET/testpeer : connect failed: %s", strerror(errno));
      close(fd);
      return R_SYSTEM;
    }
    h->fd = fd;
    h->stage = 1;
    h->ready_ns = now_ns() + (uint64_t)h->connect_ms * 1000000ULL;
    return R_OK_; /* never connected on the first call, like TCPX */
  }
  if (h->stage != 1) {
    WARN("NET/testpeer : connect handle already used");
    return R_INTERNAL;
  }
  if (now_ns() < h->ready_ns) return R_OK_; /* TCPX's connect thread is still at work */
  struct pollfd p = {h->fd, POLLOUT, 0};
  if (poll(&p, 1, 0) <= 0) return R_OK_;
  int err = 0;
  socklen_t el = sizeof err;
  getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &el);
  if (err) {
    WARN("NET/testpeer : connect failed: %s", strerror(err));
    return R_SYSTEM;
  }
  uint64_t hello = HELLO;
  if (send(h->fd, &hello, sizeof hello, MSG_NOSIGNAL) != sizeof hello) return R_SYSTEM;
  tune(h->fd);
  h->stage = 2;
  *send_comm = new_comm(h->fd, 0);
  return R_OK_;
}

/* returns 1 with *fd set once a peer connected and greeted, 0 for "not yet", -1 on error */
static int accept_common(struct listen_comm *l, int *fd) {
  if (l->pending < 0) {
    int s = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK);
    if (s < 0) return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
    l->pending = s;
    l->hello_done = 0;
  }
  while (l->hello_done < (int)sizeof l->hello) {
    ssize_t n = recv(l->pending, (char *)&l->hello + l->hello_done, sizeof l->hello - l->hello_done, MSG_DONTWAIT);
    if (n > 0) { l->hello_done += n; continue; }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
    return -1;
  }
  if (l->hello != HELLO) return -1;
  *fd = l->pending;
  l->pending = -1;
  tune(*fd);
  return 1;
}
#endif

/* 0 when this listen comm may still accept; else a second accept, reported as misuse. */
static int check_single_use(struct listen_comm *l) {
  if (!l->yielded) return 0;
  MISUSE("NET/testpeer : accept on listen comm %p, which already produced its comm (TCPX frees its accept state"
         " on success: this second accept would free it again)", (void *)l);
  return R_INVALID_USAGE;
}

#if PEER_NET_VERSION >= 7
static int p_connect(int dev, void *handle, void **send_comm, struct device_handle **send_dev) {
  (void)send_dev; /* TCPX does not fill the send side's device handle */
  return connect_common(dev, handle, send_comm);
}

static int p_accept(void *listen_comm, void **recv_comm, struct device_handle **recv_dev) {
  *recv_comm = NULL;
  if (check_single_use(listen_comm)) return R_INVALID_USAGE;
#ifdef PEER_NO_CONSUMED
  /* a HOST device: no device handle to write, no bounce pages */
  (void)recv_dev;
  int hfd;
  int hrc = accept_common(listen_comm, &hfd);
  if (hrc <= 0) return hrc < 0 ? R_SYSTEM : R_OK_;
  ((struct listen_comm *)listen_comm)->yielded = 1;
  *recv_comm = new_comm(hfd, 1);
  return R_OK_;
#endif
  int fd;
  int rc = accept_common(listen_comm, &fd);
  if (rc <= 0) return rc < 0 ? R_SYSTEM : R_OK_; /* like TCPX: "not yet" before the device handle matters */
  ((struct listen_comm *)listen_comm)->yielded = 1; /* TCPX has freed its accept state by now */
  if (recv_dev != NULL && *recv_dev == NULL) {
    MISUSE("NET/testpeer : accept with a null device-handle buffer (TCPX writes the handle through it and crashes)");
    close(fd);
    return R_INTERNAL;
  }
  struct comm *c = new_comm(fd, 1);
  c->meta = calloc(1, sizeof *c->meta);
  c->bounce = mmap(NULL, (size_t)SLOTS * PAGES_PER_SLOT * PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (c->bounce == MAP_FAILED) return R_SYSTEM;
  c->uh = calloc(1, sizeof *c->uh);
  c->uh->meta = c->meta;
  const char *nb = getenv("TCPX4J_TESTPEER_NO_BOUNCE");
  c->uh->bounce = nb && nb[0] == '1' ? NULL : c->bounce; /* a comm that can only receive host memory */
  c->uh->head = (uint64_t)-1;
  if (recv_dev != NULL) { /* TCPX fills the device handle only when asked for one */
    struct device_handle *d = *recv_dev;
    d->type = 1;
    d->version = 7;
    d->handle = c->uh;
    d->size = sizeof *c->uh;
    d->needs_proxy_progress = 1;
  }
  *recv_comm = c;
  return R_OK_;
}
#else
static int p_connect(int dev, void *handle, void **send_comm) {
  return connect_common(dev, handle, send_comm);
}

static int p_accept(void *listen_comm, void **recv_comm) {
  *recv_comm = NULL;
  if (check_single_use(listen_comm)) return R_INVALID_USAGE;
  int fd;
  int rc = accept_common(listen_comm, &fd);
  if (rc <= 0) return rc < 0 ? R_SYSTEM : R_OK_;
  ((struct listen_comm *)listen_comm)->yielded = 1;
  *recv_comm = new_comm(fd, 1);
  return R_OK_;
}
#endif

static int reg_common(void *comm, void *data, size_t size, int type, void **mhandle) {
  if (comm == NULL) {
    WARN("NET/testpeer : regMr called with NULL communicator");
    return R_INTERNAL;
  }
  if (type == PTR_CUDA && no_pci()) {
    MISUSE("NET/testpeer : CUDA registration on a device without a PCI path (TCPX calls strrchr on it and crashes)");
    return R_INTERNAL;
  }
  if (type == PTR_CUDA && ((uintptr_t)data % PAGE != 0 || size % PAGE != 0)) {
    WARN("NET/testpeer : CUDA memory %p+%zu not 4 KiB aligned", data, size);
    return R_INTERNAL;
  }
#ifdef PEER_HOST_PTR_ONLY
  if (type != PTR_HOST) {
#else
  if (type != PTR_CUDA && type != PTR_HOST) {
#endif
    WARN("NET/testpeer : unknown memory type %d", type);
    return R_INTERNAL;
  }
  struct mr *m = calloc(1, sizeof *m);
  m->comm = comm;
  m->base = data;
  m->size = size;
  m->type = type;
  *mhandle = m;
  return R_OK_;
}

#if PEER_NET_VERSION >= 8
static int p_regmr(void *comm, void *data, size_t size, int type, void **mhandle) {
  return reg_common(comm, data, size, type, mhandle);
}
#else
static int p_regmr(void *comm, void *data, int size, int type, void **mhandle) {
  if (size < 0) return R_INTERNAL;
  return reg_common(comm, data, (size_t)size, type, mhandle);
}
#endif

static int p_deregmr(void *comm, void *mhandle) {
  struct mr *m = mhandle;
  if (m && m->comm != comm) {
    WARN("NET/testpeer : deregMr on another comm");
    return R_INTERNAL;
  }
  free(m);
  return R_OK_;
}

static int post(struct comm *c, int op, void *data, int size, struct mr *m, void **request) {
  *request = NULL;
  if (m == NULL) {
    WARN("NET/testpeer : mhandle is null");
    return R_INTERNAL;
  }
  if (m->comm != c || (char *)data < m->base || size < 0 || (char *)data + size > m->base + m->size) {
    WARN("NET/testpeer : buffer %p+%d outside its registration", data, size);
    return R_INTERNAL;
  }
  if (c->broken) return R_INTERNAL;
  if (c->posted - c->released >= SLOTS) {
    WARN("NET/testpeer : unable to allocate requests");
    return R_INTERNAL; /* what TCPX returns when its 16 slots are taken */
  }
  int slot = c->posted % SLOTS;
  struct request *r = &c->reqs[slot];
  struct comm *keep = r->comm;
  memset(r, 0, sizeof *r);
  r->comm = keep;
  r->op = op;
  r->type = m->type;
  r->data = data;
  r->size = size;
  r->msg_size = op == OP_SEND ? size : -1;
  r->slot = slot;
  if (devmem_receive(r)) {
    r->unpack.active = true;
    r->unpack.index = slot;
    r->unpack.frags = c->meta->frags[slot];
    r->unpack.count = &c->meta->count[slot];
  }
  c->posted++;
  *request = r;
  return R_OK_;
}

static int p_isend(void *send_comm, void *data, int size, int tag, void *mhandle, void **request) {
  RECORD(A_ISEND_COMM, send_comm); RECORD(A_ISEND_DATA, data); RECORD(A_ISEND_SIZE, size);
  RECORD(A_ISEND_TAG, tag); RECORD(A_ISEND_MHANDLE, mhandle); RECORD(A_ISEND_REQUEST, request);
  /* TCPX ignores tags */
  return post(send_comm, OP_SEND, data, size, mhandle, request);
}

static int p_irecv(void *recv_comm, int n, void **data, int *sizes, int *tags, void **mhandles, void **request) {
  RECORD(A_IRECV_COMM, recv_comm); RECORD(A_IRECV_N, n); RECORD(A_IRECV_DATA, data); RECORD(A_IRECV_SIZES, sizes);
  RECORD(A_IRECV_TAGS, tags); RECORD(A_IRECV_MHANDLES, mhandles); RECORD(A_IRECV_REQUEST, request);
  if (n != 1) return R_INTERNAL;
  RECORD(A_IRECV_DATA0, data[0]); RECORD(A_IRECV_SIZE0, sizes[0]); RECORD(A_IRECV_TAG0, tags[0]);
  RECORD(A_IRECV_MHANDLE0, mhandles[0]); /* TCPX ignores tags */
  return post(recv_comm, OP_RECV, data[0], sizes[0], mhandles[0], request);
}

static int p_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles, void **request) {
  (void)recv_comm; (void)n; (void)data; (void)sizes; (void)mhandles; (void)request;
  WARN("NET/testpeer : iflush must not be called");
  return R_INTERNAL;
}

/* Moves as many bytes as the socket takes now. Returns -1 on failure. */
static int progress(struct request *r) {
  struct comm *c = r->comm;
  int sending = r->op == OP_SEND;
#ifdef PEER_NULL_IO
  (void)c; (void)sending;
  r->msg_size = r->size;
  r->done = 1;
  return 0;
#endif
  if (sending) r->hdr = (uint32_t)r->size;
  while (r->hdr_done < 4) {
    long n = io_step(c, sending, (char *)&r->hdr + r->hdr_done, 4 - r->hdr_done);
    if (n < 0) return -1;
    if (n == 0) return 0;
    r->hdr_done += n;
  }
  if (!sending && r->msg_size < 0) {
    if ((int)r->hdr > r->size || (int)r->hdr < 0) {
      WARN("NET/testpeer : message of %u bytes for a receive of %d", r->hdr, r->size);
      return -1;
    }
    r->msg_size = (int)r->hdr;
  }
  if (!sending && r->type == PTR_HOST && !no_host_warn) WARN("NET/testpeer requested receive on host mem buffer");
  while (r->body_done < r->msg_size) {
    if (devmem_receive(r)) {
      /* scattered, permuted bounce pages; even fragments start mid-page like skb frags do */
      if (r->frag_done == 0) {
        if (r->nfrag >= MAX_FRAGS) {
          WARN("NET/testpeer : request too many pages %d", r->nfrag);
          return -1;
        }
        uint32_t page = (uint32_t)((r->nfrag * 7 + 3) % PAGES_PER_SLOT);
        uint32_t in_page = (r->nfrag % 2) ? 0 : 512;
        uint32_t left = (uint32_t)(r->msg_size - r->body_done);
        struct fragment *f = &r->unpack.frags[r->nfrag];
        f->src_off = (uint32_t)(r->slot * PAGES_PER_SLOT + page) * PAGE + in_page;
        f->len = left < PAGE - in_page ? left : PAGE - in_page;
        f->dst_off = (uint64_t)r->body_done;
        r->nfrag++;
        r->unpack.count_cache = r->nfrag;
      }
      struct fragment *f = &r->unpack.frags[r->nfrag - 1];
      long n = io_step(c, 0, c->bounce + f->src_off + r->frag_done, f->len - r->frag_done);
      if (n < 0) return -1;
      if (n == 0) return 0;
      r->frag_done += n;
      r->body_done += n;
      if ((uint32_t)r->frag_done == f->len) r->frag_done = 0;
    } else {
      long n = io_step(c, sending, r->data + r->body_done, r->msg_size - r->body_done);
      if (n < 0) return -1;
      if (n == 0) return 0;
      r->body_done += n;
    }
  }
  r->done = 1;
  return 0;
}

static int p_test(void *request, int *done, int *sizes) {
  RECORD(A_TEST_REQUEST, request); RECORD(A_TEST_DONE, done); RECORD(A_TEST_SIZES, sizes);
  /* TCPX never writes the size */
  *done = 0;
  struct request *r = request;
  if (r == NULL) {
    WARN("NET/testpeer : test called with NULL request");
    return R_INTERNAL;
  }
  struct comm *c = r->comm;
  if (c->completed == c->posted || r != &c->reqs[c->completed % SLOTS]) {
    WARN("NET/testpeer : test called with invalid request %p, expected the oldest", request);
    return R_INTERNAL;
  }
  if (c->broken) return R_INTERNAL;
  if (progress(r) < 0) {
    c->broken = 1;
    return R_INTERNAL;
  }
  if (!r->done || ++r->tests < late_tests) return R_OK_;
  if (devmem_receive(r)) *r->unpack.count = r->msg_size ? (uint64_t)r->nfrag : 0;
  c->completed++;
  if (r->op == OP_SEND || !PEER_CONSUMES) c->released++;
  *done = 1;
  return R_OK_;
}

static void free_comm(struct comm *c) {
  if (c == NULL) return;
  if (c->fd >= 0) close(c->fd);
  if (c->bounce) munmap(c->bounce, (size_t)SLOTS * PAGES_PER_SLOT * PAGE);
  free(c->meta);
  free(c->uh);
  free(c);
}

static int p_close(void *comm) {
  free_comm(comm);
  return R_OK_;
}

static int p_close_listen(void *listen_comm) {
  struct listen_comm *l = listen_comm;
  if (l) {
    close(l->fd);
    if (l->pending >= 0) close(l->pending);
    free(l);
  }
  return R_OK_;
}

#if PEER_NET_VERSION >= 7
static int p_get_device_mr(void *comm, void *mhandle, void **dptr) {
  (void)comm; (void)mhandle; (void)dptr;
  return R_OK_;
}

static int p_irecv_consumed(void *recv_comm, int n, void *request) {
  RECORD(A_CONSUMED_COMM, recv_comm); RECORD(A_CONSUMED_N, n); RECORD(A_CONSUMED_REQUEST, request);
  struct comm *c = recv_comm;
  if (request == NULL || n != 1) {
    WARN("NET/testpeer : irecvConsumed with null request or n != 1");
    return R_INTERNAL;
  }
  struct request *r = request;
  if (r->op != OP_RECV) {
    WARN("NET/testpeer : irecvConsumed called for send request %p", request);
    return R_OK_;
  }
  if (c->released == c->completed || r != &c->reqs[c->released % SLOTS]) {
    WARN("NET/testpeer : irecvConsumed called with %p, not the oldest completed receive", request);
    return R_INTERNAL;
  }
  c->released++;
  if (c->uh) c->uh->head++;
  return R_OK_;
}
#endif

/* ---- the exported table ---- */

#ifdef PEER_NO_TABLE
EXPORT volatile struct { const char *name; } ncclNetPlugin_v4 = {"tcpx4j-testpeer-v4"};
#else
#define STR2(x) #x
#define STR(x) STR2(x)
#define SYM2(v) ncclNetPlugin_v##v
#define SYM(v) SYM2(v)

EXPORT volatile struct {
  const char *name;
  int (*init)(peer_logger);
  int (*devices)(int *);
  void *get_properties;
  int (*listen)(int, void *, void **);
  void *connect;
  void *accept;
  void *reg_mr;
#if PEER_NET_VERSION >= 6
  void *reg_mr_dma_buf;
#endif
  int (*dereg_mr)(void *, void *);
  int (*isend)(void *, void *, int, int, void *, void **);
  int (*irecv)(void *, int, void **, int *, int *, void **, void **);
  int (*iflush)(void *, int, void **, int *, void **, void **);
  int (*test)(void *, int *, int *);
  int (*close_send)(void *);
  int (*close_recv)(void *);
  int (*close_listen)(void *);
#if PEER_NET_VERSION >= 7
  int (*get_device_mr)(void *, void *, void **);
  int (*irecv_consumed)(void *, int, void *);
#endif
} SYM(PEER_NET_VERSION) = {
  "tcpx4j-testpeer-v" STR(PEER_NET_VERSION),
  p_init,
  p_devices,
  (void *)p_properties,
  p_listen,
  (void *)p_connect,
  (void *)p_accept,
  (void *)p_regmr,
#if PEER_NET_VERSION >= 6
  NULL, /* like TCPX: no dma-buf registration */
#endif
  p_deregmr,
  p_isend,
  p_irecv,
  p_iflush,
  p_test,
  p_close,
  p_close,
  p_close_listen,
#if PEER_NET_VERSION >= 7 && defined(PEER_NO_CONSUMED)
  NULL, /* getDeviceMr: optional, like aws-ofi-nccl */
  NULL, /* irecvConsumed: optional, like aws-ofi-nccl */
#elif PEER_NET_VERSION >= 7
  p_get_device_mr,
  p_irecv_consumed,
#endif
};
#endif

/* How often a caller misused the plugin in a way that crashes TCPX (second accept, CUDA without PCI path). */
EXPORT long tcpx4j_testpeer_misuse(void) {
  return __atomic_load_n(&misuse_count, __ATOMIC_SEQ_CST);
}

/* An argument of this thread's last isend, irecv, test or irecvConsumed as received ("isend.tag",
 * "irecv.size0" for sizes[0], ...; ints sign-extended), or LONG_MIN for an unknown name. */
EXPORT long tcpx4j_testpeer_last(const char *what) {
  static const char *const names[A_COUNT] = {
    "isend.comm", "isend.data", "isend.size", "isend.tag", "isend.mhandle", "isend.request",
    "irecv.comm", "irecv.n", "irecv.data", "irecv.sizes", "irecv.tags", "irecv.mhandles", "irecv.request",
    "irecv.data0", "irecv.size0", "irecv.tag0", "irecv.mhandle0",
    "test.request", "test.done", "test.sizes",
    "consumed.comm", "consumed.n", "consumed.request",
  };
  for (int i = 0; i < A_COUNT; i++) {
    if (strcmp(what, names[i]) == 0) return last_arg[i];
  }
  return LONG_MIN;
}

/* Sizes and offsets as this compiler lays the ABI structs out, for the Java layout tests. */
EXPORT long tcpx4j_testpeer_layout(const char *what) {
#define L(n, v) if (strcmp(what, n) == 0) return (long)(v)
  L("fragment.size", sizeof(struct fragment));
  L("fragment.src_off", offsetof(struct fragment, src_off));
  L("fragment.len", offsetof(struct fragment, len));
  L("fragment.dst_off", offsetof(struct fragment, dst_off));
  L("unpack_handle.size", sizeof(struct unpack_handle));
  L("unpack_handle.meta", offsetof(struct unpack_handle, meta));
  L("unpack_handle.bounce", offsetof(struct unpack_handle, bounce));
  L("unpack_handle.head", offsetof(struct unpack_handle, head));
  L("device_handle.size", sizeof(struct device_handle));
  L("device_handle.type", offsetof(struct device_handle, type));
  L("device_handle.version", offsetof(struct device_handle, version));
  L("device_handle.handle", offsetof(struct device_handle, handle));
  L("device_handle.bytes", offsetof(struct device_handle, size));
  L("device_handle.needs_proxy", offsetof(struct device_handle, needs_proxy_progress));
  L("request.unpack", offsetof(struct request, unpack));
  L("request.unpack.frags", offsetof(struct request, unpack) + offsetof(struct unpack_view, frags));
  L("request.unpack.count", offsetof(struct request, unpack) + offsetof(struct unpack_view, count));
  L("props_v6.size", sizeof(struct props_v6));
  L("props_v6.guid", offsetof(struct props_v6, guid));
  L("props_v6.ptr_support", offsetof(struct props_v6, ptr_support));
  L("props_v6.speed", offsetof(struct props_v6, speed));
  L("props_v6.latency", offsetof(struct props_v6, latency));
  L("props_v6.max_recvs", offsetof(struct props_v6, max_recvs));
  L("props_v7.size", sizeof(struct props_v7));
  L("props_v7.device_type", offsetof(struct props_v7, device_type));
  L("props_v7.device_version", offsetof(struct props_v7, device_version));
  L("props_v8.size", sizeof(struct props_v8));
  L("props_v8.reg_is_global", offsetof(struct props_v8, reg_is_global));
  L("props_v8.speed", offsetof(struct props_v8, speed));
  L("props_v8.latency", offsetof(struct props_v8, latency));
  L("props_v8.max_recvs", offsetof(struct props_v8, max_recvs));
  L("props_v8.device_type", offsetof(struct props_v8, device_type));
  L("props_v8.device_version", offsetof(struct props_v8, device_version));
#undef L
  return -1;
}
