/*
 * libtcpx4j_nixl_bridge: JNI invocation of io.tcpx4j.nixl.NixlBackend behind a C API.
 * Contract in tcpx4j_nixl_bridge.h; design notes (VM start, signals, threads) in docs/NIXL.md.
 */
#define _GNU_SOURCE
#include "tcpx4j_nixl_bridge.h"

#include <dlfcn.h>
#include <jni.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct tcpx4j_nixl {
    jobject backend; /* global reference to the NixlBackend */
    /* getNotifs' out-array (global reference), taken by one call at a time: hosts poll getNotifs in a
       loop, and a new array per call is garbage the JVM must collect. NULL while a call holds it. */
    _Atomic(jobjectArray) notif_out;
};

typedef jint (*create_vm_fn)(JavaVM **, void **, void *);
typedef jint (*created_vms_fn)(JavaVM **, jsize, jsize *);

static JavaVM *vm;
static pthread_once_t vm_once = PTHREAD_ONCE_INIT;
static int vm_status = TCPX4J_ERR_BACKEND;
static char vm_error[2048] = "Java VM not started";
static pthread_key_t attach_key;

static jclass c_bridge, c_nixl_status, c_byte_array;
static jmethodID m_create, m_status_of, m_to_string;
static jmethodID m_close, m_register, m_deregister, m_public_data, m_load_local, m_load_remote, m_unload;
static jmethodID m_conn_info, m_load_conn_info, m_connect, m_disconnect;
static jmethodID m_prep, m_post, m_check, m_release, m_estimate, m_get_notifs, m_gen_notif;

static __thread char last_error[2048];

static void set_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

const char *tcpx4j_nixl_last_error(void) {
    return last_error;
}

void tcpx4j_nixl_free(void *p) {
    free(p);
}

/* Must match io.tcpx4j.nixl.NixlBackendConfig.ADVERTISED. */
static const tcpx4j_param advertised[] = {
    {"transport", "loopback"}, {"cuda", "auto"},         {"listen_host", "127.0.0.1"},
    {"listen_port", "0"},      {"progress", "thread"},   {"advertise_host", ""},
    {"channels", ""},          {"chunk_size", ""},       {"inline_limit", ""},
    {"coalesce_limit", ""},    {"device_coalesce_limit", ""}, {"cost_network_gbps", ""},
    {"cost_local_gbps", ""},   {"cost_latency_us", ""},         {"agents", ""},
    {"warm_up", ""},           {"io_threads", ""},           {"poll_wait", ""},
    {"spin", ""},
};

const tcpx4j_param *tcpx4j_nixl_advertised_params(size_t *n) {
    if (n != NULL) {
        *n = sizeof advertised / sizeof advertised[0];
    }
    return advertised;
}

/* ------------------------------------------------------------------ the VM */

static void detach_at_thread_exit(void *unused) {
    (void) unused;
    if (vm != NULL) {
        (*vm)->DetachCurrentThread(vm);
    }
}

/* The installation that the first executable `java` on PATH belongs to (bin/java's grandparent). */
static int java_home_from_path(char *out, size_t size) {
    const char *path = getenv("PATH");
    if (path == NULL) {
        return -1;
    }
    char candidate[PATH_MAX];
    char real[PATH_MAX];
    for (const char *p = path; *p != '\0';) {
        size_t len = strcspn(p, ":");
        if (len > 0 && len + sizeof "/java" < sizeof candidate) {
            snprintf(candidate, sizeof candidate, "%.*s/java", (int) len, p);
            if (access(candidate, X_OK) == 0 && realpath(candidate, real) != NULL) {
                char *slash = strrchr(real, '/'); /* .../bin/java -> .../bin */
                if (slash != NULL) {
                    *slash = '\0';
                    slash = strrchr(real, '/'); /* .../bin -> ... */
                    if (slash != NULL && strcmp(slash, "/bin") == 0) {
                        *slash = '\0';
                        snprintf(out, size, "%s", real);
                        return 0;
                    }
                }
            }
        }
        p += len;
        if (*p == ':') {
            p++;
        }
    }
    return -1;
}

static void *open_libjvm(void) {
    static char from_path[PATH_MAX];
    const char *home = getenv("TCPX4J_JAVA_HOME");
    const char *which = "TCPX4J_JAVA_HOME";
    if (home == NULL || home[0] == '\0') {
        home = getenv("JAVA_HOME");
        which = "JAVA_HOME";
    }
    if ((home == NULL || home[0] == '\0') && java_home_from_path(from_path, sizeof from_path) == 0) {
        home = from_path;
        which = "the java on PATH";
    }
    if (home == NULL || home[0] == '\0') {
        snprintf(vm_error, sizeof vm_error,
                 "no Java runtime: set TCPX4J_JAVA_HOME (or JAVA_HOME) to a Java 17+ installation, or put its java on PATH");
        return NULL;
    }
    static const char *const layouts[] = {"/lib/server/libjvm.so", "/jre/lib/server/libjvm.so",
                                          "/jre/lib/amd64/server/libjvm.so", "/lib/client/libjvm.so"};
    char path[PATH_MAX];
    char tried[768] = "";
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        snprintf(path, sizeof path, "%s%s", home, layouts[i]);
        void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
        if (h != NULL) {
            return h;
        }
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof tried - used, "%s%s", used ? "; " : "", dlerror());
    }
    snprintf(vm_error, sizeof vm_error, "no libjvm.so under %.1000s (from %s; %.700s)", home, which, tried);
    return NULL;
}

