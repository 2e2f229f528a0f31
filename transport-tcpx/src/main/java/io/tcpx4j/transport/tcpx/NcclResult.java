package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.TransferException;

/**
 * ncclResult_t values and their translation into {@link TransferException} codes at this adapter's
 * edge. The mapping (also in docs/TCPX.md):
 * <ul>
 *   <li>2 system error, 3 internal error, 6 remote error from {@code test}, {@code isend},
 *       {@code irecv} or {@code irecvConsumed} on a connected comm: REMOTE_DISCONNECT. TCPX reports a
 *       peer that closed or reset its sockets as an internal error from {@code test}, and a failed
 *       connection as an internal error from {@code isend}/{@code irecv}.</li>
 *   <li>3 from {@code isend}/{@code irecv} while the comm has requests outstanding: not an error but
 *       BUSY, because TCPX returns ncclInternalError when its 16 request slots are full.</li>
 *   <li>4 invalid argument, 5 invalid usage: INVALID_PARAM.</li>
 *   <li>everything else (1 unhandled CUDA error, errors from init, listen, connect, accept, regMr,
 *       close): BACKEND.</li>
 * </ul>
 */
final class NcclResult {

    static final int SUCCESS = 0;
    static final int UNHANDLED_CUDA_ERROR = 1;
    static final int SYSTEM_ERROR = 2;
    static final int INTERNAL_ERROR = 3;
    static final int INVALID_ARGUMENT = 4;
    static final int INVALID_USAGE = 5;
    static final int REMOTE_ERROR = 6;
    static final int IN_PROGRESS = 7;

    private NcclResult() {
    }

    static String name(int rc) {
        return switch (rc) {
            case SUCCESS -> "ncclSuccess";
            case UNHANDLED_CUDA_ERROR -> "ncclUnhandledCudaError";
            case SYSTEM_ERROR -> "ncclSystemError";
            case INTERNAL_ERROR -> "ncclInternalError";
            case INVALID_ARGUMENT -> "ncclInvalidArgument";
            case INVALID_USAGE -> "ncclInvalidUsage";
            case REMOTE_ERROR -> "ncclRemoteError";
            case IN_PROGRESS -> "ncclInProgress";
            default -> "ncclResult " + rc;
        };
    }

    /** The code for a failure of a control-path call (init, listen, connect, accept, regMr, close). */
    static TransferException.Code controlCode(int rc) {
        return rc == INVALID_ARGUMENT || rc == INVALID_USAGE
                ? TransferException.Code.INVALID_PARAM : TransferException.Code.BACKEND;
    }

    /** The code for a failure of a data-path call on a connected comm (isend, irecv, test, irecvConsumed). */
    static TransferException.Code dataCode(int rc) {
        return switch (rc) {
            case SYSTEM_ERROR, INTERNAL_ERROR, REMOTE_ERROR -> TransferException.Code.REMOTE_DISCONNECT;
            default -> controlCode(rc);
        };
    }

    static TransferException control(String call, int rc) {
        return new TransferException(controlCode(rc), "TCPX " + call + " failed: " + name(rc)
                + " (the plugin's own log lines, routed to System.Logger io.tcpx4j.transport.tcpx.plugin, say why)");
    }

    /** Throws {@link #control} unless {@code rc} is ncclSuccess. */
    static void checkControl(String call, int rc) {
        if (rc != SUCCESS) {
            throw control(call, rc);
        }
    }

    static TransferException data(String call, int rc) {
        return new TransferException(dataCode(rc), "TCPX " + call + " failed: " + name(rc)
                + (dataCode(rc) == TransferException.Code.REMOTE_DISCONNECT
                        ? " (the peer closed or reset the connection)" : ""));
    }
}
