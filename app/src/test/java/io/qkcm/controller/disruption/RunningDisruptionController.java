package io.qkcm.controller.disruption;

import java.time.Instant;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.RealApiServer;
import io.vertx.core.Vertx;

/**
 * What the disruption controller's test classes share: one controller per class, started before its first
 * test on a clock the tests move (set to now before each test), stopped after the class.
 */
abstract class RunningDisruptionController {

    @Inject
    Vertx vertx;

    static KubernetesClient client;
    static DisruptionTestSupport.MutableClock clock;
    static ControllerHarness<DisruptionController> instance;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @BeforeEach
    void startController() throws InterruptedException {
        if (instance == null) {
            clock = new DisruptionTestSupport.MutableClock(Instant.now());
            instance = DisruptionTestSupport.startController(vertx, clock);
        }
        clock.set(Instant.now());
    }

    @AfterAll
    static void tearDown() {
        if (instance != null) {
            instance.close();
            instance = null;
        }
        client.close();
    }
}