struct vm_start {
    create_vm_fn create;
    JavaVMInitArgs args;
    jint rc;
};

/*
 * The VM is created on a thread of its own: HotSpot does not support being created on a process's
 * primordial thread (no stack guard pages there), and the host may call us from it.
 */
static int start_vm(const char *cp);

static void *start_vm_thread(void *p) {
    struct vm_start *s = p;
    JNIEnv *env;
    s->rc = s->create(&vm, (void **) &env, &s->args);
    if (s->rc == JNI_OK) {
        (*vm)->DetachCurrentThread(vm);
    }
    return NULL;
}

/* The directory this library was loaded from, without a trailing '/'. */
static int own_dir(char *out, size_t size) {
    Dl_info info;
    if (dladdr((void *) &tcpx4j_nixl_create, &info) == 0 || info.dli_fname == NULL) {
        return -1;
    }
    char real[PATH_MAX];
    if (realpath(info.dli_fname, real) == NULL) {
        return -1;
    }
    char *slash = strrchr(real, '/');
    if (slash == NULL) {
        return -1;
    }
    *slash = '\0';
    snprintf(out, size, "%s", real[0] == '\0' ? "/" : real);
    return 0;
}

/*
 * The class path from TCPX4J_NIXL_CLASSPATH_FILE beside this library: entries separated by new lines
 * or ':', relative ones resolved against the library's directory, '#' lines ignored. malloc'd, or
 * NULL with vm_error set.
 */
static char *class_path_from_file(void) {
    char dir[PATH_MAX];
    if (own_dir(dir, sizeof dir) != 0) {
        snprintf(vm_error, sizeof vm_error,
                 "TCPX4J_CLASSPATH is not set and the bridge cannot tell its own directory: set TCPX4J_CLASSPATH");
        return NULL;
    }
    char file[PATH_MAX + sizeof TCPX4J_NIXL_CLASSPATH_FILE + 1];
    snprintf(file, sizeof file, "%s/%s", dir, TCPX4J_NIXL_CLASSPATH_FILE);
    FILE *f = fopen(file, "r");
    if (f == NULL) {
        snprintf(vm_error, sizeof vm_error,
                 "TCPX4J_CLASSPATH is not set and %.1500s does not exist: install with './tcpx4j nixl install'"
                 " (docs/NIXL.md) or set TCPX4J_CLASSPATH to tcpx4j-nixl-backend's jar and its dependencies",
                 file);
        return NULL;
    }
    size_t cap = 4096, used = 0;
    char *cp = malloc(cap);
    char line[PATH_MAX + 2];
    int ok = cp != NULL;
    if (ok) {
        cp[0] = '\0';
    }
    while (ok && fgets(line, sizeof line, f) != NULL) {
        if (line[0] == '#') {
            continue;
        }
        char *save = NULL;
        for (char *e = strtok_r(line, ":\r\n", &save); ok && e != NULL; e = strtok_r(NULL, ":\r\n", &save)) {
            while (*e == ' ' || *e == '\t') {
                e++;
            }
            size_t len = strlen(e);
            while (len > 0 && (e[len - 1] == ' ' || e[len - 1] == '\t')) {
                e[--len] = '\0';
            }
            if (len == 0) {
                continue;
            }
            size_t need = used + 1 + (e[0] == '/' ? 0 : strlen(dir) + 1) + len + 1;
            if (need > cap) {
                cap = need * 2;
                char *bigger = realloc(cp, cap);
                if (bigger == NULL) {
                    ok = 0;
                    break;
                }
                cp = bigger;
            }
            used += (size_t) sprintf(cp + used, "%s%s%s%s", used > 0 ? ":" : "", e[0] == '/' ? "" : dir,
                                     e[0] == '/' ? "" : "/", e);
        }
    }
    fclose(f);
    if (!ok) {
        free(cp);
        snprintf(vm_error, sizeof vm_error, "out of memory reading %.1500s", file);
        return NULL;
    }
    if (used == 0) {
        free(cp);
        snprintf(vm_error, sizeof vm_error, "%.1500s lists no class path entries: run './tcpx4j nixl install' again", file);
        return NULL;
    }
    return cp;
}

static int create_vm(void) {
    const char *env_cp = getenv("TCPX4J_CLASSPATH");
    char *file_cp = NULL;
    if (env_cp == NULL || env_cp[0] == '\0') {
        if ((file_cp = class_path_from_file()) == NULL) {
            return TCPX4J_ERR_BACKEND;
        }
    }
    const char *cp = file_cp != NULL ? file_cp : env_cp;
    int rc = start_vm(cp);
    free(file_cp);
    return rc;
}

const char *const *tcpx4j_nixl_default_jvm_opts(size_t *n) {
    static const char *const opts[] = {"-XX:TieredStopAtLevel=1"};
    *n = sizeof opts / sizeof opts[0];
    return opts;
}

