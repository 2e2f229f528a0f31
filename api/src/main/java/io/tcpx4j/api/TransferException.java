package io.tcpx4j.api;

import java.util.Objects;

/**
 * The one error type of tcpx4j. Adapters translate native results (ncclResult_t, CUDA errors,
 * socket errors) into a {@link Code} at their edge.
 */
public final class TransferException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Error codes. The NIXL backend maps each onto one NIXL status at its edge. */
    public enum Code {
        /** The operation was not posted (nothing to check yet). NIXL_ERR_NOT_POSTED. */
        NOT_POSTED,
        /** Bad input: unknown or malformed arguments, bytes that do not decode. NIXL_ERR_INVALID_PARAM. */
        INVALID_PARAM,
        /** The transport or device failed. NIXL_ERR_BACKEND. */
        BACKEND,
        /** An unknown peer, region or transfer. NIXL_ERR_NOT_FOUND. */
        NOT_FOUND,
        /** Lengths or kinds of paired descriptors differ. NIXL_ERR_MISMATCH. */
        MISMATCH,
        /** The access is not allowed: outside registered memory, wrong secret. NIXL_ERR_NOT_ALLOWED. */
        NOT_ALLOWED,
        /** The transfer is still active and cannot be posted again. NIXL_ERR_REPOST_ACTIVE. */
        REPOST_ACTIVE,
        /** Anything else. NIXL_ERR_UNKNOWN. */
        UNKNOWN,
        /** The capability is not supported by this transport or build. NIXL_ERR_NOT_SUPPORTED. */
        NOT_SUPPORTED,
        /** The peer went away (EOF, reset, timeout, transport error). NIXL_ERR_REMOTE_DISCONNECT. */
        REMOTE_DISCONNECT,
        /** Cancelled by a release or an engine close. NIXL_ERR_CANCELED. */
        CANCELED
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

    @Override
    public String getMessage() {
        return code + ": " + super.getMessage();
    }
}
