package io.tcpx4j.transport.tcpx;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.Map;

/**
 * Conformance-suite tests that assume something TCPX does not do, by name, with the reason. They are
 * reported as skipped (not passed) until the suite is fixed; the rule each one checks is covered by a
 * test of this module that drives TCPX correctly, named in the reason.
 */
final class TckIssues implements ExecutionCondition {

    private static final Map<String, String> SKIPPED = Map.of(
            "aReceiveHoldsItsSlotUntilConsumed",
            "TCK issue: its last isend is never tested, and TCPX moves a send only inside test (tcpxTest runs"
                    + " tcpxCommProgress, which sends the control message and hands the chunks to the helper"
                    + " threads; isend only queues the request), so the receive it waits for never completes."
                    + " The test peer does the same. The slot rule is covered by"
                    + " TcpxTransportTest.seventeenthRequestOnACommIsBusy (v5-v8).");

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        String reason = context.getTestMethod().map(m -> SKIPPED.get(m.getName())).orElse(null);
        return reason == null ? ConditionEvaluationResult.enabled("conforming test")
                : ConditionEvaluationResult.disabled(reason);
    }
}