static int start_vm(const char *cp) {
    void *jvm = open_libjvm();
    if (jvm == NULL) {
        return TCPX4J_ERR_BACKEND;
    }
    struct vm_start s;
    memset(&s, 0, sizeof s);
    s.create = (create_vm_fn) dlsym(jvm, "JNI_CreateJavaVM");
    if (s.create == NULL) {
        snprintf(vm_error, sizeof vm_error, "libjvm.so has no JNI_CreateJavaVM: %s", dlerror());
        return TCPX4J_ERR_BACKEND;
    }

    char *opts_copy = NULL;
    const char *opts = getenv("TCPX4J_JVM_OPTS");
    if (opts != NULL) {
        opts_copy = strdup(opts);
    }
    size_t n_defaults = 0;
    const char *const *defaults = tcpx4j_nixl_default_jvm_opts(&n_defaults);
    JavaVMOption options[2 + 4 + 64];
    int n = 0;
    char *class_path = malloc(strlen(cp) + sizeof "-Djava.class.path=");
    if (class_path == NULL) {
        free(opts_copy);
        snprintf(vm_error, sizeof vm_error, "out of memory");
        return TCPX4J_ERR_BACKEND;
    }
    sprintf(class_path, "-Djava.class.path=%s", cp);
    options[n++].optionString = class_path;
    /* The host owns SIGINT/SIGTERM/SIGHUP/SIGQUIT (Ctrl-C must reach Python, not the VM). */
    options[n++].optionString = "-Xrs";
    for (size_t i = 0; i < n_defaults && i < 4; i++) {
        options[n++].optionString = (char *) defaults[i];
    }
    if (opts_copy != NULL) {
        char *save = NULL;
        for (char *tok = strtok_r(opts_copy, " \t\n", &save); tok != NULL; tok = strtok_r(NULL, " \t\n", &save)) {
            if (n == (int) (sizeof options / sizeof options[0])) {
                free(class_path);
                free(opts_copy);
                snprintf(vm_error, sizeof vm_error, "TCPX4J_JVM_OPTS has more than 64 options");
                return TCPX4J_ERR_INVALID_PARAM;
            }
            options[n++].optionString = tok;
        }
    }
    for (int i = 0; i < n; i++) {
        options[i].extraInfo = NULL;
    }
    s.args.version = JNI_VERSION_1_8;
    s.args.nOptions = n;
    s.args.options = options;
    s.args.ignoreUnrecognized = JNI_FALSE;

    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 8u << 20);
    int prc = pthread_create(&t, &attr, start_vm_thread, &s);
    pthread_attr_destroy(&attr);
    if (prc != 0) {
        free(class_path);
        free(opts_copy);
        snprintf(vm_error, sizeof vm_error, "cannot start a thread for the Java VM (error %d)", prc);
        return TCPX4J_ERR_BACKEND;
    }
    pthread_join(t, NULL);
    free(class_path);
    free(opts_copy);
    if (s.rc != JNI_OK) {
        vm = NULL;
        snprintf(vm_error, sizeof vm_error,
                 "JNI_CreateJavaVM failed with %d (bad TCPX4J_JVM_OPTS? a VM already created and destroyed?)",
                 (int) s.rc);
        return TCPX4J_ERR_BACKEND;
    }
    return TCPX4J_SUCCESS;
}

static JNIEnv *thread_env(void) {
    JNIEnv *env = NULL;
    jint r = (*vm)->GetEnv(vm, (void **) &env, JNI_VERSION_1_8);
    if (r == JNI_OK) {
        return env;
    }
    if (r != JNI_EDETACHED) {
        set_error("JNI GetEnv failed with %d", (int) r);
        return NULL;
    }
    /* Daemon: a host thread that we attached must never keep the VM from shutting down. */
    JavaVMAttachArgs args = {JNI_VERSION_1_8, "tcpx4j-nixl-caller", NULL};
    if ((*vm)->AttachCurrentThreadAsDaemon(vm, (void **) &env, &args) != JNI_OK) {
        set_error("cannot attach this thread to the Java VM");
        return NULL;
    }
    pthread_setspecific(attach_key, (void *) 1); /* the key's destructor detaches at thread exit */
    return env;
}

