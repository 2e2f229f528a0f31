package io.tcpx4j.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The flags of several GPUs per process ({@code --device-list}, {@code --num-initiator-dev},
 * {@code --num-target-dev}, {@code --mode}) on a host of two GPUs ({@link HostGpusDouble}): what each side
 * gets, and one line and exit 2 for every bad value, before any engine starts.
 */
class DeviceFlagsTest {

    private static final GpuHost TWO = new HostGpusDouble(2);

    /** {@code tcpx4j bench ARGS} parsed on {@code gpus}, its settings validated, not run. */
    private static BenchSettings bench(GpuHost gpus, String... args) {
        CommandLine cl = Main.commandLine(Cli.io(new ByteArrayOutputStream(), new ByteArrayOutputStream(), Map.of()),
                gpus);
        List<String> full = new ArrayList<>(List.of("bench"));
        full.addAll(List.of(args));
        CommandLine.ParseResult r = cl.parseArgs(full.toArray(String[]::new));
        BenchCommand c = r.subcommand().commandSpec().commandLine().getCommand();
        return c.settings();
    }

    @Test
    void withoutDeviceFlagsEachGpuSideIsOnGpuZeroAndTheHostIsNotAsked() {
        BenchSettings s = bench(HostGpusDouble.unavailable("never asked"), "--mem", "vram");
        assertThat(s.initiatorDevices()).containsExactly(0);
        assertThat(s.targetDevices()).containsExactly(0);
        assertThat(s.targetDeviceCount()).isEqualTo(1);
        assertThat(s.initiatorBufferBytes()).isEqualTo(s.bufferBytes());
        BenchSettings dram = bench(TWO);
        assertThat(dram.initiatorDevices()).isEmpty();
        assertThat(dram.targetDevices()).isEmpty();
    }

    @Test
    void mgSpreadsEachSideOverTheFirstGpusOfTheListInItsOrder() {
        BenchSettings s = bench(TWO, "--mem", "vram", "--mode", "mg", "--device-list", "1,0",
                "--num-initiator-dev", "2", "--num-target-dev", "1", "--block-sizes", "4K,1M", "--batch-sizes", "3");
        assertThat(s.initiatorDevices()).containsExactly(1, 0);
        assertThat(s.targetDevices()).containsExactly(1);
        // 3 blocks of 1 MiB: 2 on the first GPU, 1 on the second; the target holds all 3
        assertThat(s.initiatorBufferBytes()).isEqualTo(2L << 20);
        assertThat(s.targetBufferBytes()).isEqualTo(3L << 20);
        BenchSettings all = bench(TWO, "--mem", "vram", "--mode", "MG", "--num_initiator_dev", "2",
                "--num_target_dev", "2", "--device_list", "all", "--batch-sizes", "2");
        assertThat(all.initiatorDevices()).containsExactly(0, 1);
        assertThat(all.targetDevices()).containsExactly(0, 1);
    }

    @Test
    void anInitiatorAsksItsTargetForItsGpuCountAndATargetOffersItsList() {
        BenchSettings initiator = bench(TWO, "--role", "initiator", "--peer", "h:1", "--mem", "vram", "--mode", "mg",
                "--num-target-dev", "2", "--batch-sizes", "2");
        assertThat(initiator.initiatorDevices()).containsExactly(0);
        assertThat(initiator.targetDevices()).as("the target's own").isEmpty();
        assertThat(initiator.targetDeviceCount()).isEqualTo(2);
        // one slot of 2 x 64 MiB blocks over 2 GPUs: 64 MiB each
        assertThat(initiator.targetBufferBytes()).isEqualTo(64L << 20);
        BenchSettings dramToVram = bench(TWO, "--role", "initiator", "--peer", "h:1", "--target-seg-type", "vram",
                "--mode", "mg", "--num-target-dev", "2", "--batch-sizes", "4");
        assertThat(dramToVram.initiatorDevices()).isEmpty();
        assertThat(dramToVram.targetDeviceCount()).isEqualTo(2);
    }

