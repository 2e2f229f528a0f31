package io.tcpx4j.nixl;

import io.tcpx4j.api.Notification;
import io.tcpx4j.domain.memory.NativeMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * What a NIXL agent relies on from the TCPX backend, method by method, checked through the
 * backend's own numeric API the way the C++ plugin drives it: two agents "A" and "B", each with
 * registered host memory, conn info and region metadata exchanged like NIXL's agent does.
 *
 * <p>Subclasses supply the backends (real engine over the loopback transport, or the test double).
 * Every transfer's bytes are verified, every notification is counted.
 */
abstract class NixlBackendContract {

    static final int MIB = 1 << 20;
    static final int DEV = 0;
    static final int FILE_SEG = 4;

    /** A new backend named {@code name}, its engine running. */
    abstract NixlBackend newBackend(String name);

    /** Bytes of a transfer that stays in flight for at least some milliseconds. */
    abstract int bigTransferBytes();

    final List<NixlBackend> backends = new ArrayList<>();
    final List<Long> allocations = new ArrayList<>();
    NixlBackend a;
    NixlBackend b;

    @BeforeEach
    void agents() {
        a = backend("A");
        b = backend("B");
        exchangeConnInfo(a, b);
    }

    @AfterEach
    void cleanUp() {
        backends.forEach(NixlBackend::close);
        allocations.forEach(NativeMemory::free);
    }

    // ------------------------------------------------------------------ capabilities

    @Test
    void declaresRemoteLocalAndNotificationSupportForDramAndVram() {
        assertThat(a.supportsRemote()).isTrue();
        assertThat(a.supportsLocal()).isTrue();
        assertThat(a.supportsNotif()).isTrue();
        assertThat(a.getSupportedMems()).containsExactly(NixlBackend.DRAM_SEG, NixlBackend.VRAM_SEG);
    }

    // ------------------------------------------------------------------ memory and metadata

    @Test
    void registerGivesDistinctIdsAndDeregisterFreesThemOnce() {
        Region r1 = region(a, 4096);
        Region r2 = region(a, 8192);
        assertThat(r1.md).isNotZero().isNotEqualTo(r2.md);
        assertThat(a.deregisterMem(r1.md)).isEqualTo(NixlStatus.SUCCESS);
        assertThat(a.deregisterMem(r1.md)).isEqualTo(NixlStatus.ERR_NOT_FOUND);
        assertThat(a.getPublicData(r1.md, new byte[1][])).isEqualTo(NixlStatus.ERR_NOT_FOUND);
    }

    @Test
    void registerRefusesMemoryTypesOtherThanDramAndVram() {
        long addr = alloc(4096);
        long[] out = new long[1];
        assertThat(a.registerMem(addr, 4096, DEV, FILE_SEG, out)).isEqualTo(NixlStatus.ERR_NOT_SUPPORTED);
        assertThat(a.registerMem(addr, 4096, DEV, NixlBackend.DRAM_SEG, null)).isEqualTo(NixlStatus.ERR_INVALID_PARAM);
    }

    @Test
    void publicDataLoadsOnThePeerAndUnloadsOnce() {
        Region r = region(b, 4096);
        long rmd = loadRemote(a, b, r);
        long second = loadRemote(a, b, r);
        assertThat(rmd).isNotEqualTo(second);
        assertThat(a.unloadMD(second)).isEqualTo(NixlStatus.SUCCESS);
        // the first load is still usable after the second one went
        Region mine = region(a, 4096);
        assertThat(prep(a, NixlBackend.OP_WRITE, mine, 0, r, rmd, 0, 4096, "B")).isPositive();
        assertThat(a.unloadMD(rmd)).isEqualTo(NixlStatus.SUCCESS);
        assertThat(a.unloadMD(rmd)).isEqualTo(NixlStatus.ERR_NOT_FOUND);
        assertThat(a.unloadMD(mine.md)).as("a registration is no loaded metadata").isEqualTo(NixlStatus.ERR_NOT_FOUND);
        long[] h = new long[1];
        assertThat(prepStatus(a, NixlBackend.OP_WRITE, mine, 0, r, rmd, 0, 4096, "B", h))
                .isEqualTo(NixlStatus.ERR_NOT_FOUND);
    }

