package io.tcpx4j.cli;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.time.Duration;

/**
 * One message of the out-of-band protocol between a bench initiator and a target (see {@link OobChannel}).
 * {@code op} says which fields are set:
 * <ul>
 *   <li>initiator: {@code hello}(version, name, connInfo, bytes, mem, transport, devices),
 *       {@code fill}(seed, bytes, block), {@code verify}(seed, bytes, block, tag, tags), {@code bye}(tag, tags):
 *       {@code tags} are the notifications of a row's last transfers, one per transfer slot, and {@code tag} the
 *       last of them (a target that knows only {@code tag} still serves runs of one slot);</li>
 *   <li>target: {@code welcome}(version, name, connInfo, metadata, metadatas, channels), {@code ok},
 *       {@code verified}(mismatches, checked), {@code error}(message), {@code wait}(message) while another run
 *       is in progress (the welcome follows when it ends), {@code busy}(message) in place of either
 *       when it has no room for another connection now (it closes the connection; a later one may be
 *       served);</li>
 *   <li>either side: {@code ping}, a keep-alive while it is busy; receivers skip it.</li>
 * </ul>
 * {@code channels} is the data channels the target's engine offers (the engines settle on the fewer of both
 * sides'). {@code devices} is the GPUs the target's buffers are to spread over (absent: one), {@code bytes} of a
 * hello the size of each of them, {@code metadatas} their public metadata in block order where there are
 * several ({@code metadata} is the first's), {@code block} the row's block size when a fill or verify covers
 * {@code bytes / block} blocks of it (absent: one block of {@code bytes}), and {@code checked} the bytes a
 * verify checked per GPU ordinal. Byte arrays travel as base64. {@code timeoutMs} is the sender's {@code --oob-timeout}: the other side keeps
 * its pings well inside it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record OobMessage(String op, Integer version, String name, byte[] connInfo, byte[] metadata, Long bytes, String mem,
                  String transport, Long seed, byte[] tag, Long mismatches, String message, Long timeoutMs,
                  java.util.List<byte[]> tags, Integer channels, Integer devices, java.util.List<byte[]> metadatas,
                  Long block, java.util.Map<Integer, Long> checked) {

    static final int VERSION = 2;

    /** A hello asking for one buffer of {@code bytes}. */
    static OobMessage hello(String name, byte[] connInfo, long bytes, String mem, String transport, Duration timeout) {
        return hello(name, connInfo, bytes, mem, transport, timeout, 1);
    }

    /** A hello asking for {@code devices} buffers of {@code bytes} each (one: the field is left out). */
    static OobMessage hello(String name, byte[] connInfo, long bytes, String mem, String transport, Duration timeout,
                            int devices) {
        return new OobMessage("hello", VERSION, name, connInfo, null, bytes, mem, transport, null, null, null, null,
                timeout.toMillis(), null, null, devices > 1 ? devices : null, null, null, null);
    }

    /** The welcome to a run whose buffers have these metadata, in block order. */
    static OobMessage welcome(String name, byte[] connInfo, java.util.List<byte[]> metadata, Duration timeout,
                              int channels) {
        return new OobMessage("welcome", VERSION, name, connInfo, metadata.get(0), null, null, null, null, null, null,
                null, timeout.toMillis(), null, channels, null, metadata.size() > 1 ? metadata : null, null, null);
    }

    /** The GPUs a hello asks the target's buffers to spread over. */
    int devicesAsked() {
        return devices == null ? 1 : devices;
    }

    /** The public metadata of a welcome's buffers, in block order. */
    java.util.List<byte[]> regions() {
        if (metadatas != null) {
            return metadatas;
        }
        return metadata == null ? java.util.List.of() : java.util.List.of(metadata);
    }

    /** The block size of a fill or verify: {@code bytes} when it does not say (one block). */
    long blockSize() {
        return block != null ? block : bytes != null ? bytes : 0;
    }

    /** The sender's --oob-timeout, if its hello or welcome said (older peers do not): its pings must come faster. */
    Duration peerTimeout() {
        return timeoutMs == null || timeoutMs < 1 ? null : Duration.ofMillis(timeoutMs);
    }

    /** Fill {@code bytes} in blocks of {@code block} bytes. */
    static OobMessage fill(long seed, long bytes, long block) {
        return new OobMessage("fill", null, null, null, null, bytes, null, null, seed, null, null, null, null, null,
                null, null, null, block, null);
    }

    /** Verify {@code bytes} in blocks of {@code block} bytes. */
    static OobMessage verify(long seed, long bytes, long block, java.util.List<byte[]> tags) {
        return new OobMessage("verify", null, null, null, null, bytes, null, null, seed, last(tags), null, null, null,
                tags, null, null, null, block, null);
    }

    static OobMessage bye(java.util.List<byte[]> tags) {
        return new OobMessage("bye", null, null, null, null, null, null, null, null, last(tags), null, null, null,
                tags, null, null, null, null, null);
    }

    private static byte[] last(java.util.List<byte[]> tags) {
        return tags.isEmpty() ? null : tags.get(tags.size() - 1);
    }

    /** The notifications a verify or bye names: {@code tags}, else {@code tag} alone, else none. */
    java.util.List<byte[]> notes() {
        if (tags != null) {
            return tags;
        }
        return tag == null ? java.util.List.of() : java.util.List.of(tag);
    }

    /** Asks the target for raw TCP readers on {@code sockets} sockets (the bench's baseline). */
    static OobMessage raw(int sockets) {
        return new OobMessage("raw", null, null, null, null, (long) sockets, null, null, null, null, null, null, null, null, null,
                null, null, null, null);
    }

    /** The port the target's raw TCP readers accept on. */
    static OobMessage rawPort(int port) {
        return new OobMessage("rawport", null, null, null, null, (long) port, null, null, null, null, null, null, null, null,
                null, null, null, null, null);
    }

    static OobMessage ok() {
        return new OobMessage("ok", null, null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                null, null, null);
    }

    /** A verify's answer: the differing bytes, and the bytes checked per GPU (none for host memory). */
    static OobMessage verified(long mismatches, java.util.Map<Integer, Long> checked) {
        return new OobMessage("verified", null, null, null, null, null, null, null, null, null, mismatches, null, null,
                null, null, null, null, null, checked.isEmpty() ? null : checked);
    }

    static OobMessage error(String message) {
        return new OobMessage("error", null, null, null, null, null, null, null, null, null, null, message, null, null, null,
                null, null, null, null);
    }

    static OobMessage busy(String message) {
        return new OobMessage("busy", null, null, null, null, null, null, null, null, null, null, message, null, null, null,
                null, null, null, null);
    }

    static OobMessage waiting(String message) {
        return new OobMessage("wait", null, null, null, null, null, null, null, null, null, null, message, null, null, null,
                null, null, null, null);
    }

    static OobMessage ping() {
        return new OobMessage("ping", null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                null, null, null, null);
    }

    boolean is(String expected) {
        return expected.equals(op);
    }
}
