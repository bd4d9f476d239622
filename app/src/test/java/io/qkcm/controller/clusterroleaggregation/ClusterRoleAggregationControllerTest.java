package io.qkcm.controller.clusterroleaggregation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.runtime.Json;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.Repository;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * clusterrole-aggregation-controller against a real API server: kube-apiserver's bootstrap aggregated
 * roles (admin, edit, view, created without rules) get the rules upstream's own code computes for them
 * (hack/golden/clusterroleaggregation), with a CRD's aggregate-to-* roles and after they are gone, by
 * server-side apply under upstream's field manager; a labelled role's changes reach the roles that
 * select it.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class ClusterRoleAggregationControllerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final List<String> AGGREGATED = List.of("admin", "edit", "view");

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

    private static JsonNode golden(String name) throws Exception {
        return ClusterRoleAggregationGoldenTest.vectors().get(name).get("rules");
    }

    private static boolean hasRules(String role, JsonNode expected) throws Exception {
        ClusterRole r = client.rbac().clusterRoles().withName(role).get();
        return Aggregation.semanticallyEqual(r.getRules(), ClusterRoleAggregationGoldenTest.rules(expected.get(role)));
    }

    private static boolean allHaveRules(JsonNode expected) throws Exception {
        for (String role : AGGREGATED) {
            if (!hasRules(role, expected)) {
                return false;
            }
        }
        return true;
    }

    /** The roles the golden's input took from a fresh kube-apiserver that carry an aggregate-to-* label. */
    private static Set<String> labelledInSnapshot() throws Exception {
        Set<String> names = new TreeSet<>();
        JsonNode snapshot = Json.mapper()
                .readTree(Files.readString(Repository.file("hack/golden/clusterroleaggregation/bootstrap-clusterroles.json")));
        for (JsonNode item : snapshot.get("items")) {
            item.path("metadata").path("labels").fieldNames().forEachRemaining(k -> {
                if (k.startsWith("rbac.authorization.k8s.io/aggregate-to-")) {
                    names.add(item.get("metadata").get("name").asText());
                }
            });
        }
        return names;
    }

    private static Set<String> labelledOnServer() {
        Set<String> names = new TreeSet<>();
        for (ClusterRole r : client.rbac().clusterRoles().list().getItems()) {
            Map<String, String> labels = r.getMetadata().getLabels();
            if (labels != null && labels.keySet().stream().anyMatch(k -> k.startsWith("rbac.authorization.k8s.io/aggregate-to-"))) {
                names.add(r.getMetadata().getName());
            }
        }
        return names;
    }

    private static ClusterRole role(String name, Map<String, String> labels, PolicyRule... rules) {
        return new ClusterRoleBuilder().withNewMetadata().withName(name).withLabels(labels).endMetadata()
                .withRules(rules).build();
    }

    private static PolicyRule rule(String group, String resource, String... verbs) {
        return new PolicyRuleBuilder().withApiGroups(group).withResources(resource).withVerbs(verbs).build();
    }

    @Test
    void bootstrapRolesGetUpstreamsRulesWithAndWithoutACrdsRoles() throws Exception {
        // the golden was computed from these roles: the comparison holds for this API server
        assertThat(labelledOnServer()).isEqualTo(labelledInSnapshot());
        for (String name : AGGREGATED) {
            ClusterRole r = client.rbac().clusterRoles().withName(name).get();
            r.setRules(new ArrayList<>());
            client.rbac().clusterRoles().resource(r).update();
            assertThat(rulesOf(name)).isEmpty();
        }
        List<ClusterRole> crdRoles = List.of(
                role("widgets-view", Map.of("rbac.authorization.k8s.io/aggregate-to-view", "true"),
                        rule("example.com", "widgets", "get", "list", "watch")),
                role("widgets-edit", Map.of("rbac.authorization.k8s.io/aggregate-to-edit", "true"),
                        rule("example.com", "widgets", "create", "update", "patch", "delete")),
                role("widgets-admin", Map.of("rbac.authorization.k8s.io/aggregate-to-admin", "true"),
                        rule("example.com", "widgets/finalizers", "update")));
        try (ControllerHarness<ClusterRoleAggregationController> h = ControllerHarness.create(vertx,
                ClusterRoleAggregationController.NAME, ClusterRoleAggregationController::new).start()) {
            JsonNode bootstrap = golden("bootstrap");
            await().atMost(TIMEOUT).until(() -> allHaveRules(bootstrap));
            ClusterRole view = client.rbac().clusterRoles().withName("view").get();
            assertThat(view.getMetadata().getManagedFields())
                    .anySatisfy(f -> {
                        assertThat(f.getManager()).isEqualTo("clusterrole-aggregation-controller");
                        assertThat(f.getOperation()).isEqualTo("Apply");
                    });

            for (ClusterRole r : crdRoles) {
                client.rbac().clusterRoles().resource(r).create();
            }
            JsonNode withCrd = golden("bootstrap with a CRD's roles");
            await().atMost(TIMEOUT).until(() -> allHaveRules(withCrd));

            for (ClusterRole r : crdRoles) {
                client.rbac().clusterRoles().withName(r.getMetadata().getName()).delete();
            }
            await().atMost(TIMEOUT).until(() -> allHaveRules(bootstrap));
        } finally {
            for (ClusterRole r : crdRoles) {
                client.rbac().clusterRoles().withName(r.getMetadata().getName()).delete();
            }
        }
    }

    @Test
    void aLabelledRolesChangesReachTheRolesSelectingIt() throws Exception {
        ClusterRole aggregating = new ClusterRoleBuilder().withNewMetadata().withName("qkcm-test-aggregating")
                .endMetadata().withNewAggregationRule().addNewClusterRoleSelector()
                .addToMatchLabels("qkcm-test", "aggregate").endClusterRoleSelector().endAggregationRule().build();
        try (ControllerHarness<ClusterRoleAggregationController> h = ControllerHarness.create(vertx,
                ClusterRoleAggregationController.NAME, ClusterRoleAggregationController::new).start()) {
            client.rbac().clusterRoles().resource(aggregating).create();
            client.rbac().clusterRoles().resource(role("qkcm-test-b", Map.of("qkcm-test", "aggregate"),
                    rule("b.example.com", "bs", "get"))).create();
            client.rbac().clusterRoles().resource(role("qkcm-test-a", Map.of("qkcm-test", "aggregate"),
                    rule("a.example.com", "as", "get"), rule("b.example.com", "bs", "get"))).create();
            // ordered by role name, the duplicate rule once
            await().atMost(TIMEOUT).until(() -> Aggregation.semanticallyEqual(rulesOf("qkcm-test-aggregating"),
                    List.of(rule("a.example.com", "as", "get"), rule("b.example.com", "bs", "get"))));

            client.rbac().clusterRoles().withName("qkcm-test-a").edit(r -> {
                r.setRules(List.of(rule("a.example.com", "as", "list")));
                return r;
            });
            await().atMost(TIMEOUT).until(() -> Aggregation.semanticallyEqual(rulesOf("qkcm-test-aggregating"),
                    List.of(rule("a.example.com", "as", "list"), rule("b.example.com", "bs", "get"))));

            client.rbac().clusterRoles().withName("qkcm-test-b").edit(r -> {
                r.getMetadata().getLabels().remove("qkcm-test");
                return r;
            });
            await().atMost(TIMEOUT).until(() -> Aggregation.semanticallyEqual(rulesOf("qkcm-test-aggregating"),
                    List.of(rule("a.example.com", "as", "list"))));

            client.rbac().clusterRoles().withName("qkcm-test-a").delete();
            // no rule left: the apply without rules gives up the controller's rules
            await().atMost(TIMEOUT).until(() -> rulesOf("qkcm-test-aggregating").isEmpty());
        } finally {
            for (String name : List.of("qkcm-test-aggregating", "qkcm-test-a", "qkcm-test-b")) {
                client.rbac().clusterRoles().withName(name).delete();
            }
        }
    }

    private static List<PolicyRule> rulesOf(String name) {
        ClusterRole r = client.rbac().clusterRoles().withName(name).get();
        return r == null || r.getRules() == null ? List.of() : r.getRules();
    }
}
