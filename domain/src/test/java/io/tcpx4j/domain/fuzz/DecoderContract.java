package io.tcpx4j.domain.fuzz;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The contract every decoder of untrusted bytes keeps, checked by the fuzz targets: the only outcome
 * of bad bytes is a {@link TransferException} with code INVALID_PARAM (NOT_SUPPORTED for a version
 * this build does not read). Any other throwable escapes the target and Jazzer reports it as a
 * finding, with the input saved for a regression test.
 */
final class DecoderContract {

    /** Executions the fuzz runs need at least (the CI figure in docs/RELIABILITY.md). */
    static final long MIN_EXECUTIONS = 100_000;

    private DecoderContract() {
    }

    /** Rethrows anything that is not one of the allowed rejections. */
    static void allowedRejection(TransferException e, boolean versioned) {
        if (e.code() == Code.INVALID_PARAM || (versioned && e.code() == Code.NOT_SUPPORTED)) {
            return;
        }
        throw new AssertionError("decoder rejected bad bytes with " + e.code() + " instead of INVALID_PARAM", e);
    }

    /** Whether this JVM really fuzzes (Jazzer's JAZZER_FUZZ) rather than replaying seeds. */
    static boolean fuzzing() {
        String v = System.getenv("JAZZER_FUZZ");
        return v != null && (v.equals("1") || v.equalsIgnoreCase("true") || v.equalsIgnoreCase("yes"));
    }

    /** After a fuzzing run: proves it was one (no silent fallback to seeds-only). */
    static void checkExecutions(String target, AtomicLong executions) {
        System.out.println("[fuzz] " + target + ": " + executions.get() + " executions");
        if (fuzzing() && executions.get() < MIN_EXECUTIONS) {
            throw new AssertionError(target + " ran only " + executions.get() + " inputs, fewer than " + MIN_EXECUTIONS);
        }
    }
}