    @Test
    void loadLocalMdGivesATargetIdThatUnloadsWithoutDeregistering() {
        Region r = region(a, 4096);
        long[] out = new long[1];
        assertThat(a.loadLocalMD(r.md, out)).isEqualTo(NixlStatus.SUCCESS);
        assertThat(out[0]).isNotEqualTo(r.md);
        assertThat(a.unloadMD(out[0])).isEqualTo(NixlStatus.SUCCESS);
        assertThat(a.getPublicData(r.md, new byte[1][])).isEqualTo(NixlStatus.SUCCESS);
        assertThat(a.loadLocalMD(999_999, out)).isEqualTo(NixlStatus.ERR_NOT_FOUND);
    }

    // ------------------------------------------------------------------ connections

    @Test
    void connInfoIsStableAndLoadingItNeverBlocks() {
        byte[][] c1 = new byte[1][];
        byte[][] c2 = new byte[1][];
        assertThat(a.getConnInfo(c1)).isEqualTo(NixlStatus.SUCCESS);
        assertThat(a.getConnInfo(c2)).isEqualTo(NixlStatus.SUCCESS);
        assertThat(c1[0]).isNotEmpty().isEqualTo(c2[0]);

        // conn info of an agent that has gone away: loading it and connecting must return at once
        NixlBackend gone = backend("Gone");
        byte[][] info = new byte[1][];
        assertThat(gone.getConnInfo(info)).isEqualTo(NixlStatus.SUCCESS);
        gone.close();
        long t0 = System.nanoTime();
        assertThat(a.loadRemoteConnInfo("Gone", info[0])).isEqualTo(NixlStatus.SUCCESS);
        assertThat(a.connect("Gone")).isIn(NixlStatus.SUCCESS, NixlStatus.ERR_REMOTE_DISCONNECT);
        assertThat((System.nanoTime() - t0) / 1_000_000).as("milliseconds in load + connect").isLessThan(500);
        assertThat(a.loadRemoteConnInfo("A", info[0])).as("own name").isEqualTo(NixlStatus.ERR_INVALID_PARAM);
    }

    @Test
    void connectAndDisconnectToItselfAreNoOps() {
        assertThat(a.connect("A")).isEqualTo(NixlStatus.SUCCESS);
        assertThat(a.disconnect("A")).isEqualTo(NixlStatus.SUCCESS);
        assertThat(a.connect("B")).isEqualTo(NixlStatus.SUCCESS);
    }

    // ------------------------------------------------------------------ transfers

    @Test
    void writeMovesEveryByteAndNotifiesTheTargetOnceAfterTheDataLanded() {
        int[] sizes = {1, 4097, 700_001};
        Region src = filled(a, 1 << 21, 1);
        Region dst = region(b, 1 << 21);
        long rmd = loadRemote(a, b, dst);
        long h = prepList(a, NixlBackend.OP_WRITE, src, dst, rmd, sizes, "B");
        byte[] msg = "kv-block-7".getBytes(StandardCharsets.UTF_8);
        assertThat(a.postXfer(h, msg)).isIn(NixlStatus.IN_PROG, NixlStatus.SUCCESS);

        // the notification alone must mean "data landed": check bytes before looking at A's status
        List<Notification> notifs = awaitNotifs(b, 1);
        assertSameBytes(src, dst, sizes);
        assertThat(notifs).containsExactly(new Notification("A", msg));
        assertThat(awaitXfer(a, h)).isEqualTo(NixlStatus.SUCCESS);
        assertThat(a.releaseReqH(h)).isEqualTo(NixlStatus.SUCCESS);
        assertThat(drain(a)).isEmpty();
    }

