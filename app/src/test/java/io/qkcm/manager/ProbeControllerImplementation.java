package io.qkcm.manager;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;

/**
 * A probe implementing an upstream controller that is off by default (bootstrap-signer-controller),
 * enabled only by test profiles that list it in {@code getEnabledAlternatives()}.
 */
@Alternative
@ApplicationScoped
public class ProbeControllerImplementation implements ControllerImplementation {

    public static final String NAME = "bootstrap-signer-controller";

    final AtomicBoolean built = new AtomicBoolean();
    final AtomicBoolean started = new AtomicBoolean();
    final AtomicBoolean stopped = new AtomicBoolean();

    // accessors, not fields: tests see the bean through its client proxy

    public boolean wasBuilt() {
        return built.get();
    }

    public boolean wasStarted() {
        return started.get();
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Controller create(ControllerContext context) {
        built.set(true);
        return new Controller() {
            @Override
            public String name() {
                return NAME;
            }

            @Override
            public void start() {
                started.set(true);
            }

            @Override
            public void shutdown(Duration timeout) {
                stopped.set(true);
            }
        };
    }
}
