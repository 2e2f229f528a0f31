package io.tcpx4j.domain.idle;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.LongSupplier;

/**
 * Whether the host's CPUs have lately been oversubscribed, from the kernel's pressure-stall information
 * ({@code /proc/pressure/cpu}, its {@code some} line: the microseconds in which at least one runnable task
 * waited for a CPU, each CPU weighted by how busy it was): pressured while that share of the last interval
 * exceeds {@link #PRESSURED_PERCENT} percent. It sees what a thread's own counters ({@link CpuContention})
 * cannot: a thread that spins is seldom kept waiting itself, because the threads it shares its CPUs with
 * (the peer engine's, the application's workers, busy loops) are the ones that wait, and when one of them
 * wakes it preempts the spinner and runs later than it would have beside an idle CPU.
 *
 * <p>One per process ({@link #host()}), read at most once per {@link #INTERVAL_NANOS} by whichever thread
 * asks when the last reading is older: on each read the kernel weights every CPU's stall time by that CPU's
 * busy time counted in whole scheduler ticks since the previous read, so reads less than a tick apart add
 * nothing to the total and frequent readers would hide the pressure they look for.
 *
 * <p>Where the file cannot be read (kernels without pressure-stall information) the host never counts as
 * pressured. Thread-safe.
 */
public final class CpuPressure {

    /** How often the total is read. */
    static final long INTERVAL_NANOS = 20_000_000;
    /** Share of an interval, in percent, in which some task waited for a CPU, above which the host is pressured. */
    static final long PRESSURED_PERCENT = 10;

    private static final Path PRESSURE = Path.of("/proc/pressure/cpu");
    private static final CpuPressure HOST = new CpuPressure(CpuPressure::readSomeMicros, System::nanoTime);

    /** The total of stalled microseconds so far, or a negative value where it is unknown. */
    interface Source {
        long stalledMicros();
    }

    private final Source source;
    private final LongSupplier clock;
    private boolean started;
    private boolean unavailable;
    private long lastRead;
    private long lastMicros;
    private boolean pressured;

    /** {@code clock} in nanoseconds times the intervals. */
    CpuPressure(Source source, LongSupplier clock) {
        this.source = source;
        this.clock = clock;
    }

    /** The process's instance, reading {@code /proc/pressure/cpu}. */
    public static CpuPressure host() {
        return HOST;
    }

    /** Whether some task waited for a CPU in more than {@link #PRESSURED_PERCENT} percent of the last interval. */
    public synchronized boolean pressured() {
        if (unavailable) {
            return false;
        }
        long now = clock.getAsLong();
        if (started && now - lastRead < INTERVAL_NANOS) {
            return pressured;
        }
        long micros = source.stalledMicros();
        if (micros < 0) {
            unavailable = true;
            return pressured = false;
        }
        if (started) {
            pressured = (micros - lastMicros) * 1_000 * 100 > PRESSURED_PERCENT * (now - lastRead);
        }
        started = true;
        lastRead = now;
        lastMicros = micros;
        return pressured;
    }

    /** The {@code total=} of the file's first line ({@code some}), or -1 where it cannot be read. */
    static long readSomeMicros() {
        ByteBuffer text = readProc(PRESSURE, 256);
        return text == null ? -1 : parseSomeTotal(text);
    }

    /** Up to {@code capacity} bytes of the proc file {@code file}, ready to read; null where it cannot be read. */
    static ByteBuffer readProc(Path file, int capacity) {
        ByteBuffer buf = ByteBuffer.allocate(capacity);
        try (SeekableByteChannel ch = Files.newByteChannel(file)) {
            while (ch.read(buf) > 0 && buf.hasRemaining()) {
                // a proc file is read to its end
            }
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return null;
        }
        return buf.flip();
    }

    /** The number after the first line's {@code total=}, or -1 where there is none. */
    static long parseSomeTotal(ByteBuffer text) {
        byte[] key = {'t', 'o', 't', 'a', 'l', '='};
        int matched = 0;
        while (text.hasRemaining()) {
            byte b = text.get();
            if (b == '\n') {
                return -1;
            }
            matched = b == key[matched] ? matched + 1 : (b == key[0] ? 1 : 0);
            if (matched == key.length) {
                long value = 0;
                int digits = 0;
                while (text.hasRemaining()) {
                    byte d = text.get();
                    if (d < '0' || d > '9') {
                        break;
                    }
                    value = value * 10 + (d - '0');
                    digits++;
                }
                return digits > 0 ? value : -1;
            }
        }
        return -1;
    }
}
