package io.qkcm.controller.podautoscaler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.autoscaling.v2.CrossVersionObjectReference;
import io.qkcm.controller.podautoscaler.metrics.MetricsClient;
import io.qkcm.controller.podautoscaler.metrics.MetricsException;
import io.qkcm.controller.podautoscaler.metrics.PodMetric;
import io.qkcm.controller.podautoscaler.metrics.RestMetricsClient;
import io.qkcm.runtime.Json;

/**
 * Upstream's replica_calculator_test.go table, as pure tests of {@link ReplicaCalculator}: pods as the
 * lister would list them, metrics as the metrics APIs would return them (the resource metrics go through
 * the REST client's own conversion of PodMetrics items).
 */
class ReplicaCalculatorTest {

    static final String NS = "test-namespace";
    static final String PREFIX = "test-pod";
    static final Instant NOW = Instant.parse("2026-11-27T02:00:00Z");
    static final Instant ZERO = ReplicaCalculator.GO_ZERO_TIME;
    static final Instant HOT = NOW;
    static final Instant COOL = NOW.minus(Duration.ofMinutes(3));
    static final double TOLERANCE = 0.1;

    enum Type { OBJECT, OBJECT_PER_POD, EXTERNAL, EXTERNAL_PER_POD, PODS }

    /** One case of upstream's replicaCalcTestCase. */
    static final class Case {
        int currentReplicas;
        int expectedReplicas;
        String expectedError;
        Instant timestamp = ZERO;
        ReplicaCalculator.Tolerances tolerances;
        String container = "";
        String[] podReadiness;
        Instant[] podStartTime;
        String[] podPhase;
        boolean[] podDeletion;
        // resource
        String resource;
        String[] requests = {};
        long[][] levels;
        String[] podNames = {};
        int targetUtilization;
        int expectedUtilization;
        long expectedValue;
        // metric
        Type type = Type.OBJECT;
        String metricName;
        long[] metricLevels;
        CrossVersionObjectReference singleObject;
        LabelSelector selector;
        long targetUsage;
        long perPodTargetUsage;
        long expectedUsage;

        Case current(int c) {
            currentReplicas = c;
            return this;
        }

        Case expect(int e) {
            expectedReplicas = e;
            return this;
        }

        Case cpu(String[] requests, long[][] levels, int target, int expectedUtilization, long expectedValue) {
            this.resource = "cpu";
            this.requests = requests;
            this.levels = levels;
            this.targetUtilization = target;
            this.expectedUtilization = expectedUtilization;
            this.expectedValue = expectedValue;
            return this;
        }

        Case metric(Type type, long[] levels, long target, long expectedUsage) {
            this.type = type;
            this.metricName = "qps";
            this.metricLevels = levels;
            if (type == Type.OBJECT_PER_POD || type == Type.EXTERNAL_PER_POD) {
                this.perPodTargetUsage = target;
            } else {
                this.targetUsage = target;
            }
            this.expectedUsage = expectedUsage;
            if (type == Type.OBJECT || type == Type.OBJECT_PER_POD) {
                singleObject = new CrossVersionObjectReference("apps/v1", "Deployment", "some-deployment");
            }
            if (type == Type.EXTERNAL || type == Type.EXTERNAL_PER_POD) {
                selector = new LabelSelector(null, Map.of("label", "value"));
            }
            return this;
        }

        Case readiness(String... r) {
            podReadiness = r;
            return this;
        }

        Case startTimes(Instant... t) {
            podStartTime = t;
            return this;
        }

        Case phases(String... p) {
            podPhase = p;
            return this;
        }

        Case deleting(boolean... d) {
            podDeletion = d;
            return this;
        }

        Case container(String c) {
            container = c;
            return this;
        }

        Case error(String e) {
            expectedError = e;
            return this;
        }

