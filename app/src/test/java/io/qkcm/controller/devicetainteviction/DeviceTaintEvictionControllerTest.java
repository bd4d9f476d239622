package io.qkcm.controller.devicetainteviction;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.resource.v1alpha3.DeviceTaintRule;
import io.fabric8.kubernetes.api.model.resource.v1alpha3.DeviceTaintRuleBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimSpecBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceSliceSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.util.resource.ResourceClaim;
import io.qkcm.controller.util.resource.ResourceSlice;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * device-taint-eviction-controller against a real API server (resource.k8s.io/v1 and v1alpha3, DRADeviceTaints
 * on), after upstream's device_taint_eviction_test.go: a pod using an allocated claim whose device has an
 * untolerated NoExecute taint is marked (DisruptionTarget, event) and deleted; NoSchedule taints and
 * tolerations without tolerationSeconds keep it; tolerationSeconds delays the deletion, and a taint removed
 * meanwhile cancels it with an event; a DeviceTaintRule's taint evicts as a slice's own does, on the devices
 * its CEL selectors (and its DeviceClass's) match, a selector's runtime error an event on the rule.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class DeviceTaintEvictionControllerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String NODE = "worker";

    @Inject
    Vertx vertx;

    static RealApiServer server;
    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        server = RealApiServer.withFlags(List.of("--runtime-config=resource.k8s.io/v1alpha3=true",
                "--feature-gates=DRADeviceTaints=true"));
        client = server.newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    /** Pods on a node no kubelet runs stay terminating: remove them, so the next test's controller sees none. */
    @AfterEach
    void removePods() {
        for (String ns : namespaces) {
            client.pods().inNamespace(ns).withGracePeriod(0).delete();
        }
        namespaces.clear();
    }

    private final List<String> namespaces = new ArrayList<>();

    private String namespace(String prefix) {
        String ns = newNamespace(client, prefix);
        namespaces.add(ns);
        return ns;
    }

    private ControllerHarness<DeviceTaintEvictionController> start() throws InterruptedException {
        return ControllerHarness.create(vertx, DeviceTaintEvictionController.NAME, DeviceTaintEvictionController.NAME,
                Map.of("qkcm.kubeconfig", server.kubeconfig().toString()),
                context -> DeviceTaintEvictionControllerDescriptor.newController(context, Clock.systemUTC())).start();
    }

    /** A driver name of its own per test, so that slices and rules of other tests never match. */
    private static String driver() {
        return "d" + UUID.randomUUID().toString().substring(0, 8) + ".example.com";
    }

    static DeviceTaint taint(String key, String effect, Instant added) {
        return new DeviceTaint(effect, key, added == null ? null : added.truncatedTo(ChronoUnit.SECONDS).toString(), "v");
    }

    static ResourceSlice slice(String driver, Map<String, List<DeviceTaint>> devices) {
        ResourceSlice slice = new ResourceSlice();
        slice.setMetadata(new ObjectMetaBuilder().withName(driver + "-slice").build());
        List<io.fabric8.kubernetes.api.model.resource.v1beta2.Device> list = new ArrayList<>();
        devices.forEach((name, taints) -> list.add(new DeviceBuilder().withName(name).withTaints(taints).build()));
        slice.setSpec(new ResourceSliceSpecBuilder().withDriver(driver).withNewPool().withName("pool").withGeneration(1L)
                .withResourceSliceCount(1L).endPool().withNodeName(NODE).withDevices(list).build());
        return client.resources(ResourceSlice.class).resource(slice).create();
    }

    /** A pod on the node using claim {@code name}, allocated {@code device} of {@code driver}, reserved for the pod. */
    static Pod podWithClaim(String ns, String name, String driver, String device, List<DeviceToleration> tolerations) {
        ResourceClaim claim = new ResourceClaim();
        claim.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(ns).build());
        claim.setSpec(new ResourceClaimSpecBuilder().withNewDevices().addNewRequest().withName("req").withNewExactly()
                .withDeviceClassName("gpu.example.com").endExactly().endRequest().endDevices().build());
        claim = client.resources(ResourceClaim.class).inNamespace(ns).resource(claim).create();
        Pod pod = client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withNodeName(NODE).addNewResourceClaim().withName("gpu").withResourceClaimName(name)
                .endResourceClaim().addNewContainer().withName("c").withImage("registry.k8s.io/pause:3.10")
                .withNewResources().addNewClaim().withName("gpu").endClaim().endResources().endContainer().endSpec()
                .build()).create();
        claim.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices()
                .withResults(new DeviceRequestAllocationResultBuilder().withRequest("req").withDriver(driver)
                        .withPool("pool").withDevice(device).withTolerations(tolerations).build())
                .endDevices().endAllocation().addNewReservedFor().withResource("pods").withName(name)
                .withUid(pod.getMetadata().getUid()).endReservedFor().build());
        client.resources(ResourceClaim.class).inNamespace(ns).resource(claim).updateStatus();
        return pod;
    }

    static Pod get(String ns, String name) {
        return client.pods().inNamespace(ns).withName(name).get();
    }

    static boolean evicted(String ns, String name) {
        Pod pod = get(ns, name);
        return pod == null || pod.getMetadata().getDeletionTimestamp() != null;
    }

    static PodCondition disruptionTarget(Pod pod) {
        return pod.getStatus().getConditions() == null ? null : pod.getStatus().getConditions().stream()
                .filter(c -> "DisruptionTarget".equals(c.getType())).findFirst().orElse(null);
    }

    static List<String> eventMessages(String ns, String pod) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> pod.equals(e.getInvolvedObject().getName()) && "DeviceTaintManagerEviction".equals(e.getReason()))
                .map(Event::getMessage).toList();
    }

    @Test
    void aPodUsingAnUntoleratedNoExecuteTaintedDeviceIsMarkedAndDeleted() throws Exception {
        String ns = namespace("dte-evict");
        String driver = driver();
        slice(driver, Map.of("dev-0", List.of(taint("broken", "NoExecute", null)), "dev-1", List.of()));
        Pod victim = podWithClaim(ns, "victim", driver, "dev-0", null);
        Pod healthy = podWithClaim(ns, "healthy", driver, "dev-1", null);
        try (var h = start()) {
            await().atMost(WAIT).until(() -> evicted(ns, "victim"));
            Pod pod = get(ns, "victim");
            PodCondition condition = disruptionTarget(pod);
            assertThat(condition.getStatus()).isEqualTo("True");
            assertThat(condition.getReason()).isEqualTo("DeletionByDeviceTaintManager");
            assertThat(condition.getMessage()).isEqualTo("Device Taint manager: deleting due to NoExecute taint");
            await().atMost(WAIT).until(() -> eventMessages(ns, "victim").contains("Marking for deletion"));
            Event event = client.v1().events().inNamespace(ns).list().getItems().stream()
                    .filter(e -> "victim".equals(e.getInvolvedObject().getName())).findFirst().orElseThrow();
            assertThat(event.getInvolvedObject().getUid()).isEqualTo(victim.getMetadata().getUid());
            assertThat(event.getSource().getComponent()).isEqualTo(DeviceTaintEvictionController.NAME);
            assertThat(h.controller.metrics().podDeletions()).isEqualTo(1.0);
            // the pod on the untainted device of the same pool stays
            assertThat(evicted(ns, "healthy")).isFalse();
            assertThat(h.controller.evictionScheduled(ns, "healthy")).isFalse();
            assertThat(healthy.getMetadata().getUid()).isEqualTo(get(ns, "healthy").getMetadata().getUid());
        }
    }

    @Test
    void noScheduleTaintsAndTolerationsWithoutSecondsKeepThePod() throws Exception {
        String ns = namespace("dte-keep");
        String driver = driver();
        slice(driver, Map.of("dev-0", List.of(taint("maintenance", "NoSchedule", null)),
                "dev-1", List.of(taint("broken", "NoExecute", null)),
                "dev-2", List.of(taint("broken", "NoExecute", null))));
        podWithClaim(ns, "no-schedule", driver, "dev-0", null);
        podWithClaim(ns, "tolerating", driver, "dev-1",
                List.of(new DeviceToleration("NoExecute", "broken", "Exists", null, null)));
        // a toleration of another key tolerates nothing
        podWithClaim(ns, "other-key", driver, "dev-2",
                List.of(new DeviceToleration("NoExecute", "other", "Exists", null, null)));
        try (var h = start()) {
            // the pod whose toleration does not match goes: the others have been looked at by then
            await().atMost(WAIT).until(() -> evicted(ns, "other-key"));
            assertThat(evicted(ns, "no-schedule")).isFalse();
            assertThat(evicted(ns, "tolerating")).isFalse();
            assertThat(h.controller.evictionScheduled(ns, "no-schedule")).isFalse();
            assertThat(h.controller.evictionScheduled(ns, "tolerating")).isFalse();
        }
    }

    @Test
    void tolerationSecondsDelayTheEvictionFromTheTaintsTime() throws Exception {
        String ns = namespace("dte-delay");
        String driver = driver();
        Instant added = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        slice(driver, Map.of("dev-0", List.of(taint("broken", "NoExecute", added))));
        podWithClaim(ns, "delayed", driver, "dev-0",
                List.of(new DeviceToleration("NoExecute", "broken", "Exists", 4L, null)));
        try (var h = start()) {
            await().atMost(WAIT).until(() -> h.controller.evictionScheduled(ns, "delayed"));
            if (Instant.now().isBefore(added.plusSeconds(3))) {
                assertThat(evicted(ns, "delayed")).isFalse();
            }
            await().atMost(WAIT).until(() -> evicted(ns, "delayed"));
            // not before the taint's time plus the toleration
            Pod pod = get(ns, "delayed");
            Instant deleted = Instant.parse(disruptionTarget(pod).getLastTransitionTime());
            assertThat(deleted).isAfterOrEqualTo(added.plusSeconds(4).minusSeconds(1));
        }
    }

    @Test
    void aTaintRemovedBeforeTheEvictionCancelsIt() throws Exception {
        String ns = namespace("dte-cancel");
        String driver = driver();
        ResourceSlice slice = slice(driver, Map.of("dev-0", List.of(taint("broken", "NoExecute", null))));
        podWithClaim(ns, "spared", driver, "dev-0",
                List.of(new DeviceToleration("NoExecute", "broken", "Exists", 600L, null)));
        try (var h = start()) {
            await().atMost(WAIT).until(() -> h.controller.evictionScheduled(ns, "spared"));
            slice.getSpec().getDevices().get(0).setTaints(List.of());
            client.resources(ResourceSlice.class).resource(slice).update();
            await().atMost(WAIT).until(() -> eventMessages(ns, "spared").contains("Cancelling deletion"));
            assertThat(h.controller.evictionScheduled(ns, "spared")).isFalse();
            assertThat(evicted(ns, "spared")).isFalse();
        }
    }

    @Test
    void aDeviceTaintRuleSelectingTheDeviceEvictsThePod() throws Exception {
        String ns = namespace("dte-rule");
        String driver = driver();
        slice(driver, Map.of("dev-0", List.of(), "dev-1", List.of()));
        podWithClaim(ns, "ruled", driver, "dev-0", null);
        podWithClaim(ns, "unruled", driver, "dev-1", null);
        try (var h = start()) {
            DeviceTaintRule rule = new DeviceTaintRuleBuilder().withNewMetadata().withName(driver + "-rule").endMetadata()
                    .withNewSpec().withNewDeviceSelector().withDriver(driver).withPool("pool").withDevice("dev-0")
                    .endDeviceSelector().withNewTaint().withKey("recalled").withEffect("NoExecute").endTaint().endSpec()
                    .build();
            client.resource(rule).create();
            await().atMost(WAIT).until(() -> evicted(ns, "ruled"));
            assertThat(disruptionTarget(get(ns, "ruled")).getReason()).isEqualTo("DeletionByDeviceTaintManager");
            assertThat(evicted(ns, "unruled")).isFalse();
            assertThat(h.controller.evictionScheduled(ns, "unruled")).isFalse();
        }
    }

    /** A slice of {@code driver} whose devices have the string attribute {@code model} (device name → model). */
    static ResourceSlice sliceWithModels(String driver, Map<String, String> models) {
        ResourceSlice slice = new ResourceSlice();
        slice.setMetadata(new ObjectMetaBuilder().withName(driver + "-slice").build());
        List<io.fabric8.kubernetes.api.model.resource.v1beta2.Device> list = new ArrayList<>();
        models.forEach((name, model) -> list.add(new DeviceBuilder().withName(name)
                .withAttributes(Map.of("model", new io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceAttributeBuilder()
                        .withString(model).build()))
                .build()));
        slice.setSpec(new ResourceSliceSpecBuilder().withDriver(driver).withNewPool().withName("pool").withGeneration(1L)
                .withResourceSliceCount(1L).endPool().withNodeName(NODE).withDevices(list).build());
        return client.resources(ResourceSlice.class).resource(slice).create();
    }

    static DeviceTaintRule celRule(String name, String driver, String deviceClass, String expression) {
        var selector = new io.fabric8.kubernetes.api.model.resource.v1alpha3.DeviceTaintSelectorBuilder().withDriver(driver)
                .withDeviceClassName(deviceClass);
        if (expression != null) {
            selector.addNewSelector().withNewCel().withExpression(expression).endCel().endSelector();
        }
        return client.resource(new DeviceTaintRuleBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withDeviceSelector(selector.build()).withNewTaint().withKey("recalled").withEffect("NoExecute").endTaint()
                .endSpec().build()).create();
    }

    /**
     * Upstream's tracker case "add-attribute-for-selector" through the controller: a rule's CEL selector on the
     * device's attribute (its driver the default domain) taints the matching device only, and the pod using it is
     * evicted.
     */
    @Test
    void aDeviceTaintRuleWithACelSelectorEvictsOnlyThePodOfTheMatchingDevice() throws Exception {
        String ns = namespace("dte-cel");
        String driver = driver();
        sliceWithModels(driver, Map.of("dev-0", "a100", "dev-1", "h100"));
        podWithClaim(ns, "selected", driver, "dev-0", null);
        podWithClaim(ns, "other", driver, "dev-1", null);
        try (var h = start()) {
            celRule(driver + "-rule", driver, null,
                    "device.attributes[\"" + driver + "\"].model == \"a100\" && device.driver == \"" + driver + "\"");
            await().atMost(WAIT).until(() -> evicted(ns, "selected"));
            assertThat(disruptionTarget(get(ns, "selected")).getReason()).isEqualTo("DeletionByDeviceTaintManager");
            assertThat(evicted(ns, "other")).isFalse();
            assertThat(h.controller.evictionScheduled(ns, "other")).isFalse();
        }
    }

    /**
     * Upstream's "add-taint-for-device-class": a rule naming a DeviceClass applies to the devices its CEL
     * selectors match.
     */
    @Test
    void aDeviceClassesCelSelectorsNarrowTheRule() throws Exception {
        String ns = namespace("dte-class");
        String driver = driver();
        sliceWithModels(driver, Map.of("dev-0", "a100", "dev-1", "h100"));
        podWithClaim(ns, "selected", driver, "dev-1", null);
        podWithClaim(ns, "other", driver, "dev-0", null);
        io.qkcm.controller.util.resource.DeviceClass deviceClass = new io.qkcm.controller.util.resource.DeviceClass();
        deviceClass.setMetadata(new ObjectMetaBuilder().withName(driver + "-class").build());
        deviceClass.setSpec(new io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceClassSpecBuilder().addNewSelector()
                .withNewCel().withExpression("device.attributes[\"" + driver + "\"].model.startsWith(\"h\")").endCel()
                .endSelector().build());
        client.resources(io.qkcm.controller.util.resource.DeviceClass.class).resource(deviceClass).create();
        try (var h = start()) {
            celRule(driver + "-rule", driver, driver + "-class", null);
            await().atMost(WAIT).until(() -> evicted(ns, "selected"));
            assertThat(evicted(ns, "other")).isFalse();
            assertThat(h.controller.evictionScheduled(ns, "other")).isFalse();
        }
    }

    /**
     * Upstream's "runtime-CEL-errors-skip-devices": a selector failing at runtime (a missing attribute) taints
     * no device, and the rule gets a CELRuntimeError warning from resource_slice_tracker.
     */
    @Test
    void aCelRuntimeErrorSkipsTheDeviceWithAnEventOnTheRule() throws Exception {
        String ns = namespace("dte-celerr");
        String driver = driver();
        sliceWithModels(driver, Map.of("dev-0", "a100"));
        podWithClaim(ns, "kept", driver, "dev-0", null);
        try (var h = start()) {
            String rule = driver + "-rule";
            celRule(rule, driver, null, "device.attributes[\"test.example.com\"].deviceAttr");
            await().atMost(WAIT).until(() -> !celEvents(rule).isEmpty());
            Event e = celEvents(rule).get(0);
            assertThat(e.getType()).isEqualTo("Warning");
            assertThat(e.getMessage()).isEqualTo("selector #0: runtime error: no such key: deviceAttr");
            assertThat(e.getSource().getComponent()).isEqualTo("resource_slice_tracker");
            assertThat(e.getInvolvedObject().getKind()).isEqualTo("DeviceTaintRule");
            assertThat(evicted(ns, "kept")).isFalse();
            assertThat(h.controller.evictionScheduled(ns, "kept")).isFalse();
        }
    }

    /**
     * Selectors calling the strings, regex, lists and optional libraries are evaluated: the rule matching one
     * device by them evicts its pod only, and a string library error is a CELRuntimeError in cel-go's words.
     */
    @Test
    void aSelectorCallingTheExtensionLibrariesTaintsTheDevicesItMatches() throws Exception {
        String ns = namespace("dte-celx");
        String driver = driver();
        sliceWithModels(driver, Map.of("dev-0", "A100-80GB", "dev-1", "H100-94GB"));
        podWithClaim(ns, "selected", driver, "dev-0", null);
        podWithClaim(ns, "other", driver, "dev-1", null);
        try (var h = start()) {
            String attrs = "device.attributes[\"" + driver + "\"]";
            celRule(driver + "-rule", driver, null, attrs + ".model.lowerAscii().find('^[a-z]100') == 'a100'"
                    + " && " + attrs + ".model.split('-')[1] == '80GB'"
                    + " && [" + attrs + ".model.size(), 3].max() == 9"
                    + " && " + attrs + ".?nothing.orValue('x') == 'x'");
            String failing = driver + "-failing";
            celRule(failing, driver, null, attrs + ".model.substring(20) == ''");
            await().atMost(WAIT).until(() -> evicted(ns, "selected"));
            assertThat(evicted(ns, "other")).isFalse();
            assertThat(h.controller.evictionScheduled(ns, "other")).isFalse();
            await().atMost(WAIT).until(() -> !celEvents(failing).isEmpty());
            assertThat(celEvents(failing).get(0).getMessage()).isEqualTo("selector #0: runtime error: index out of range: 20");
        }
    }

    static List<Event> celEvents(String rule) {
        return client.v1().events().inAnyNamespace().list().getItems().stream()
                .filter(e -> rule.equals(e.getInvolvedObject().getName()) && "CELRuntimeError".equals(e.getReason()))
                .toList();
    }
}
