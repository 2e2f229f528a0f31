/*
 * libtcpx4j_nixl_bridge: a plain C API over the Java NIXL backend (io.tcpx4j.nixl.NixlBackend).
 *
 * The first tcpx4j_nixl_create() starts a Java VM inside the calling process, or uses the one that
 * is already there, and every thread that calls in is attached to it (and detached when it exits).
 * Java exceptions never cross this API: each becomes a status, and its text is kept for
 * tcpx4j_nixl_last_error().
 *
 * Environment, read once when the VM is started:
 *   TCPX4J_JAVA_HOME   Java 17+ runtime whose lib/server/libjvm.so is loaded; unset: JAVA_HOME, then
 *                      the installation that the `java` found on PATH belongs to
 *   TCPX4J_CLASSPATH   class path holding tcpx4j-nixl-backend and its dependencies; unset: the file
 *                      tcpx4j-classpath.txt beside this library (entries separated by new lines or
 *                      ':', relative ones resolved against the library's directory; lines starting
 *                      with '#' are comments), which `tcpx4j nixl install` writes
 *   TCPX4J_JVM_OPTS    extra VM options, separated by spaces (e.g. -Xmx2g -Xss4m); they come after the
 *                      bridge's own (tcpx4j_nixl_default_jvm_opts), so a repeated option wins
 * The VM always gets -Xrs (it leaves SIGINT, SIGTERM, SIGHUP and SIGQUIT to the host), see docs/NIXL.md.
 *
 * Statuses are NIXL's nixl_status_t values. Thread-safe: every function may be called from any
 * thread. No function blocks on the network.
 */
#ifndef TCPX4J_NIXL_BRIDGE_H
#define TCPX4J_NIXL_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TCPX4J_NIXL_BRIDGE_EXPORT __attribute__((visibility("default")))

/* nixl_status_t */
enum {
    TCPX4J_IN_PROG = 1,
    TCPX4J_SUCCESS = 0,
    TCPX4J_ERR_NOT_POSTED = -1,
    TCPX4J_ERR_INVALID_PARAM = -2,
    TCPX4J_ERR_BACKEND = -3,
    TCPX4J_ERR_NOT_FOUND = -4,
    TCPX4J_ERR_MISMATCH = -5,
    TCPX4J_ERR_NOT_ALLOWED = -6,
    TCPX4J_ERR_REPOST_ACTIVE = -7,
    TCPX4J_ERR_UNKNOWN = -8,
    TCPX4J_ERR_NOT_SUPPORTED = -9,
    TCPX4J_ERR_REMOTE_DISCONNECT = -10,
    TCPX4J_ERR_CANCELED = -11
};

/* nixl_mem_t and nixl_xfer_op_t values */
enum { TCPX4J_DRAM_SEG = 0, TCPX4J_VRAM_SEG = 1 };
enum { TCPX4J_OP_READ = 0, TCPX4J_OP_WRITE = 1 };

typedef struct tcpx4j_nixl tcpx4j_nixl;

/* One transfer descriptor: a range and the metadata id it falls in. */
typedef struct {
    uint64_t addr;
    uint64_t len;
    uint64_t dev_id;
    int64_t md;
} tcpx4j_desc;

/* One backend parameter with the default the plugin advertises ("" = the engine's default). */
typedef struct {
    const char *key;
    const char *value;
} tcpx4j_param;

/* The name of the class-path file the bridge reads from its own directory. */
#define TCPX4J_NIXL_CLASSPATH_FILE "tcpx4j-classpath.txt"

/* Receives one notification from tcpx4j_nixl_get_notifs; the buffers live only during the call. */
typedef void (*tcpx4j_notif_fn)(void *ctx, const char *agent, size_t agent_len, const void *msg, size_t msg_len);

/*
 * Creates a backend for agent `agent`; `keys`/`values` are NIXL's backend parameters (n of them,
 * may be 0). See docs/NIXL.md for the keys.
 */
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_create(const char *agent, const char *const *keys,
                                                 const char *const *values, size_t n, tcpx4j_nixl **out);
