package io.tcpx4j.cuda;

import io.tcpx4j.api.TransferException;
import jcuda.driver.CUresult;

/** Translates CUDA driver results into {@link TransferException}s at the adapter's edge. Thread-safe. */
final class CudaCheck {

    private CudaCheck() {
    }

    /** Throws {@code BACKEND} unless {@code result} is {@code CUDA_SUCCESS}. */
    static void check(int result, String call) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw failure(result, call);
        }
    }

    static TransferException failure(int result, String call) {
        return new TransferException(TransferException.Code.BACKEND, call + " failed: " + CUresult.stringFor(result)
                + " (" + result + ")");
    }
}
