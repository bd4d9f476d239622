package io.qkcm.testing;

import java.time.Duration;

import io.javaoperatorsdk.operator.api.config.BaseConfigurationService;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.josdk.Operators;
import io.qkcm.runtime.workqueue.WorkqueueMetrics;

/** Operators for a controller a test builds outside the application (JOSDK's base configuration). */
public final class TestOperators {

    private TestOperators() {
    }

    public static Operators create() {
        return new Operators(new BaseConfigurationService(), new WorkqueueMetrics(new SimpleMeterRegistry()),
                Duration.ofSeconds(5));
    }
}
