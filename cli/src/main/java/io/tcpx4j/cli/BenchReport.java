package io.tcpx4j.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.tcpx4j.api.ByteSize;

import java.util.List;
import java.util.Locale;

/**
 * The result of a bench run: its header line and the JSON document (the row formats are
 * {@link RowFormat}s).
 *
 * @param version  tcpx4j version
 * @param settings what ran
 * @param rows     one per (batch size, block size), in run order
 * @param interrupted true when SIGINT or SIGTERM ended the run early ({@code rows} holds the rows
 *                    finished by then), null otherwise
 */
@JsonPropertyOrder({"tool", "version", "settings", "interrupted", "rows", "mismatches"})
@JsonInclude(JsonInclude.Include.NON_NULL)
record BenchReport(String version, Settings settings, List<BenchRow> rows, Boolean interrupted) {

    BenchReport {
        rows = List.copyOf(rows);
    }

    /** A report of a run that was not interrupted. */
    BenchReport(String version, Settings settings, List<BenchRow> rows) {
        this(version, settings, rows, null);
    }

    /**
     * The settings as reported: sizes in bytes, counts as numbers, enums in lower case.
     *
     * @param mem               the memory of both sides when they are the same, else null
     * @param iterations        measured transfers per row as asked, null when scaled per row
     * @param warmup            warm-up transfers per row as asked, null when scaled per row
     * @param channels          the data channels of the connection: the fewer of what this side asked and
     *                          what the target offers (the engines settle on that), or what this side asked
     *                          where the target does not say
     * @param channelsRequested what this side asked ({@code --channels})
     * @param initiatorDevices  the GPUs of the initiator's buffers in block order, null for host memory
     * @param targetDevices     the same of the target's buffers (on an initiator as the target's buffers say,
     *                          once it welcomed the run; before that null)
     * @param ioThreads         the loopback transport's I/O threads of this side's engines ({@code --io-threads}),
     *                          null over another transport
     */
    @JsonPropertyOrder({"transport", "mode", "op", "mem", "initiatorMem", "targetMem", "initiatorDevices",
            "targetDevices", "blockSizes", "batchSizes", "iterations", "warmup", "warmupSeconds", "checkConsistency",
            "threads", "pipelineDepth", "channels", "channelsRequested", "chunkSize", "progress", "ioThreads", "layout",
            "busy", "cpus", "peer"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Settings(String transport, String mode, String op, String mem, String initiatorMem, String targetMem,
                    List<Long> blockSizes, List<Integer> batchSizes, Integer iterations, Integer warmup,
                    double warmupSeconds, boolean checkConsistency, int threads, int pipelineDepth, int channels,
                    int channelsRequested, int chunkSize, String progress, String layout, int busy,
                    List<Integer> cpus, String peer, List<Integer> initiatorDevices, List<Integer> targetDevices,
                    Integer ioThreads) {

        /** The settings of a run without busy loops, on CPUs not reported, with the channels asked for. */
        static Settings of(BenchSettings s, String peer) {
            String initiatorMem = lower(s.initiatorMemory());
            String targetMem = lower(s.targetMemory());
            return new Settings(s.transport().label(), lower(s.mode()), lower(s.op()),
                    initiatorMem.equals(targetMem) ? initiatorMem : null, initiatorMem, targetMem,
                    s.blockSizes(), s.batchSizes(), s.iterations() > 0 ? s.iterations() : null,
                    s.warmup() >= 0 ? s.warmup() : null, s.warmupSeconds(), s.checkConsistency(), s.threads(),
                    s.depth(), s.channels(), s.channels(), s.chunkSize(), s.callerProgress() ? "caller" : "thread",
                    s.reversed() ? "reversed" : "adjacent", 0, null, peer, orNull(s.initiatorDevices()),
                    orNull(s.targetDevices()), null);
        }

        /**
         * The same with {@code busy} busy loops ({@code --busy}) and the CPUs the bench process may run on
         * (null: unknown).
         */
        Settings withBusy(int busy, List<Integer> cpus) {
            return new Settings(transport, mode, op, mem, initiatorMem, targetMem, blockSizes, batchSizes, iterations,
                    warmup, warmupSeconds, checkConsistency, threads, pipelineDepth, channels, channelsRequested,
                    chunkSize, progress, layout, busy, cpus, peer, initiatorDevices, targetDevices, ioThreads);
        }

        /** The same with the loopback transport's I/O threads of this side's engines (null: another transport). */
        Settings withIoThreads(Integer count) {
            return new Settings(transport, mode, op, mem, initiatorMem, targetMem, blockSizes, batchSizes, iterations,
                    warmup, warmupSeconds, checkConsistency, threads, pipelineDepth, channels, channelsRequested,
                    chunkSize, progress, layout, busy, cpus, peer, initiatorDevices, targetDevices, count);
        }

        /** The same with the channels the connection runs on. */
        Settings withChannels(int agreed) {
            return new Settings(transport, mode, op, mem, initiatorMem, targetMem, blockSizes, batchSizes, iterations,
                    warmup, warmupSeconds, checkConsistency, threads, pipelineDepth, agreed, channelsRequested,
                    chunkSize, progress, layout, busy, cpus, peer, initiatorDevices, targetDevices, ioThreads);
        }

        /** The same with the GPUs of the target's buffers as the target published them (null: host memory). */
        Settings withTargetDevices(List<Integer> devices) {
            return new Settings(transport, mode, op, mem, initiatorMem, targetMem, blockSizes, batchSizes, iterations,
                    warmup, warmupSeconds, checkConsistency, threads, pipelineDepth, channels, channelsRequested,
                    chunkSize, progress, layout, busy, cpus, peer, initiatorDevices, devices, ioThreads);
        }

        private static List<Integer> orNull(List<Integer> devices) {
            return devices.isEmpty() ? null : devices;
        }

        private static String lower(Enum<?> e) {
            return e.name().toLowerCase(Locale.ROOT);
        }
    }

    @JsonProperty("tool")
    public String tool() {
        return "tcpx4j bench";
    }

    /** Total mismatched bytes over all rows, or null when consistency was not checked. */
    @JsonProperty("mismatches")
    public Long mismatches() {
        if (!settings.checkConsistency()) {
            return null;
        }
        return rows.stream().mapToLong(r -> r.mismatches() == null ? 0 : r.mismatches()).sum();
    }

    String toJson() {
        try {
            return Json.MAPPER.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot render the report as JSON", e);
        }
    }

    /** The header line describing the run. */
    String header() {
        Settings s = settings;
        String mem = s.mem() != null ? s.mem() : s.initiatorMem() + " -> " + s.targetMem();
        String channels = s.channels() + (s.channels() == 1 ? " channel" : " channels")
                + (s.channels() != s.channelsRequested() ? " (" + s.channelsRequested() + " asked)" : "");
        return "tcpx4j bench: " + s.op() + " " + mem + " over " + s.transport() + " (" + s.mode()
                + (s.peer() != null ? " -> " + s.peer() : "") + "), " + gpus("initiator", s.initiatorDevices())
                + gpus("target", s.targetDevices()) + channels + ", "
                + ByteSize.format(s.chunkSize()) + " chunks, " + s.progress() + "-driven progress"
                + (s.ioThreads() != null ? ", " + s.ioThreads() + " loopback I/O threads" : "")
                + (s.threads() > 1 ? ", " + s.threads() + " threads" : "")
                + (s.pipelineDepth() > 1 ? ", " + s.pipelineDepth() + " transfers in flight per thread" : "")
                + ("reversed".equals(s.layout()) ? ", descriptors reversed" : "")
                + (s.checkConsistency() ? ", consistency checked" : "")
                + (s.busy() > 0 ? ", " + BusyLoops.describe(s.busy(), s.cpus()) : "");
    }

    /** "initiator on GPUs 0,1, " for a side of GPU memory, "" for one of host memory or not known here. */
    private static String gpus(String side, List<Integer> devices) {
        if (devices == null) {
            return "";
        }
        return side + " on " + (devices.size() == 1 ? "GPU " : "GPUs ") + DeviceList.join(devices) + ", ";
    }

    /** The JSON mapper, made on first use: a run that prints a table never loads Jackson's databind. */
    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }
}
