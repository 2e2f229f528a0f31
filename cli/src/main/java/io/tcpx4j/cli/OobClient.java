package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.domain.protocol.RegionMetadata;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A target on another host, reached over an {@link OobChannel}: the initiator's half of the
 * out-of-band protocol.
 *
 * <p><b>Not thread-safe.</b>
 */
final class OobClient implements TargetHandle {

    private final OobChannel channel;
    private final String name;
    private final byte[] connInfo;
    private final byte[] metadata;
    private final MemoryDescriptor buffer;

    private OobClient(OobChannel channel, OobMessage welcome) {
        this.channel = channel;
        this.name = welcome.name();
        this.connInfo = welcome.connInfo();
        this.metadata = welcome.metadata();
        this.buffer = RegionMetadata.decode(metadata).region();
    }

    /** Says hello with this initiator's engine details and the buffer it needs; reads the welcome. */
    static OobClient open(OobChannel channel, String name, byte[] connInfo, long bytes, String mem, String transport)
            throws IOException {
        OobMessage welcome = channel.call(OobMessage.hello(name, connInfo, bytes, mem, transport), "welcome");
        if (welcome.name() == null || welcome.connInfo() == null || welcome.metadata() == null) {
            throw new IOException("incomplete welcome from bench target " + channel.remote());
        }
        return new OobClient(channel, welcome);
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
    public byte[] metadata() {
        return metadata.clone();
    }

    @Override
    public MemoryDescriptor buffer() {
        return buffer;
    }

    @Override
    public void fill(long seed, long bytes) {
        try {
            channel.call(OobMessage.fill(seed, bytes), "ok");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public long verify(long seed, long bytes, byte[] landed) {
        try {
            Long n = channel.call(OobMessage.verify(seed, bytes, landed), "verified").mismatches();
            if (n == null) {
                throw new IOException("bench target " + channel.remote() + " sent no mismatch count");
            }
            return n;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void finish(byte[] last) {
        try {
            channel.call(OobMessage.bye(last), "ok");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        channel.close();
    }
}