static jclass global_class(JNIEnv *env, const char *name) {
    jclass local = (*env)->FindClass(env, name);
    if (local == NULL) {
        return NULL;
    }
    jclass global = (*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    return global;
}

static int cache_ids(JNIEnv *env) {
    jclass backend;
#define ID(var, cls, name, sig)                                   \
    if ((var = (*env)->GetMethodID(env, cls, name, sig)) == NULL) \
        return -1;
    /* first, so that a failure below can be described */
    jclass throwable = (*env)->FindClass(env, "java/lang/Throwable");
    if (throwable == NULL) {
        return -1;
    }
    ID(m_to_string, throwable, "toString", "()Ljava/lang/String;");
    if ((c_bridge = global_class(env, "io/tcpx4j/nixl/NixlBridge")) == NULL ||
        (c_nixl_status = global_class(env, "io/tcpx4j/nixl/NixlStatus")) == NULL ||
        (c_byte_array = global_class(env, "[B")) == NULL ||
        (backend = (*env)->FindClass(env, "io/tcpx4j/nixl/NixlBackend")) == NULL) {
        return -1;
    }
    m_create = (*env)->GetStaticMethodID(env, c_bridge, "create",
                                         "(Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/String;)"
                                         "Lio/tcpx4j/nixl/NixlBackend;");
    if (m_create == NULL) {
        return -1;
    }
    m_status_of = (*env)->GetStaticMethodID(env, c_nixl_status, "of", "(Ljava/lang/Throwable;)I");
    if (m_status_of == NULL) {
        return -1;
    }
    ID(m_close, backend, "close", "()V");
    ID(m_register, backend, "registerMem", "(JJII[J)I");
    ID(m_deregister, backend, "deregisterMem", "(J)I");
    ID(m_public_data, backend, "getPublicData", "(J[[B)I");
    ID(m_load_local, backend, "loadLocalMD", "(J[J)I");
    ID(m_load_remote, backend, "loadRemoteMD", "(JJII[BLjava/lang/String;[J)I");
    ID(m_unload, backend, "unloadMD", "(J)I");
    ID(m_conn_info, backend, "getConnInfo", "([[B)I");
    ID(m_load_conn_info, backend, "loadRemoteConnInfo", "(Ljava/lang/String;[B)I");
    ID(m_connect, backend, "connect", "(Ljava/lang/String;)I");
    ID(m_disconnect, backend, "disconnect", "(Ljava/lang/String;)I");
    ID(m_prep, backend, "prepXfer", "(II[J[J[I[JI[J[J[I[JLjava/lang/String;[J)I");
    ID(m_post, backend, "postXfer", "(J[B)I");
    ID(m_check, backend, "checkXfer", "(J)I");
    ID(m_release, backend, "releaseReqH", "(J)I");
    ID(m_estimate, backend, "estimateXferCost", "(J[J)I");
    ID(m_get_notifs, backend, "getNotifs", "([[B)I");
    ID(m_gen_notif, backend, "genNotif", "(Ljava/lang/String;[B)I");
#undef ID
    (*env)->DeleteLocalRef(env, backend);
    (*env)->DeleteLocalRef(env, throwable);
    return 0;
}

/* Takes a pending exception: its status (NixlStatus.of: a TransferException's code, else UNKNOWN) and its text. */
static int take_exception(JNIEnv *env, const char *what) {
    jthrowable t = (*env)->ExceptionOccurred(env);
    if (t == NULL) {
        return TCPX4J_SUCCESS;
    }
    (*env)->ExceptionClear(env);
    int status = TCPX4J_ERR_UNKNOWN;
    if (c_nixl_status != NULL && m_status_of != NULL) {
        status = (*env)->CallStaticIntMethod(env, c_nixl_status, m_status_of, t);
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            status = TCPX4J_ERR_UNKNOWN;
        }
    }
    jstring text = m_to_string != NULL ? (*env)->CallObjectMethod(env, t, m_to_string) : NULL;
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        text = NULL;
    }
    const char *chars = text != NULL ? (*env)->GetStringUTFChars(env, text, NULL) : NULL;
    set_error("%s: %s", what, chars != NULL ? chars : "a Java exception (no text)");
    if (chars != NULL) {
        (*env)->ReleaseStringUTFChars(env, text, chars);
    }
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
    }
    (*env)->DeleteLocalRef(env, t);
    return status < 0 ? status : TCPX4J_ERR_UNKNOWN;
}

static void init_vm(void) {
    pthread_key_create(&attach_key, detach_at_thread_exit);
    created_vms_fn created = (created_vms_fn) dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs");
    JavaVM *existing = NULL;
    jsize count = 0;
    if (created != NULL && created(&existing, 1, &count) == JNI_OK && count > 0) {
        vm = existing; /* a host that already runs Java (or a second plugin instance) */
    } else {
        int rc = create_vm();
        if (rc != TCPX4J_SUCCESS) {
            vm_status = rc;
            return;
        }
    }
    JNIEnv *env = thread_env();
    if (env == NULL) {
        snprintf(vm_error, sizeof vm_error, "%s", last_error);
        return;
    }
    if ((*env)->PushLocalFrame(env, 32) != 0 || cache_ids(env) != 0) {
        take_exception(env, "loading the tcpx4j classes (is TCPX4J_CLASSPATH complete?)");
        snprintf(vm_error, sizeof vm_error, "%s", last_error);
        (*env)->PopLocalFrame(env, NULL);
        return;
    }
    (*env)->PopLocalFrame(env, NULL);
    vm_status = TCPX4J_SUCCESS;
}

/* The calling thread's JNIEnv with a fresh local frame, or NULL (last_error says why). */
static JNIEnv *enter(const tcpx4j_nixl *b, int needs_backend) {
    last_error[0] = '\0';
    pthread_once(&vm_once, init_vm);
    if (vm_status != TCPX4J_SUCCESS) {
        set_error("%s", vm_error);
        return NULL;
    }
    if (needs_backend && (b == NULL || b->backend == NULL)) {
        set_error("no backend");
        return NULL;
    }
    JNIEnv *env = thread_env();
    if (env == NULL) {
        return NULL;
    }
    /* Attached host threads never return to Java, so local references would pile up without a frame. */
    if ((*env)->PushLocalFrame(env, 32) != 0) {
        take_exception(env, "PushLocalFrame");
        return NULL;
    }
    return env;
}