        List<Pod> pods() {
            int count = currentReplicas;
            if (podPhase != null && podPhase.length > count) {
                count = podPhase.length;
            }
            List<Pod> pods = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String ready = podReadiness != null && i < podReadiness.length ? podReadiness[i] : "True";
                Instant start = podStartTime != null ? podStartTime[i] : ZERO;
                String phase = podPhase != null ? podPhase[i] : "Running";
                boolean deleted = podDeletion != null && podDeletion[i];
                ContainerBuilder c1 = new ContainerBuilder().withName("container1");
                ContainerBuilder c2 = new ContainerBuilder().withName("container2");
                if (resource != null && i < requests.length) {
                    c1.withNewResources().addToRequests(resource, new Quantity(requests[i])).endResources();
                    c2.withNewResources().addToRequests(resource, new Quantity(requests[i])).endResources();
                }
                PodBuilder pod = new PodBuilder().withNewMetadata().withName(PREFIX + "-" + i).withNamespace(NS)
                        .addToLabels("name", PREFIX).endMetadata()
                        .withNewSpec().withContainers(c1.build(), c2.build()).endSpec()
                        .withNewStatus().withPhase(phase).withStartTime(start.toString())
                        .addNewCondition().withType("Ready").withStatus(ready).endCondition().endStatus();
                if (deleted) {
                    pod.editMetadata().withDeletionTimestamp(NOW.toString()).endMetadata();
                }
                pods.add(pod.build());
            }
            return pods;
        }

