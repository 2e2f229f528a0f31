package io.tcpx4j.cli.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fleet runs of three {@code tcpx4j bench} processes over the loopback transport, coordinated through
 * a real etcd that the test starts and stops.
 */
@Timeout(300)
class FleetProcessTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern RANK = Pattern.compile("fleet worker rank (\\d) of 3 .*: (initiator|target) of");
    @RegisterExtension
    static final LocalEtcd.PerClass etcd = new LocalEtcd.PerClass();

    /** One worker process and what it printed. */
    private record Worker(Process process, CompletableFuture<String> out, CompletableFuture<String> err,
                          LinkedBlockingQueue<String> outLines, LinkedBlockingQueue<String> errLines) {
    }

    private static Worker start(String group, String... flags) throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElse(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), "io.tcpx4j.cli.Main", "bench",
                "--etcd-endpoints", etcd.url().toString(), "--benchmark-group", group, "--workers", "3",
                // three JVMs start on a small machine at once
                "--peer-wait", "120", "--warmup-seconds", "0"));
        cmd.addAll(List.of(flags));
        Process p = new ProcessBuilder(cmd).start();
        LinkedBlockingQueue<String> outLines = new LinkedBlockingQueue<>();
        LinkedBlockingQueue<String> errLines = new LinkedBlockingQueue<>();
        return new Worker(p, readAsync(p.getInputStream(), outLines), readAsync(p.getErrorStream(), errLines),
                outLines, errLines);
    }

    /** Reads a stream to its end on a thread of its own, each line also into {@code lines}. */
    private static CompletableFuture<String> readAsync(InputStream in, LinkedBlockingQueue<String> lines) {
        CompletableFuture<String> f = new CompletableFuture<>();
        new Thread(() -> f.complete(read(in, lines)), "worker-output").start();
        return f;
    }

    private static String read(InputStream in, LinkedBlockingQueue<String> lines) {
        StringBuilder b = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String l;
            while ((l = r.readLine()) != null) {
                b.append(l).append('\n');
                lines.add(l);
            }
        } catch (IOException e) {
            b.append("(read failed: ").append(e).append(")");
        }
        return b.toString();
    }

    private static List<Worker> startThree(String group, String... flags) throws IOException {
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            workers.add(start(group, flags));
        }
        return workers;
    }

    private static void stopAll(List<Worker> workers) {
        for (Worker w : workers) {
            w.process().destroyForcibly();
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"manytoone, write", "onetomany, write", "onetomany, read"})
    void threeWorkersMoveAndVerifyEveryByteThroughEtcd(String scheme, String op) throws Exception {
        List<Worker> workers = startThree(scheme + "-" + op, "--scheme", scheme, "--op", op,
                "--block-sizes", "4K,1M", "--batch-sizes", "1,4", "--iterations", "20", "--warmup", "2",
                "--check-consistency", "--json");
        try {
            List<JsonNode> docs = new ArrayList<>();
            Set<String> ranks = new TreeSet<>();
            List<String> roles = new ArrayList<>();
            for (Worker w : workers) {
                assertThat(w.process().waitFor(240, TimeUnit.SECONDS)).as("worker ended").isTrue();
                String err = w.err().get(10, TimeUnit.SECONDS);
                String out = w.out().get(10, TimeUnit.SECONDS);
                assertThat(w.process().exitValue()).as(err + out).isZero();
                Matcher m = RANK.matcher(err);
                assertThat(m.find()).as(err).isTrue();
                ranks.add(m.group(1));
                roles.add(m.group(1) + " " + m.group(2));
                docs.add(JSON.readTree(out));
            }
            assertThat(ranks).containsExactly("0", "1", "2");
            String hub = scheme.equals("manytoone") ? "0 target" : "0 initiator";
            assertThat(roles).contains(hub);
            JsonNode rows = docs.get(0).get("rows");
            assertThat(rows).hasSize(4);
            long[][] shapes = {{4096, 1}, {1 << 20, 1}, {4096, 4}, {1 << 20, 4}};
            for (int i = 0; i < 4; i++) {
                JsonNode r = rows.get(i);
                assertThat(r.get("blockSize").asLong()).isEqualTo(shapes[i][0]);
                assertThat(r.get("batchSize").asLong()).isEqualTo(shapes[i][1]);
                assertThat(r.get("iterations").asInt()).isEqualTo(20);
                // two initiator-target pairs, 20 measured transfers each
                assertThat(r.get("bytes").asLong()).isEqualTo(2 * 20 * shapes[i][0] * shapes[i][1]);
                assertThat(r.get("mismatches").asLong()).isZero();
                assertThat(r.get("gbps").asDouble()).isPositive();
            }
            for (JsonNode doc : docs) {
                assertThat(doc.get("settings").get("mode").asText()).isEqualTo("fleet");
                assertThat(doc.get("settings").get("op").asText()).isEqualTo(op);
                assertThat(doc.get("mismatches").asLong()).isZero();
                assertThat(doc.get("rows")).as("every worker reports the same rows").isEqualTo(rows);
            }
        } finally {
            stopAll(workers);
        }
    }

    @ParameterizedTest(name = "rank {0}")
    @CsvSource({"0", "2"})
    void aWorkerThatVanishesMidRunEndsEveryOtherWorkerWithItsRank(String victimRank) throws Exception {
        String group = "vanish-" + victimRank;
        List<Worker> workers = startThree(group, "--scheme", "manytoone",
                "--block-sizes", "4K,8K,16K,32K,64K,128K,256K,512K", "--iterations", "2000", "--warmup", "2");
        try {
            Worker victim = null;
            for (Worker w : workers) {
                Matcher m = RANK.matcher(next(w.errLines(), "fleet worker rank"));
                assertThat(m.find()).isTrue();
                if (m.group(1).equals(victimRank)) {
                    victim = w;
                }
                // the first row is on its stdout: every worker is in the run
                next(w.outLines(), "4096 ");
            }
            assertThat(victim).isNotNull();
            victim.process().destroyForcibly();
            assertThat(victim.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
            for (Worker w : workers) {
                if (w == victim) {
                    continue;
                }
                assertThat(w.process().waitFor(60, TimeUnit.SECONDS)).as("ended after the victim vanished").isTrue();
                String err = w.err().get(10, TimeUnit.SECONDS);
                assertThat(w.process().exitValue()).as(err).isEqualTo(1);
                assertThat(err).as(err).contains("tcpx4j: bench failed: ")
                        .contains("worker rank " + victimRank + " left benchmark group '" + group + "'");
            }
        } finally {
            stopAll(workers);
        }
    }

    @org.junit.jupiter.api.Test
    void sigtermOnOneWorkerEndsItWith143AndTheOthersWithWhy() throws Exception {
        List<Worker> workers = startThree("sigterm", "--scheme", "onetomany",
                "--block-sizes", "4K,8K,16K,32K,64K,128K,256K,512K", "--iterations", "2000", "--warmup", "2");
        try {
            String[] ranks = new String[3];
            for (int i = 0; i < 3; i++) {
                Matcher m = RANK.matcher(next(workers.get(i).errLines(), "fleet worker rank"));
                assertThat(m.find()).isTrue();
                ranks[i] = m.group(1);
                next(workers.get(i).outLines(), "4096 ");
            }
            Worker stopped = workers.get(0);
            new ProcessBuilder("kill", "-TERM", Long.toString(stopped.process().pid())).inheritIO().start().waitFor();
            assertThat(stopped.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
            String stoppedErr = stopped.err().get(10, TimeUnit.SECONDS);
            assertThat(stopped.process().exitValue()).as(stoppedErr).isEqualTo(143);
            assertThat(stoppedErr).contains("tcpx4j: bench interrupted: ");
            for (Worker w : workers.subList(1, 3)) {
                assertThat(w.process().waitFor(60, TimeUnit.SECONDS)).as("ended after the signal").isTrue();
                String err = w.err().get(10, TimeUnit.SECONDS);
                assertThat(w.process().exitValue()).as(err).isEqualTo(1);
                assertThat(err).contains("worker rank " + ranks[0] + " failed: it was stopped (SIGINT or SIGTERM)");
            }
        } finally {
            stopAll(workers);
        }
    }

    /** The next line of {@code lines} that contains {@code text}, skipping others; fails after 240 s. */
    private static String next(LinkedBlockingQueue<String> lines, String text) throws InterruptedException {
        while (true) {
            String l = lines.poll(240, TimeUnit.SECONDS);
            assertThat(l).as("a line with '" + text + "' before the time runs out").isNotNull();
            if (l.contains(text)) {
                return l;
            }
        }
    }
}
