package io.qkcm.controller.resourcequota.evaluator;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodAffinityTermBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.ScopeSelectorBuilder;
import io.fabric8.kubernetes.api.model.ScopedResourceSelectorRequirement;
import io.fabric8.kubernetes.api.model.ScopedResourceSelectorRequirementBuilder;
import io.qkcm.controller.resourcequota.quota.UsageStatsOptions;

/** pods_test.go's TestPodEvaluatorUsage, UsageStats, MatchingScopes and UsageResourceResize tables. */
class PodEvaluatorTest {

    private static final Instant NOW = Instant.parse("2026-11-26T12:00:00Z");
    private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

    private final PodEvaluator evaluator = new PodEvaluator(ns -> List.of(), CLOCK, QuotaFeatures.defaults());

    private static Map<String, Quantity> list(String... kv) {
        Map<String, Quantity> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], new Quantity(kv[i + 1]));
        }
        return m;
    }

    private static Container container(Map<String, Quantity> requests, Map<String, Quantity> limits) {
        return new ContainerBuilder().withName("c" + System.identityHashCode(requests)).withImage("i")
                .withResources(new ResourceRequirementsBuilder().withRequests(requests).withLimits(limits).build()).build();
    }

    private static Pod pod(List<Container> init, List<Container> containers) {
        return new PodBuilder().withNewMetadata().withName("p").withNamespace("ns").endMetadata().withNewSpec()
                .withInitContainers(init).withContainers(containers).endSpec().withNewStatus().endStatus().build();
    }

    private Map<String, String> usage(Pod pod) {
        Map<String, String> out = new TreeMap<>();
        evaluator.usage(pod).forEach((k, v) -> out.put(k, v.toString()));
        return out;
    }

    private static Map<String, String> expected(String... kv) {
        Map<String, String> m = new TreeMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        m.put("count/pods", "1");
        return m;
    }

    @Test
    void usageOfInitContainersAndContainers() {
        for (boolean init : new boolean[] { true, false }) {
            java.util.function.Function<Container, Pod> make = c -> init ? pod(List.of(c), List.of()) : pod(List.of(), List.of(c));
            assertThat(usage(make.apply(container(list("cpu", "1m"), list("cpu", "2m")))))
                    .isEqualTo(expected("requests.cpu", "1m", "limits.cpu", "2m", "pods", "1", "cpu", "1m"));
            assertThat(usage(make.apply(container(list("memory", "1m"), list("memory", "2m")))))
                    .isEqualTo(expected("requests.memory", "1m", "limits.memory", "2m", "pods", "1", "memory", "1m"));
            assertThat(usage(make.apply(container(list("ephemeral-storage", "32Mi"), list("ephemeral-storage", "64Mi")))))
                    .isEqualTo(expected("ephemeral-storage", "32Mi", "requests.ephemeral-storage", "32Mi",
                            "limits.ephemeral-storage", "64Mi", "pods", "1"));
            assertThat(usage(make.apply(container(list("hugepages-2Mi", "100Mi"), Map.of()))))
                    .isEqualTo(expected("hugepages-2Mi", "100Mi", "requests.hugepages-2Mi", "100Mi", "pods", "1"));
            assertThat(usage(make.apply(container(list("example.com/dongle", "3"), list("example.com/dongle", "3")))))
                    .isEqualTo(expected("requests.example.com/dongle", "3", "pods", "1"));
        }
    }

    @Test
    void terminatedPodKeepsItsObjectCountOnly() {
        Pod p = pod(List.of(), List.of(container(list("example.com/dongle", "3"), list("example.com/dongle", "3"))));
        p.getStatus().setPhase("Succeeded");
        assertThat(usage(p)).isEqualTo(Map.of("count/pods", "1"));
        p.getStatus().setPhase("Failed");
        assertThat(usage(p)).isEqualTo(Map.of("count/pods", "1"));
    }

    @Test
    void initContainerMaximumsOverrideSumOfContainers() {
        Pod p = pod(List.of(
                container(list("cpu", "4", "memory", "100M", "example.com/dongle", "4"),
                        list("cpu", "8", "memory", "200M", "example.com/dongle", "4")),
                container(list("cpu", "1", "memory", "50M", "example.com/dongle", "2"),
                        list("cpu", "2", "memory", "100M", "example.com/dongle", "2"))),
                List.of(container(list("cpu", "1", "memory", "50M", "example.com/dongle", "1"),
                        list("cpu", "2", "memory", "100M", "example.com/dongle", "1")),
                        container(list("cpu", "2", "memory", "25M", "example.com/dongle", "2"),
                                list("cpu", "5", "memory", "50M", "example.com/dongle", "2"))));
        assertThat(usage(p)).isEqualTo(expected("requests.cpu", "4", "requests.memory", "100M", "limits.cpu", "8",
                "limits.memory", "200M", "pods", "1", "cpu", "4", "memory", "100M", "requests.example.com/dongle", "4"));
    }

    @Test
    void deletionGracePeriod() {
        Pod past = pod(List.of(), List.of(container(list("cpu", "1", "memory", "50M"), list("cpu", "2", "memory", "100M"))));
        past.getMetadata().setDeletionTimestamp(NOW.minusSeconds(60).toString());
        past.getMetadata().setDeletionGracePeriodSeconds(30L);
        assertThat(usage(past)).isEqualTo(Map.of("count/pods", "1"));

        Pod notPast = pod(List.of(), List.of(container(list("cpu", "1"), list("cpu", "2"))));
        notPast.getMetadata().setDeletionTimestamp(NOW.toString());
        notPast.getMetadata().setDeletionGracePeriodSeconds(30L);
        assertThat(usage(notPast)).isEqualTo(expected("requests.cpu", "1", "limits.cpu", "2", "pods", "1", "cpu", "1"));
    }

    @Test
    void podOverheadCounts() {
        Pod p = pod(List.of(), List.of(container(list("cpu", "1"), list("cpu", "2"))));
        p.getSpec().setOverhead(list("cpu", "1"));
        assertThat(usage(p)).isEqualTo(expected("requests.cpu", "2", "limits.cpu", "3", "pods", "1", "cpu", "2"));
    }

    @Test
    void podLevelResources() {
        Pod p = pod(List.of(), List.of());
        p.getSpec().setResources(new ResourceRequirementsBuilder().withRequests(list("cpu", "1m")).withLimits(list("cpu", "2m")).build());
        assertThat(usage(p)).isEqualTo(expected("requests.cpu", "1m", "limits.cpu", "2m", "pods", "1", "cpu", "1m"));

        Pod mixed = pod(List.of(), List.of(container(list("ephemeral-storage", "32Mi"), list("ephemeral-storage", "64Mi"))));
        mixed.getSpec().setResources(new ResourceRequirementsBuilder().withRequests(list("memory", "1Mi"))
                .withLimits(list("memory", "2Mi")).build());
        assertThat(usage(mixed)).isEqualTo(expected("ephemeral-storage", "32Mi", "requests.ephemeral-storage", "32Mi",
                "limits.ephemeral-storage", "64Mi", "pods", "1", "requests.memory", "1Mi", "limits.memory", "2Mi",
                "memory", "1Mi"));
    }

    /** TestPodEvaluatorUsageResourceResize, InPlacePodVerticalScaling on (v1.34's default). */
    @Test
    void resizedContainersCountTheLargerOfSpecAndStatus() {
        Pod memory = pod(List.of(), List.of(container(list("memory", "200Mi"), list("memory", "400Mi"))));
        String name = memory.getSpec().getContainers().get(0).getName();
        memory.getStatus().setContainerStatuses(List.of(new ContainerStatusBuilder().withName(name)
                .withResources(new ResourceRequirementsBuilder().withRequests(list("memory", "150Mi")).build()).build()));
        assertThat(usage(memory)).isEqualTo(expected("requests.memory", "200Mi", "limits.memory", "400Mi", "pods", "1",
                "memory", "200Mi"));

        Pod cpu = pod(List.of(), List.of(container(list("cpu", "100m"), list("cpu", "200m"))));
        String cname = cpu.getSpec().getContainers().get(0).getName();
        cpu.getStatus().setContainerStatuses(List.of(new ContainerStatusBuilder().withName(cname)
                .withResources(new ResourceRequirementsBuilder().withRequests(list("cpu", "150m")).build()).build()));
        assertThat(usage(cpu)).isEqualTo(expected("requests.cpu", "150m", "limits.cpu", "200m", "pods", "1", "cpu", "150m"));
    }

    private static Pod running(String name, String priorityClass) {
        Pod p = pod(List.of(), List.of(container(list("cpu", "1"), list("cpu", "1"))));
        p.getMetadata().setName(name);
        p.getSpec().setPriorityClassName(priorityClass);
        p.getStatus().setPhase("Running");
        return p;
    }

    private static ScopedResourceSelectorRequirement selector(String scope, String op, String... values) {
        return new ScopedResourceSelectorRequirementBuilder().withScopeName(scope).withOperator(op).withValues(values).build();
    }

    private static Map<String, String> stats(List<Pod> pods, List<String> scopes, List<ScopedResourceSelectorRequirement> selector)
            throws Exception {
        PodEvaluator e = new PodEvaluator(ns -> pods, CLOCK, QuotaFeatures.defaults());
        var options = new UsageStatsOptions("ns", scopes, List.of("pods", "count/pods", "cpu", "requests.cpu", "limits.cpu"),
                selector == null ? null : new ScopeSelectorBuilder().withMatchExpressions(selector).build());
        Map<String, String> out = new TreeMap<>();
        e.usageStats(options).forEach((k, v) -> out.put(k, v.toString()));
        return out;
    }

    @Test
    void usageStats() throws Exception {
        assertThat(stats(List.of(), List.of(), null)).isEqualTo(Map.of("pods", "0", "count/pods", "0", "cpu", "0",
                "requests.cpu", "0", "limits.cpu", "0"));
        assertThat(stats(List.of(running("p1", ""), running("p2", "")), List.of(), null)).isEqualTo(
                Map.of("pods", "2", "count/pods", "2", "cpu", "2", "requests.cpu", "2", "limits.cpu", "2"));
        Pod failed = running("p2", "");
        failed.getStatus().setPhase("Failed");
        assertThat(stats(List.of(running("p1", ""), failed), List.of(), null)).isEqualTo(
                Map.of("pods", "1", "count/pods", "2", "cpu", "1", "requests.cpu", "1", "limits.cpu", "1"));
        List<Pod> twoClasses = List.of(running("p1", "high-priority"), running("p2", "low-priority"));
        Map<String, String> one = Map.of("pods", "1", "count/pods", "1", "cpu", "1", "requests.cpu", "1", "limits.cpu", "1");
        assertThat(stats(twoClasses, List.of(), List.of(selector("PriorityClass", "In", "high-priority")))).isEqualTo(one);
        assertThat(stats(twoClasses, List.of("PriorityClass"), List.of(selector("PriorityClass", "In", "high-priority"))))
                .isEqualTo(one);
        // BestEffort and a cpu request never go together: nothing matches
        assertThat(stats(twoClasses, List.of("PriorityClass", "BestEffort"),
                List.of(selector("PriorityClass", "In", "high-priority"))))
                .isEqualTo(Map.of("pods", "0", "count/pods", "0", "cpu", "0", "requests.cpu", "0", "limits.cpu", "0"));
    }

    /** TestPodEvaluatorMatchingScopes: which of all scopes each pod matches. */
    @Test
    void matchingScopes() {
        List<ScopedResourceSelectorRequirement> all = List.of(selector("Terminating", "Exists"),
                selector("NotTerminating", "Exists"), selector("BestEffort", "Exists"), selector("NotBestEffort", "Exists"),
                selector("PriorityClass", "In", "class1"), selector("CrossNamespacePodAffinity", "Exists"));
        Pod bestEffort = pod(List.of(), List.of());
        assertThat(matching(bestEffort, all)).containsExactly("NotTerminating", "BestEffort");
        Pod withClass = pod(List.of(), List.of());
        withClass.getSpec().setPriorityClassName("class1");
        assertThat(matching(withClass, all)).containsExactly("NotTerminating", "BestEffort", "PriorityClass");
        Pod burstable = pod(List.of(), List.of(container(list("cpu", "1", "memory", "50M"), list("cpu", "2", "memory", "100M"))));
        assertThat(matching(burstable, all)).containsExactly("NotTerminating", "NotBestEffort");
        Pod terminating = pod(List.of(), List.of());
        terminating.getSpec().setActiveDeadlineSeconds(1L);
        assertThat(matching(terminating, all)).containsExactly("Terminating", "BestEffort");
        Pod crossNamespace = pod(List.of(), List.of());
        crossNamespace.getSpec().setActiveDeadlineSeconds(1L);
        crossNamespace.getSpec().setAffinity(new io.fabric8.kubernetes.api.model.AffinityBuilder().withNewPodAffinity()
                .withRequiredDuringSchedulingIgnoredDuringExecution(new PodAffinityTermBuilder()
                        .withLabelSelector(new LabelSelector()).withNamespaces("ns1").build())
                .endPodAffinity().build());
        assertThat(matching(crossNamespace, all)).containsExactly("Terminating", "BestEffort", "CrossNamespacePodAffinity");
        Pod antiWeighted = pod(List.of(), List.of());
        antiWeighted.getSpec().setAffinity(new io.fabric8.kubernetes.api.model.AffinityBuilder().withNewPodAntiAffinity()
                .addNewPreferredDuringSchedulingIgnoredDuringExecution().withWeight(1).withPodAffinityTerm(
                        new PodAffinityTermBuilder().withLabelSelector(new LabelSelector())
                                .withNamespaceSelector(new LabelSelector()).build())
                .endPreferredDuringSchedulingIgnoredDuringExecution().endPodAntiAffinity().build());
        assertThat(matching(antiWeighted, all)).contains("CrossNamespacePodAffinity");
        Pod sameNamespace = pod(List.of(), List.of());
        sameNamespace.getSpec().setAffinity(new io.fabric8.kubernetes.api.model.AffinityBuilder().withNewPodAffinity()
                .withRequiredDuringSchedulingIgnoredDuringExecution(new PodAffinityTermBuilder()
                        .withLabelSelector(new LabelSelector()).build())
                .endPodAffinity().build());
        assertThat(matching(sameNamespace, all)).doesNotContain("CrossNamespacePodAffinity");
    }

    @Test
    void priorityClassSelectorOperators() {
        Pod withClass = pod(List.of(), List.of());
        withClass.getSpec().setPriorityClassName("class1");
        Pod without = pod(List.of(), List.of());
        assertThat(PodEvaluator.podMatchesScope(selector("PriorityClass", "Exists"), withClass)).isTrue();
        assertThat(PodEvaluator.podMatchesScope(selector("PriorityClass", "Exists"), without)).isFalse();
        assertThat(PodEvaluator.podMatchesScope(selector("PriorityClass", "DoesNotExist"), without)).isTrue();
        assertThat(PodEvaluator.podMatchesScope(selector("PriorityClass", "DoesNotExist"), withClass)).isFalse();
        assertThat(PodEvaluator.podMatchesScope(selector("PriorityClass", "NotIn", "class2"), withClass)).isTrue();
        assertThat(PodEvaluator.podMatchesScope(selector("PriorityClass", "NotIn", "class1"), withClass)).isFalse();
        assertThat(PodEvaluator.podMatchesScope(selector("PriorityClass", "NotIn", "class1"), without)).isTrue();
        assertThat(PodEvaluator.podMatchesScope(selector("PriorityClass", "In", "class1", "class2"), withClass)).isTrue();
    }

    private static List<String> matching(Pod pod, List<ScopedResourceSelectorRequirement> selectors) {
        List<String> out = new ArrayList<>();
        for (ScopedResourceSelectorRequirement s : selectors) {
            if (PodEvaluator.podMatchesScope(s, pod)) {
                out.add(s.getScopeName());
            }
        }
        return out;
    }

    @Test
    void matchingResources() {
        assertThat(evaluator.matchingResources(List.of("pods", "count/pods", "requests.cpu", "limits.memory",
                "hugepages-2Mi", "requests.hugepages-1Gi", "requests.example.com/dongle", "example.com/dongle",
                "services", "requests.storage", "foo.com/bar")))
                .containsExactlyInAnyOrder("pods", "count/pods", "requests.cpu", "limits.memory", "hugepages-2Mi",
                        "requests.hugepages-1Gi", "requests.example.com/dongle");
    }
}
