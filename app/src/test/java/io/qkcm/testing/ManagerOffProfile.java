package io.qkcm.testing;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * The application without its controller manager: for tests that build their controllers by hand
 * ({@link ControllerHarness}), kill them and start others. One profile for all of them, so Quarkus
 * does not restart the application between such test classes.
 */
public class ManagerOffProfile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("qkcm.manager.enabled", "false");
    }
}
