package io.tcpx4j.cli;

import io.tcpx4j.api.MemoryKind;
import picocli.CommandLine.Option;

import java.util.List;

/**
 * {@code bench} flags of several GPUs per process, as nixlbench's {@code --mode}, {@code --num_initiator_dev},
 * {@code --num_target_dev}: with {@code --mode mg} the initiator's buffers spread over the first
 * {@code --num-initiator-dev} GPUs of {@code --device-list} and the target's over the first
 * {@code --num-target-dev}, one buffer per GPU, each row's descriptors going round them
 * ({@link io.tcpx4j.cli.layout.Stripes}). A two-host initiator asks its target for {@code --num-target-dev}
 * GPUs; the target takes the first of its own {@code --device-list}.
 */
final class DeviceOptions {

    /** Most GPUs per side: the CUDA device memory serves at most this many. */
    static final int MAX_DEVICES = 64;

    /** nixlbench's {@code --mode}: one GPU per process (side), or several. */
    enum GpuMode { SG, MG }

    @Option(names = {"--device-list", "--device_list"}, paramLabel = "N[,N...]|all",
            description = "GPU memory: the CUDA device ordinals this process's buffers go on, in order; each side"
                    + " takes the first of them (one, or --num-initiator-dev / --num-target-dev with --mode mg)."
                    + " Default: all (0, 1, ...).")
    String deviceList;

    @Option(names = {"--num-initiator-dev", "--num_initiator_dev"}, paramLabel = "N",
            description = "With --mode mg: GPUs the initiator's buffers spread over, 1.." + MAX_DEVICES
                    + ", one buffer each, a row's descriptors going round them. Default: 1.")
    Integer initiatorDevices;

    @Option(names = {"--num-target-dev", "--num_target_dev"}, paramLabel = "N",
            description = "With --mode mg: GPUs the target's buffers spread over, 1.." + MAX_DEVICES + " (an initiator"
                    + " asks its target for as many; a target given it serves only runs that ask for as many)."
                    + " Default: 1.")
    Integer targetDevices;

    @Option(names = "--mode", paramLabel = "sg|mg",
            description = "GPUs per side, as nixlbench's --mode: sg, one; mg, --num-initiator-dev and"
                    + " --num-target-dev. Default: sg.")
    GpuMode mode;

    /**
     * What the devices of a run depend on.
     *
     * @param mode           which sides this process holds
     * @param initiator      memory of the initiator's buffers
     * @param target         memory of the target's buffers (on an initiator: what it asks for)
     * @param minBatch       the smallest batch size of the run
     * @param initiatorSlots transfers of an initiator in a row whose descriptors have blocks of their own
     *                       (threads x pipeline depth; in a fleet run the targets of an initiator)
     * @param targetSlots    the same on a target (in a fleet run the initiators of a target)
     * @param initiatorSlot  what such a transfer is, for messages: "transfer slot", or "target" in a fleet run
     * @param targetSlot     the same on a target
     */
    record Run(BenchSettings.Mode mode, MemoryKind initiator, MemoryKind target, int minBatch, int initiatorSlots,
               int targetSlots, String initiatorSlot, String targetSlot) {
    }

    /**
     * The GPUs of each side.
     *
     * @param initiator      the ordinals of the initiator's buffers where this process holds them and they are
     *                       GPU memory, in block order; else empty
     * @param target         the same of the target's buffers; on a target ({@code --role target}) the GPUs
     *                       it offers its initiators, whose runs take the first of them
     * @param targetCount    GPUs of the target's buffers (1 for host memory); on an initiator what it asks for
     * @param targetRequired on a target, the GPUs every run must ask for ({@code --num-target-dev}), else null
     */
    record Resolved(List<Integer> initiator, List<Integer> target, int targetCount, Integer targetRequired) {
        Resolved {
            initiator = List.copyOf(initiator);
            target = List.copyOf(target);
        }
    }

