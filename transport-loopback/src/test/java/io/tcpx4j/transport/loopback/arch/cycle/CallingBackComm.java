package io.tcpx4j.transport.loopback.arch.cycle;

/** Test fixture for {@code LoopbackStructureTest}: a comm that reports to the transport that owns it. */
public final class CallingBackComm {

    private final OwningTransport owner;

    CallingBackComm(OwningTransport owner) {
        this.owner = owner;
    }

    void completed() {
        owner.signalProgress();
    }
}
