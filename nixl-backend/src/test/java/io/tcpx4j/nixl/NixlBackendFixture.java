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
 * Two NIXL backends "A" and "B" with conn info exchanged as NIXL's agent does, and the helpers tests drive
 * them with through the backend's own numeric API (registered host memory, metadata, descriptor lists,
 * polling); everything allocated is freed after each test.
 */
abstract class NixlBackendFixture {

    static final int MIB = 1 << 20;
    static final int DEV = 0;
    static final int FILE_SEG = 4;

    /** A new backend named {@code name}, its engine running. */
    abstract NixlBackend newBackend(String name);

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
