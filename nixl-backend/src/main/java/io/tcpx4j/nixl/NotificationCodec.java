package io.tcpx4j.nixl;

import io.tcpx4j.api.Notification;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The packed form in which {@link NixlBackend#getNotifs} hands notifications to the C side, one array
 * per call so that the bridge builds no Java objects per notification. Little-endian:
 * {@code u32 count}, then per notification {@code u32 agentLength, agent (UTF-8), u32 messageLength, message}.
 *
 * <p>Stateless and thread-safe.
 */
final class NotificationCodec {

    private NotificationCodec() {
    }

    /** What an empty list packs to: a count of 0. Shared; callers only read it. */
    private static final byte[] NONE = new byte[4];

    static byte[] pack(List<Notification> notifications) {
        if (notifications.isEmpty()) {
            return NONE; // a host polls getNotifs in a loop; most calls find nothing
        }
        int size = 4;
        List<byte[]> agents = new ArrayList<>(notifications.size());
        for (Notification n : notifications) {
            byte[] agent = n.agent().getBytes(StandardCharsets.UTF_8);
            agents.add(agent);
            size += 8 + agent.length + n.message().length;
        }
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(notifications.size());
        for (int i = 0; i < notifications.size(); i++) {
            byte[] message = notifications.get(i).message();
            b.putInt(agents.get(i).length).put(agents.get(i)).putInt(message.length).put(message);
        }
        return b.array();
    }

    static List<Notification> unpack(byte[] packed) {
        ByteBuffer b = ByteBuffer.wrap(packed).order(ByteOrder.LITTLE_ENDIAN);
        int count = b.getInt();
        List<Notification> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            byte[] agent = new byte[b.getInt()];
            b.get(agent);
            byte[] message = new byte[b.getInt()];
            b.get(message);
            out.add(new Notification(new String(agent, StandardCharsets.UTF_8), message));
        }
        return out;
    }
}
