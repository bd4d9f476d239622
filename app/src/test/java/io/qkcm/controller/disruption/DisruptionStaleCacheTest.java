package io.qkcm.controller.disruption;

import static io.qkcm.controller.disruption.DisruptionTestSupport.evict;
import static io.qkcm.controller.disruption.DisruptionTestSupport.fooBar;
import static io.qkcm.controller.disruption.DisruptionTestSupport.getPdb;
import static io.qkcm.controller.disruption.DisruptionTestSupport.pdb;
import static io.qkcm.controller.disruption.DisruptionTestSupport.pod;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Objects;
import java.util.logging.Level;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.PodUtil;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.LogCapture;
import io.qkcm.testing.LosingPodControl;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.StallingProxy;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * upstream's TestUpdatePDBStatusRetries against a real API server: evictions land while the controller's
 * cache is held back; its sync, computed from the old PDB and pods, must not overwrite what the
 * evictions wrote — its status write conflicts and goes back to the queue (no fail-safe write) — and the
 * next sync on the caught-up cache allows no disruption.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class DisruptionStaleCacheTest {

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    private static void awaitCachedPdb(ControllerHarness<DisruptionController> h, String ns, String name) {
        await().atMost(DisruptionTestSupport.TIMEOUT).until(() -> {
            PodDisruptionBudget cached = h.informers.informerFor(PodDisruptionBudget.class).getStore()
                    .getByKey(ns + "/" + name);
            return cached != null && Objects.equals(cached.getMetadata().getResourceVersion(),
                    getPdb(client, ns, name).getMetadata().getResourceVersion());
        });
    }

    /** Waits until the controller's cache holds the pod ready, or (with {@code deleting}) being deleted. */
    private static void awaitCachedPod(ControllerHarness<DisruptionController> h, String ns, String name,
            boolean deleting) {
        await().atMost(DisruptionTestSupport.TIMEOUT).until(() -> {
            Pod cached = h.informers.informerFor(Pod.class).getStore().getByKey(ns + "/" + name);
            return cached != null && (deleting ? cached.getMetadata().getDeletionTimestamp() != null
                    : PodUtil.isReady(cached));
        });
    }

    @Test
    void aStatusComputedFromAStaleCacheConflictsInsteadOfUndoingEvictions() throws Exception {
        String ns = newNamespace(client, "pdb-retries");
        String key = ns + "/foobar";
        TestKubelet kubelet = new TestKubelet(client);
        try (StallingProxy proxy = new StallingProxy(URI.create(client.getConfiguration().getMasterUrl()))) {
            Path kubeconfig = LosingPodControl.kubeconfigVia(proxy, client, "pdb-retries");
            try (ControllerHarness<DisruptionController> h = ControllerHarness.withInformersVia(vertx,
                    DisruptionController.NAME, kubeconfig, ctx -> new DisruptionController(ctx, Clock.systemUTC(),
                            StalePodDisruption.STALE_POD_DISRUPTION_TIMEOUT))) {
                // no workers: the test runs the syncs
                h.startInformers();
                pdb(client, ns, "foobar", new IntOrString(1), null, fooBar());
                for (String name : new String[] { "moe", "larry", "curly" }) {
                    kubelet.runningAndReady(pod(client, ns, name, fooBar(), null, true));
                }
                awaitCachedPod(h, ns, "curly", false);
                awaitCachedPdb(h, ns, "foobar");
                h.controller.sync(key);
                assertThat(getPdb(client, ns, "foobar").getStatus().getDisruptionsAllowed()).isEqualTo(2);
                awaitCachedPdb(h, ns, "foobar");

                // (A) one pod is deleted, and the cache sees it
                client.pods().inNamespace(ns).withName("moe").delete();
                awaitCachedPod(h, ns, "moe", true);
                // (B) two evictions while the cache is held back: the API server records them
                proxy.stall();
                assertThat(evict(client, ns, "larry").code()).isEqualTo(201);
                assertThat(evict(client, ns, "curly").code()).isEqualTo(201);
                assertThat(getPdb(client, ns, "foobar").getStatus().getDisruptionsAllowed()).isEqualTo(0);

                // computed from the old PDB and the old pods (1 allowed), the write is refused, not forced
                try (LogCapture log = LogCapture.start(DisruptionController.class.getName(), Level.WARNING)) {
                    assertThatThrownBy(() -> h.controller.sync(key)).satisfies(e -> assertThat(
                            ApiErrors.isConflict(e)).as(String.valueOf(e)).isTrue());
                    // a conflict is no failure to compute: no fail-safe attempted
                    assertThat(log.lines()).noneMatch(l -> l.contains("Failed to sync PDB"));
                }
                PodDisruptionBudget afterConflict = getPdb(client, ns, "foobar");
                assertThat(afterConflict.getStatus().getDisruptionsAllowed()).isEqualTo(0);
                assertThat(afterConflict.getStatus().getDisruptedPods()).containsOnlyKeys("larry", "curly");
                assertThat(BudgetStatus.findStatusCondition(afterConflict.getStatus().getConditions(),
                        BudgetStatus.DISRUPTION_ALLOWED).getReason()).isNotEqualTo(BudgetStatus.SYNC_FAILED);

                // (C) on the caught-up cache: every pod is being deleted, nothing is allowed
                proxy.resume();
                awaitCachedPdb(h, ns, "foobar");
                awaitCachedPod(h, ns, "larry", true);
                awaitCachedPod(h, ns, "curly", true);
                h.controller.sync(key);
                PodDisruptionBudget settled = getPdb(client, ns, "foobar");
                assertThat(DisruptionTestSupport.Counts.of(settled.getStatus()))
                        .isEqualTo(new DisruptionTestSupport.Counts(0, 0, 1, 3));
                assertThat(settled.getStatus().getDisruptedPods()).isNullOrEmpty();
            }
        }
    }
}
