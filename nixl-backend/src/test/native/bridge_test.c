/*
 * End-to-end test of libtcpx4j_nixl_bridge from C: two TCPX backends ("A" and "B") in this one
 * process, on the real engine over the loopback transport, driven the way NIXL's agent drives a
 * backend. WRITE, READ, notifications, a local copy, errors as statuses, calls from a second
 * thread, and a disconnect. Every byte is checked. Run by Maven with TCPX4J_CLASSPATH set.
 *
 * `bridge_test env-override` checks the set-up of an installed bridge instead: run with neither
 * TCPX4J_CLASSPATH nor TCPX4J_JAVA_HOME (the class path comes from tcpx4j-classpath.txt beside the
 * bridge, Java from JAVA_HOME or PATH) and with TCPX4J_NIXL_TRANSPORT=tcpx, TCPX4J_NIXL_CUDA=on, it
 * passes the advertised parameters back unchanged, as nixlbench does, and checks that the
 * environment wins over them while a parameter that differs from its default wins over the
 * environment.
 */
#define _GNU_SOURCE
#include "tcpx4j_nixl_bridge.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int passed, failed;

#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (cond) {                                                              \
            passed++;                                                            \
        } else {                                                                 \
            failed++;                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                 \
            fprintf(stderr, __VA_ARGS__);                                        \
            fprintf(stderr, " (last error: %s)\n", tcpx4j_nixl_last_error());    \
        }                                                                        \
    } while (0)

#define EXPECT(call, want) CHECK((call) == (want), "%s returned %d, wanted %d", #call, (call), (want))

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void *buffer(size_t n, unsigned seed) {
    unsigned char *p = aligned_alloc(4096, (n + 4095) / 4096 * 4096);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (unsigned char) (seed >> 16);
    }
    return p;
}

/* Notifications collected by the callback. */
struct notifs {
    int count;
    char agent[8][64];
    char msg[8][64];
    size_t msg_len[8];
};

static void collect(void *ctx, const char *agent, size_t agent_len, const void *msg, size_t msg_len) {
    struct notifs *n = ctx;
    if (n->count < 8 && agent_len < 64 && msg_len < 64) {
        memcpy(n->agent[n->count], agent, agent_len);
        n->agent[n->count][agent_len] = '\0';
        memcpy(n->msg[n->count], msg, msg_len);
        n->msg[n->count][msg_len] = '\0';
        n->msg_len[n->count] = msg_len;
    }
    n->count++;
}

/* Polls until `want` notifications arrived (or 10 s), then waits a little for extra ones. */
static struct notifs await_notifs(tcpx4j_nixl *b, int want) {
    struct notifs n;
    memset(&n, 0, sizeof n);
    double deadline = now_ms() + 10000;
    while (n.count < want && now_ms() < deadline) {
        if (tcpx4j_nixl_get_notifs(b, collect, &n) != TCPX4J_SUCCESS) {
            break;
        }
        sleep_ms(1);
    }
    sleep_ms(30);
    tcpx4j_nixl_get_notifs(b, collect, &n);
    return n;
}

static int await_xfer(tcpx4j_nixl *b, int64_t h) {
    double deadline = now_ms() + 10000;
    int s;
    while ((s = tcpx4j_nixl_check_xfer(b, h)) == TCPX4J_IN_PROG && now_ms() < deadline) {
        sleep_ms(1);
    }
    return s;
}

/* 1 if equal; else reports the first differing byte. */
static int same(const void *x, const void *y, size_t n, const char *what) {
    const unsigned char *a = x, *b = y;
    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i]) {
            fprintf(stderr, "%s: byte %zu of %zu differs (%u != %u)\n", what, i, n, a[i], b[i]);
            return 0;
        }
    }
    return 1;
}

static int64_t reg(tcpx4j_nixl *b, void *p, size_t n) {
    int64_t md = 0;
    EXPECT(tcpx4j_nixl_register_mem(b, (uint64_t) (uintptr_t) p, n, 0, TCPX4J_DRAM_SEG, &md), TCPX4J_SUCCESS);
    return md;
}

