/*
 * tcpx4j net-call trampolines, written for tcpx4j.
 *
 * JNI entry points for the ncclNet calls made per chunk (isend, irecv, test, irecvConsumed). Each
 * takes the plugin's function pointer (read from its table by the Java side) and the call's
 * arguments as Java primitives, and calls the function with its C signature. Pointers travel as
 * jlong: the binding refuses to load on anything but LP64, where a jlong holds a pointer exactly.
 * A JNI call with primitive arguments needs no argument array, no boxing and no libffi frame, which
 * is what makes it cheaper than JNA's generic Function.invoke (measured by TcpxCallPathBench).
 *
 * Every pointer argument is the caller's: out-parameters point into memory the Java side allocated
 * once per comm. Nothing here keeps state between calls.
 */
#include <jni.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))
#define PTR(x) ((void *)(intptr_t)(x))

/* Bumped whenever a signature below changes: the Java side refuses a library of another version. */
#define NETCALL_ABI 1

/* ncclNet v5..v8 signatures of the calls below (NVIDIA/nccl ext-net headers; unchanged across them). */
typedef int (*isend_fn)(void *send_comm, void *data, int size, int tag, void *mhandle, void **request);
typedef int (*irecv_fn)(void *recv_comm, int n, void **data, int *sizes, int *tags, void **mhandles, void **request);
typedef int (*test_fn)(void *request, int *done, int *sizes);
typedef int (*irecv_consumed_fn)(void *recv_comm, int n, void *request);

EXPORT jint JNICALL Java_io_tcpx4j_transport_tcpx_NetCallTrampolines_abi(JNIEnv *env, jclass cls) {
  (void)env; (void)cls;
  return NETCALL_ABI;
}

EXPORT jint JNICALL Java_io_tcpx4j_transport_tcpx_NetCallTrampolines_isend(JNIEnv *env, jclass cls, jlong fn,
    jlong send_comm, jlong data, jint size, jint tag, jlong mhandle, jlong request_out) {
  (void)env; (void)cls;
  return ((isend_fn)PTR(fn))(PTR(send_comm), PTR(data), size, tag, PTR(mhandle), PTR(request_out));
}

EXPORT jint JNICALL Java_io_tcpx4j_transport_tcpx_NetCallTrampolines_irecv(JNIEnv *env, jclass cls, jlong fn,
    jlong recv_comm, jint n, jlong data, jlong sizes, jlong tags, jlong mhandles, jlong request_out) {
  (void)env; (void)cls;
  return ((irecv_fn)PTR(fn))(PTR(recv_comm), n, PTR(data), PTR(sizes), PTR(tags), PTR(mhandles), PTR(request_out));
}

EXPORT jint JNICALL Java_io_tcpx4j_transport_tcpx_NetCallTrampolines_test(JNIEnv *env, jclass cls, jlong fn,
    jlong request, jlong done_out, jlong sizes_out) {
  (void)env; (void)cls;
  return ((test_fn)PTR(fn))(PTR(request), PTR(done_out), PTR(sizes_out));
}

EXPORT jint JNICALL Java_io_tcpx4j_transport_tcpx_NetCallTrampolines_irecvConsumed(JNIEnv *env, jclass cls,
    jlong fn, jlong recv_comm, jint n, jlong request) {
  (void)env; (void)cls;
  return ((irecv_consumed_fn)PTR(fn))(PTR(recv_comm), n, PTR(request));
}
