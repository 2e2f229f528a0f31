package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;
import io.tcpx4j.domain.port.out.DriverSelector;

import java.util.ArrayList;
import java.util.List;

/**
 * The transport's loops: with I/O threads, none until the first {@link #next}, then {@code ioThreads}
 * {@link IoLoop}s, handed out round-robin to listeners and connections; without ({@code ioThreads} 0), a
 * {@link DriverLoop} on the selector of the thread that drives each listener or connection. It also holds the transport's closed state,
 * because closing is what must exclude starting: once {@link #close()} has run, {@link #next()}
 * throws, so the loops {@link #shutdown()} stops are all the loops there will ever be.
 *
 * <p>Thread-safe: {@link #next()} and {@link #close()} hold this object's monitor; the loop list is
 * published through a volatile field for {@link #shutdown()}.
 */
final class IoLoops {

    private final int ioThreads;
    /** The transport's logger, the one a user configures for this adapter. */
    private final System.Logger log;
    private volatile List<IoLoop> loops;
    private int nextLoop;
    private volatile boolean closed;

    private final ProgressWakes wakes;

    IoLoops(int ioThreads, ProgressWakes wakes, System.Logger log) {
        this.ioThreads = ioThreads;
        this.wakes = wakes;
        this.log = log;
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * The loop for a new listener or connection that {@code driver}'s thread drives (null: a caller that
     * blocks on no selector), starting the I/O threads on first use.
     */
    synchronized Loop next(DriverSelector driver) {
        if (closed) {
            throw new TransferException(Code.INVALID_PARAM, "transport is closed");
        }
        if (ioThreads == 0) {
            return new DriverLoop(driver);
        }
        if (loops == null) {
            List<IoLoop> l = new ArrayList<>(ioThreads);
            for (int i = 0; i < ioThreads; i++) {
                l.add(new IoLoop("tcpx4j-loopback-io-" + i, wakes));
            }
            loops = l;
            log.log(System.Logger.Level.DEBUG, "loopback transport started " + l.size() + " I/O threads");
        }
        IoLoop loop = loops.get(nextLoop);
        nextLoop = (nextLoop + 1) % loops.size();
        return loop;
    }

    /** Refuses further {@link #next()}; true for the one call that closed, false if already closed. */
    synchronized boolean close() {
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }

    /** Stops the loops that started, if any; after {@link #close()}, when nothing needs a loop task any more. */
    void shutdown() {
        List<IoLoop> started = loops;
        if (started != null) {
            for (IoLoop loop : started) {
                loop.shutdown();
            }
        }
    }
}
