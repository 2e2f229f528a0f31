package io.tcpx4j.cli;

import io.tcpx4j.cli.layout.Stripes;
import io.tcpx4j.domain.protocol.RegionMetadata;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;

/**
 * A target on another host, reached over an {@link OobChannel}: the initiator's half of the
 * out-of-band protocol.
 *
 * <p><b>Not thread-safe.</b>
 */
final class OobClient implements TargetHandle {

    /** How long a failed run waits for the target's word on why (it sends it as it ends the run). */
    private static final Duration ENDED_WAIT = Duration.ofMillis(500);

    private final OobChannel channel;
    private final String name;
    private final byte[] connInfo;
    private final List<byte[]> metadata;
    private final Stripes buffers;
    private final Duration timeout;
    private final Integer channels;

    private OobClient(OobChannel channel, OobMessage welcome, Duration timeout) {
        this.channel = channel;
        this.timeout = timeout;
        this.name = welcome.name();
        this.connInfo = welcome.connInfo();
        this.metadata = List.copyOf(welcome.regions());
        this.buffers = new Stripes(metadata.stream().map(m -> RegionMetadata.decode(m).region()).toList());
        this.channels = welcome.channels();
    }

    /**
     * As {@link #open(OobChannel, String, byte[], long, String, String, Duration, Duration, PrintStream, int)},
     * for one buffer.
     */
    static OobClient open(OobChannel channel, String name, byte[] connInfo, long bytes, String mem, String transport,
                          Duration timeout, Duration pingInterval, PrintStream notices) throws IOException {
        return open(channel, name, connInfo, bytes, mem, transport, timeout, pingInterval, notices, 1);
    }

    /**
     * Says hello with this initiator's engine details and the buffers it needs ({@code devices} of
     * {@code bytes} each: one per GPU they are to spread over, or one), then keeps the
     * connection alive with pings and reads the welcome. While the target serves another run it
     * answers {@code wait} first: that line goes to {@code notices}, and the welcome comes when the
     * run ends.
     *
     * @param timeout longest silence of the target (its pings count) before the run fails
     * @throws OobChannel.TurnedAway when the target answers that it is full, or closes or resets the
     *                               connection before its welcome: a later connection may be served
     */
    static OobClient open(OobChannel channel, String name, byte[] connInfo, long bytes, String mem, String transport,
                          Duration timeout, Duration pingInterval, PrintStream notices, int devices)
            throws IOException {
        OobMessage welcome;
        try {
            channel.send(OobMessage.hello(name, connInfo, bytes, mem, transport, timeout, devices));
            channel.startPings(pingInterval, timeout);
            welcome = channel.expect("hello", "welcome", timeout, notices);
        } catch (java.net.SocketException e) {
            // a reset: the target closed the connection with our hello unread
            throw new OobChannel.TurnedAway("bench target " + channel.remote() + " dropped the connection before its"
                    + " welcome (" + e.getMessage() + ")", e);
        } catch (IOException e) {
            if (e.getCause() instanceof java.io.EOFException) {
                throw new OobChannel.TurnedAway("bench target " + channel.remote() + " closed the connection before"
                        + " its welcome", e);
            }
            throw e;
        }
        if (welcome.name() == null || welcome.connInfo() == null || welcome.metadata() == null) {
            throw new IOException("incomplete welcome from bench target " + channel.remote());
        }
        if (welcome.regions().size() != devices) {
            // a target that does not know the devices field serves one buffer whatever was asked
            throw new IOException("bench target " + channel.remote() + " registered " + welcome.regions().size()
                    + " buffer(s) for a run that asked for " + devices + " GPUs (--num-target-dev); is it an older"
                    + " tcpx4j?");
        }
        Duration targets = welcome.peerTimeout();
        if (targets != null && targets.dividedBy(4).compareTo(pingInterval) < 0) {
            channel.startPings(targets.dividedBy(4), timeout); // the target gives up sooner than we do
        }
        return new OobClient(channel, welcome, timeout);
    }

    /** The target's out-of-band address, as messages name it. */
    String remote() {
        return channel.remote();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public byte[] connInfo() {
        return connInfo.clone();
    }

    @Override
    public List<byte[]> metadata() {
        return metadata.stream().map(byte[]::clone).toList();
    }

    @Override
    public Integer channels() {
        return channels;
    }

    @Override
    public Stripes buffers() {
        return buffers;
    }

    @Override
    public void fill(long seed, long block, long count) {
        try {
            channel.call(OobMessage.fill(seed, block * count, block), "ok", timeout);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public Verified verify(long seed, long block, long count, List<byte[]> landed) {
        try {
            OobMessage m = channel.call(OobMessage.verify(seed, block * count, block, landed), "verified", timeout);
            if (m.mismatches() == null) {
                throw new IOException("bench target " + channel.remote() + " sent no mismatch count");
            }
            return new Verified(m.mismatches(), m.checked() == null ? java.util.Map.of() : m.checked());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void finish(java.util.List<byte[]> last) {
        try {
            channel.call(OobMessage.bye(last), "ok", timeout);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Asks the target for raw readers and connects to them, at the address the out-of-band link uses. */
    @Override
    public RawBaseline rawBaseline(int sockets, int chunkSize) throws IOException {
        Long port = channel.call(OobMessage.raw(sockets), "rawport", timeout).bytes();
        if (port == null || port < 1 || port > 65535) {
            throw new IOException("bench target " + channel.remote() + " sent no raw baseline port");
        }
        return RawBaseline.connect(new java.net.InetSocketAddress(channel.remoteAddress(), port.intValue()), sockets,
                chunkSize);
    }

    /** An error the target sent (it ends a run it gave up on with one), or its closing the connection. */
    @Override
    public String endedBecause() {
        try {
            OobMessage m = channel.poll(ENDED_WAIT);
            return m != null && m.is("error") ? m.message() : null;
        } catch (java.io.EOFException e) {
            return "it closed the out-of-band connection";
        } catch (IOException e) {
            // a reset: the target closed the connection before reading all that was sent to it
            return "the out-of-band connection broke (" + e.getMessage() + ")";
        }
    }

    @Override
    public void close() {
        channel.close();
    }
}
