package io.qkcm.controller.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.testing.RealApiServer;

/** RealHistory against a real kube-apiserver: create (with collisions), list, adopt, release, update, delete. */
class RealHistoryTest {

    private static String raw(String annotation) {
        return GoJson.sorted(GoJson.parse("{\"spec\":{\"template\":{\"$patch\":\"replace\",\"metadata\":{\"annotations\":"
                + "{\"a\":\"" + annotation + "\"},\"creationTimestamp\":null,\"labels\":{\"app\":\"web\"}},"
                + "\"spec\":{\"containers\":[{\"image\":\"nginx\",\"name\":\"nginx\",\"resources\":{}}]}}}}"));
    }

    @Test
    void createsListsAdoptsReleasesUpdatesAndDeletes() throws Exception {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = "history-" + Long.toString(System.nanoTime(), 36);
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            StatefulSet set = ControllerHistoryTest.newStatefulSet("web", null, Map.of("app", "web"));
            set.getMetadata().setNamespace(ns);
            set.getMetadata().setUid(null);
            set.getSpec().setSelector(new LabelSelectorBuilder().addToMatchLabels("app", "web").build());
            set.getSpec().setServiceName("web");
            set = client.apps().statefulSets().inNamespace(ns).resource(set).create();
            StatefulSet other = ControllerHistoryTest.newStatefulSet("other", null, Map.of("app", "web"));
            other.getMetadata().setNamespace(ns);
            other.getMetadata().setUid(null);
            other.getSpec().setSelector(new LabelSelectorBuilder().addToMatchLabels("app", "web").build());
            other.getSpec().setServiceName("web");
            other = client.apps().statefulSets().inNamespace(ns).resource(other).create();

            SharedIndexInformer<ControllerRevision> informer = client.apps().controllerRevisions().inNamespace(ns)
                    .inform();
            try {
                History history = new RealHistory(client, informer);
                // data with characters Go escapes: stored and read back as upstream's bytes
                String raw1 = raw("<b> & \u2028");
                assertThat(raw1).contains("\\u003cb\\u003e \\u0026 \\u2028");
                ControllerRevision rev1 = ControllerHistory.newControllerRevision(set, "apps/v1", "StatefulSet",
                        Map.of("app", "web"), raw1, 1, 0);
                AtomicInteger collisions = new AtomicInteger();
                ControllerRevision created1 = history.createControllerRevision(set, rev1, collisions);
                assertThat(collisions.get()).isZero();
                assertThat(created1.getMetadata().getName())
                        .isEqualTo("web-" + ControllerHistory.hashControllerRevision(rev1, 0));
                assertThat(ControllerHistory.rawData(created1)).isEqualTo(raw1);
                assertThat(created1.getMetadata().getLabels()).containsEntry(ControllerHistory.REVISION_HASH_LABEL,
                        ControllerHistory.hashControllerRevision(rev1, 0));
                assertThat(io.qkcm.controller.ControllerRefManager.controllerOf(created1)).isNotNull();

                // the same data again: the existing revision, no collision
                ControllerRevision again = history.createControllerRevision(set, rev1, collisions);
                assertThat(again.getMetadata().getUid()).isEqualTo(created1.getMetadata().getUid());
                assertThat(collisions.get()).isZero();

                // a name taken by other data: collisionCount goes up and the next name is used
                String raw2 = raw("two");
                ControllerRevision rev2 = ControllerHistory.newControllerRevision(set, "apps/v1", "StatefulSet",
                        Map.of("app", "web"), raw2, 2, 0);
                ControllerRevision squatter = new ControllerRevision();
                squatter.setMetadata(new ObjectMetaBuilder().withName(rev2.getMetadata().getName()).withNamespace(ns)
                        .addToLabels("app", "elsewhere").build());
                squatter.setData(new com.fasterxml.jackson.databind.util.RawValue(raw("squatter")));
                squatter.setRevision(1L);
                client.apps().controllerRevisions().inNamespace(ns).resource(squatter).create();
                AtomicInteger collisions2 = new AtomicInteger();
                ControllerRevision created2 = history.createControllerRevision(set, rev2, collisions2);
                assertThat(collisions2.get()).isEqualTo(1);
                assertThat(created2.getMetadata().getName())
                        .isEqualTo("web-" + ControllerHistory.hashControllerRevision(rev2, 1));
                assertThat(ControllerHistory.rawData(created2)).isEqualTo(raw2);

                // an orphan matching the selector, and one controlled by another set
                ControllerRevision orphan = new ControllerRevision();
                orphan.setMetadata(new ObjectMetaBuilder().withName("orphan").withNamespace(ns).addToLabels("app", "web")
                        .build());
                orphan.setData(new com.fasterxml.jackson.databind.util.RawValue(raw("orphan")));
                orphan.setRevision(3L);
                client.apps().controllerRevisions().inNamespace(ns).resource(orphan).create();
                ControllerRevision othersRev = ControllerHistory.newControllerRevision(other, "apps/v1", "StatefulSet",
                        Map.of("app", "web"), raw("other"), 1, 0);
                history.createControllerRevision(other, othersRev, new AtomicInteger());

                StatefulSet parent = set;
                var selector = new LabelSelectorBuilder().addToMatchLabels("app", "web").build();
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                        history.listControllerRevisions(parent, selector)).extracting(r -> r.getMetadata().getName())
                        .containsExactlyInAnyOrder(created1.getMetadata().getName(), created2.getMetadata().getName(),
                                "orphan"));

