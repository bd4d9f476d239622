package io.qkcm.controller.endpoint;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.EndpointAddress;
import io.fabric8.kubernetes.api.model.EndpointSubset;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.EndpointsBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.manager.ControllerManager;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.QueueProbe;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/** endpoints-controller against a real API server. */
@QuarkusTest
@TestProfile(EndpointsControllerProfile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class EndpointsControllerTest {

    private static final String MANAGED_BY = "endpoints.kubernetes.io/managed-by";
    private static final String HEADLESS = "service.kubernetes.io/headless";
    private static final String TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time";
    private static final String OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity";
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static Pod pod(KubernetesClient client, String ns, String name, Map<String, String> labels,
            ContainerPort... ports) {
        return client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name)
                .withLabels(labels).endMetadata().withNewSpec().addNewContainer().withName("c").withImage("nginx")
                .withPorts(ports).endContainer().endSpec().build()).create();
    }

    private static ContainerPort port(String name, int number) {
        return new ContainerPortBuilder().withName(name).withContainerPort(number).build();
    }

    private static ServiceBuilder service(String name, Map<String, String> selector) {
        return new ServiceBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withSelector(selector).addNewPort().withName("http").withPort(80)
                .withTargetPort(new IntOrString(8080)).endPort().endSpec();
    }

    private static Endpoints endpoints(KubernetesClient client, String ns, String name) {
        return client.endpoints().inNamespace(ns).withName(name).get();
    }

    private static List<String> ips(List<EndpointAddress> addresses) {
        return addresses == null ? List.of()
                : addresses.stream().map(EndpointAddress::getIp).sorted().collect(Collectors.toList());
    }

    private static String ip(Pod pod) {
        return pod.getStatus().getPodIP();
    }

    private static String rfc3339(Instant t) {
        return t.truncatedTo(ChronoUnit.SECONDS).toString();
    }

    @Test
    void addressesFollowPodReadiness() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = newNamespace(client, "ep-ready");
            TestKubelet kubelet = new TestKubelet(client);
            Map<String, String> app = Map.of("app", "web");
            Service svc = client.services().inNamespace(ns).resource(service("web", app).build()).create();
            Pod pod = pod(client, ns, "web-0", app, port("http", 8080));
            Instant base = Instant.now().truncatedTo(ChronoUnit.SECONDS);

            Pod ready = kubelet.running(pod, true, base);
            await().atMost(WAIT).untilAsserted(() -> {
                Endpoints ep = endpoints(client, ns, "web");
                assertThat(ep).isNotNull();
                assertThat(ep.getSubsets()).singleElement().satisfies(s -> {
                    assertThat(ips(s.getAddresses())).containsExactly(ip(ready));
                    assertThat(s.getNotReadyAddresses()).isEmpty();
                });
            });
            Endpoints ep = endpoints(client, ns, "web");
            EndpointSubset subset = ep.getSubsets().get(0);
            assertThat(subset.getPorts()).singleElement().satisfies(p -> {
                assertThat(p.getName()).isEqualTo("http");
                assertThat(p.getPort()).isEqualTo(8080);
                assertThat(p.getProtocol()).isEqualTo("TCP");
            });
            EndpointAddress address = subset.getAddresses().get(0);
            assertThat(address.getNodeName()).isEqualTo("test-node");
            assertThat(address.getHostname()).isNull();
            assertThat(address.getTargetRef().getKind()).isEqualTo("Pod");
            assertThat(address.getTargetRef().getNamespace()).isEqualTo(ns);
            assertThat(address.getTargetRef().getName()).isEqualTo("web-0");
            assertThat(address.getTargetRef().getUid()).isEqualTo(pod.getMetadata().getUid());
            assertThat(address.getTargetRef().getResourceVersion()).isNull();
            assertThat(ep.getMetadata().getLabels()).isEqualTo(Map.of(MANAGED_BY, "endpoint-controller"));
            // the first sync reports the Service's creation; one that already saw the pod, its Ready time
            assertThat(ep.getMetadata().getAnnotations().get(TRIGGER_TIME))
                    .isIn(svc.getMetadata().getCreationTimestamp(), rfc3339(base));
            assertThat(ep.getMetadata().getAnnotations()).doesNotContainKey(OVER_CAPACITY);

            Pod notReady = kubelet.running(ready, false, base.plusSeconds(10));
            await().atMost(WAIT).untilAsserted(() -> {
                Endpoints e = endpoints(client, ns, "web");
                assertThat(e.getSubsets()).singleElement().satisfies(s -> {
                    assertThat(s.getAddresses()).isEmpty();
                    assertThat(ips(s.getNotReadyAddresses())).containsExactly(ip(notReady));
                });
                assertThat(e.getMetadata().getAnnotations().get(TRIGGER_TIME)).isEqualTo(rfc3339(base.plusSeconds(10)));
            });

            Pod readyAgain = kubelet.running(notReady, true, base.plusSeconds(20));
            await().atMost(WAIT).untilAsserted(() -> {
                Endpoints e = endpoints(client, ns, "web");
                assertThat(e.getSubsets()).singleElement().satisfies(s -> {
                    assertThat(ips(s.getAddresses())).containsExactly(ip(readyAgain));
                    assertThat(s.getNotReadyAddresses()).isEmpty();
                });
                assertThat(e.getMetadata().getAnnotations().get(TRIGGER_TIME)).isEqualTo(rfc3339(base.plusSeconds(20)));
            });

            // a pod change the Endpoints do not show (a label outside the selector) writes nothing. Upstream
            // does not even queue the Service for it; a selected pod without an IP, created next on the same
            // watch, is queued: once that sync is done, the relabelling has been seen too, and neither wrote.
            String rv = endpoints(client, ns, "web").getMetadata().getResourceVersion();
            QueueProbe.Mark before = queue().mark();
            Conflicts.retry(() -> client.pods().inNamespace(ns).withName("web-0")
                    .edit(p -> new PodBuilder(p).editMetadata().addToLabels("unrelated", "x").endMetadata().build()));
            Pod pending = pod(client, ns, "web-pending", app, port("http", 8080));
            queue().awaitProcessedSince(before, cached(Pod.class, pending), WAIT);
            assertThat(endpoints(client, ns, "web").getMetadata().getResourceVersion()).isEqualTo(rv);
        }
    }

    @Test
    void terminatingPodsLeaveUnlessPublishNotReadyAddresses() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = newNamespace(client, "ep-term");
            TestKubelet kubelet = new TestKubelet(client);
            Map<String, String> app = Map.of("app", "term");
            client.services().inNamespace(ns).resource(service("plain", app).build()).create();
            client.services().inNamespace(ns).resource(service("publish", app).editSpec()
                    .withPublishNotReadyAddresses(true).endSpec().build()).create();
            Pod ready = kubelet.runningAndReady(pod(client, ns, "ready", app));
            Pod unready = kubelet.running(pod(client, ns, "unready", app), false, null);
            Pod leaving = kubelet.runningAndReady(pod(client, ns, "leaving", app));

            await().atMost(WAIT).untilAsserted(() -> {
                EndpointSubset plain = endpoints(client, ns, "plain").getSubsets().get(0);
                assertThat(ips(plain.getAddresses())).containsExactlyInAnyOrder(ip(ready), ip(leaving));
                assertThat(ips(plain.getNotReadyAddresses())).containsExactly(ip(unready));
                // publishNotReadyAddresses: every pod with an IP is an address
                EndpointSubset publish = endpoints(client, ns, "publish").getSubsets().get(0);
                assertThat(ips(publish.getAddresses())).containsExactlyInAnyOrder(ip(ready), ip(unready), ip(leaving));
                assertThat(publish.getNotReadyAddresses()).isEmpty();
            });

            // graceful deletion of a bound pod: it stays, terminating, until its kubelet (absent here) removes it
            client.pods().inNamespace(ns).withName("leaving").delete();
            await().atMost(WAIT).untilAsserted(() -> {
                EndpointSubset plain = endpoints(client, ns, "plain").getSubsets().get(0);
                assertThat(ips(plain.getAddresses())).containsExactly(ip(ready));
                assertThat(ips(plain.getNotReadyAddresses())).containsExactly(ip(unready));
            });
            assertThat(client.pods().inNamespace(ns).withName("leaving").get().getMetadata().getDeletionTimestamp())
                    .isNotNull();
            EndpointSubset publish = endpoints(client, ns, "publish").getSubsets().get(0);
            assertThat(ips(publish.getAddresses())).containsExactlyInAnyOrder(ip(ready), ip(unready), ip(leaving));

            client.pods().inNamespace(ns).withName("leaving").withGracePeriod(0).delete();
            await().atMost(WAIT).untilAsserted(() -> assertThat(
                    ips(endpoints(client, ns, "publish").getSubsets().get(0).getAddresses()))
                    .containsExactlyInAnyOrder(ip(ready), ip(unready)));
        }
    }

    @Test
    void namedTargetPortIsResolvedPerPod() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = newNamespace(client, "ep-named");
            TestKubelet kubelet = new TestKubelet(client);
            Map<String, String> app = Map.of("app", "named");
            client.services().inNamespace(ns).resource(service("named", app).editSpec().editFirstPort()
                    .withTargetPort(new IntOrString("web")).endPort().endSpec().build()).create();
            Pod a = kubelet.runningAndReady(pod(client, ns, "a", app, port("web", 8080)));
            Pod b = kubelet.runningAndReady(pod(client, ns, "b", app, port("web", 9090)));
            Pod c = kubelet.runningAndReady(pod(client, ns, "c", app, port("other", 8080)));

            await().atMost(WAIT).untilAsserted(() -> {
                List<EndpointSubset> subsets = endpoints(client, ns, "named").getSubsets();
                assertThat(subsets).hasSize(2);
                Map<Integer, List<String>> byPort = new HashMap<>();
                for (EndpointSubset s : subsets) {
                    assertThat(s.getPorts()).singleElement().satisfies(p -> assertThat(p.getName()).isEqualTo("http"));
                    byPort.put(s.getPorts().get(0).getPort(), ips(s.getAddresses()));
                }
                assertThat(byPort).isEqualTo(Map.of(8080, List.of(ip(a)), 9090, List.of(ip(b))));
            });
            // the pod without a port of that name is in no subset
            assertThat(endpoints(client, ns, "named").getSubsets()).flatExtracting(EndpointSubset::getAddresses)
                    .extracting(EndpointAddress::getIp).doesNotContain(ip(c));
        }
    }

    @Test
    void headlessServiceWithoutPortsGetsHostnamesAndAPortlessSubset() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = newNamespace(client, "ep-headless");
            TestKubelet kubelet = new TestKubelet(client);
            Map<String, String> app = Map.of("app", "hl");
            client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName("sub")
                    .withLabels(Map.of("team", "x")).endMetadata().withNewSpec().withClusterIP("None")
                    .withSelector(app).endSpec().build()).create();
            Pod named = kubelet.runningAndReady(client.pods().inNamespace(ns).resource(new PodBuilder()
                    .withNewMetadata().withName("h1").withLabels(app).endMetadata().withNewSpec().withHostname("host-1")
                    .withSubdomain("sub").addNewContainer().withName("c").withImage("nginx").endContainer().endSpec()
                    .build()).create());
            Pod elsewhere = kubelet.runningAndReady(client.pods().inNamespace(ns).resource(new PodBuilder()
                    .withNewMetadata().withName("h2").withLabels(app).endMetadata().withNewSpec().withHostname("host-2")
                    .withSubdomain("other").addNewContainer().withName("c").withImage("nginx").endContainer().endSpec()
                    .build()).create());

            await().atMost(WAIT).untilAsserted(() -> {
                Endpoints ep = endpoints(client, ns, "sub");
                assertThat(ep).isNotNull();
                assertThat(ep.getSubsets()).singleElement().satisfies(s -> {
                    assertThat(s.getPorts()).isEmpty();
                    assertThat(ips(s.getAddresses())).containsExactlyInAnyOrder(ip(named), ip(elsewhere));
                    Map<String, String> hostnames = new HashMap<>();
                    s.getAddresses().forEach(a -> hostnames.put(a.getTargetRef().getName(), a.getHostname()));
                    assertThat(hostnames).containsEntry("h1", "host-1").containsEntry("h2", null);
                });
                assertThat(ep.getMetadata().getLabels())
                        .isEqualTo(Map.of("team", "x", HEADLESS, "", MANAGED_BY, "endpoint-controller"));
            });
        }
    }

    @Test
    void labelsAreTheServicesPlusManagedBy() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = newNamespace(client, "ep-labels");
            // left over from someone else: wrong labels, including a headless label that no longer applies
            client.endpoints().inNamespace(ns).resource(new EndpointsBuilder().withNewMetadata().withName("lbl")
                    .withLabels(Map.of("old", "x", HEADLESS, "")).endMetadata().build()).create();
            client.services().inNamespace(ns).resource(service("lbl", Map.of("app", "lbl")).editMetadata()
                    .withLabels(Map.of("team", "a")).endMetadata().build()).create();
            await().atMost(WAIT).untilAsserted(() -> assertThat(endpoints(client, ns, "lbl").getMetadata().getLabels())
                    .isEqualTo(Map.of("team", "a", MANAGED_BY, "endpoint-controller")));

            Conflicts.retry(() -> client.services().inNamespace(ns).withName("lbl").edit(s -> new ServiceBuilder(s)
                    .editMetadata().withLabels(Map.of("team", "b", "tier", "c")).endMetadata().build()));
            await().atMost(WAIT).untilAsserted(() -> assertThat(endpoints(client, ns, "lbl").getMetadata().getLabels())
                    .isEqualTo(Map.of("team", "b", "tier", "c", MANAGED_BY, "endpoint-controller")));
        }
    }

    @Test
    void endpointsOfSelectorLessServicesAreNeverTouched() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = newNamespace(client, "ep-manual");
            TestKubelet kubelet = new TestKubelet(client);
            Map<String, String> app = Map.of("app", "manual");
            Pod pod = kubelet.runningAndReady(pod(client, ns, "p", app));
            client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName("manual")
                    .endMetadata().withNewSpec().addNewPort().withPort(80).endPort().endSpec().build()).create();
            Endpoints manual = client.endpoints().inNamespace(ns).resource(new EndpointsBuilder().withNewMetadata()
                    .withName("manual").withLabels(Map.of("mine", "yes")).endMetadata().addNewSubset()
                    .addNewAddress().withIp("192.0.2.10").endAddress().addNewPort().withPort(80).endPort().endSubset()
                    .build()).create();
            // a Service with a selector in the same namespace shows the controller has been through it
            client.services().inNamespace(ns).resource(service("probe", app).build()).create();
            await().atMost(WAIT).untilAsserted(() -> assertThat(endpoints(client, ns, "probe").getSubsets())
                    .flatExtracting(EndpointSubset::getAddresses).extracting(EndpointAddress::getIp)
                    .containsExactly(ip(pod)));
            // and a change of the selector-less Service itself is synced too, leaving its Endpoints alone
            QueueProbe.Mark before = queue().mark();
            Service touched = Conflicts.retry(() -> client.services().inNamespace(ns).withName("manual")
                    .edit(s -> new ServiceBuilder(s).editMetadata().addToLabels("touched", "now").endMetadata().build()));
            queue().awaitProcessedSince(before, cached(Service.class, touched), WAIT);

            Endpoints after = endpoints(client, ns, "manual");
            assertThat(after.getMetadata().getResourceVersion()).isEqualTo(manual.getMetadata().getResourceVersion());
            assertThat(after.getMetadata().getLabels()).isEqualTo(Map.of("mine", "yes"));
            assertThat(ips(after.getSubsets().get(0).getAddresses())).containsExactly("192.0.2.10");
        }
    }

    @Test
    void deletedEndpointsComeBackAndGoWithTheirService() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = newNamespace(client, "ep-delete");
            TestKubelet kubelet = new TestKubelet(client);
            Map<String, String> app = Map.of("app", "gone");
            Pod pod = kubelet.runningAndReady(pod(client, ns, "p", app));
            client.services().inNamespace(ns).resource(service("gone", app).build()).create();
            await().atMost(WAIT).untilAsserted(() -> assertThat(endpoints(client, ns, "gone")).isNotNull());
            String uid = endpoints(client, ns, "gone").getMetadata().getUid();

            client.endpoints().inNamespace(ns).withName("gone").delete();
            await().atMost(WAIT).untilAsserted(() -> {
                Endpoints ep = endpoints(client, ns, "gone");
                assertThat(ep).isNotNull();
                assertThat(ep.getMetadata().getUid()).isNotEqualTo(uid);
                assertThat(ips(ep.getSubsets().get(0).getAddresses())).containsExactly(ip(pod));
            });

            client.services().inNamespace(ns).withName("gone").delete();
            await().atMost(WAIT).untilAsserted(() -> assertThat(endpoints(client, ns, "gone")).isNull());
        }
    }

    @Test
    void overCapacityKeepsAThousandAddressesReadyFirst() throws Exception {
        long start = System.nanoTime();
        // more requests in flight than fabric8's default 5 per host: pod creation dominates this test
        Config config = Config.fromKubeconfig(Files.readString(RealApiServer.get().kubeconfig()));
        config.setMaxConcurrentRequestsPerHost(16);
        config.setRequestTimeout(120_000);
        try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
            String ns = newNamespace(client, "ep-capacity");
            Map<String, String> app = Map.of("app", "big");
            int total = 1001;
            int notReady = 6;
            String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
            ExecutorService pool = Executors.newFixedThreadPool(16);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int i = 0; i < total; i++) {
                    int n = i;
                    done.add(pool.submit(() -> {
                        // bound at creation and given its status in one write: two requests per pod
                        Pod created = client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata()
                                .withName("big-" + n).withLabels(app).endMetadata().withNewSpec()
                                .withNodeName("test-node").addNewContainer().withName("c").withImage("nginx")
                                .endContainer().endSpec().build()).create();
                        String ip = "10.250." + (n >> 8) + "." + (n & 0xff);
                        PodStatus status = new PodStatus();
                        status.setPhase("Running");
                        status.setPodIP(ip);
                        status.setPodIPs(List.of(new PodIP(ip)));
                        status.setConditions(List.of(new PodConditionBuilder().withType("Ready")
                                .withStatus(n < notReady ? "False" : "True").withLastTransitionTime(now).build()));
                        created.setStatus(status);
                        client.pods().inNamespace(ns).resource(created).updateStatus();
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
            System.out.printf("over-capacity: %d pods ready in %d ms%n", total, (System.nanoTime() - start) / 1_000_000);

            client.services().inNamespace(ns).resource(service("big", app).build()).create();
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                Endpoints ep = endpoints(client, ns, "big");
                assertThat(ep).isNotNull();
                assertThat(ep.getMetadata().getAnnotations()).containsEntry(OVER_CAPACITY, "truncated");
                assertThat(ep.getSubsets()).singleElement().satisfies(s -> {
                    assertThat(s.getAddresses()).hasSize(total - notReady);
                    assertThat(s.getNotReadyAddresses()).hasSize(1000 - (total - notReady));
                });
            });

            // one pod fewer: exactly at the cap, nothing truncated any more
            client.pods().inNamespace(ns).withName("big-0").withGracePeriod(0).delete();
            await().atMost(WAIT).untilAsserted(() -> {
                Endpoints ep = endpoints(client, ns, "big");
                assertThat(ep.getMetadata().getAnnotations()).doesNotContainKey(OVER_CAPACITY);
                assertThat(ep.getSubsets()).singleElement().satisfies(s -> {
                    assertThat(s.getAddresses()).hasSize(total - notReady);
                    assertThat(s.getNotReadyAddresses()).hasSize(notReady - 1);
                });
            });
            // the pods go in the background, so the other tests' caches need not carry them for long
            Thread cleanup = new Thread(() -> {
                try (KubernetesClient c = new KubernetesClientBuilder().withConfig(config).build()) {
                    c.pods().inNamespace(ns).withGracePeriod(0).delete();
                } catch (RuntimeException e) {
                    // best effort
                }
            }, "ep-capacity-cleanup");
            cleanup.setDaemon(true);
            cleanup.start();
        } finally {
            System.out.printf("over-capacity test took %d ms%n", (System.nanoTime() - start) / 1_000_000);
        }
    }

    @Inject
    Vertx vertx;

    @Test
    void leftoverEndpointsAreDeletedAtStartupExceptLeaderElectionRecords() throws Exception {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = newNamespace(client, "ep-leftover");
            TestKubelet kubelet = new TestKubelet(client);
            Map<String, String> app = Map.of("app", "kept");
            Pod pod = kubelet.runningAndReady(pod(client, ns, "p", app));
            client.services().inNamespace(ns).resource(service("kept", app).build()).create();
            await().atMost(WAIT).untilAsserted(() -> assertThat(endpoints(client, ns, "kept")).isNotNull());
            // Endpoints without a Service: once written by this controller, by hand, and a leader-election record
            QueueProbe.Mark before = queue().mark();
            for (Endpoints ep : List.of(
                    new EndpointsBuilder().withNewMetadata().withName("orphan")
                            .withLabels(Map.of(MANAGED_BY, "endpoint-controller")).endMetadata().build(),
                    new EndpointsBuilder().withNewMetadata().withName("by-hand").endMetadata().build(),
                    new EndpointsBuilder().withNewMetadata().withName("leader")
                            .withAnnotations(Map.of("control-plane.alpha.kubernetes.io/leader", "{}")).endMetadata()
                            .build())) {
                client.endpoints().inNamespace(ns).resource(ep).create();
            }
            // in steady state nothing looks for them: the controller ignores adds of Endpoints. The deletion
            // of one more Endpoints, which it does queue, comes after those adds on the same watch; once that
            // has been synced, any sync the adds had caused has happened as well.
            Endpoints marker = client.endpoints().inNamespace(ns).resource(new EndpointsBuilder().withNewMetadata()
                    .withName("marker").endMetadata().build()).create();
            client.endpoints().inNamespace(ns).withName("marker").delete();
            queue().awaitProcessedSince(before, QueueProbe.cacheHolds(informer(Endpoints.class), marker, true), WAIT);
            assertThat(endpoints(client, ns, "orphan")).isNotNull();
            assertThat(endpoints(client, ns, "by-hand")).isNotNull();

            // a controller starting up (as after a restart) sweeps them, whoever wrote them, as upstream
            try (ControllerHarness<EndpointsController> second = ControllerHarness.create(vertx, EndpointsController.NAME,
                    EndpointsController.CONTROLLER_NAME, Map.of(), EndpointsControllerDescriptor::newController).start()) {
                await().atMost(WAIT).untilAsserted(() -> {
                    assertThat(endpoints(client, ns, "orphan")).isNull();
                    assertThat(endpoints(client, ns, "by-hand")).isNull();
                });
                assertThat(endpoints(client, ns, "leader")).isNotNull();
                assertThat(ips(endpoints(client, ns, "kept").getSubsets().get(0).getAddresses()))
                        .containsExactly(ip(pod));
            }
        }
    }

    @Inject
    MeterRegistry registry;
    @Inject
    ControllerManager manager;

    /** The application's endpoints-controller queue. */
    private QueueProbe queue() {
        return QueueProbe.of(registry, EndpointsController.QUEUE);
    }

    private <T extends HasMetadata> SharedIndexInformer<T> informer(Class<T> type) {
        return manager.informers().informerFor(type);
    }

    /** The application's cache holds {@code object} as the API server returned it after a change. */
    private BooleanSupplier cached(Class<? extends HasMetadata> type, HasMetadata object) {
        return QueueProbe.cacheHolds(informer(type), object, false);
    }
}