static int leave(JNIEnv *env, int status, const char *what) {
    int thrown = take_exception(env, what);
    (*env)->PopLocalFrame(env, NULL);
    if (thrown != TCPX4J_SUCCESS) {
        return thrown;
    }
    if (status < 0 && last_error[0] == '\0') {
        set_error("%s failed with status %d (details in the Java log)", what, status);
    }
    return status;
}

static jbyteArray bytes(JNIEnv *env, const void *data, size_t len) {
    if (len > INT_MAX) {
        return NULL;
    }
    jbyteArray a = (*env)->NewByteArray(env, (jsize) len);
    if (a != NULL && len > 0) {
        (*env)->SetByteArrayRegion(env, a, 0, (jsize) len, (const jbyte *) data);
    }
    return a;
}

static int copy_out(JNIEnv *env, jobjectArray holder, void **data, size_t *len) {
    jbyteArray a = (*env)->GetObjectArrayElement(env, holder, 0);
    if (a == NULL) {
        return -1;
    }
    jsize n = (*env)->GetArrayLength(env, a);
    void *p = malloc(n > 0 ? (size_t) n : 1);
    if (p == NULL) {
        set_error("out of memory");
        return -1;
    }
    (*env)->GetByteArrayRegion(env, a, 0, n, p);
    *data = p;
    *len = (size_t) n;
    return 0;
}

#define ENTER(b)                                    \
    JNIEnv *env = enter((b), 1);                    \
    if (env == NULL) {                              \
        return TCPX4J_ERR_BACKEND;                  \
    }
#define REQUIRE(cond, msg)                          \
    if (!(cond)) {                                  \
        (*env)->PopLocalFrame(env, NULL);           \
        set_error("%s", msg);                       \
        return TCPX4J_ERR_INVALID_PARAM;            \
    }

/* ------------------------------------------------------------------ the API */

int tcpx4j_nixl_create(const char *agent, const char *const *keys, const char *const *values, size_t n,
                       tcpx4j_nixl **out) {
    JNIEnv *env = enter(NULL, 0);
    if (env == NULL) {
        return TCPX4J_ERR_BACKEND;
    }
    REQUIRE(agent != NULL && out != NULL && (n == 0 || (keys != NULL && values != NULL)) && n < 4096,
            "tcpx4j_nixl_create: bad arguments");
    jclass string = (*env)->FindClass(env, "java/lang/String");
    jobjectArray k = string != NULL ? (*env)->NewObjectArray(env, (jsize) n, string, NULL) : NULL;
    jobjectArray v = k != NULL ? (*env)->NewObjectArray(env, (jsize) n, string, NULL) : NULL;
    for (size_t i = 0; v != NULL && i < n; i++) {
        jstring ks = (*env)->NewStringUTF(env, keys[i] != NULL ? keys[i] : "");
        jstring vs = (*env)->NewStringUTF(env, values[i] != NULL ? values[i] : "");
        if (ks == NULL || vs == NULL) {
            break;
        }
        (*env)->SetObjectArrayElement(env, k, (jsize) i, ks);
        (*env)->SetObjectArrayElement(env, v, (jsize) i, vs);
        (*env)->DeleteLocalRef(env, ks);
        (*env)->DeleteLocalRef(env, vs);
    }
    jstring name = (*env)->NewStringUTF(env, agent);
    jobject backend = NULL;
    if (!(*env)->ExceptionCheck(env) && v != NULL && name != NULL) {
        backend = (*env)->CallStaticObjectMethod(env, c_bridge, m_create, name, k, v);
    }
    jobject global = NULL;
    if (backend != NULL && !(*env)->ExceptionCheck(env)) {
        global = (*env)->NewGlobalRef(env, backend);
    }
    int status = leave(env, global != NULL ? TCPX4J_SUCCESS : TCPX4J_ERR_BACKEND, "creating the TCPX backend");
    if (status != TCPX4J_SUCCESS) {
        if (global != NULL) {
            JNIEnv *e2 = thread_env();
            if (e2 != NULL) {
                (*e2)->DeleteGlobalRef(e2, global);
            }
        }
        return status;
    }
    tcpx4j_nixl *b = calloc(1, sizeof *b);
    if (b == NULL) {
        (*env)->DeleteGlobalRef(env, global);
        set_error("out of memory");
        return TCPX4J_ERR_BACKEND;
    }
    b->backend = global;
    jobjectArray holder = (*env)->NewObjectArray(env, 1, c_byte_array, NULL);
    jobjectArray holder_global = holder != NULL ? (*env)->NewGlobalRef(env, holder) : NULL;
    if (holder != NULL) {
        (*env)->DeleteLocalRef(env, holder);
    }
    (*env)->ExceptionClear(env); /* without the cached array each call makes its own */
    atomic_init(&b->notif_out, holder_global);
    *out = b;
    return TCPX4J_SUCCESS;
}

