package io.tcpx4j.cuda;

import io.tcpx4j.api.TransferException;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

import static jcuda.driver.JCudaDriver.cuCtxEnablePeerAccess;
import static jcuda.driver.JCudaDriver.cuCtxGetCurrent;
import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceCanAccessPeer;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

/**
 * One primary context per GPU, retained on first use and released by {@link #close()}. Primary
 * contexts are the ones the CUDA runtime (PyTorch, NCCL, the TCPX plugin) uses too, so memory and
 * events are shared with them instead of living in a private context they cannot see.
 *
 * <p>Every two retained contexts get peer access to each other's memory where their GPUs allow it: an
 * engine's unpack kernel runs on one GPU and scatters into, and gathers from, buffers on whichever GPU
 * holds them, and a kernel faults on another GPU's addresses unless its context has peer access to that
 * GPU's. It is left on when the contexts are released (it belongs to the primary contexts, which other
 * holders may share; it ends with them).
 *
 * <p>Thread-safe.
 */
final class Contexts implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Contexts.class.getName());

    private final CUdevice[] devices;
    private final CUcontext[] contexts;
    private final CUstream[] streams;
    /** Written under the monitor; read without it by {@link #isClosed}, which ticket polls call from every I/O thread. */
    private volatile boolean closed;

    Contexts() {
        Cuda.ensureAvailable();
        int count = Cuda.deviceCount();
        devices = new CUdevice[count];
        contexts = new CUcontext[count];
        streams = new CUstream[count];
    }

    int deviceCount() {
        return devices.length;
    }

    /** Makes {@code device}'s primary context current on the calling thread, retaining it first if needed. */
    synchronized CUcontext makeCurrent(int device) {
        CUcontext ctx = context(device);
        CudaCheck.check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
        return ctx;
    }

    /**
     * The device's copy stream: non-blocking, so copies never wait for the legacy default stream
     * that other libraries in the process may keep busy.
     */
    synchronized CUstream stream(int device) {
        makeCurrent(device);
        if (streams[device] == null) {
            CUstream s = new CUstream();
            CudaCheck.check(cuStreamCreate(s, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
            streams[device] = s;
        }
        return streams[device];
    }

    /** An attribute of a device (CUdevice_attribute). */
    synchronized int attribute(int device, int attribute) {
        context(device);
        int[] value = {0};
        CudaCheck.check(cuDeviceGetAttribute(value, attribute, devices[device]), "cuDeviceGetAttribute");
        return value[0];
    }

    private CUcontext context(int device) {
        if (closed) {
            throw new TransferException(TransferException.Code.BACKEND, "CUDA device memory is closed");
        }
        if (device < 0 || device >= devices.length) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "no GPU " + device + " (this machine has " + devices.length + ")");
        }
        if (contexts[device] == null) {
            CUdevice dev = new CUdevice();
            CudaCheck.check(cuDeviceGet(dev, device), "cuDeviceGet");
            int[] unified = {0};
            CudaCheck.check(cuDeviceGetAttribute(unified, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, dev),
                    "cuDeviceGetAttribute");
            if (unified[0] == 0) {
                // Pinned buffers are handed to kernels by their host address: that needs UVA.
                throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                        "GPU " + device + " has no unified addressing");
            }
            CUcontext ctx = new CUcontext();
            CudaCheck.check(cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain");
            devices[device] = dev;
            contexts[device] = ctx;
            for (int other = 0; other < contexts.length; other++) {
                if (other != device && contexts[other] != null) {
                    connectPeers(device, other);
                }
            }
        }
        return contexts[device];
    }

    /** Peer access both ways between two retained contexts; the calling thread's current context is kept. */
    private void connectPeers(int a, int b) {
        CUcontext current = new CUcontext();
        CudaCheck.check(cuCtxGetCurrent(current), "cuCtxGetCurrent");
        try {
            enablePeerAccess(a, b);
            enablePeerAccess(b, a);
        } finally {
            CudaCheck.check(cuCtxSetCurrent(current), "cuCtxSetCurrent");
        }
    }

    /**
     * Lets kernels of GPU {@code from} reach the memory of GPU {@code to}, where the GPUs can. Where they
     * cannot, or the driver refuses, access stays off and a transfer that needs it fails in its kernel;
     * transfers whose buffers are all on the unpack kernel's GPU need none.
     */
    private void enablePeerAccess(int from, int to) {
        int[] can = {0};
        CudaCheck.check(cuDeviceCanAccessPeer(can, devices[from], devices[to]), "cuDeviceCanAccessPeer");
        if (can[0] == 0) {
            LOG.log(System.Logger.Level.WARNING, "GPU {0} cannot reach the memory of GPU {1} (no peer access):"
                    + " transfers whose unpack kernel runs on GPU {0} cannot use buffers on GPU {1}", from, to);
            return;
        }
        CudaCheck.check(cuCtxSetCurrent(contexts[from]), "cuCtxSetCurrent");
        int result = cuCtxEnablePeerAccess(contexts[to], 0);
        if (result != CUresult.CUDA_SUCCESS && result != CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
            LOG.log(System.Logger.Level.WARNING, "peer access from GPU {0} to GPU {1} refused: {2}", from, to,
                    CUresult.stringFor(result));
        } else {
            LOG.log(System.Logger.Level.DEBUG, "peer access from GPU {0} to GPU {1}", from, to);
        }
    }

    /** Lock-free: polling threads must not queue behind a thread making a context current or creating a stream. */
    boolean isClosed() {
        return closed;
    }

    /** Drains and destroys the streams, then releases every retained primary context. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        TransferException failure = null;
        for (int d = 0; d < devices.length; d++) {
            if (contexts[d] == null) {
                continue;
            }
            try {
                CudaCheck.check(cuCtxSetCurrent(contexts[d]), "cuCtxSetCurrent");
                if (streams[d] != null) {
                    CudaCheck.check(cuStreamSynchronize(streams[d]), "cuStreamSynchronize");
                    CudaCheck.check(cuStreamDestroy(streams[d]), "cuStreamDestroy");
                }
                // Unbind before releasing: the last release destroys the context.
                CudaCheck.check(cuCtxSetCurrent(new CUcontext()), "cuCtxSetCurrent");
                CudaCheck.check(cuDevicePrimaryCtxRelease(devices[d]), "cuDevicePrimaryCtxRelease");
            } catch (TransferException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        closed = true;
        if (failure != null) {
            throw failure;
        }
    }
}
