package io.tcpx4j.domain.port.out;

/** Monotonic time, a port so that tests can drive timeouts by hand. */
@FunctionalInterface
public interface Clock {

    Clock SYSTEM = System::nanoTime;

    long nanoTime();
}