                // adopt the orphan: upstream's UID-guarded controller reference
                ControllerRevision cachedOrphan = informer.getIndexer().getByKey(ns + "/orphan");
                ControllerRevision adopted = history.adoptControllerRevision(set, "apps/v1", "StatefulSet", cachedOrphan);
                assertThat(adopted.getMetadata().getOwnerReferences()).singleElement().satisfies(ref -> {
                    assertThat(ref.getUid()).isEqualTo(parent.getMetadata().getUid());
                    assertThat(ref.getKind()).isEqualTo("StatefulSet");
                    assertThat(ref.getApiVersion()).isEqualTo("apps/v1");
                    assertThat(ref.getController()).isTrue();
                    assertThat(ref.getBlockOwnerDeletion()).isTrue();
                });
                assertThatThrownBy(() -> history.adoptControllerRevision(parent, "apps/v1", "StatefulSet", adopted))
                        .hasMessageStartingWith("attempt to adopt revision owned by");

                // release it again
                ControllerRevision released = history.releaseControllerRevision(set, adopted);
                assertThat(released.getMetadata().getOwnerReferences()).isNullOrEmpty();

                // update the revision number: the data bytes stay upstream's
                ControllerRevision updated = history.updateControllerRevision(created1, 7);
                assertThat(updated.getRevision()).isEqualTo(7L);
                assertThat(ControllerHistory.rawData(client.apps().controllerRevisions().inNamespace(ns)
                        .withName(created1.getMetadata().getName()).get())).isEqualTo(raw1);
                // a stale copy conflicts, and is retried from the cache
                await().atMost(Duration.ofSeconds(30)).until(() -> {
                    ControllerRevision c = informer.getIndexer().getByKey(ns + "/" + created1.getMetadata().getName());
                    return c != null && c.getRevision() == 7L;
                });
                ControllerRevision retried = history.updateControllerRevision(created1, 9);
                assertThat(retried.getRevision()).isEqualTo(9L);
                assertThat(retried.getMetadata().getResourceVersion())
                        .isNotEqualTo(updated.getMetadata().getResourceVersion());

                // delete; releasing a deleted revision is no error
                history.deleteControllerRevision(created2);
                await().atMost(Duration.ofSeconds(30)).until(() -> client.apps().controllerRevisions().inNamespace(ns)
                        .withName(created2.getMetadata().getName()).get() == null);
                assertThat(history.releaseControllerRevision(set, created2)).isNull();
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                        history.listControllerRevisions(parent, selector)).extracting(r -> r.getMetadata().getName())
                        .containsExactlyInAnyOrder(created1.getMetadata().getName(), "orphan"));
            } finally {
                informer.stop();
                client.namespaces().withName(ns).delete();
            }
        }
    }
}
