package io.qkcm.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashMap;
import java.util.Map;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * Points the application under test at the shared real API server. Controllers run in-process.
 * Test profiles choose which controllers run with {@code qkcm.controllers}; leader election is off
 * unless a test turns it on. Serving binds a random port on loopback.
 */
public class RealApiServerResource implements QuarkusTestResourceLifecycleManager {

    @Override
    public Map<String, String> start() {
        RealApiServer server = RealApiServer.get();
        Map<String, String> config = new HashMap<>();
        config.put("qkcm.kubeconfig", server.kubeconfig().toString());
        config.put("qkcm.leader-elect", "false");
        config.put("qkcm.bind-address", "127.0.0.1");
        config.put("qkcm.secure-port", Integer.toString(freePort()));
        return config;
    }

    /** A port free right now on loopback, so parallel test JVMs never fight over 10257. */
    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void stop() {
        // the API server is shared by all test classes of this JVM; a shutdown hook stops it
    }
}
