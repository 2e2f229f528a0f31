package io.tcpx4j.api;

import java.util.Objects;

/**
 * The one error type of tcpx4j. Adapters translate native results (ncclResult_t, CUDA errors,
 * socket errors) into a {@link Code} at their edge.
 */
public final class TransferException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Error codes. Each maps 1:1 onto a NIXL status ({@link #nixlStatus()}). */
    public enum Code {
        /** The operation was not posted (nothing to check yet). NIXL_ERR_NOT_POSTED. */
        NOT_POSTED(-1),
        /** Bad input: unknown or malformed arguments, bytes that do not decode. NIXL_ERR_INVALID_PARAM. */
        INVALID_PARAM(-2),
        /** The transport or device failed. NIXL_ERR_BACKEND. */
        BACKEND(-3),
        /** An unknown peer, region or transfer. NIXL_ERR_NOT_FOUND. */
        NOT_FOUND(-4),
        /** Lengths or kinds of paired descriptors differ. NIXL_ERR_MISMATCH. */
        MISMATCH(-5),
        /** The access is not allowed: outside registered memory, wrong secret. NIXL_ERR_NOT_ALLOWED. */
        NOT_ALLOWED(-6),
        /** The transfer is still active and cannot be posted again. NIXL_ERR_REPOST_ACTIVE. */
        REPOST_ACTIVE(-7),
        /** Anything else. NIXL_ERR_UNKNOWN. */
        UNKNOWN(-8),
        /** The capability is not supported by this transport or build. NIXL_ERR_NOT_SUPPORTED. */
        NOT_SUPPORTED(-9),
        /** The peer went away (EOF, reset, timeout, transport error). NIXL_ERR_REMOTE_DISCONNECT. */
        REMOTE_DISCONNECT(-10),
        /** Cancelled by a release or an engine close. NIXL_ERR_CANCELED. */
        CANCELED(-11);

        private final int nixlStatus;

        Code(int nixlStatus) {
            this.nixlStatus = nixlStatus;
        }

        /** The matching {@code nixl_status_t} value. */
        public int nixlStatus() {
            return nixlStatus;
        }

        /** The code for a NIXL status; {@code UNKNOWN} for a value that is no error code. */
        public static Code ofNixlStatus(int status) {
            for (Code c : values()) {
                if (c.nixlStatus == status) {
                    return c;
                }
            }
            return UNKNOWN;
        }
    }

    private final Code code;

    public TransferException(Code code, String message) {
        super(message);
        this.code = Objects.requireNonNull(code, "code");
    }

    public TransferException(Code code, String message, Throwable cause) {
        super(message, cause);
        this.code = Objects.requireNonNull(code, "code");
    }

    public Code code() {
        return code;
    }

    /** The matching {@code nixl_status_t} value. */
    public int nixlStatus() {
        return code.nixlStatus();
    }

    @Override
    public String getMessage() {
        return code + ": " + super.getMessage();
    }
}
