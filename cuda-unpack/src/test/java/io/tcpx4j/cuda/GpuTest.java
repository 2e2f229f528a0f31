package io.tcpx4j.cuda;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a test class that needs a GPU: tagged {@code gpu}, and reported as skipped (with the probe's
 * reason) where {@link Cuda#isAvailable()} is false, e.g. in CI. The one GPU condition of the build:
 * integration-tests uses it through this module's test-jar.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("gpu")
@ExtendWith(GpuTest.Condition.class)
public @interface GpuTest {

    /** Skips unless the CUDA probe succeeded. */
    final class Condition implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            return Cuda.isAvailable()
                    ? ConditionEvaluationResult.enabled("CUDA available: " + Cuda.deviceCount() + " GPU(s)")
                    : ConditionEvaluationResult.disabled("no usable GPU: " + Cuda.unavailabilityCause());
        }
    }
}
