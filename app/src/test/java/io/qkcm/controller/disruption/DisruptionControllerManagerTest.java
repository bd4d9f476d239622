package io.qkcm.controller.disruption;

import static io.qkcm.controller.disruption.DisruptionTestSupport.awaitEvent;
import static io.qkcm.controller.disruption.DisruptionTestSupport.awaitStatus;
import static io.qkcm.controller.disruption.DisruptionTestSupport.evict;
import static io.qkcm.controller.disruption.DisruptionTestSupport.fooBar;
import static io.qkcm.controller.disruption.DisruptionTestSupport.pdb;
import static io.qkcm.controller.disruption.DisruptionTestSupport.pod;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * disruption-controller started by the application's manager from its descriptor ({@code --controllers}),
 * on its own client and event source: a drain's evictions follow the budget it computes.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(DisruptionControllerManagerTest.Profile.class)
class DisruptionControllerManagerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "disruption");
        }
    }

    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    @Test
    void evictionsOfADrainFollowTheBudgetTheManagersControllerComputes() throws Exception {
        String ns = newNamespace(client, "pdb-manager");
        TestKubelet kubelet = new TestKubelet(client);
        pdb(client, ns, "web-pdb", new IntOrString(3), null, fooBar());
        Event noPods = awaitEvent(client, ns, "NoPods", "web-pdb");
        assertThat(noPods.getSource().getComponent()).isEqualTo("controllermanager");
        for (int i = 0; i < 4; i++) {
            kubelet.runningAndReady(pod(client, ns, "web-" + i, fooBar(), null, true));
        }
        awaitStatus(client, ns, "web-pdb", 1, 4, 3, 4);

        assertThat(evict(client, ns, "web-0").code()).isEqualTo(201);
        assertThat(evict(client, ns, "web-1").code()).isEqualTo(429);
        awaitStatus(client, ns, "web-pdb", 0, 3, 3, 4);
        assertThat(evict(client, ns, "web-1").code()).isEqualTo(429);
    }
}
