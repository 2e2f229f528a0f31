package io.tcpx4j.transport.loopback.arch.cycle;

/** Test fixture for {@code LoopbackStructureTest}: a transport that creates comms which call it back. */
public final class OwningTransport {

    int signals;

    CallingBackComm open() {
        return new CallingBackComm(this);
    }

    void signalProgress() {
        signals++;
    }
}
