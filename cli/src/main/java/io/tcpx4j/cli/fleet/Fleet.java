package io.tcpx4j.cli.fleet;

import io.tcpx4j.api.TransferException;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Runs this process's worker of a fleet run: joins the benchmark group in etcd, starts the engine,
 * runs the plan with the other workers, and leaves the group. A failure here is told to the other
 * workers before it is thrown; a failure here that follows one elsewhere is reported as that one.
 *
 * <p>Thread-safe (stateless).
 */
public final class Fleet {

    /** Longest wait for one answer from etcd. */
    static final Duration ETCD_TIMEOUT = Duration.ofSeconds(5);
    /** How long a broken transfer waits for etcd to say which peer failed or vanished. */
    private static final Duration LEASE_WAIT = Duration.ofSeconds(FleetGroup.LEASE_TTL_SECONDS + 2);

    /** Starts this worker's engine once its rank and role are known. */
    @FunctionalInterface
    public interface NodeFactory {
        FleetNode start(int rank, boolean initiator);
    }

    private Fleet() {
    }

    /**
     * Runs the worker and returns the rows over all workers, in order (fewer when {@code stop} turned
     * true, which the other workers are told as this worker's failure).
     *
     * @param joinWait how long to wait for all workers to join
     * @param onRow    told of each row as all workers finish it
     * @param log      where the worker's one line about its rank and role goes
     */
    public static List<FleetRow> run(FleetOptions options, FleetPlan plan, NodeFactory nodes, Duration joinWait,
                                     BooleanSupplier stop, Consumer<FleetRow> onRow, PrintStream log)
            throws IOException, InterruptedException {
        EtcdClient etcd = new EtcdClient(options.endpoints(), ETCD_TIMEOUT);
        Scheme scheme = options.scheme();
        FleetGroup group = FleetGroup.join(etcd, options.group(), options.workers());
        FleetNode node = null;
        try {
            int rank = group.rank();
            List<Integer> targets = scheme.targetsOf(rank, group.workers());
            log.println("tcpx4j: fleet worker rank " + rank + " of " + group.workers() + " in benchmark group '"
                    + group.group() + "' at " + etcd.endpoints().get(0) + ", " + scheme.label() + ": "
                    + role(targets, scheme.initiatorsOf(rank, group.workers())));
            log.flush();
            node = nodes.start(rank, !targets.isEmpty());
            List<FleetRow> rows = new FleetRunner(group, scheme, plan, node, joinWait,
                    Duration.ofSeconds(options.barrierSeconds()), stop, onRow).run();
            if (stop.getAsBoolean()) {
                group.fail("it was stopped (SIGINT or SIGTERM) after " + rows.size() + " rows");
            } else {
                group.leave();
            }
            return rows;
        } catch (IOException | RuntimeException | Error e) {
            // a broken transfer is most often a peer that failed or died: ask etcd for long enough to know
            String elsewhere = e instanceof FleetException ? null
                    : e instanceof TransferException ? group.causeElsewhere(LEASE_WAIT) : group.causeElsewhere();
            if (elsewhere != null) {
                FleetException explained = new FleetException(elsewhere + " (then here: " + e.getMessage() + ")", e);
                group.fail(explained.getMessage());
                throw explained;
            }
            group.fail(String.valueOf(e.getMessage()));
            throw e;
        } catch (InterruptedException e) {
            group.fail("it was interrupted");
            throw e;
        } finally {
            group.close();
            if (node != null) {
                node.close();
            }
        }
    }

    private static String role(List<Integer> targets, List<Integer> initiators) {
        if (!targets.isEmpty()) {
            return "initiator of " + ranks(targets);
        }
        return "target of " + ranks(initiators);
    }

    private static String ranks(List<Integer> ranks) {
        return (ranks.size() == 1 ? "rank " : "ranks ")
                + ranks.stream().map(String::valueOf).collect(Collectors.joining(", "));
    }
}