void tcpx4j_nixl_destroy(tcpx4j_nixl *b) {
    if (b == NULL) {
        return;
    }
    JNIEnv *env = enter(b, 1);
    if (env != NULL) {
        (*env)->CallVoidMethod(env, b->backend, m_close);
        leave(env, TCPX4J_SUCCESS, "closing the TCPX backend");
        (*env)->DeleteGlobalRef(env, b->backend);
        jobjectArray holder = atomic_exchange(&b->notif_out, NULL);
        if (holder != NULL) {
            (*env)->DeleteGlobalRef(env, holder);
        }
    }
    free(b);
}

int tcpx4j_nixl_register_mem(tcpx4j_nixl *b, uint64_t addr, uint64_t len, uint64_t dev_id, int mem, int64_t *md_out) {
    ENTER(b);
    REQUIRE(md_out != NULL && dev_id <= INT_MAX && len <= INT64_MAX, "register_mem: bad arguments");
    jlongArray out = (*env)->NewLongArray(env, 1);
    int st = TCPX4J_ERR_BACKEND;
    if (out != NULL) {
        st = (*env)->CallIntMethod(env, b->backend, m_register, (jlong) addr, (jlong) len, (jint) dev_id, (jint) mem, out);
        if (st == TCPX4J_SUCCESS && !(*env)->ExceptionCheck(env)) {
            jlong v;
            (*env)->GetLongArrayRegion(env, out, 0, 1, &v);
            *md_out = v;
        }
    }
    return leave(env, st, "registerMem");
}

int tcpx4j_nixl_deregister_mem(tcpx4j_nixl *b, int64_t md) {
    ENTER(b);
    int st = (*env)->CallIntMethod(env, b->backend, m_deregister, (jlong) md);
    return leave(env, st, "deregisterMem");
}

int tcpx4j_nixl_get_public_data(tcpx4j_nixl *b, int64_t md, void **data, size_t *len) {
    ENTER(b);
    REQUIRE(data != NULL && len != NULL, "get_public_data: bad arguments");
    jobjectArray holder = (*env)->NewObjectArray(env, 1, c_byte_array, NULL);
    int st = TCPX4J_ERR_BACKEND;
    if (holder != NULL) {
        st = (*env)->CallIntMethod(env, b->backend, m_public_data, (jlong) md, holder);
        if (st == TCPX4J_SUCCESS && !(*env)->ExceptionCheck(env) && copy_out(env, holder, data, len) != 0) {
            st = TCPX4J_ERR_BACKEND;
        }
    }
    return leave(env, st, "getPublicData");
}

int tcpx4j_nixl_load_local_md(tcpx4j_nixl *b, int64_t md, int64_t *out_md) {
    ENTER(b);
    REQUIRE(out_md != NULL, "load_local_md: bad arguments");
    jlongArray out = (*env)->NewLongArray(env, 1);
    int st = TCPX4J_ERR_BACKEND;
    if (out != NULL) {
        st = (*env)->CallIntMethod(env, b->backend, m_load_local, (jlong) md, out);
        if (st == TCPX4J_SUCCESS && !(*env)->ExceptionCheck(env)) {
            jlong v;
            (*env)->GetLongArrayRegion(env, out, 0, 1, &v);
            *out_md = v;
        }
    }
    return leave(env, st, "loadLocalMD");
}

int tcpx4j_nixl_load_remote_md(tcpx4j_nixl *b, uint64_t addr, uint64_t len, uint64_t dev_id, int mem,
                               const void *blob, size_t blob_len, const char *agent, int64_t *out_md) {
    ENTER(b);
    REQUIRE(out_md != NULL && agent != NULL && (blob != NULL || blob_len == 0) && dev_id <= INT_MAX &&
                len <= INT64_MAX,
            "load_remote_md: bad arguments");
    jbyteArray jblob = bytes(env, blob, blob_len);
    jstring name = (*env)->NewStringUTF(env, agent);
    jlongArray out = (*env)->NewLongArray(env, 1);
    int st = TCPX4J_ERR_BACKEND;
    if (jblob != NULL && name != NULL && out != NULL) {
        st = (*env)->CallIntMethod(env, b->backend, m_load_remote, (jlong) addr, (jlong) len, (jint) dev_id,
                                   (jint) mem, jblob, name, out);
        if (st == TCPX4J_SUCCESS && !(*env)->ExceptionCheck(env)) {
            jlong v;
            (*env)->GetLongArrayRegion(env, out, 0, 1, &v);
            *out_md = v;
        }
    }
    return leave(env, st, "loadRemoteMD");
}

int tcpx4j_nixl_unload_md(tcpx4j_nixl *b, int64_t md) {
    ENTER(b);
    int st = (*env)->CallIntMethod(env, b->backend, m_unload, (jlong) md);
    return leave(env, st, "unloadMD");
}

