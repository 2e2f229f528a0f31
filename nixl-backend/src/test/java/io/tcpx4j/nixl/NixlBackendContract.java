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
abstract class NixlBackendContract extends NixlBackendFixture {

    /** Bytes of a transfer that stays in flight for at least some milliseconds. */
    abstract int bigTransferBytes();

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
        assertThat(r1.md()).isNotZero().isNotEqualTo(r2.md());
        assertThat(a.deregisterMem(r1.md())).isEqualTo(NixlStatus.SUCCESS);
        assertThat(a.deregisterMem(r1.md())).isEqualTo(NixlStatus.ERR_NOT_FOUND);
        assertThat(a.getPublicData(r1.md(), new byte[1][])).isEqualTo(NixlStatus.ERR_NOT_FOUND);
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
        assertThat(a.unloadMD(mine.md())).as("a registration is no loaded metadata").isEqualTo(NixlStatus.ERR_NOT_FOUND);
        long[] h = new long[1];
        assertThat(prepStatus(a, NixlBackend.OP_WRITE, mine, 0, r, rmd, 0, 4096, "B", h))
                .isEqualTo(NixlStatus.ERR_NOT_FOUND);
    }

    @Test
    void loadLocalMdGivesATargetIdThatUnloadsWithoutDeregistering() {
        Region r = region(a, 4096);
        long[] out = new long[1];
        assertThat(a.loadLocalMD(r.md(), out)).isEqualTo(NixlStatus.SUCCESS);
        assertThat(out[0]).isNotEqualTo(r.md());
        assertThat(a.unloadMD(out[0])).isEqualTo(NixlStatus.SUCCESS);
        assertThat(a.getPublicData(r.md(), new byte[1][])).isEqualTo(NixlStatus.SUCCESS);
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
            fill(src.addr(), n, 100 + post);
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
        fill(src.addr(), small, 66);
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
        fill(src.addr(), small, 66);
        assertSameBytes(src, dst, new int[] {small});
    }

    @Test
    void localWriteAndReadCopyWithinTheAgentAndNotifyIt() {
        int n = 300_001;
        Region src = filled(a, n, 7);
        Region dst = region(a, n);
        long[] target = new long[1];
        assertThat(a.loadLocalMD(dst.md(), target)).isEqualTo(NixlStatus.SUCCESS);
        long w = prep(a, NixlBackend.OP_WRITE, src, 0, dst, target[0], 0, n, "A");
        assertThat(a.postXfer(w, "local".getBytes(StandardCharsets.UTF_8))).isIn(NixlStatus.IN_PROG, NixlStatus.SUCCESS);
        assertThat(awaitXfer(a, w)).isEqualTo(NixlStatus.SUCCESS);
        assertSameBytes(src, dst, new int[] {n});
        assertThat(awaitNotifs(a, 1)).containsExactly(new Notification("A", "local".getBytes(StandardCharsets.UTF_8)));

        // READ the other way: src <- dst after changing dst
        fill(dst.addr(), n, 77);
        long[] srcTarget = new long[1];
        assertThat(a.loadLocalMD(src.md(), srcTarget)).isEqualTo(NixlStatus.SUCCESS);
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
                new long[] {src.addr()}, new long[] {4096}, new int[] {0}, new long[] {src.md()},
                NixlBackend.DRAM_SEG, new long[] {dst.addr()}, new long[] {4095}, new int[] {0}, new long[] {rmd},
                "B", h)).as("pair of different lengths").isEqualTo(NixlStatus.ERR_MISMATCH);
        assertThat(a.prepXfer(NixlBackend.OP_WRITE, NixlBackend.DRAM_SEG,
                new long[] {src.addr()}, new long[] {4096}, new int[] {0}, new long[] {src.md()},
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
}