    @Test
    void slotsCountAsDescriptorsOfARow() {
        // batch 1, but 2 transfers in flight: each row has 2 blocks per side
        BenchSettings s = bench(TWO, "--mem", "vram", "--mode", "mg", "--num-initiator-dev", "2",
                "--num-target-dev", "2", "--pipeline-depth", "2");
        assertThat(s.initiatorDevices()).containsExactly(0, 1);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "--mem vram --device-list 5|--device-list: no GPU 5 on this host (CUDA reports 2 GPUs: 0..1)",
            "--mem vram --mode mg --num-initiator-dev 2 --num-target-dev 2 --batch-sizes 2 --device-list 0,3|no GPU 3 on this host",
            "--mem vram --device-list 1,1|--device-list 1,1 names GPU 1 twice",
            "--mem vram --device-list mlx5_0|--device-list: 'mlx5_0' is not a GPU ordinal",
            "--mem vram --device-list -1|'-1' is not a GPU ordinal",
            "--mem vram --device-list 0,,1|has an empty entry",
            "--mode mg --num-initiator-dev 2|--num-initiator-dev 2 spreads the initiator's buffers over GPUs, but they are host memory",
            "--mem vram --target-seg-type dram --mode mg --num-target-dev 2|--num-target-dev 2 spreads the target's buffers over GPUs, but they are host memory",
            "--mode mg|--mode mg spreads GPU memory over GPUs, but this run's buffers are host memory",
            "--device-list 0|--device-list names the GPUs of this process's buffers, but they are host memory",
            "--role initiator --peer h:1 --target-seg-type vram --device-list 0|(the target's GPUs are the target's own --device-list)",
            "--mem vram --num-initiator-dev 2|--num-initiator-dev 2 puts several GPUs on one side of one process: add --mode mg",
            "--mem vram --num-target-dev 2|--num-target-dev 2 puts several GPUs on one side",
            "--mem vram --mode mg --num-initiator-dev 2 --num-target-dev 2|--num-initiator-dev 2 spreads each row's descriptors over 2 GPUs, but a row of batch size 1 has 1 on the initiator",
            "--mem vram --mode mg --num-target-dev 2 --batch-sizes 4,1|--num-target-dev 2 spreads each row's descriptors over 2 GPUs, but a row of batch size 1 has 1 on the target",
            "--mem vram --mode mg --num-initiator-dev 3 --batch-sizes 3|--num-initiator-dev 3 needs 3 GPUs, but this host has 2",
            "--mem vram --mode mg --num-initiator-dev 2 --batch-sizes 2 --device-list 1|--num-initiator-dev 2 needs 2 GPUs, but --device-list 1 names 1",
            "--mem vram --device-list 0,1|--device-list 0,1 names 2 GPUs, but this run puts a side's buffers on at most 1 (--mode sg",
            "--mem vram --mode mg --num-initiator-dev 0|--num-initiator-dev must be 1..64, was 0",
            "--mem vram --mode mg --num-target-dev 65|--num-target-dev must be 1..64, was 65",
            "--mem vram --mode xg|--mode",
            "--role target --mem vram --mode mg --num-initiator-dev 2|--num-initiator-dev is the initiator's",
            "--etcd-endpoints h:2379 --mem vram --mode mg --num-initiator-dev 2 --num-target-dev 2|but a row of batch size 1 has 1 on the initiator (batch size x 1 target)",
            "--etcd-endpoints h:2379 --workers 3 --scheme onetomany --mem vram --mode mg --num-initiator-dev 3|has 2 on the initiator (batch size x 2 targets): give --batch-sizes of at least 2"})
    void badDeviceFlagsAreOneLineAndExitTwo(String lineAndMessage) {
        String[] parts = lineAndMessage.split("\\|");
        List<String> args = new ArrayList<>(List.of("bench"));
        args.addAll(List.of(parts[0].split(" ")));
        Cli.Result r = Cli.run(TWO, args.toArray(String[]::new));
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.errLines()).as(r.err()).hasSize(1);
        assertThat(r.err()).startsWith("tcpx4j: ").contains(parts[1]);
        assertThat(r.out()).isEmpty();
    }

    @Test
    void aManyToOneTargetCountsEachInitiatorsBlocks() {
        // 3 workers: the target has 2 initiators, so a batch of 1 puts 2 blocks of a row on it
        BenchSettings s = bench(TWO, "--etcd-endpoints", "h:2379", "--workers", "3", "--scheme", "manytoone",
                "--mem", "vram", "--mode", "mg", "--num-target-dev", "2");
        assertThat(s.targetDevices()).containsExactly(0, 1);
        assertThat(s.initiatorDevices()).containsExactly(0);
        // one-to-many: the initiator has a block of a row per target
        BenchSettings one = bench(TWO, "--etcd-endpoints", "h:2379", "--workers", "3", "--scheme", "onetomany",
                "--mem", "vram", "--mode", "mg", "--num-initiator-dev", "2");
        assertThat(one.initiatorDevices()).containsExactly(0, 1);
    }

    @Test
    void gpuFlagsThatCountGpusWhereCudaIsNotUsableSayItIsNotAvailable() {
        Cli.Result r = Cli.run(HostGpusDouble.unavailable("no driver here"), "bench", "--mem", "vram",
                "--device-list", "1");
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.errLines()).containsExactly("tcpx4j: --mem vram is not available on this host: CUDA is not usable"
                + " (no driver here); use --mem dram, or run 'tcpx4j doctor --mem vram'");
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "--device-list 0|--device-list names the GPUs of this process's buffers, but they are host memory",
            "--mem vram --device-list 2|--device-list: no GPU 2 on this host",
            "--mem vram --device-list 0,0|names GPU 0 twice"})
    void serveChecksItsDeviceListLikeBench(String lineAndMessage) {
        String[] parts = lineAndMessage.split("\\|");
        List<String> args = new ArrayList<>(List.of("serve", "--listen", "127.0.0.1:0"));
        args.addAll(List.of(parts[0].split(" ")));
        Cli.Result r = Cli.run(TWO, args.toArray(String[]::new));
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.errLines()).as(r.err()).hasSize(1);
        assertThat(r.err()).contains(parts[1]);
    }
}