    /**
     * Checks the flags against the run and the host and picks the GPUs of each side. The host's GPUs are
     * counted only where a flag names more than GPU 0.
     *
     * @throws IllegalArgumentException with a message for the user (a bad flag: exit 2)
     * @throws Unavailable              when GPU memory is not usable here and the flags need to count GPUs
     */
    Resolved resolve(Run run, GpuHost gpus) {
        int ni = initiatorDevices != null ? initiatorDevices : 1;
        int nt = targetDevices != null ? targetDevices : 1;
        range("--num-initiator-dev", initiatorDevices);
        range("--num-target-dev", targetDevices);
        DeviceList list = deviceList == null ? DeviceList.ALL : DeviceList.parse(deviceList);
        boolean initiatorHere = run.mode() != BenchSettings.Mode.TARGET;
        boolean targetHere = run.mode() != BenchSettings.Mode.INITIATOR;
        if (!initiatorHere && initiatorDevices != null) {
            throw new IllegalArgumentException("--num-initiator-dev is the initiator's: a target's buffers spread"
                    + " over the GPUs each initiator asks for (--num-target-dev there)");
        }
        GpuMode m = mode != null ? mode : GpuMode.SG;
        if (m == GpuMode.SG && (ni > 1 || nt > 1)) {
            String flag = ni > 1 ? "--num-initiator-dev " + ni : "--num-target-dev " + nt;
            throw new IllegalArgumentException(flag + " puts several GPUs on one side of one process: add --mode mg"
                    + " (sg, the default, is one GPU per side, as nixlbench's --mode SG is one per process)");
        }
        if (ni > 1 && run.initiator() == MemoryKind.DRAM) {
            throw new IllegalArgumentException("--num-initiator-dev " + ni + " spreads the initiator's buffers over"
                    + " GPUs, but they are host memory: use --mem vram or --initiator-seg-type vram");
        }
        if (nt > 1 && run.target() == MemoryKind.DRAM) {
            throw new IllegalArgumentException("--num-target-dev " + nt + " spreads the target's buffers over GPUs,"
                    + " but they are host memory: use --mem vram or --target-seg-type vram");
        }
        boolean initiatorGpus = initiatorHere && run.initiator() == MemoryKind.VRAM;
        boolean targetGpus = targetHere && run.target() == MemoryKind.VRAM;
        if (m == GpuMode.MG && run.initiator() == MemoryKind.DRAM && run.target() == MemoryKind.DRAM) {
            throw new IllegalArgumentException("--mode mg spreads GPU memory over GPUs, but this run's buffers are"
                    + " host memory: use --mem vram");
        }
        if (deviceList != null && !initiatorGpus && !targetGpus) {
            throw new IllegalArgumentException("--device-list names the GPUs of this process's buffers, but they are"
                    + " host memory" + (run.mode() == BenchSettings.Mode.INITIATOR && run.target() == MemoryKind.VRAM
                    ? " (the target's GPUs are the target's own --device-list)" : ": use --mem vram"));
        }
        if (initiatorHere && ni > (long) run.minBatch() * run.initiatorSlots()) {
            throw new IllegalArgumentException(tooFew("--num-initiator-dev", ni, run.minBatch(), run.initiatorSlots(),
                    run.initiatorSlot(), "initiator"));
        }
        if (run.mode() != BenchSettings.Mode.TARGET && nt > (long) run.minBatch() * run.targetSlots()) {
            throw new IllegalArgumentException(tooFew("--num-target-dev", nt, run.minBatch(), run.targetSlots(),
                    run.targetSlot(), "target"));
        }
        if (!initiatorGpus && !targetGpus) {
            return new Resolved(List.of(), List.of(), nt, null);
        }
        boolean offers = run.mode() == BenchSettings.Mode.TARGET && targetDevices == null;
        int needed = Math.max(initiatorGpus ? ni : 0, targetGpus ? nt : 0);
        List<Integer> ordinals;
        if (list.all() && needed == 1 && !offers) {
            ordinals = List.of(0); // GPU 0 is there wherever GPU memory is usable at all, which the engine checks
        } else {
            Backends.requireGpus(gpus);
            ordinals = list.resolve(gpus.count());
        }
        if (ordinals.size() < needed) {
            String flag = initiatorGpus && ni == needed ? "--num-initiator-dev " + ni : "--num-target-dev " + nt;
            throw new IllegalArgumentException(flag + " needs " + needed + " GPUs, but " + (list.all()
                    ? "this host has " + ordinals.size() : "--device-list " + list + " names " + ordinals.size()));
        }
        if (!list.all() && !offers && ordinals.size() > needed) {
            throw new IllegalArgumentException("--device-list " + list + " names " + ordinals.size() + " GPUs, but"
                    + " this run puts a side's buffers on at most " + needed + " (" + (m == GpuMode.SG
                    ? "--mode sg: add --mode mg and --num-initiator-dev / --num-target-dev"
                    : "--num-initiator-dev " + ni + ", --num-target-dev " + nt + ": name " + needed) + ")");
        }
        List<Integer> target = !targetGpus ? List.of() : offers ? ordinals : ordinals.subList(0, nt);
        return new Resolved(initiatorGpus ? ordinals.subList(0, ni) : List.of(), target,
                run.target() == MemoryKind.DRAM ? 1 : nt,
                run.mode() == BenchSettings.Mode.TARGET ? targetDevices : null);
    }

    private static void range(String flag, Integer n) {
        if (n != null && (n < 1 || n > MAX_DEVICES)) {
            throw new IllegalArgumentException(flag + " must be 1.." + MAX_DEVICES + ", was " + n);
        }
    }

    private static String tooFew(String flag, int n, int minBatch, int slots, String slot, String side) {
        return flag + " " + n + " spreads each row's descriptors over " + n + " GPUs, but a row of batch size "
                + minBatch + " has " + (long) minBatch * slots + " on the " + side + " (batch size x " + slots + " "
                + slot + (slots == 1 ? "" : "s") + "): give"
                + " --batch-sizes of at least " + ((n + slots - 1) / slots)
                + ("transfer slot".equals(slot) ? ", or more --num-threads or --pipeline-depth" : "");
    }
}