int tcpx4j_nixl_get_conn_info(tcpx4j_nixl *b, void **data, size_t *len) {
    ENTER(b);
    REQUIRE(data != NULL && len != NULL, "get_conn_info: bad arguments");
    jobjectArray holder = (*env)->NewObjectArray(env, 1, c_byte_array, NULL);
    int st = TCPX4J_ERR_BACKEND;
    if (holder != NULL) {
        st = (*env)->CallIntMethod(env, b->backend, m_conn_info, holder);
        if (st == TCPX4J_SUCCESS && !(*env)->ExceptionCheck(env) && copy_out(env, holder, data, len) != 0) {
            st = TCPX4J_ERR_BACKEND;
        }
    }
    return leave(env, st, "getConnInfo");
}

int tcpx4j_nixl_load_remote_conn_info(tcpx4j_nixl *b, const char *agent, const void *info, size_t len) {
    ENTER(b);
    REQUIRE(agent != NULL && (info != NULL || len == 0), "load_remote_conn_info: bad arguments");
    jstring name = (*env)->NewStringUTF(env, agent);
    jbyteArray jinfo = bytes(env, info, len);
    int st = TCPX4J_ERR_BACKEND;
    if (name != NULL && jinfo != NULL) {
        st = (*env)->CallIntMethod(env, b->backend, m_load_conn_info, name, jinfo);
    }
    return leave(env, st, "loadRemoteConnInfo");
}

static int agent_call(tcpx4j_nixl *b, const char *agent, jmethodID m, const char *what) {
    ENTER(b);
    REQUIRE(agent != NULL, "no agent name");
    jstring name = (*env)->NewStringUTF(env, agent);
    int st = name != NULL ? (*env)->CallIntMethod(env, b->backend, m, name) : TCPX4J_ERR_BACKEND;
    return leave(env, st, what);
}

int tcpx4j_nixl_connect(tcpx4j_nixl *b, const char *agent) {
    return agent_call(b, agent, m_connect, "connect");
}

int tcpx4j_nixl_disconnect(tcpx4j_nixl *b, const char *agent) {
    return agent_call(b, agent, m_disconnect, "disconnect");
}

/* Four parallel arrays for one descriptor list; 0 on success. */
static int desc_arrays(JNIEnv *env, const tcpx4j_desc *d, size_t n, jlongArray *addr, jlongArray *len,
                       jintArray *dev, jlongArray *md) {
    if (n > INT_MAX || (n > 0 && d == NULL)) {
        return -1;
    }
    *addr = (*env)->NewLongArray(env, (jsize) n);
    *len = (*env)->NewLongArray(env, (jsize) n);
    *dev = (*env)->NewIntArray(env, (jsize) n);
    *md = (*env)->NewLongArray(env, (jsize) n);
    if (*addr == NULL || *len == NULL || *dev == NULL || *md == NULL) {
        return -1;
    }
    jlong *a = (*env)->GetPrimitiveArrayCritical(env, *addr, NULL);
    jlong *l = (*env)->GetPrimitiveArrayCritical(env, *len, NULL);
    jint *v = (*env)->GetPrimitiveArrayCritical(env, *dev, NULL);
    jlong *m = (*env)->GetPrimitiveArrayCritical(env, *md, NULL);
    int bad = a == NULL || l == NULL || v == NULL || m == NULL;
    for (size_t i = 0; !bad && i < n; i++) {
        if (d[i].dev_id > INT_MAX || d[i].len > INT64_MAX) {
            bad = 1;
            break;
        }
        a[i] = (jlong) d[i].addr;
        l[i] = (jlong) d[i].len;
        v[i] = (jint) d[i].dev_id;
        m[i] = (jlong) d[i].md;
    }
    if (m != NULL) (*env)->ReleasePrimitiveArrayCritical(env, *md, m, 0);
    if (v != NULL) (*env)->ReleasePrimitiveArrayCritical(env, *dev, v, 0);
    if (l != NULL) (*env)->ReleasePrimitiveArrayCritical(env, *len, l, 0);
    if (a != NULL) (*env)->ReleasePrimitiveArrayCritical(env, *addr, a, 0);
    return bad ? -1 : 0;
}

int tcpx4j_nixl_prep_xfer(tcpx4j_nixl *b, int op, int local_mem, const tcpx4j_desc *local, size_t n_local,
                          int remote_mem, const tcpx4j_desc *remote, size_t n_remote, const char *agent,
                          int64_t *handle_out) {
    ENTER(b);
    REQUIRE(agent != NULL && handle_out != NULL, "prep_xfer: bad arguments");
    jlongArray la, ll, lm, ra, rl, rm;
    jintArray ld, rd;
    if (desc_arrays(env, local, n_local, &la, &ll, &ld, &lm) != 0 ||
        desc_arrays(env, remote, n_remote, &ra, &rl, &rd, &rm) != 0) {
        if ((*env)->ExceptionCheck(env)) {
            return leave(env, TCPX4J_ERR_BACKEND, "prepXfer");
        }
        (*env)->PopLocalFrame(env, NULL);
        set_error("prep_xfer: malformed descriptor list (device id or length out of range)");
        return TCPX4J_ERR_INVALID_PARAM;
    }
    jstring name = (*env)->NewStringUTF(env, agent);
    jlongArray out = (*env)->NewLongArray(env, 1);
    int st = TCPX4J_ERR_BACKEND;
    if (name != NULL && out != NULL) {
        st = (*env)->CallIntMethod(env, b->backend, m_prep, (jint) op, (jint) local_mem, la, ll, ld, lm,
                                   (jint) remote_mem, ra, rl, rd, rm, name, out);
        if (st == TCPX4J_SUCCESS && !(*env)->ExceptionCheck(env)) {
            jlong v;
            (*env)->GetLongArrayRegion(env, out, 0, 1, &v);
            *handle_out = v;
        }
    }
    return leave(env, st, "prepXfer");
}