        /** The PodMetricsList items the resource metrics API would return. */
        JsonNode podMetricsItems() {
            ArrayNode items = Json.mapper().createArrayNode();
            for (int i = 0; i < levels.length; i++) {
                String name = podNames.length > i ? podNames[i] : PREFIX + "-" + i;
                ObjectNode m = items.addObject();
                m.putObject("metadata").put("name", name).put("namespace", NS);
                m.put("timestamp", timestamp.toString());
                m.put("window", "1m0s");
                ArrayNode containers = m.putArray("containers");
                for (int j = 0; j < 2; j++) {
                    ObjectNode c = containers.addObject();
                    if (j < levels[i].length) {
                        c.put("name", "container" + (j + 1));
                        c.putObject("usage").put(resource, levels[i][j] + "m");
                    } else {
                        c.put("name", "");
                        c.putObject("usage");
                    }
                }
            }
            return items;
        }
    }

    static long[][] podLevels(long... perContainer) {
        long[][] out = new long[perContainer.length][];
        for (int i = 0; i < perContainer.length; i++) {
            out[i] = new long[] {perContainer[i], perContainer[i]};
        }
        return out;
    }

    static String[] ones(int n) {
        String[] r = new String[n];
        java.util.Arrays.fill(r, "1.0");
        return r;
    }

    static Case tc() {
        return new Case();
    }

    /** The metrics APIs' answers for a case, as the REST client would convert them. */
    static MetricsClient metricsFor(Case tc) {
        return new MetricsClient() {
            @Override
            public PodMetrics getResourceMetric(String resource, String namespace, String selector, String container)
                    throws MetricsException {
                if (tc.resource == null) {
                    throw new MetricsException("unable to fetch metrics from resource metrics API: no pod resource metrics specified in test client");
                }
                assertThat(selector).isEqualTo("name=" + PREFIX);
                JsonNode items = tc.podMetricsItems();
                if (items.size() == 0) {
                    throw new MetricsException("no metrics returned from resource metrics API");
                }
                Map<String, PodMetric> res = container.isEmpty() ? RestMetricsClient.podMetrics(items, resource)
                        : RestMetricsClient.containerMetrics(items, resource, container);
                return new PodMetrics(res, tc.timestamp);
            }

            @Override
            public PodMetrics getRawMetric(String metricName, String namespace, String selector, String metricSelector) {
                assertThat(metricName).isEqualTo(tc.metricName);
                Map<String, PodMetric> res = new HashMap<>();
                for (int i = 0; i < tc.metricLevels.length; i++) {
                    res.put(PREFIX + "-" + i, new PodMetric(tc.timestamp, Duration.ofMinutes(1), tc.metricLevels[i]));
                }
                return new PodMetrics(res, tc.timestamp);
            }

            @Override
            public ObjectMetric getObjectMetric(String metricName, String namespace, CrossVersionObjectReference ref,
                    String metricSelector) {
                assertThat(metricName).isEqualTo(tc.metricName);
                assertThat(ref.getName()).isEqualTo(tc.singleObject.getName());
                return new ObjectMetric(tc.metricLevels[0], tc.timestamp);
            }

            @Override
            public ExternalMetrics getExternalMetric(String metricName, String namespace, String selector) {
                assertThat(metricName).isEqualTo(tc.metricName);
                assertThat(selector).isEqualTo(PodSelector.format(tc.selector));
                List<Long> values = new ArrayList<>();
                for (long l : tc.metricLevels) {
                    values.add(l);
                }
                return new ExternalMetrics(values, tc.timestamp);
            }
        };
    }

    static ReplicaCalculator calculator(Case tc) {
        List<Pod> pods = tc.pods();
        return new ReplicaCalculator(metricsFor(tc),
                (ns, sel) -> pods.stream().filter(p -> sel.matches(p.getMetadata().getLabels())).toList(),
                Duration.ofMinutes(2), Duration.ofSeconds(10), true, Clock.fixed(NOW, ZoneOffset.UTC));
    }

    /** Upstream's runTest. */
    static void run(Case tc) throws Exception {
        ReplicaCalculator calc = calculator(tc);
        PodSelector selector = PodSelector.parse("name=" + PREFIX);
        ReplicaCalculator.Tolerances tol = tc.tolerances != null ? tc.tolerances
                : new ReplicaCalculator.Tolerances(TOLERANCE, TOLERANCE);
        if (tc.resource != null) {
            if (tc.expectedError != null) {
                assertThatThrownBy(() -> calc.getResourceReplicas(tc.currentReplicas, tc.targetUtilization, tc.resource, tol,
                        NS, selector, tc.container)).hasMessageContaining(tc.expectedError);
                return;
            }
            ReplicaCalculator.ResourceReplicas r = calc.getResourceReplicas(tc.currentReplicas, tc.targetUtilization,
                    tc.resource, tol, NS, selector, tc.container);
            assertThat(r.replicas()).as("replicas").isEqualTo(tc.expectedReplicas);
            assertThat(r.utilization()).as("utilization").isEqualTo(tc.expectedUtilization);
            assertThat(r.rawUtilization()).as("raw value").isEqualTo(tc.expectedValue);
            assertThat(r.timestamp()).isEqualTo(tc.timestamp);
            return;
        }
        String metricSelector = tc.selector == null ? "" : PodSelector.format(tc.selector);
        ReplicaCalculator.UsageReplicas r = switch (tc.type) {
            case OBJECT -> calc.getObjectMetricReplicas(tc.currentReplicas, tc.targetUsage, tc.metricName, tol, NS,
                    tc.singleObject, selector, "");
            case OBJECT_PER_POD -> calc.getObjectPerPodMetricReplicas(tc.currentReplicas, tc.perPodTargetUsage,
                    tc.metricName, tol, NS, tc.singleObject, "");
            case EXTERNAL -> calc.getExternalMetricReplicas(tc.currentReplicas, tc.targetUsage, tc.metricName, tol, NS,
                    metricSelector, GoFormat.labelSelector(tc.selector), selector);
            case EXTERNAL_PER_POD -> calc.getExternalPerPodMetricReplicas(tc.currentReplicas, tc.perPodTargetUsage,
                    tc.metricName, tol, NS, metricSelector, GoFormat.labelSelector(tc.selector));
            case PODS -> calc.getMetricReplicas(tc.currentReplicas, tc.targetUsage, tc.metricName, tol, NS, selector, "");
        };
        assertThat(r.replicas()).as("replicas").isEqualTo(tc.expectedReplicas);
        assertThat(r.usage()).as("usage").isEqualTo(tc.expectedUsage);
    }

    @Test
    void disjointResourcesMetrics() throws Exception {
        Case c = tc().current(1).error("no metrics returned matched known pods").cpu(ones(1), podLevels(100), 100, 0, 0);
        c.podNames = new String[] {"an-older-pod-name"};
        run(c);
    }

    @Test
    void scaleUp() throws Exception {
        run(tc().current(3).expect(5).cpu(ones(3), podLevels(300, 500, 700), 30, 50, 2 * 500));
    }

    @Test
    void containerScaleUp() throws Exception {
        run(tc().current(3).expect(5).container("container2")
                .cpu(ones(3), new long[][] {{1000, 300}, {1000, 500}, {1000, 700}}, 30, 50, 500));
    }

    @Test
    void scaleUpUnreadyLessScale() throws Exception {
        run(tc().current(3).expect(4).readiness("False", "True", "True")
                .cpu(ones(3), podLevels(300, 500, 700), 30, 60, 2 * 600));
    }

    @Test
    void scaleUpContainerHotCpuLessScale() throws Exception {
        run(tc().current(3).expect(4).startTimes(HOT, COOL, COOL).container("container2")
                .cpu(ones(3), new long[][] {{0, 300}, {0, 500}, {0, 700}}, 30, 60, 600));
    }

    @Test
    void scaleUpHotCpuLessScale() throws Exception {
        run(tc().current(3).expect(4).startTimes(HOT, COOL, COOL).cpu(ones(3), podLevels(300, 500, 700), 30, 60, 2 * 600));
    }

    @Test
    void scaleUpUnreadyNoScale() throws Exception {
        run(tc().current(3).expect(3).readiness("True", "False", "False")
                .cpu(ones(3), podLevels(400, 500, 700), 30, 40, 2 * 400));
    }

    @Test
    void externalPerPodMetricReplicaOverflow() throws Exception {
        run(tc().current(1).expect(Integer.MAX_VALUE).metric(Type.EXTERNAL_PER_POD, new long[] {Long.MAX_VALUE}, 1,
                Long.MAX_VALUE));
    }

    @Test
    void externalPerPodMetricUsageOverflow() throws Exception {
        run(tc().current(1).expect(1).metric(Type.EXTERNAL_PER_POD, new long[] {Long.MAX_VALUE}, Long.MAX_VALUE,
                Long.MAX_VALUE));
    }

    @Test
    void scaleHotCpuNoScale() throws Exception {
        run(tc().current(3).expect(3).readiness("True", "False", "False").startTimes(COOL, HOT, HOT)
                .cpu(ones(3), podLevels(400, 500, 700), 30, 40, 2 * 400));
    }

    @Test
    void scaleUpIgnoresFailedPods() throws Exception {
        run(tc().current(2).expect(4).readiness("True", "True", "False", "False")
                .phases("Running", "Running", "Failed", "Failed").cpu(ones(4), podLevels(500, 700), 30, 60, 2 * 600));
    }

    @Test
    void missingContainerMetricScaleUpIgnoresFailedPods() throws Exception {
        run(tc().current(2).expect(4).readiness("True", "True", "False", "False")
                .phases("Running", "Running", "Failed", "Failed").container("container2")
                .cpu(ones(4), new long[][] {{1000, 500}, {9000, 700}, {1000}, {9000}}, 30, 60, 600));
    }

    @Test
    void scaleUpIgnoresDeletionPods() throws Exception {
        run(tc().current(2).expect(4).readiness("True", "True", "False", "False")
                .phases("Running", "Running", "Running", "Running").deleting(false, false, true, true)
                .cpu(ones(4), podLevels(500, 700), 30, 60, 2 * 600));
    }

    @Test
    void scaleUpCM() throws Exception {
        run(tc().current(3).expect(4).metric(Type.PODS, new long[] {20000, 10000, 30000}, 15000, 20000));
    }

    @Test
    void scaleUpCMUnreadyHotCpuNoLessScale() throws Exception {
        run(tc().current(3).expect(6).readiness("True", "True", "False").startTimes(COOL, COOL, HOT)
                .metric(Type.PODS, new long[] {50000, 10000, 30000}, 15000, 30000));
    }

    @Test
    void scaleUpCMUnreadyHotCpuScaleWouldScaleDown() throws Exception {
        run(tc().current(3).expect(7).readiness("False", "True", "False").startTimes(HOT, COOL, HOT)
                .metric(Type.PODS, new long[] {50000, 15000, 30000}, 15000, 31666));
    }

    @Test
    void scaleUpCMObject() throws Exception {
        run(tc().current(3).expect(4).metric(Type.OBJECT, new long[] {20000}, 15000, 20000));
    }

    @Test
    void scaleUpCMPerPodObject() throws Exception {
        run(tc().current(3).expect(4).metric(Type.OBJECT_PER_POD, new long[] {20000}, 5000, 6667));
    }

    @Test
    void scaleUpCMObjectIgnoresUnreadyPods() throws Exception {
        // 15 replicas if the unready pods counted
        run(tc().current(3).expect(5).readiness("False", "True", "False").metric(Type.OBJECT, new long[] {50000}, 10000, 50000));
    }

    @Test
    void scaleUpCMExternalIgnoresUnreadyPods() throws Exception {
        // 6 replicas if the unready pods counted
        run(tc().current(3).expect(2).readiness("False", "True", "False")
                .metric(Type.EXTERNAL, new long[] {8600}, 4400, 8600));
    }

    @Test
    void scaleUpCMExternalNoLabels() throws Exception {
        run(tc().current(1).expect(2).metric(Type.PODS, new long[] {8600}, 4400, 8600));
    }

    @Test
    void scaleUpPerPodCMExternal() throws Exception {
        run(tc().current(3).expect(4).metric(Type.EXTERNAL_PER_POD, new long[] {8600}, 2150, 2867));
    }

    @Test
    void scaleDown() throws Exception {
        run(tc().current(5).expect(3).cpu(ones(5), podLevels(100, 300, 500, 250, 250), 50, 28, 2 * 280));
    }

    @Test
    void containerScaleDown() throws Exception {
        run(tc().current(5).expect(3).container("container2").cpu(ones(5),
                new long[][] {{1000, 100}, {1000, 300}, {1000, 500}, {1000, 250}, {1000, 250}}, 50, 28, 280));
    }

    @Test
    void scaleDownCM() throws Exception {
        run(tc().current(5).expect(3).metric(Type.PODS, new long[] {12000, 12000, 12000, 12000, 12000}, 20000, 12000));
    }

    @Test
    void scaleDownPerPodCMObject() throws Exception {
        run(tc().current(5).expect(3).metric(Type.OBJECT_PER_POD, new long[] {6000}, 2000, 1200));
    }

    @Test
    void scaleDownCMObject() throws Exception {
        run(tc().current(5).expect(3).metric(Type.OBJECT, new long[] {12000}, 20000, 12000));
    }

    @Test
    void scaleDownCMExternal() throws Exception {
        run(tc().current(5).expect(3).metric(Type.EXTERNAL, new long[] {8600}, 14334, 8600));
    }

    @Test
    void scaleDownPerPodCMExternal() throws Exception {
        run(tc().current(5).expect(3).metric(Type.EXTERNAL_PER_POD, new long[] {8600}, 2867, 1720));
    }

    @Test
    void scaleDownExcludeUnreadyPods() throws Exception {
        run(tc().current(5).expect(2).readiness("True", "True", "True", "False", "False")
                .cpu(ones(5), podLevels(100, 300, 500, 250, 250), 50, 30, 2 * 300));
    }

    @Test
    void scaleDownExcludeUnscheduledPods() throws Exception {
        run(tc().current(5).expect(1).readiness("True", "False", "False", "False", "False")
                .phases("Running", "Pending", "Pending", "Pending", "Pending").cpu(ones(5), podLevels(100), 50, 10, 2 * 100));
    }

    @Test
    void scaleDownIgnoreHotCpuPods() throws Exception {
        run(tc().current(5).expect(2).startTimes(COOL, COOL, COOL, HOT, HOT)
                .cpu(ones(5), podLevels(100, 300, 500, 250, 250), 50, 30, 2 * 300));
    }

    @Test
    void scaleDownContainerIgnoreHotCpuPods() throws Exception {
        run(tc().current(5).expect(2).startTimes(COOL, COOL, COOL, HOT, HOT).container("container2").cpu(ones(5),
                new long[][] {{1000, 100}, {1000, 300}, {1000, 500}, {1000, 1000}, {1000, 1000}}, 50, 30, 300));
    }

    @Test
    void scaleDownIgnoresFailedPods() throws Exception {
        run(tc().current(5).expect(3).readiness("True", "True", "True", "True", "True", "False", "False")
                .phases("Running", "Running", "Running", "Running", "Running", "Failed", "Failed")
                .cpu(ones(7), podLevels(100, 300, 500, 250, 250), 50, 28, 2 * 280));
    }

    @Test
    void scaleDownIgnoresDeletionPods() throws Exception {
        run(tc().current(5).expect(3).readiness("True", "True", "True", "True", "True", "False", "False")
                .phases("Running", "Running", "Running", "Running", "Running", "Running", "Running")
                .deleting(false, false, false, false, false, true, true)
                .cpu(ones(7), podLevels(100, 300, 500, 250, 250), 50, 28, 2 * 280));
    }

    @Test
    void tolerance() throws Exception {
        run(tc().current(3).expect(3).cpu(new String[] {"0.9", "1.0", "1.1"}, podLevels(1010, 1030, 1020), 100, 102,
                2 * 1020));
    }

    @Test
    void toleranceCM() throws Exception {
        run(tc().current(3).expect(3).metric(Type.PODS, new long[] {20000, 21000, 21000}, 20000, 20666));
    }

    @Test
    void toleranceCMObject() throws Exception {
        run(tc().current(3).expect(3).metric(Type.OBJECT, new long[] {20666}, 20000, 20666));
    }

    @Test
    void tolerancePerPodCMObject() throws Exception {
        run(tc().current(4).expect(4).metric(Type.OBJECT_PER_POD, new long[] {20166}, 5000, 5042));
    }

    @Test
    void toleranceCMExternal() throws Exception {
        run(tc().current(3).expect(3).metric(Type.EXTERNAL, new long[] {8600}, 8888, 8600));
    }

    @Test
    void tolerancePerPodCMExternal() throws Exception {
        run(tc().current(3).expect(3).metric(Type.EXTERNAL_PER_POD, new long[] {8600}, 2900, 2867));
    }

    @Test
    void configurableToleranceScalesUpWhereTheDefaultWouldNot() throws Exception {
        // 102% of the target: within the default 10%, beyond an up-tolerance of 1%
        Case c = tc().current(3).expect(4).cpu(new String[] {"0.9", "1.0", "1.1"}, podLevels(1010, 1030, 1020), 100, 102,
                2 * 1020);
        c.tolerances = new ReplicaCalculator.Tolerances(0.1, 0.01);
        run(c);
    }

    @Test
    void superfluousMetrics() throws Exception {
        run(tc().current(4).expect(24).cpu(ones(4), podLevels(4000, 9500, 3000, 7000, 3200, 2000), 100, 587, 2 * 5875));
    }

    @Test
    void missingMetrics() throws Exception {
        run(tc().current(4).expect(3).cpu(ones(4), podLevels(400, 95), 100, 24, 495));
    }

    @Test
    void emptyMetrics() throws Exception {
        run(tc().current(4).error("unable to get metrics for resource cpu: no metrics returned from resource metrics API")
                .cpu(ones(3), podLevels(), 100, 0, 0));
    }

    @Test
    void emptyCPURequest() throws Exception {
        run(tc().current(1).error("missing request for").cpu(new String[0], podLevels(200), 100, 0, 0));
    }

    @Test
    void plainMetricMissingMetricsNoChangeEq() throws Exception {
        run(tc().current(5).expect(5).metric(Type.PODS, new long[] {20000, 19000, 21000}, 20000, 20000));
    }

    @Test
    void missingMetricsNoChangeEq() throws Exception {
        run(tc().current(2).expect(2).cpu(ones(2), podLevels(1000), 100, 100, 2 * 1000));
    }

    @Test
    void missingMetricsNoChangeGt() throws Exception {
        run(tc().current(2).expect(2).cpu(ones(2), podLevels(1900), 100, 190, 2 * 1900));
    }

    @Test
    void missingMetricsNoChangeLt() throws Exception {
        run(tc().current(2).expect(2).cpu(ones(2), podLevels(600), 100, 60, 2 * 600));
    }

    @Test
    void missingMetricsUnreadyChange() throws Exception {
        run(tc().current(3).expect(3).readiness("False", "True", "True").cpu(ones(3), podLevels(100, 450), 50, 45, 2 * 450));
    }

    @Test
    void missingMetricsHotCpuNoChange() throws Exception {
        run(tc().current(3).expect(3).startTimes(HOT, COOL, COOL).cpu(ones(3), podLevels(100, 450), 50, 45, 2 * 450));
    }

    @Test
    void missingMetricsUnreadyScaleUp() throws Exception {
        run(tc().current(3).expect(4).readiness("False", "True", "True").cpu(ones(3), podLevels(100, 2000), 50, 200, 2 * 2000));
    }

    @Test
    void missingMetricsHotCpuScaleUp() throws Exception {
        run(tc().current(3).expect(4).readiness("False", "True", "True").startTimes(HOT, COOL, COOL)
                .cpu(ones(3), podLevels(100, 2000), 50, 200, 2 * 2000));
    }

    @Test
    void missingMetricsUnreadyScaleDown() throws Exception {
        run(tc().current(4).expect(3).readiness("False", "True", "True", "True")
                .cpu(ones(4), podLevels(100, 100, 100), 50, 10, 2 * 100));
    }

    @Test
    void missingMetricsScaleDownTargetOver100() throws Exception {
        run(tc().current(4).expect(2).readiness("False", "True", "True", "True")
                .cpu(new String[] {"1.0", "1.0", "2.0", "2.0"}, podLevels(200, 100, 100), 300, 6, 2 * 100));
    }

    @Test
    void duringRollingUpdateWithMaxSurge() throws Exception {
        run(tc().current(2).expect(2).phases("Running", "Running", "Running").cpu(ones(3), podLevels(100, 100), 50, 10, 2 * 100));
    }

    @Test
    void duringRollingUpdateWithMaxSurgeCM() throws Exception {
        run(tc().current(2).expect(2).phases("Running", "Running", "Running")
                .metric(Type.PODS, new long[] {10000, 10000}, 17000, 10000));
    }

    @Test
    void computedToleranceAlgImplementation() throws Exception {
        int startPods = 10;
        long totalUsed = startPods * 150L;
        int totalRequested = (int) (2 * totalUsed);
        double requestedToUsed = (double) (totalRequested / (int) totalUsed);
        int perPodRequested = totalRequested / startPods;
        double target = Math.abs(1 / (requestedToUsed * (1 - TOLERANCE))) + .01;
        int finalCpuPercentTarget = (int) (target * 100);
        double usedRatio = (double) totalUsed / ((double) totalRequested * target);
        int finalPods = (int) Math.ceil(usedRatio * startPods);
        long[] levels = new long[10];
        java.util.Arrays.fill(levels, totalUsed / 10);
        int[] deltas = {100, -100, 10, -10, 2, -2, 1, -1, 0, 0};
        String[] requests = new String[10];
        for (int i = 0; i < 10; i++) {
            requests[i] = (perPodRequested + deltas[i]) + "m";
        }
        Case c = tc().current(startPods).expect(finalPods).cpu(requests, podLevels(levels), finalCpuPercentTarget,
                (int) (totalUsed * 100 / totalRequested), 2 * totalUsed / 10);
        run(c);

        target = Math.abs(1 / (requestedToUsed * (1 - TOLERANCE))) + .004;
        c.targetUtilization = (int) (target * 100);
        c.currentReplicas = startPods;
        c.expectedReplicas = startPods;
        run(c);
    }

    @Test
    void groupPodsSortsReadyUnreadyMissingAndIgnored() {
        Case c = tc().current(5).readiness("True", "False", "True", "True", "True")
                .phases("Running", "Running", "Pending", "Failed", "Running").startTimes(COOL, COOL, COOL, COOL, COOL);
        List<Pod> pods = c.pods();
        Map<String, PodMetric> metrics = new HashMap<>();
        // pod 1 turned unready long after its start (not its initial readiness): counted as ready for CPU
        // past the initialization period; pod 2 is pending: unready; pod 4 has no metric: missing
        pods.get(1).getStatus().getConditions().get(0).setLastTransitionTime(NOW.minusSeconds(5).toString());
        for (int i = 0; i < 4; i++) {
            metrics.put(PREFIX + "-" + i, new PodMetric(NOW, Duration.ofMinutes(1), 100));
        }
        ReplicaCalculator.Groups g = calculator(c).groupPods(pods, metrics, "cpu");
        assertThat(g.ready).isEqualTo(2);
        assertThat(g.unready).containsExactlyInAnyOrder(PREFIX + "-2");
        assertThat(g.missing).containsExactly(PREFIX + "-4");
        assertThat(g.ignored).containsExactly(PREFIX + "-3");

        // one unready since shortly after its start has not become ready yet: unready for CPU
        pods.get(1).getStatus().getConditions().get(0).setLastTransitionTime(COOL.plusSeconds(5).toString());
        assertThat(calculator(c).groupPods(pods, metrics, "cpu").unready).contains(PREFIX + "-1");
        // other resources do not look at readiness
        assertThat(calculator(c).groupPods(pods, metrics, "memory").ready).isEqualTo(2);
    }

    @Test
    void calculateRequestsPodLevelAndRestartableInitContainers() throws Exception {
        Pod pod = new PodBuilder().withNewMetadata().withName("p").endMetadata().withNewSpec()
                .addNewContainer().withName("a").withNewResources().addToRequests("cpu", new Quantity("100m")).endResources().endContainer()
                .addNewInitContainer().withName("sidecar").withRestartPolicy("Always").withNewResources()
                .addToRequests("cpu", new Quantity("50m")).endResources().endInitContainer()
                .addNewInitContainer().withName("init").withNewResources().addToRequests("cpu", new Quantity("1")).endResources()
                .endInitContainer().endSpec().build();
        Case c = tc();
        assertThat(calculator(c).calculateRequests(List.of(pod), "", "cpu")).containsEntry("p", 150L);
        assertThat(calculator(c).calculateRequests(List.of(pod), "a", "cpu")).containsEntry("p", 100L);
        pod.getSpec().setResources(new io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder()
                .addToRequests("cpu", new Quantity("400m")).build());
        assertThat(calculator(c).calculateRequests(List.of(pod), "", "cpu")).containsEntry("p", 400L);
        // a container's metric still takes the container's request
        assertThat(calculator(c).calculateRequests(List.of(pod), "a", "cpu")).containsEntry("p", 100L);
        assertThatThrownBy(() -> calculator(c).calculateRequests(List.of(pod), "", "memory"))
                .hasMessage("missing pod-level request for memory in Pod p");
    }
}
