package io.qkcm.controller.endpoint;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/** Runs only endpoints-controller against the shared real API server. */
public class EndpointsControllerProfile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("qkcm.controllers", "endpoints-controller");
    }
}
