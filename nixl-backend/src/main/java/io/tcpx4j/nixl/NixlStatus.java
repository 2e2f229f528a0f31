package io.tcpx4j.nixl;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;

/**
 * NIXL's {@code nixl_status_t} values, as the numbers NIXL defines them (nixl_types.h): 1 for a
 * transfer still in progress, 0 for success, negative for errors. Every error a {@link NixlBackend}
 * method returns is the {@link TransferException.Code#nixlStatus()} of the failure's code.
 *
 * <p>Stateless and thread-safe.
 */
public final class NixlStatus {

    /** {@code NIXL_IN_PROG}: posted, still moving. */
    public static final int IN_PROG = 1;
    /** {@code NIXL_SUCCESS}. */
    public static final int SUCCESS = 0;
    public static final int ERR_NOT_POSTED = TransferException.Code.NOT_POSTED.nixlStatus();
    public static final int ERR_INVALID_PARAM = TransferException.Code.INVALID_PARAM.nixlStatus();
    public static final int ERR_BACKEND = TransferException.Code.BACKEND.nixlStatus();
    public static final int ERR_NOT_FOUND = TransferException.Code.NOT_FOUND.nixlStatus();
    public static final int ERR_MISMATCH = TransferException.Code.MISMATCH.nixlStatus();
    public static final int ERR_NOT_ALLOWED = TransferException.Code.NOT_ALLOWED.nixlStatus();
    public static final int ERR_REPOST_ACTIVE = TransferException.Code.REPOST_ACTIVE.nixlStatus();
    public static final int ERR_UNKNOWN = TransferException.Code.UNKNOWN.nixlStatus();
    public static final int ERR_NOT_SUPPORTED = TransferException.Code.NOT_SUPPORTED.nixlStatus();
    public static final int ERR_REMOTE_DISCONNECT = TransferException.Code.REMOTE_DISCONNECT.nixlStatus();
    public static final int ERR_CANCELED = TransferException.Code.CANCELED.nixlStatus();

    private NixlStatus() {
    }

    /** The status for a failure: its code's NIXL status, or {@link #ERR_UNKNOWN} for anything else. */
    public static int of(Throwable failure) {
        return failure instanceof TransferException te ? te.nixlStatus() : ERR_UNKNOWN;
    }

    /** The name NIXL gives a status, e.g. {@code NIXL_ERR_REPOST_ACTIVE}, for messages. */
    public static String name(int status) {
        if (status == IN_PROG) {
            return "NIXL_IN_PROG";
        }
        if (status == SUCCESS) {
            return "NIXL_SUCCESS";
        }
        TransferException.Code code = TransferException.Code.ofNixlStatus(status);
        if (code.nixlStatus() != status) {
            return "nixl_status_t(" + status + ")";
        }
        return "NIXL_ERR_" + code.name();
    }

    /** The status {@code checkXfer} reports for a transfer in this state. */
    static int of(TransferStatus status, TransferException error) {
        return switch (status) {
            case IN_PROGRESS -> IN_PROG;
            case DONE -> SUCCESS;
            case RELEASED -> ERR_CANCELED;
            case FAILED -> error == null ? ERR_UNKNOWN : error.nixlStatus();
        };
    }
}
