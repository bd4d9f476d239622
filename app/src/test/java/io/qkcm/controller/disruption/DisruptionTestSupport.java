package io.qkcm.controller.disruption;

import static org.awaitility.Awaitility.await;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetStatus;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.RealApiServer;
import io.vertx.core.Vertx;

/** What the disruption controller's tests share: objects as upstream's test builders make them, and waits. */
final class DisruptionTestSupport {

    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private DisruptionTestSupport() {
    }

    /** A clock the test sets; it stands still in between (upstream's fake clock). */
    static final class MutableClock extends Clock {
        private volatile Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        void set(Instant t) {
            now = t;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    /** The controller on {@code clock}, with upstream's stale-condition timeout, started. */
    static ControllerHarness<DisruptionController> startController(Vertx vertx, Clock clock)
            throws InterruptedException {
        return ControllerHarness.create(vertx, DisruptionController.NAME,
                context -> new DisruptionController(context, clock, StalePodDisruption.STALE_POD_DISRUPTION_TIMEOUT))
                .start();
    }

    static Map<String, String> fooBar() {
        return Map.of("foo", "bar");
    }

    /** Upstream's newMinAvailablePodDisruptionBudget / newMaxUnavailablePodDisruptionBudget. */
    static PodDisruptionBudget pdb(KubernetesClient client, String ns, String name, IntOrString minAvailable,
            IntOrString maxUnavailable, Map<String, String> selector) {
        PodDisruptionBudget pdb = new PodDisruptionBudgetBuilder().withNewMetadata().withName(name).withNamespace(ns)
                .endMetadata().withNewSpec().withMinAvailable(minAvailable).withMaxUnavailable(maxUnavailable)
                .withNewSelector().withMatchLabels(selector).endSelector().endSpec().build();
        return client.policy().v1().podDisruptionBudget().inNamespace(ns).resource(pdb).create();
    }

    static PodDisruptionBudget getPdb(KubernetesClient client, String ns, String name) {
        return client.policy().v1().podDisruptionBudget().inNamespace(ns).withName(name).get();
    }

    /** A controller reference to {@code owner}. */
    static OwnerReference controllerRef(HasMetadata owner) {
        return controllerRef(owner.getApiVersion(), owner.getKind(), owner.getMetadata().getName(),
                owner.getMetadata().getUid());
    }

    static OwnerReference controllerRef(String apiVersion, String kind, String name, String uid) {
        return new OwnerReferenceBuilder().withApiVersion(apiVersion).withKind(kind).withName(name).withUid(uid)
                .withController(true).build();
    }

    /** Upstream's newPod: labelled, with a Ready condition of status {@code ready} (not bound to a node). */
    static Pod pod(KubernetesClient client, String ns, String name, Map<String, String> labels, OwnerReference owner,
            boolean ready) {
        PodBuilder b = new PodBuilder().withNewMetadata().withName(name).withNamespace(ns).withLabels(labels)
                .endMetadata().withNewSpec().addNewContainer().withName("main").withImage("registry.k8s.io/pause:3.10")
                .endContainer().endSpec();
        if (owner != null) {
            b.editMetadata().withOwnerReferences(owner).endMetadata();
        }
        Pod created = client.pods().inNamespace(ns).resource(b.build()).create();
        return setReady(client, created, ready);
    }

    /** Writes the pod's Ready condition as a kubelet would. */
    static Pod setReady(KubernetesClient client, Pod pod, boolean ready) {
        Pod current = client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .get();
        List<PodCondition> conditions = new ArrayList<>();
        if (current.getStatus().getConditions() != null) {
            current.getStatus().getConditions().stream().filter(c -> !"Ready".equals(c.getType()))
                    .forEach(conditions::add);
        }
        conditions.add(new PodConditionBuilder().withType("Ready").withStatus(ready ? "True" : "False")
                .withLastTransitionTime(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString()).build());
        current.getStatus().setConditions(conditions);
        return client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(current).updateStatus();
    }

    /** An annotation change: the pod handler queues the pod's PDB (upstream syncs nothing on a controller's change). */
    static void poke(KubernetesClient client, Pod pod) {
        client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .edit(p -> {
                    if (p.getMetadata().getAnnotations() == null) {
                        p.getMetadata().setAnnotations(new java.util.HashMap<>());
                    }
                    p.getMetadata().getAnnotations().put("poke", Long.toString(System.nanoTime()));
                    return p;
                });
    }

    /** The status upstream's VerifyPdbStatus checks. */
    record Counts(int disruptionsAllowed, int currentHealthy, int desiredHealthy, int expectedPods) {
        static Counts of(PodDisruptionBudgetStatus s) {
            return new Counts(n(s.getDisruptionsAllowed()), n(s.getCurrentHealthy()), n(s.getDesiredHealthy()),
                    n(s.getExpectedPods()));
        }
    }

    /**
     * Waits until the PDB's status has the counts, has observed the PDB's generation and its condition
     * says the same (upstream's VerifyPdbStatus); returns the PDB.
     */
    static PodDisruptionBudget awaitStatus(KubernetesClient client, String ns, String name, int allowed, int current,
            int desired, int expected) {
        Counts want = new Counts(allowed, current, desired, expected);
        return await().atMost(TIMEOUT).until(() -> getPdb(client, ns, name), p -> p.getStatus() != null
                && Counts.of(p.getStatus()).equals(want)
                && p.getMetadata().getGeneration().equals(p.getStatus().getObservedGeneration())
                && BudgetStatus.conditionsAreUpToDate(p));
    }

    static List<Event> events(KubernetesClient client, String ns, String reason) {
        return client.v1().events().inNamespace(ns).list().getItems().stream().filter(e -> reason.equals(e.getReason()))
                .toList();
    }

    static Event awaitEvent(KubernetesClient client, String ns, String reason, String objectName) {
        return await().atMost(TIMEOUT).until(() -> events(client, ns, reason).stream()
                .filter(e -> objectName.equals(e.getInvolvedObject().getName())).findFirst().orElse(null),
                e -> e != null);
    }

    /** The HTTP answer to {@code POST pods/<name>/eviction} (policy/v1 Eviction). */
    record Answer(int code, String body) {
    }

    /**
     * The eviction request, from a client that does not retry: fabric8 retries a 429 with backoff, which
     * would turn a refusal into a long wait.
     */
    static Answer evict(KubernetesClient client, String ns, String name) throws Exception {
        String body = "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"" + name
                + "\",\"namespace\":\"" + ns + "\"}}";
        Config config = Config.fromKubeconfig(RealApiServer.get().kubeconfigYaml());
        config.setRequestRetryBackoffLimit(0);
        try (KubernetesClient once = new KubernetesClientBuilder().withConfig(config).build()) {
            String url = once.getMasterUrl().toString().replaceAll("/$", "") + "/api/v1/namespaces/" + ns + "/pods/"
                    + name + "/eviction";
            HttpRequest request = once.getHttpClient().newHttpRequestBuilder().uri(url)
                    .post("application/json", body).build();
            HttpResponse<String> response = once.getHttpClient().sendAsync(request, String.class).get(30,
                    TimeUnit.SECONDS);
            return new Answer(response.code(), response.body());
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("eviction of " + ns + "/" + name + " failed: " + e, e);
        }
    }

    private static int n(Integer v) {
        return v == null ? 0 : v;
    }
}
