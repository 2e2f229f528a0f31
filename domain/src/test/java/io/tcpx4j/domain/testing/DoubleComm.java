package io.tcpx4j.domain.testing;

import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;

import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Set;

/**
 * One side of a {@link CommPair}: its request slots, FIFO of unreported requests and registrations.
 *
 * <p><b>Not thread-safe</b>: mutable state is guarded by the lock of {@link #pair}.
 */
abstract sealed class DoubleComm permits DoubleComm.Send, DoubleComm.Recv {

    final CommPair pair;
    final InMemoryNetTransportDouble owner;
    /** Posted requests not yet reported done by test, oldest first: the head is the only testable one. */
    final ArrayDeque<DoubleRequest> unreported = new ArrayDeque<>();
    final Set<DoubleRegistration> registrations = new HashSet<>();
    /** Slots held now: sends until reported done, receives until consumed. */
    int outstanding;
    int maxOutstanding;
    boolean closed;

    DoubleComm(CommPair pair, InMemoryNetTransportDouble owner) {
        this.pair = pair;
        this.owner = owner;
    }

    abstract boolean isSend();

    boolean slotFree() {
        return outstanding < NetTransport.MAX_REQUESTS;
    }

    void takeSlot() {
        outstanding++;
        maxOutstanding = Math.max(maxOutstanding, outstanding);
    }

    static final class Send extends DoubleComm implements SendComm {
        Send(CommPair pair, InMemoryNetTransportDouble owner) {
            super(pair, owner);
        }

        @Override
        boolean isSend() {
            return true;
        }

        @Override
        public String toString() {
            return "DoubleSendComm[pair " + pair.id + "]";
        }
    }

    static final class Recv extends DoubleComm implements RecvComm {
        /** Receives reported done and not yet consumed, oldest first: the head is the only consumable one. */
        final ArrayDeque<DoubleRequest> unconsumed = new ArrayDeque<>();
        /** Devmem bounce area, made on the first devmem receive; null otherwise. */
        BouncePool pool;

        Recv(CommPair pair, InMemoryNetTransportDouble owner) {
            super(pair, owner);
        }

        @Override
        boolean isSend() {
            return false;
        }

        @Override
        public String toString() {
            return "DoubleRecvComm[pair " + pair.id + "]";
        }
    }
}