    @Test
    void readPullsEveryByteAndNotifiesTheAgentReadFrom() {
        int[] sizes = {123_457, 1 << 20};
        Region remote = filled(b, 1 << 21, 2);
        Region local = region(a, 1 << 21);
        long rmd = loadRemote(a, b, remote);
        long h = prepList(a, NixlBackend.OP_READ, local, remote, rmd, sizes, "B");
        assertThat(a.postXfer(h, new byte[0])).isIn(NixlStatus.IN_PROG, NixlStatus.SUCCESS);
        assertThat(awaitXfer(a, h)).isEqualTo(NixlStatus.SUCCESS);
        assertSameBytes(remote, local, sizes);
        assertThat(awaitNotifs(b, 1)).as("an empty message is still a notification")
                .containsExactly(new Notification("A", new byte[0]));
        assertThat(a.releaseReqH(h)).isEqualTo(NixlStatus.SUCCESS);
    }

    @Test
    void aPostWithoutNotificationNotifiesNobody() {
        Region src = filled(a, 65536, 3);
        Region dst = region(b, 65536);
        long h = prep(a, NixlBackend.OP_WRITE, src, 0, dst, loadRemote(a, b, dst), 0, 65536, "B");
        a.postXfer(h, null);
        assertThat(awaitXfer(a, h)).isEqualTo(NixlStatus.SUCCESS);
        assertSameBytes(src, dst, new int[] {65536});
        sleep(50);
        assertThat(drain(b)).isEmpty();
    }

    @Test
    void repostingAFinishedHandleMovesTheDataAgainWithOneNotificationPerPost() {
        int n = 1 << 20;
        Region src = filled(a, n, 4);
        Region dst = region(b, n);
        long h = prep(a, NixlBackend.OP_WRITE, src, 0, dst, loadRemote(a, b, dst), 0, n, "B");
        List<String> sent = new ArrayList<>();
        for (int post = 0; post < 4; post++) {
            fill(src.addr, n, 100 + post);
            String msg = "post-" + post;
            sent.add(msg);
            assertThat(a.postXfer(h, msg.getBytes(StandardCharsets.UTF_8))).isIn(NixlStatus.IN_PROG, NixlStatus.SUCCESS);
            assertThat(awaitXfer(a, h)).isEqualTo(NixlStatus.SUCCESS);
            assertSameBytes(src, dst, new int[] {n});
        }
        List<Notification> got = awaitNotifs(b, 4);
        assertThat(got).extracting(Notification::agent).containsOnly("A");
        assertThat(got).extracting(x -> new String(x.message(), StandardCharsets.UTF_8))
                .containsExactlyInAnyOrderElementsOf(sent);
    }

    @Test
    void repostingAnActiveHandleIsRefusedAndLeavesTheRunningTransferAlone() {
        int n = bigTransferBytes();
        Region src = filled(a, n, 5);
        Region dst = region(b, n);
        long h = prep(a, NixlBackend.OP_WRITE, src, 0, dst, loadRemote(a, b, dst), 0, n, "B");
        postCaughtInFlight(a, h, "first".getBytes(StandardCharsets.UTF_8));
        assertThat(a.postXfer(h, "second".getBytes(StandardCharsets.UTF_8))).isEqualTo(NixlStatus.ERR_REPOST_ACTIVE);
        assertThat(awaitXfer(a, h)).isEqualTo(NixlStatus.SUCCESS);
        assertSameBytes(src, dst, new int[] {n});
        List<Notification> got = awaitNotifs(b, 1);
        assertThat(got).containsExactly(new Notification("A", "first".getBytes(StandardCharsets.UTF_8)));
        // and it can be posted again now
        assertThat(a.postXfer(h, null)).isIn(NixlStatus.IN_PROG, NixlStatus.SUCCESS);
        assertThat(awaitXfer(a, h)).isEqualTo(NixlStatus.SUCCESS);
    }

