package io.tcpx4j.metrics;

import io.tcpx4j.api.Transfer;
import io.tcpx4j.api.TransferException;

import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * Records one transfer when it ends: transfers, bytes and latency when DONE, an error by code otherwise.
 * The one object a recorded transfer allocates besides its completion stage. Runs on the thread that
 * ends the transfer (the engine's agent, or the caller's for a transfer that ends inside its call).
 */
final class TransferObserver implements BiConsumer<Transfer, Throwable> {

    private final PeerMeters.Recorder recorder;
    private final long bytes;
    private final long start;

    TransferObserver(PeerMeters.Recorder recorder, long bytes, long start) {
        this.recorder = recorder;
        this.bytes = bytes;
        this.start = start;
    }

    @Override
    public void accept(Transfer done, Throwable failure) {
        long nanos = System.nanoTime() - start;
        recorder.peer().ended.increment();
        if (failure == null) {
            recorder.transfers.increment();
            recorder.bytes.increment(bytes);
            recorder.latency.record(nanos, TimeUnit.NANOSECONDS);
            return;
        }
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        recorder.peer().error(recorder.op,
                cause instanceof TransferException e ? e.code() : TransferException.Code.UNKNOWN);
    }
}