int tcpx4j_nixl_post_xfer(tcpx4j_nixl *b, int64_t handle, int has_notif, const void *msg, size_t msg_len) {
    ENTER(b);
    REQUIRE(!has_notif || msg != NULL || msg_len == 0, "post_xfer: bad arguments");
    jbyteArray notif = NULL;
    if (has_notif && (notif = bytes(env, msg, msg_len)) == NULL) {
        return leave(env, TCPX4J_ERR_BACKEND, "postXfer");
    }
    int st = (*env)->CallIntMethod(env, b->backend, m_post, (jlong) handle, notif);
    return leave(env, st, "postXfer");
}

int tcpx4j_nixl_check_xfer(tcpx4j_nixl *b, int64_t handle) {
    ENTER(b);
    int st = (*env)->CallIntMethod(env, b->backend, m_check, (jlong) handle);
    return leave(env, st, "checkXfer");
}

int tcpx4j_nixl_release_req(tcpx4j_nixl *b, int64_t handle) {
    ENTER(b);
    int st = (*env)->CallIntMethod(env, b->backend, m_release, (jlong) handle);
    return leave(env, st, "releaseReqH");
}

int tcpx4j_nixl_estimate_xfer_cost(tcpx4j_nixl *b, int64_t handle, int64_t *duration_us, int64_t *err_margin_us,
                                   int *method) {
    ENTER(b);
    REQUIRE(duration_us != NULL && err_margin_us != NULL && method != NULL, "estimate_xfer_cost: bad arguments");
    jlongArray out = (*env)->NewLongArray(env, 3);
    int st = TCPX4J_ERR_BACKEND;
    if (out != NULL) {
        st = (*env)->CallIntMethod(env, b->backend, m_estimate, (jlong) handle, out);
        if (st == TCPX4J_SUCCESS && !(*env)->ExceptionCheck(env)) {
            jlong v[3];
            (*env)->GetLongArrayRegion(env, out, 0, 3, v);
            *duration_us = v[0];
            *err_margin_us = v[1];
            *method = (int) v[2];
        }
    }
    return leave(env, st, "estimateXferCost");
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

int tcpx4j_nixl_get_notifs(tcpx4j_nixl *b, tcpx4j_notif_fn fn, void *ctx) {
    ENTER(b);
    REQUIRE(fn != NULL, "get_notifs: no callback");
    jobjectArray cached = atomic_exchange(&b->notif_out, NULL);
    jobjectArray holder = cached != NULL ? cached : (*env)->NewObjectArray(env, 1, c_byte_array, NULL);
    int st = TCPX4J_ERR_BACKEND;
    void *packed = NULL;
    size_t len = 0;
    if (holder != NULL) {
        st = (*env)->CallIntMethod(env, b->backend, m_get_notifs, holder);
        if (st == TCPX4J_SUCCESS && !(*env)->ExceptionCheck(env) && copy_out(env, holder, &packed, &len) != 0) {
            st = TCPX4J_ERR_BACKEND;
        }
    }
    if (cached != NULL) {
        if (!(*env)->ExceptionCheck(env)) {
            (*env)->SetObjectArrayElement(env, cached, 0, NULL); /* the packed array is garbage now */
        }
        atomic_store(&b->notif_out, cached);
    }
    st = leave(env, st, "getNotifs");
    if (st != TCPX4J_SUCCESS) {
        return st;
    }
    /* Callbacks run after leaving Java, so a callback may call back into this API. */
    const unsigned char *p = packed;
    size_t off = 4;
    uint32_t count = len >= 4 ? le32(p) : 0;
    for (uint32_t i = 0; i < count; i++) {
        if (off + 4 > len) break;
        uint32_t alen = le32(p + off);
        off += 4;
        if (alen > len - off) break;
        const char *agent = (const char *) p + off;
        off += alen;
        if (off + 4 > len) break;
        uint32_t mlen = le32(p + off);
        off += 4;
        if (mlen > len - off) break;
        fn(ctx, agent, alen, p + off, mlen);
        off += mlen;
    }
    free(packed);
    return TCPX4J_SUCCESS;
}

int tcpx4j_nixl_gen_notif(tcpx4j_nixl *b, const char *agent, const void *msg, size_t msg_len) {
    ENTER(b);
    REQUIRE(agent != NULL && (msg != NULL || msg_len == 0), "gen_notif: bad arguments");
    jstring name = (*env)->NewStringUTF(env, agent);
    jbyteArray m = bytes(env, msg, msg_len);
    int st = TCPX4J_ERR_BACKEND;
    if (name != NULL && m != NULL) {
        st = (*env)->CallIntMethod(env, b->backend, m_gen_notif, name, m);
    }
    return leave(env, st, "genNotif");
}
