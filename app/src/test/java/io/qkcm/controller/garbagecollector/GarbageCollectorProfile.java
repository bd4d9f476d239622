package io.qkcm.controller.garbagecollector;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/** Runs only the garbage collector against the shared real API server. */
public class GarbageCollectorProfile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("qkcm.controllers", "garbage-collector-controller");
    }
}
