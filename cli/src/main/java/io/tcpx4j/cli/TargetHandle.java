package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryDescriptor;

/**
 * The initiator's view of the target of a run: who it is, where its buffer is, and the checks
 * {@code --check-consistency} needs on its side. Either in this process ({@link Local}) or across
 * the out-of-band connection ({@link OobClient}).
 *
 * <p><b>Not thread-safe.</b>
 */
interface TargetHandle extends AutoCloseable {

    /** The target engine's name. */
    String name();

    /** The target engine's conn-info. */
    byte[] connInfo();

    /** Public metadata of the target's buffer. */
    byte[] metadata();

    /** The target's buffer, as published. */
    MemoryDescriptor buffer();

    /** Fills the target buffer's first {@code bytes} with pattern {@code seed}. */
    void fill(long seed, long bytes);

    /** Waits for every notification of {@code landed}, then counts bad bytes in the first {@code bytes}. */
    long verify(long seed, long bytes, java.util.List<byte[]> landed);

    /** Ends the run; {@code last} are the last row's notifications (empty: none). */
    void finish(java.util.List<byte[]> last);

    /** The data channels the target's engine offers, or null where it does not say. */
    default Integer channels() {
        return null;
    }

    /** Raw TCP to where this target runs, {@code sockets} sockets, for the bench's baseline columns. */
    default RawBaseline rawBaseline(int sockets, int chunkSize) throws java.io.IOException {
        return new RawBaseline(sockets, chunkSize);
    }

    /**
     * Why the target ended the run, if it says so within a moment (a run that failed here may have
     * failed because the target gave up on it); null if it does not.
     */
    default String endedBecause() {
        return null;
    }

    @Override
    void close();

    /** A target engine in this process (embedded mode). */
    final class Local implements TargetHandle {
        private final Node node;
        private final TargetSide side;

        Local(Node node, long bytes) {
            this.node = node;
            this.side = new TargetSide(node, bytes);
        }

        @Override
        public String name() {
            return node.engine().name();
        }

        @Override
        public byte[] connInfo() {
            return node.engine().connInfo();
        }

        @Override
        public byte[] metadata() {
            return side.metadata();
        }

        @Override
        public MemoryDescriptor buffer() {
            return side.buffer();
        }

        @Override
        public void fill(long seed, long bytes) {
            side.fill(seed, bytes);
        }

        @Override
        public long verify(long seed, long bytes, java.util.List<byte[]> landed) {
            return side.verify(seed, bytes, landed);
        }

        @Override
        public void finish(java.util.List<byte[]> last) {
            side.finish(last);
        }

        @Override
        public Integer channels() {
            return node.channels();
        }

        @Override
        public void close() {
            side.close();
        }
    }
}
