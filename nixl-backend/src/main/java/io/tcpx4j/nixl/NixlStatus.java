package io.tcpx4j.nixl;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferStatus;

/**
 * NIXL's {@code nixl_status_t} values, as the numbers NIXL defines them (nixl_types.h): 1 for a
 * transfer still in progress, 0 for success, negative for errors. This class is where a failure's
 * {@link TransferException.Code} becomes a NIXL status ({@link #of(TransferException.Code)}); every error a
 * {@link NixlBackend} method returns is made here.
 *
 * <p>Stateless and thread-safe.
 */
public final class NixlStatus {

    /** {@code NIXL_IN_PROG}: posted, still moving. */
    public static final int IN_PROG = 1;
    /** {@code NIXL_SUCCESS}. */
    public static final int SUCCESS = 0;
    public static final int ERR_NOT_POSTED = -1;
    public static final int ERR_INVALID_PARAM = -2;
    public static final int ERR_BACKEND = -3;
    public static final int ERR_NOT_FOUND = -4;
    public static final int ERR_MISMATCH = -5;
    public static final int ERR_NOT_ALLOWED = -6;
    public static final int ERR_REPOST_ACTIVE = -7;
    public static final int ERR_UNKNOWN = -8;
    public static final int ERR_NOT_SUPPORTED = -9;
    public static final int ERR_REMOTE_DISCONNECT = -10;
    public static final int ERR_CANCELED = -11;

    private NixlStatus() {
    }

    /** The NIXL status of {@code code}. */
    public static int of(TransferException.Code code) {
        return switch (code) {
            case NOT_POSTED -> ERR_NOT_POSTED;
            case INVALID_PARAM -> ERR_INVALID_PARAM;
            case BACKEND -> ERR_BACKEND;
            case NOT_FOUND -> ERR_NOT_FOUND;
            case MISMATCH -> ERR_MISMATCH;
            case NOT_ALLOWED -> ERR_NOT_ALLOWED;
            case REPOST_ACTIVE -> ERR_REPOST_ACTIVE;
            case UNKNOWN -> ERR_UNKNOWN;
            case NOT_SUPPORTED -> ERR_NOT_SUPPORTED;
            case REMOTE_DISCONNECT -> ERR_REMOTE_DISCONNECT;
            case CANCELED -> ERR_CANCELED;
        };
    }

    /** The status for a failure: its code's NIXL status, or {@link #ERR_UNKNOWN} for anything else. */
    public static int of(Throwable failure) {
        return failure instanceof TransferException te ? of(te.code()) : ERR_UNKNOWN;
    }

    /** The name NIXL gives a status, e.g. {@code NIXL_ERR_REPOST_ACTIVE}, for messages. */
    public static String name(int status) {
        if (status == IN_PROG) {
            return "NIXL_IN_PROG";
        }
        if (status == SUCCESS) {
            return "NIXL_SUCCESS";
        }
        for (TransferException.Code code : TransferException.Code.values()) {
            if (of(code) == status) {
                return "NIXL_ERR_" + code.name();
            }
        }
        return "nixl_status_t(" + status + ")";
    }

    /** The status {@code checkXfer} reports for a transfer in this state. */
    static int of(TransferStatus status, TransferException error) {
        return switch (status) {
            case IN_PROGRESS -> IN_PROG;
            case DONE -> SUCCESS;
            case RELEASED -> ERR_CANCELED;
            case FAILED -> error == null ? ERR_UNKNOWN : of(error.code());
        };
    }
}
