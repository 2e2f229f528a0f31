package io.tcpx4j.cli;

import io.tcpx4j.cli.layout.Stripes;

import java.util.List;

/**
 * The initiator's view of the target of a run: who it is, where its buffers are, and the checks
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

    /** Public metadata of the target's buffers, in block order (one per GPU, or one of host memory). */
    List<byte[]> metadata();

    /** The target's buffers, as published, laid out as the target lays out a row's blocks. */
    Stripes buffers();

    /** Fills blocks {@code [0, count)} of a row of {@code block}-byte blocks with pattern {@code seed}. */
    void fill(long seed, long block, long count);

    /** Waits for every notification of {@code landed}, then checks the blocks {@link #fill} would write. */
    Verified verify(long seed, long block, long count, List<byte[]> landed);

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

        /** {@code bytes} on each GPU of {@code devices}, or of host memory where the node's memory is host memory. */
        Local(Node node, List<Integer> devices, long bytes) {
            this.node = node;
            this.side = new TargetSide(node, devices, bytes);
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
        public List<byte[]> metadata() {
            return side.metadata();
        }

        @Override
        public Stripes buffers() {
            return side.buffers();
        }

        @Override
        public void fill(long seed, long block, long count) {
            side.fill(seed, block, count);
        }

        @Override
        public Verified verify(long seed, long block, long count, List<byte[]> landed) {
            return side.verify(seed, block, count, landed);
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