    @Test
    void releaseDuringATransferReturnsAtOnceAndTheBackendKeepsWorking() {
        int n = bigTransferBytes();
        Region src = filled(a, n, 6);
        Region dst = region(b, n);
        long rmd = loadRemote(a, b, dst);
        long h = prep(a, NixlBackend.OP_WRITE, src, 0, dst, rmd, 0, n, "B");
        postCaughtInFlight(a, h, "never".getBytes(StandardCharsets.UTF_8));
        long t0 = System.nanoTime();
        assertThat(a.releaseReqH(h)).isEqualTo(NixlStatus.SUCCESS);
        assertThat((System.nanoTime() - t0) / 1_000_000).as("milliseconds in releaseReqH").isLessThan(100);
        assertThat(a.checkXfer(h)).isEqualTo(NixlStatus.ERR_NOT_FOUND);
        assertThat(a.releaseReqH(h)).isEqualTo(NixlStatus.ERR_NOT_FOUND);

        // the released post may still deliver its notification (its data may already be in flight
        // and drains), but at most once; the next transfer on the same memory works and notifies once
        int small = 1 << 16;
        fill(src.addr, small, 66);
        long h2 = prep(a, NixlBackend.OP_WRITE, src, 0, dst, rmd, 0, small, "B");
        a.postXfer(h2, "after".getBytes(StandardCharsets.UTF_8));
        assertThat(awaitXfer(a, h2)).isEqualTo(NixlStatus.SUCCESS);
        List<String> got = new ArrayList<>();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!got.contains("A:after") && System.nanoTime() < deadline) {
            drain(b).forEach(x -> got.add(x.agent() + ":" + new String(x.message(), StandardCharsets.UTF_8)));
            sleep(1);
        }
        sleep(200);
        drain(b).forEach(x -> got.add(x.agent() + ":" + new String(x.message(), StandardCharsets.UTF_8)));
        assertThat(got).filteredOn("A:after"::equals).hasSize(1);
        assertThat(got).filteredOn("A:never"::equals).hasSizeLessThanOrEqualTo(1);
        assertThat(got).allMatch(x -> x.equals("A:after") || x.equals("A:never"));
        // the bytes of the later transfer are in place (the released one wrote the same region: it
        // finished or was cut before "after" was sent, as the ordered stream guarantees)
        fill(src.addr, small, 66);
        assertSameBytes(src, dst, new int[] {small});
    }

    @Test
    void localWriteAndReadCopyWithinTheAgentAndNotifyIt() {
        int n = 300_001;
        Region src = filled(a, n, 7);
        Region dst = region(a, n);
        long[] target = new long[1];
        assertThat(a.loadLocalMD(dst.md, target)).isEqualTo(NixlStatus.SUCCESS);
        long w = prep(a, NixlBackend.OP_WRITE, src, 0, dst, target[0], 0, n, "A");
        assertThat(a.postXfer(w, "local".getBytes(StandardCharsets.UTF_8))).isIn(NixlStatus.IN_PROG, NixlStatus.SUCCESS);
        assertThat(awaitXfer(a, w)).isEqualTo(NixlStatus.SUCCESS);
        assertSameBytes(src, dst, new int[] {n});
        assertThat(awaitNotifs(a, 1)).containsExactly(new Notification("A", "local".getBytes(StandardCharsets.UTF_8)));

        // READ the other way: src <- dst after changing dst
        fill(dst.addr, n, 77);
        long[] srcTarget = new long[1];
        assertThat(a.loadLocalMD(src.md, srcTarget)).isEqualTo(NixlStatus.SUCCESS);
        long r = prep(a, NixlBackend.OP_READ, src, 0, dst, target[0], 0, n, "A");
        assertThat(a.postXfer(r, null)).isIn(NixlStatus.IN_PROG, NixlStatus.SUCCESS);
        assertThat(awaitXfer(a, r)).isEqualTo(NixlStatus.SUCCESS);
        assertSameBytes(dst, src, new int[] {n});
        assertThat(drain(b)).isEmpty();
    }

    @Test
    void manyPostsFromTwoAgentsGiveExactlyOneNotificationEachKeyedBySender() {
        int n = 64 * 1024;
        Region srcA = filled(a, n, 8);
        Region srcB = filled(b, n, 9);
        Region dstA = region(a, n);
        Region dstB = region(b, n);
        long hA = prep(a, NixlBackend.OP_WRITE, srcA, 0, dstB, loadRemote(a, b, dstB), 0, n, "B");
        long hB = prep(b, NixlBackend.OP_WRITE, srcB, 0, dstA, loadRemote(b, a, dstA), 0, n, "A");
        int posts = 10;
        for (int i = 0; i < posts; i++) {
            assertThat(b.postXfer(hB, ("b" + i).getBytes(StandardCharsets.UTF_8))).isIn(NixlStatus.IN_PROG, NixlStatus.SUCCESS);
            assertThat(a.postXfer(hA, ("a" + i).getBytes(StandardCharsets.UTF_8))).isIn(NixlStatus.IN_PROG, NixlStatus.SUCCESS);
            assertThat(awaitXfer(a, hA)).isEqualTo(NixlStatus.SUCCESS);
            assertThat(awaitXfer(b, hB)).isEqualTo(NixlStatus.SUCCESS);
        }
        List<Notification> atB = awaitNotifs(b, posts);
        List<Notification> atA = awaitNotifs(a, posts);
        assertThat(atB).extracting(Notification::agent).containsOnly("A");
        assertThat(atA).extracting(Notification::agent).containsOnly("B");
        assertThat(atB).extracting(x -> new String(x.message(), StandardCharsets.UTF_8))
                .containsExactlyInAnyOrderElementsOf(numbered("a", posts));
        assertThat(atA).extracting(x -> new String(x.message(), StandardCharsets.UTF_8))
                .containsExactlyInAnyOrderElementsOf(numbered("b", posts));
        assertSameBytes(srcA, dstB, new int[] {n});
        assertSameBytes(srcB, dstA, new int[] {n});
    }

    @Test
    void genNotifReachesThePeerKeyedBySenderAndItselfLocally() {
        assertThat(a.genNotif("B", "hello".getBytes(StandardCharsets.UTF_8))).isEqualTo(NixlStatus.SUCCESS);
        assertThat(awaitNotifs(b, 1)).containsExactly(new Notification("A", "hello".getBytes(StandardCharsets.UTF_8)));
        assertThat(a.genNotif("A", "me".getBytes(StandardCharsets.UTF_8))).isEqualTo(NixlStatus.SUCCESS);
        assertThat(awaitNotifs(a, 1)).containsExactly(new Notification("A", "me".getBytes(StandardCharsets.UTF_8)));
        assertThat(a.genNotif("Nobody", new byte[1])).isEqualTo(NixlStatus.ERR_NOT_FOUND);
    }

    @Test
    void disconnectDuringATransferFailsItWithRemoteDisconnect() {
        int n = bigTransferBytes();
        Region src = filled(a, n, 10);
        Region dst = region(b, n);
        long h = prep(a, NixlBackend.OP_WRITE, src, 0, dst, loadRemote(a, b, dst), 0, n, "B");
        postCaughtInFlight(a, h, "cut".getBytes(StandardCharsets.UTF_8));
        assertThat(a.disconnect("B")).isEqualTo(NixlStatus.SUCCESS);
        assertThat(awaitXfer(a, h)).isEqualTo(NixlStatus.ERR_REMOTE_DISCONNECT);
        assertThat(a.releaseReqH(h)).isEqualTo(NixlStatus.SUCCESS);
    }

    @Test
    void aPeerThatDiesFailsTransfersWithRemoteDisconnect() {
        int n = bigTransferBytes();
        Region src = filled(a, n, 11);
        Region dst = region(b, n);
        long h = prep(a, NixlBackend.OP_WRITE, src, 0, dst, loadRemote(a, b, dst), 0, n, "B");
        postCaughtInFlight(a, h, null);
        b.close();
        assertThat(awaitXfer(a, h)).isEqualTo(NixlStatus.ERR_REMOTE_DISCONNECT);
        // a repost to the dead peer fails too, at post or at check
        int post = a.postXfer(h, null);
        if (post == NixlStatus.IN_PROG) {
            post = awaitXfer(a, h);
        }
        assertThat(post).isEqualTo(NixlStatus.ERR_REMOTE_DISCONNECT);
    }

    // ------------------------------------------------------------------ preparation errors

    @Test
    void prepXferRejectsBadListsWithNixlCodes() {
        Region src = region(a, 8192);
        Region dst = region(b, 8192);
        long rmd = loadRemote(a, b, dst);
        long[] h = new long[1];
        assertThat(prepStatus(a, 7, src, 0, dst, rmd, 0, 4096, "B", h)).isEqualTo(NixlStatus.ERR_INVALID_PARAM);
        assertThat(a.prepXfer(NixlBackend.OP_WRITE, NixlBackend.DRAM_SEG,
                new long[] {src.addr}, new long[] {4096}, new int[] {0}, new long[] {src.md},
                NixlBackend.DRAM_SEG, new long[] {dst.addr}, new long[] {4095}, new int[] {0}, new long[] {rmd},
                "B", h)).as("pair of different lengths").isEqualTo(NixlStatus.ERR_MISMATCH);
        assertThat(a.prepXfer(NixlBackend.OP_WRITE, NixlBackend.DRAM_SEG,
                new long[] {src.addr}, new long[] {4096}, new int[] {0}, new long[] {src.md},
                NixlBackend.DRAM_SEG, new long[0], new long[0], new int[0], new long[0],
                "B", h)).as("lists of different lengths").isEqualTo(NixlStatus.ERR_MISMATCH);
        assertThat(prepStatus(a, NixlBackend.OP_WRITE, src, 4096, dst, rmd, 0, 8192, "B", h))
                .as("local range past its registration").isEqualTo(NixlStatus.ERR_NOT_ALLOWED);
        assertThat(prepStatus(a, NixlBackend.OP_WRITE, src, 0, dst, rmd, 1, 8192, "B", h))
                .as("remote range past its region").isEqualTo(NixlStatus.ERR_NOT_ALLOWED);
        assertThat(prepStatus(a, NixlBackend.OP_WRITE, src, 0, dst, 424242, 0, 4096, "B", h))
                .isEqualTo(NixlStatus.ERR_NOT_FOUND);
        assertThat(prepStatus(a, NixlBackend.OP_WRITE, src, 0, dst, rmd, 0, 4096, "A", h))
                .as("remote metadata used for a local transfer").isEqualTo(NixlStatus.ERR_NOT_FOUND);
        assertThat(prepStatus(a, NixlBackend.OP_WRITE, src, 0, dst, rmd, 0, 4096, "C", h))
                .as("metadata of another agent").isEqualTo(NixlStatus.ERR_INVALID_PARAM);
    }

    @Test
    void unknownAndUnpostedHandlesAnswerWithNixlCodes() {
        assertThat(a.postXfer(31337, null)).isEqualTo(NixlStatus.ERR_NOT_FOUND);
        assertThat(a.checkXfer(31337)).isEqualTo(NixlStatus.ERR_NOT_FOUND);
        assertThat(a.releaseReqH(31337)).isEqualTo(NixlStatus.ERR_NOT_FOUND);
        Region src = region(a, 4096);
        Region dst = region(b, 4096);
        long h = prep(a, NixlBackend.OP_WRITE, src, 0, dst, loadRemote(a, b, dst), 0, 4096, "B");
        assertThat(a.checkXfer(h)).isEqualTo(NixlStatus.ERR_NOT_POSTED);
    }

    @Test
    void estimateXferCostGrowsWithSizeAndIsAnalytical() {
        Region src = region(a, 1 << 22);
        Region dst = region(b, 1 << 22);
        long rmd = loadRemote(a, b, dst);
        long small = prep(a, NixlBackend.OP_WRITE, src, 0, dst, rmd, 0, 4096, "B");
        long large = prep(a, NixlBackend.OP_WRITE, src, 0, dst, rmd, 0, 1 << 22, "B");
        long[] s = new long[3];
        long[] l = new long[3];
        assertThat(a.estimateXferCost(small, s)).isEqualTo(NixlStatus.SUCCESS);
        assertThat(a.estimateXferCost(large, l)).isEqualTo(NixlStatus.SUCCESS);
        assertThat(s[0]).isPositive();
        assertThat(l[0]).isGreaterThan(s[0]);
        assertThat(l[1]).isPositive().isLessThan(l[0]);
        assertThat(l[2]).isEqualTo(NixlBackend.COST_ANALYTICAL_BACKEND);
        assertThat(a.estimateXferCost(4242, l)).isEqualTo(NixlStatus.ERR_NOT_FOUND);
    }

    @Test
    void aClosedBackendAnswersCanceled() {
        NixlBackend c = backend("C");
        c.close();
        assertThat(c.registerMem(alloc(4096), 4096, DEV, NixlBackend.DRAM_SEG, new long[1])).isEqualTo(NixlStatus.ERR_CANCELED);
        assertThat(c.getNotifs(new byte[1][])).isEqualTo(NixlStatus.ERR_CANCELED);
    }

    // ------------------------------------------------------------------ helpers

    record Region(long addr, int length, long md) {
    }

    NixlBackend backend(String name) {
        NixlBackend backend = newBackend(name);
        backends.add(backend);
        // what NIXL's agent does right after creating a backend that supports local transfers
        assertThat(backend.connect(name)).isEqualTo(NixlStatus.SUCCESS);
        return backend;
    }

    static void exchangeConnInfo(NixlBackend x, NixlBackend y) {
        byte[][] cx = new byte[1][];
        byte[][] cy = new byte[1][];
        assertThat(x.getConnInfo(cx)).isEqualTo(NixlStatus.SUCCESS);
        assertThat(y.getConnInfo(cy)).isEqualTo(NixlStatus.SUCCESS);
        assertThat(y.loadRemoteConnInfo(x.name(), cx[0])).isEqualTo(NixlStatus.SUCCESS);
        assertThat(x.loadRemoteConnInfo(y.name(), cy[0])).isEqualTo(NixlStatus.SUCCESS);
    }

    long alloc(int n) {
        long addr = NativeMemory.allocate(n, NativeMemory.PAGE);
        allocations.add(addr);
        NativeMemory.fill(addr, n, (byte) 0);
        return addr;
    }

    Region region(NixlBackend owner, int n) {
        long addr = alloc(n);
        long[] md = new long[1];
        assertThat(owner.registerMem(addr, n, DEV, NixlBackend.DRAM_SEG, md)).isEqualTo(NixlStatus.SUCCESS);
        return new Region(addr, n, md[0]);
    }

    Region filled(NixlBackend owner, int n, int seed) {
        Region r = region(owner, n);
        fill(r.addr, n, seed);
        return r;
    }

    static void fill(long addr, int n, int seed) {
        byte[] bytes = new byte[n];
        new SplittableRandom(seed).nextBytes(bytes);
        NativeMemory.put(addr, bytes, 0, n);
    }

    /** Loads {@code owner}'s region into {@code into} as NIXL's agent would. */
    static long loadRemote(NixlBackend into, NixlBackend owner, Region r) {
        byte[][] blob = new byte[1][];
        assertThat(owner.getPublicData(r.md, blob)).isEqualTo(NixlStatus.SUCCESS);
        long[] out = new long[1];
        assertThat(into.loadRemoteMD(r.addr, r.length, DEV, NixlBackend.DRAM_SEG, blob[0], owner.name(), out))
                .isEqualTo(NixlStatus.SUCCESS);
        return out[0];
    }

    static long prep(NixlBackend x, int op, Region local, long localOff, Region remote, long rmd, long remoteOff,
                     long len, String agent) {
        long[] h = new long[1];
        assertThat(prepStatus(x, op, local, localOff, remote, rmd, remoteOff, len, agent, h)).isEqualTo(NixlStatus.SUCCESS);
        return h[0];
    }

    static int prepStatus(NixlBackend x, int op, Region local, long localOff, Region remote, long rmd, long remoteOff,
                          long len, String agent, long[] h) {
        return x.prepXfer(op, NixlBackend.DRAM_SEG,
                new long[] {local.addr + localOff}, new long[] {len}, new int[] {DEV}, new long[] {local.md},
                NixlBackend.DRAM_SEG,
                new long[] {remote.addr + remoteOff}, new long[] {len}, new int[] {DEV}, new long[] {rmd},
                agent, h);
    }

    /** A list of consecutive descriptors of the given sizes, same offsets on both sides. */
    static long prepList(NixlBackend x, int op, Region local, Region remote, long rmd, int[] sizes, String agent) {
        int n = sizes.length;
        long[] la = new long[n];
        long[] ra = new long[n];
        long[] len = new long[n];
        long off = 0;
        for (int i = 0; i < n; i++) {
            la[i] = local.addr + off;
            ra[i] = remote.addr + off;
            len[i] = sizes[i];
            off += sizes[i];
        }
        long[] lmd = new long[n];
        long[] rmds = new long[n];
        Arrays.fill(lmd, local.md);
        Arrays.fill(rmds, rmd);
        long[] h = new long[1];
        assertThat(x.prepXfer(op, NixlBackend.DRAM_SEG, la, len, new int[n], lmd,
                NixlBackend.DRAM_SEG, ra, len.clone(), new int[n], rmds, agent, h)).isEqualTo(NixlStatus.SUCCESS);
        return h[0];
    }

    static void assertSameBytes(Region from, Region to, int[] sizes) {
        int total = Arrays.stream(sizes).sum();
        byte[] expected = new byte[total];
        byte[] actual = new byte[total];
        NativeMemory.get(from.addr, expected, 0, total);
        NativeMemory.get(to.addr, actual, 0, total);
        if (!Arrays.equals(expected, actual)) {
            int i = Arrays.mismatch(expected, actual);
            fail("byte " + i + " of " + total + " differs: expected " + expected[i] + " but was " + actual[i]);
        }
    }

    static int awaitXfer(NixlBackend x, long h) {
        long deadline = System.nanoTime() + 20_000_000_000L;
        int s;
        while ((s = x.checkXfer(h)) == NixlStatus.IN_PROG) {
            if (System.nanoTime() > deadline) {
                fail("transfer still in progress after 20 s");
            }
            sleep(1);
        }
        return s;
    }

    /** Posts and asserts the transfer was seen in flight right after; retries a few times if it was too quick. */
    static void postCaughtInFlight(NixlBackend x, long h, byte[] notif) {
        for (int attempt = 0; attempt < 5; attempt++) {
            int s = x.postXfer(h, notif);
            if (s == NixlStatus.IN_PROG && x.checkXfer(h) == NixlStatus.IN_PROG) {
                return;
            }
            assertThat(awaitXfer(x, h)).isEqualTo(NixlStatus.SUCCESS);
        }
        fail("a transfer of this size was never caught in flight; raise bigTransferBytes()");
    }

    /** Collects notifications until {@code count} arrived, then makes sure no extra one follows soon. */
    static List<Notification> awaitNotifs(NixlBackend x, int count) {
        List<Notification> got = new ArrayList<>();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (got.size() < count) {
            got.addAll(drain(x));
            if (System.nanoTime() > deadline) {
                fail("got " + got.size() + " of " + count + " notifications in 20 s");
            }
            sleep(1);
        }
        sleep(30);
        got.addAll(drain(x));
        assertThat(got).as("notifications at " + x.name()).hasSize(count);
        return got;
    }

    static List<Notification> drain(NixlBackend x) {
        byte[][] out = new byte[1][];
        assertThat(x.getNotifs(out)).isEqualTo(NixlStatus.SUCCESS);
        return NixlBackend.unpackNotifications(out[0]);
    }

    static List<String> numbered(String prefix, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(prefix + i);
        }
        return out;
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