/*
 * The parameters the backend accepts, with their advertised defaults (*n of them). Static data: no VM
 * is started. A parameter passed back equal to its advertised default counts as unset, so that
 * TCPX4J_NIXL_<KEY> in the environment still applies (see docs/NIXL.md).
 */
TCPX4J_NIXL_BRIDGE_EXPORT const tcpx4j_param *tcpx4j_nixl_advertised_params(size_t *n);

/*
 * The VM options the bridge starts the VM with, before TCPX4J_JVM_OPTS (*n of them; static strings):
 * -XX:TieredStopAtLevel=1, the client compiler only, on every host. The server compiler compiles
 * from the branches it has seen run and throws its code away when another one is taken; a host's
 * first transfers after start-up take branches the backend's warm-up did not (its own connection
 * set-up, notifications, other sizes), so they ran interpreted again while the server compiler
 * recompiled, and its compiler threads took CPUs from the host's pollers. The backend's hot paths are
 * system calls and copies, which the client compiler's code runs about as fast (docs/PERFORMANCE.md,
 * "NIXL on a busy host and nixlbench's sweep"). -XX:TieredStopAtLevel=4 in TCPX4J_JVM_OPTS brings
 * the server compiler back.
 */
TCPX4J_NIXL_BRIDGE_EXPORT const char *const *tcpx4j_nixl_default_jvm_opts(size_t *n);

/* Closes the backend (aborting its transfers) and frees it. NULL is ignored. */
TCPX4J_NIXL_BRIDGE_EXPORT void tcpx4j_nixl_destroy(tcpx4j_nixl *b);

/* The text of the last failure on this thread (never NULL; valid until the thread's next call). */
TCPX4J_NIXL_BRIDGE_EXPORT const char *tcpx4j_nixl_last_error(void);
/* Frees a buffer this API returned. */
TCPX4J_NIXL_BRIDGE_EXPORT void tcpx4j_nixl_free(void *p);

TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_register_mem(tcpx4j_nixl *b, uint64_t addr, uint64_t len, uint64_t dev_id,
                                                       int mem, int64_t *md_out);
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_deregister_mem(tcpx4j_nixl *b, int64_t md);
/* *data is malloc'd: free it with tcpx4j_nixl_free. */
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_get_public_data(tcpx4j_nixl *b, int64_t md, void **data, size_t *len);
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_load_local_md(tcpx4j_nixl *b, int64_t md, int64_t *out);
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_load_remote_md(tcpx4j_nixl *b, uint64_t addr, uint64_t len, uint64_t dev_id,
                                                         int mem, const void *blob, size_t blob_len,
                                                         const char *agent, int64_t *out);
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_unload_md(tcpx4j_nixl *b, int64_t md);

TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_get_conn_info(tcpx4j_nixl *b, void **data, size_t *len);
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_load_remote_conn_info(tcpx4j_nixl *b, const char *agent, const void *info,
                                                                size_t len);
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_connect(tcpx4j_nixl *b, const char *agent);
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_disconnect(tcpx4j_nixl *b, const char *agent);

TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_prep_xfer(tcpx4j_nixl *b, int op, int local_mem, const tcpx4j_desc *local,
                                                    size_t n_local, int remote_mem, const tcpx4j_desc *remote,
                                                    size_t n_remote, const char *agent, int64_t *handle_out);
/* has_notif != 0 attaches msg (msg_len bytes, may be 0) as the notification of this post. */
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_post_xfer(tcpx4j_nixl *b, int64_t handle, int has_notif, const void *msg,
                                                    size_t msg_len);
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_check_xfer(tcpx4j_nixl *b, int64_t handle);
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_release_req(tcpx4j_nixl *b, int64_t handle);
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_estimate_xfer_cost(tcpx4j_nixl *b, int64_t handle, int64_t *duration_us,
                                                             int64_t *err_margin_us, int *method);

/* Calls fn once per notification received since the last call, oldest first. */
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_get_notifs(tcpx4j_nixl *b, tcpx4j_notif_fn fn, void *ctx);
TCPX4J_NIXL_BRIDGE_EXPORT int tcpx4j_nixl_gen_notif(tcpx4j_nixl *b, const char *agent, const void *msg,
                                                    size_t msg_len);

#ifdef __cplusplus
}
#endif

#endif
