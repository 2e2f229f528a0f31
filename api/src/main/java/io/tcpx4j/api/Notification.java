package io.tcpx4j.api;

import java.util.Arrays;
import java.util.Objects;

/**
 * A message from a peer. A notification attached to a transfer is delivered only after the
 * transfer's last byte is in place on the receiving engine, and exactly once.
 *
 * @param agent   name of the engine that sent it
 * @param message the bytes as sent (a copy)
 */
public record Notification(String agent, byte[] message) {

    public Notification {
        Objects.requireNonNull(agent, "agent");
        message = message.clone();
    }

    @Override
    public byte[] message() {
        return message.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Notification n && n.agent.equals(agent) && Arrays.equals(n.message, message);
    }

    @Override
    public int hashCode() {
        return agent.hashCode() * 31 + Arrays.hashCode(message);
    }

    @Override
    public String toString() {
        return "Notification[" + agent + ", " + message.length + " bytes]";
    }
}