/* What NIXL's agent does with a peer's region: getPublicData there, loadRemoteMD here. */
static int64_t load_remote(tcpx4j_nixl *into, tcpx4j_nixl *owner, const char *owner_name, void *p, size_t n,
                           int64_t md) {
    void *blob = NULL;
    size_t len = 0;
    int64_t rmd = 0;
    EXPECT(tcpx4j_nixl_get_public_data(owner, md, &blob, &len), TCPX4J_SUCCESS);
    EXPECT(tcpx4j_nixl_load_remote_md(into, (uint64_t) (uintptr_t) p, n, 0, TCPX4J_DRAM_SEG, blob, len, owner_name,
                                      &rmd),
           TCPX4J_SUCCESS);
    tcpx4j_nixl_free(blob);
    return rmd;
}

static int64_t prep1(tcpx4j_nixl *b, int op, void *local, int64_t lmd, void *remote, int64_t rmd, size_t n,
                     const char *agent) {
    tcpx4j_desc l = {(uint64_t) (uintptr_t) local, n, 0, lmd};
    tcpx4j_desc r = {(uint64_t) (uintptr_t) remote, n, 0, rmd};
    int64_t h = 0;
    EXPECT(tcpx4j_nixl_prep_xfer(b, op, TCPX4J_DRAM_SEG, &l, 1, TCPX4J_DRAM_SEG, &r, 1, agent, &h), TCPX4J_SUCCESS);
    return h;
}

struct thread_call {
    tcpx4j_nixl *b;
    int status;
    char error[256];
};

static void *gen_notif_from_thread(void *p) {
    struct thread_call *c = p;
    c->status = tcpx4j_nixl_gen_notif(c->b, "B", "from-thread", 11);
    snprintf(c->error, sizeof c->error, "%s", tcpx4j_nixl_last_error());
    return NULL;
}

/* A poller of its own: counts notifications until `want` arrived across every poller, or 10 s. */
struct poller {
    tcpx4j_nixl *b;
    atomic_int *seen;
    int want;
    int status;
};

static void count_notif(void *ctx, const char *agent, size_t agent_len, const void *msg, size_t msg_len) {
    (void) agent, (void) agent_len, (void) msg, (void) msg_len;
    atomic_fetch_add((atomic_int *) ctx, 1);
}

static void *poll_notifs(void *p) {
    struct poller *q = p;
    double deadline = now_ms() + 10000;
    q->status = TCPX4J_SUCCESS;
    while (atomic_load(q->seen) < q->want && now_ms() < deadline && q->status == TCPX4J_SUCCESS) {
        q->status = tcpx4j_nixl_get_notifs(q->b, count_notif, q->seen);
    }
    return NULL;
}

/* The advertised parameters, as a host that passes them back unchanged sends them; `key` set to `value`. */
static size_t advertised_with(const char **keys, const char **values, size_t cap, const char *key, const char *value) {
    size_t n = 0;
    const tcpx4j_param *p = tcpx4j_nixl_advertised_params(&n);
    for (size_t i = 0; i < n && i < cap; i++) {
        keys[i] = p[i].key;
        values[i] = key != NULL && strcmp(p[i].key, key) == 0 ? value : p[i].value;
    }
    return n < cap ? n : cap;
}

static const char *const LOOPBACK_MODULE = "io.tcpx4j.transport.loopback.LoopbackTransportModule";

static int env_override(void) {
    const char *keys[32], *values[32];
    size_t n = 0;
    const tcpx4j_param *p = tcpx4j_nixl_advertised_params(&n);
    CHECK(n >= 10 && n <= 32, "advertised parameter count %zu", n);
    int transport_advertised = 0;
    for (size_t i = 0; i < n; i++) {
        transport_advertised |= strcmp(p[i].key, "transport") == 0 && strcmp(p[i].value, "loopback") == 0;
    }
    CHECK(transport_advertised, "the plugin advertises transport=loopback");

    /* transport=loopback passed back, TCPX4J_NIXL_TRANSPORT=tcpx: the environment wins (the tcpx module is
     * not on this class path, so creation fails naming it) */
    tcpx4j_nixl *e = NULL;
    size_t m = advertised_with(keys, values, 32, NULL, NULL);
    int s = tcpx4j_nixl_create("E1", keys, values, m, &e);
    CHECK(s == TCPX4J_ERR_NOT_SUPPORTED, "advertised transport passed back: %d", s);
    CHECK(strstr(tcpx4j_nixl_last_error(), "io.tcpx4j.transport.tcpx.TcpxTransportModule") != NULL &&
              strstr(tcpx4j_nixl_last_error(), "TCPX4J_NIXL_TRANSPORT") != NULL,
          "the error names the tcpx module and the variable that chose it");
    CHECK(e == NULL, "no backend on failure");

    /* a transport that differs from the default wins over the environment; cuda=auto passed back yields to
     * TCPX4J_NIXL_CUDA=on (and cuda-unpack is not on this class path) */
    m = advertised_with(keys, values, 32, "transport", LOOPBACK_MODULE);
    s = tcpx4j_nixl_create("E2", keys, values, m, &e);
    CHECK(s == TCPX4J_ERR_NOT_SUPPORTED, "explicit transport, advertised cuda passed back: %d", s);
    CHECK(strstr(tcpx4j_nixl_last_error(), "io.tcpx4j.cuda.CudaUnpackModule") != NULL &&
              strstr(tcpx4j_nixl_last_error(), "TCPX4J_NIXL_CUDA") != NULL,
          "the error names the cuda module and the variable that chose it");

    /* explicit values for both: a working backend over the loopback transport */
    for (size_t i = 0; i < m; i++) {
        if (strcmp(keys[i], "cuda") == 0) {
            values[i] = "off";
        }
    }
    EXPECT(tcpx4j_nixl_create("E3", keys, values, m, &e), TCPX4J_SUCCESS);
    void *info = NULL;
    size_t len = 0;
    EXPECT(tcpx4j_nixl_get_conn_info(e, &info, &len), TCPX4J_SUCCESS);
    CHECK(len > 0, "conn info of E3");
    tcpx4j_nixl_free(info);
    tcpx4j_nixl_destroy(e);

    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "env-override") == 0) {
        return env_override();
    }
    double t0 = now_ms();

    /* the VM options the bridge adds: the client compiler only, whatever the host */
    size_t n_opts = 0;
    const char *const *opts = tcpx4j_nixl_default_jvm_opts(&n_opts);
    CHECK(n_opts == 1 && strcmp(opts[0], "-XX:TieredStopAtLevel=1") == 0, "%zu options", n_opts);

    const char *values[] = {"loopback"};
    tcpx4j_nixl *a = NULL, *b = NULL, *bad = NULL;

    /* a Java exception (unknown parameter) comes back as a status with its text */
    const char *bad_keys[] = {"no_such_key"};
    EXPECT(tcpx4j_nixl_create("X", bad_keys, values, 1, &bad), TCPX4J_ERR_INVALID_PARAM);
    CHECK(strstr(tcpx4j_nixl_last_error(), "no_such_key") != NULL, "error text names the key: %s",
          tcpx4j_nixl_last_error());
    CHECK(bad == NULL, "no backend on failure");

    /* A gets every advertised parameter back, as nixlbench sends them */
    const char *all_keys[32], *all_values[32];
    size_t n_all = advertised_with(all_keys, all_values, 32, NULL, NULL);
    EXPECT(tcpx4j_nixl_create("A", all_keys, all_values, n_all, &a), TCPX4J_SUCCESS);
    EXPECT(tcpx4j_nixl_create("B", NULL, NULL, 0, &b), TCPX4J_SUCCESS);
    if (a == NULL || b == NULL) {
        printf("%d passed, %d failed\n", passed, failed);
        return 1;
    }
    EXPECT(tcpx4j_nixl_connect(a, "A"), TCPX4J_SUCCESS);
    EXPECT(tcpx4j_nixl_connect(b, "B"), TCPX4J_SUCCESS);

    /* conn info both ways */
    void *ca, *cb;
    size_t la, lb;
    EXPECT(tcpx4j_nixl_get_conn_info(a, &ca, &la), TCPX4J_SUCCESS);
    EXPECT(tcpx4j_nixl_get_conn_info(b, &cb, &lb), TCPX4J_SUCCESS);
    EXPECT(tcpx4j_nixl_load_remote_conn_info(b, "A", ca, la), TCPX4J_SUCCESS);
    EXPECT(tcpx4j_nixl_load_remote_conn_info(a, "B", cb, lb), TCPX4J_SUCCESS);
    EXPECT(tcpx4j_nixl_connect(a, "B"), TCPX4J_SUCCESS);
    tcpx4j_nixl_free(ca);
    tcpx4j_nixl_free(cb);

    const size_t n = 3 * 1024 * 1024 + 123;
    unsigned char *a_src = buffer(n, 1), *a_dst = buffer(n, 2), *b_buf = buffer(n, 3), *b_src = buffer(n, 4);
    int64_t md_a_src = reg(a, a_src, n), md_a_dst = reg(a, a_dst, n);
    int64_t md_b_buf = reg(b, b_buf, n), md_b_src = reg(b, b_src, n);
    int64_t r_b_buf = load_remote(a, b, "B", b_buf, n, md_b_buf);
    int64_t r_b_src = load_remote(a, b, "B", b_src, n, md_b_src);

    /* WRITE A -> B with a notification: the notification means the bytes are there */
    int64_t w = prep1(a, TCPX4J_OP_WRITE, a_src, md_a_src, b_buf, r_b_buf, n, "B");
    int s = tcpx4j_nixl_post_xfer(a, w, 1, "write-done", 10);
    CHECK(s == TCPX4J_IN_PROG || s == TCPX4J_SUCCESS, "post WRITE: %d", s);
    struct notifs nb = await_notifs(b, 1);
    CHECK(same(a_src, b_buf, n, "WRITE"), "WRITE: bytes at B differ from A's source");
    CHECK(nb.count == 1 && strcmp(nb.agent[0], "A") == 0 && strcmp(nb.msg[0], "write-done") == 0,
          "WRITE: one notification from A at B (got %d)", nb.count);
    EXPECT(await_xfer(a, w), TCPX4J_SUCCESS);

    /* repost of a finished handle, with new data, still exactly one notification per post */
    memset(a_src, 0x5a, 4096);
    s = tcpx4j_nixl_post_xfer(a, w, 1, "", 0);
    CHECK(s == TCPX4J_IN_PROG || s == TCPX4J_SUCCESS, "repost WRITE: %d", s);
    EXPECT(await_xfer(a, w), TCPX4J_SUCCESS);
    nb = await_notifs(b, 1);
    CHECK(nb.count == 1 && nb.msg_len[0] == 0, "repost: one empty notification (got %d)", nb.count);
    CHECK(same(a_src, b_buf, n, "repost"), "repost: bytes at B differ");
    EXPECT(tcpx4j_nixl_release_req(a, w), TCPX4J_SUCCESS);

    /* READ B -> A, the notification goes to B (the agent read from) */
    int64_t r = prep1(a, TCPX4J_OP_READ, a_dst, md_a_dst, b_src, r_b_src, n, "B");
    s = tcpx4j_nixl_post_xfer(a, r, 1, "read-done", 9);
    CHECK(s == TCPX4J_IN_PROG || s == TCPX4J_SUCCESS, "post READ: %d", s);
    EXPECT(await_xfer(a, r), TCPX4J_SUCCESS);
    CHECK(same(b_src, a_dst, n, "READ"), "READ: bytes at A differ from B's source");
    nb = await_notifs(b, 1);
    CHECK(nb.count == 1 && strcmp(nb.agent[0], "A") == 0 && strcmp(nb.msg[0], "read-done") == 0,
          "READ: one notification from A at B (got %d)", nb.count);
    int64_t us = 0, margin = 0;
    int method = -1;
    EXPECT(tcpx4j_nixl_estimate_xfer_cost(a, r, &us, &margin, &method), TCPX4J_SUCCESS);
    CHECK(us > 0 && margin >= 0 && method == 0, "estimate: %lld us, margin %lld, method %d", (long long) us,
          (long long) margin, method);
    EXPECT(tcpx4j_nixl_release_req(a, r), TCPX4J_SUCCESS);

    /* local copy within A, notified to A itself */
    int64_t target = 0;
    EXPECT(tcpx4j_nixl_load_local_md(a, md_a_dst, &target), TCPX4J_SUCCESS);
    memset(a_dst, 0, n);
    int64_t loc = prep1(a, TCPX4J_OP_WRITE, a_src, md_a_src, a_dst, target, n, "A");
    s = tcpx4j_nixl_post_xfer(a, loc, 1, "local", 5);
    CHECK(s == TCPX4J_IN_PROG || s == TCPX4J_SUCCESS, "post local: %d", s);
    EXPECT(await_xfer(a, loc), TCPX4J_SUCCESS);
    CHECK(same(a_src, a_dst, n, "local"), "local: bytes differ");
    struct notifs na = await_notifs(a, 1);
    CHECK(na.count == 1 && strcmp(na.agent[0], "A") == 0, "local: one notification at A (got %d)", na.count);
    EXPECT(tcpx4j_nixl_release_req(a, loc), TCPX4J_SUCCESS);
    EXPECT(tcpx4j_nixl_unload_md(a, target), TCPX4J_SUCCESS);

    /* errors are statuses with a text */
    int64_t h = 0;
    tcpx4j_desc l1 = {(uint64_t) (uintptr_t) a_src, 16, 0, md_a_src};
    tcpx4j_desc r1 = {(uint64_t) (uintptr_t) b_buf, 16, 0, 987654};
    EXPECT(tcpx4j_nixl_prep_xfer(a, TCPX4J_OP_WRITE, TCPX4J_DRAM_SEG, &l1, 1, TCPX4J_DRAM_SEG, &r1, 1, "B", &h),
           TCPX4J_ERR_NOT_FOUND);
    CHECK(tcpx4j_nixl_last_error()[0] != '\0', "an error leaves a text");
    EXPECT(tcpx4j_nixl_check_xfer(a, 424242), TCPX4J_ERR_NOT_FOUND);
    EXPECT(tcpx4j_nixl_register_mem(a, (uint64_t) (uintptr_t) a_src, 16, 0, 4 /* FILE_SEG */, &h),
           TCPX4J_ERR_NOT_SUPPORTED);

    /* a call from another thread: attached on the fly, detached when it ends */
    struct thread_call c = {a, 0, ""};
    pthread_t t;
    pthread_create(&t, NULL, gen_notif_from_thread, &c);
    pthread_join(t, NULL);
    CHECK(c.status == TCPX4J_SUCCESS, "genNotif from a second thread: %d (%s)", c.status, c.error);
    nb = await_notifs(b, 1);
    CHECK(nb.count == 1 && strcmp(nb.agent[0], "A") == 0 && strcmp(nb.msg[0], "from-thread") == 0,
          "genNotif: one notification from A at B (got %d)", nb.count);

    /* two threads polling getNotifs at once (they share one cached out-array, taken in turn): every
       notification arrives once */
    atomic_int seen = 0;
    struct poller p1 = {b, &seen, 300, 0}, p2 = {b, &seen, 300, 0};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, poll_notifs, &p1);
    pthread_create(&t2, NULL, poll_notifs, &p2);
    int sent = 0;
    for (int i = 0; i < 300; i++) {
        sent += tcpx4j_nixl_gen_notif(a, "B", "polled", 6) == TCPX4J_SUCCESS;
    }
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK(sent == 300 && p1.status == TCPX4J_SUCCESS && p2.status == TCPX4J_SUCCESS,
          "two pollers: %d sent, statuses %d, %d", sent, p1.status, p2.status);
    nb = await_notifs(b, 0);
    CHECK(atomic_load(&seen) == 300 && nb.count == 0, "two pollers: %d notifications seen of 300, %d more after",
          atomic_load(&seen), nb.count);

    /* disconnect: a transfer in flight (or the next post) ends with REMOTE_DISCONNECT */
    int64_t big = prep1(a, TCPX4J_OP_WRITE, a_src, md_a_src, b_buf, r_b_buf, n, "B");
    s = tcpx4j_nixl_post_xfer(a, big, 0, NULL, 0);
    CHECK(s == TCPX4J_IN_PROG || s == TCPX4J_SUCCESS, "post before disconnect: %d", s);
    EXPECT(tcpx4j_nixl_disconnect(a, "B"), TCPX4J_SUCCESS);
    s = await_xfer(a, big);
    CHECK(s == TCPX4J_ERR_REMOTE_DISCONNECT || s == TCPX4J_SUCCESS, "in flight at disconnect: %d", s);
    if (s == TCPX4J_SUCCESS) { /* it was quicker than the disconnect: B going away must fail the next post */
        tcpx4j_nixl_destroy(b);
        b = NULL;
        s = tcpx4j_nixl_post_xfer(a, big, 0, NULL, 0);
        if (s == TCPX4J_IN_PROG) {
            s = await_xfer(a, big);
        }
        EXPECT(s, TCPX4J_ERR_REMOTE_DISCONNECT);
    }
    EXPECT(tcpx4j_nixl_release_req(a, big), TCPX4J_SUCCESS);

    EXPECT(tcpx4j_nixl_deregister_mem(a, md_a_src), TCPX4J_SUCCESS);
    EXPECT(tcpx4j_nixl_deregister_mem(a, md_a_src), TCPX4J_ERR_NOT_FOUND);
    tcpx4j_nixl_destroy(a);
    tcpx4j_nixl_destroy(b);
    free(a_src);
    free(a_dst);
    free(b_buf);
    free(b_src);
    printf("bridge_test: %.0f ms\n", now_ms() - t0);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
