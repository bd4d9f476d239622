package io.qkcm.controller.validatingadmissionpolicystatus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.ExpressionWarning;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Validation;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * validatingadmissionpolicy-status-controller against a real API server: the kinds come from its discovery and
 * their schemas from its /openapi/v3, the status is applied to its status subresource. The expected warnings
 * are the strings upstream's TypeChecker writes for these expressions (hack/vap-typecheck/golden on a schema
 * with Deployment's spec.replicas, an int32; and IntOrString, which upstream types dyn).
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class ValidatingAdmissionPolicyStatusControllerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String TEST_LABEL = "qkcm-test-vap";

    static final String REPLICAS_EQUALS_STRING = "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching "
            + "overload for '_==_' applied to '(int, string)'\n | object.spec.replicas == 'x'\n | .....................^\n";
    static final String REPLICAS_PLUS_STRING = "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching "
            + "overload for '_+_' applied to '(int, string)'\n | object.spec.replicas + 'x'\n | .....................^\n";

    @Inject
    Vertx vertx;

    static KubernetesClient client;
    private ControllerHarness<ValidatingAdmissionPolicyStatusController> harness;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    @BeforeEach
    void clean() {
        cleanUp();
    }

    @AfterEach
    void stop() {
        if (harness != null) {
            harness.close();
        }
        cleanUp();
    }

    private static void cleanUp() {
        client.admissionRegistration().v1().validatingAdmissionPolicies().withLabel(TEST_LABEL).delete();
        await().atMost(TIMEOUT).until(() -> client.admissionRegistration().v1().validatingAdmissionPolicies()
                .withLabel(TEST_LABEL).list().getItems().isEmpty());
    }

    private void startController() throws InterruptedException {
        harness = ControllerHarness.create(vertx, ValidatingAdmissionPolicyStatusController.NAME,
                ValidatingAdmissionPolicyStatusController.NAME, Map.of(),
                ctx -> new ValidatingAdmissionPolicyStatusController(ctx, 1));
        harness.start();
    }

    private static ValidatingAdmissionPolicy create(String name, Validation... validations) {
        return client.admissionRegistration().v1().validatingAdmissionPolicies().resource(
                new ValidatingAdmissionPolicyBuilder().withNewMetadata().withName(name)
                        .withLabels(Map.of(TEST_LABEL, "true")).endMetadata()
                        .withNewSpec().withValidations(validations)
                        .withNewMatchConstraints().addNewResourceRule().withApiGroups("apps").withApiVersions("v1")
                        .withResources("deployments").withOperations("CREATE").endResourceRule().endMatchConstraints()
                        .endSpec().build())
                .create();
    }

    private static Validation validation(String expression, String messageExpression) {
        Validation v = new Validation();
        v.setExpression(expression);
        v.setMessageExpression(messageExpression);
        return v;
    }

    private static ValidatingAdmissionPolicy get(String name) {
        return client.admissionRegistration().v1().validatingAdmissionPolicies().withName(name).get();
    }

    private static ValidatingAdmissionPolicy awaitObserved(String name, long generation) {
        await().atMost(TIMEOUT).until(() -> {
            ValidatingAdmissionPolicy p = get(name);
            return p.getStatus() != null && p.getStatus().getObservedGeneration() != null
                    && p.getStatus().getObservedGeneration() == generation;
        });
        return get(name);
    }

    private static List<ExpressionWarning> warnings(ValidatingAdmissionPolicy p) {
        return p.getStatus().getTypeChecking() == null || p.getStatus().getTypeChecking().getExpressionWarnings() == null
                ? List.of() : p.getStatus().getTypeChecking().getExpressionWarnings();
    }

    @Test
    void illTypedExpressionsGetUpstreamsWarnings() throws Exception {
        startController();
        create("vap-ill-typed",
                validation("object.spec.replicas == 'x'", "object.spec.replicas + 'x'"),
                // IntOrString is dyn: compares with anything, has any field
                validation("object.spec.strategy.rollingUpdate.maxSurge == 1 && object.metadata.name.startsWith('a')",
                        null));
        ValidatingAdmissionPolicy p = awaitObserved("vap-ill-typed", 1);
        assertThat(warnings(p)).extracting(ExpressionWarning::getFieldRef, ExpressionWarning::getWarning)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("spec.validations[0].expression", REPLICAS_EQUALS_STRING),
                        org.assertj.core.groups.Tuple.tuple("spec.validations[0].messageExpression",
                                REPLICAS_PLUS_STRING));
        // applied server-side by upstream's field manager
        assertThat(p.getMetadata().getManagedFields()).anySatisfy(f -> {
            assertThat(f.getManager()).isEqualTo(ValidatingAdmissionPolicyStatusController.FIELD_MANAGER);
            assertThat(f.getOperation()).isEqualTo("Apply");
            assertThat(f.getSubresource()).isEqualTo("status");
        });
    }

    /**
     * cel-go's compile-time check of string.format() with a literal format string and argument list (the strings
     * extension's validator): the server accepts these policies, as it compiles them with {@code object} dyn;
     * typed by Deployment's schema, a clause meets an argument it cannot format (a string for %d, a bool for
     * %x). A non-literal format string is not checked, dyn (IntOrString) suits every clause. (Errors that do not
     * depend on the object's type, a wrong count or verb, the server rejects at create.)
     */
    @Test
    void formatClausesAreCheckedAgainstTheArgumentsTypes() throws Exception {
        startController();
        create("vap-format",
                validation("'%d'.format([object.metadata.name]) != ''",
                        "'%x of %s'.format([object.spec.paused, object.spec])"),
                validation("'%d %s %f'.format([object.spec.replicas, object.spec.selector.matchLabels, "
                        + "object.spec.strategy.rollingUpdate.maxSurge]) != ''", null),
                validation("object.metadata.name.format([1]) != ''", null));
        ValidatingAdmissionPolicy p = awaitObserved("vap-format", 1);
        assertThat(warnings(p)).extracting(ExpressionWarning::getFieldRef, ExpressionWarning::getWarning)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("spec.validations[0].expression",
                                "apps/v1, Kind=Deployment: ERROR: <input>:1:29: error during formatting: decimal "
                                        + "clause can only be used on integers, was given string\n"
                                        + " | '%d'.format([object.metadata.name]) != ''\n"
                                        + " | ............................^\n"),
                        org.assertj.core.groups.Tuple.tuple("spec.validations[0].messageExpression",
                                "apps/v1, Kind=Deployment: ERROR: <input>:1:31: error during formatting: only "
                                        + "integers, byte buffers, and strings can be formatted as hex, was given bool\n"
                                        + " | '%x of %s'.format([object.spec.paused, object.spec])\n"
                                        + " | ..............................^\n"));
    }

    @Test
    void observedGenerationFollowsGenerationAndWarningsFollowTheExpressions() throws Exception {
        startController();
        create("vap-generations", validation("object.spec.replicas > 1", null));
        ValidatingAdmissionPolicy p = awaitObserved("vap-generations", 1);
        assertThat(warnings(p)).isEmpty();
        assertThat(p.getStatus().getTypeChecking()).isNotNull();

        Conflicts.retry(() -> client.admissionRegistration().v1().validatingAdmissionPolicies().withName("vap-generations")
                .edit(v -> {
                    v.getSpec().getValidations().get(0).setExpression("object.spec.replicas == 'x'");
                    return v;
                }));
        p = awaitObserved("vap-generations", 2);
        assertThat(warnings(p)).extracting(ExpressionWarning::getWarning).containsExactly(REPLICAS_EQUALS_STRING);

        Conflicts.retry(() -> client.admissionRegistration().v1().validatingAdmissionPolicies().withName("vap-generations")
                .edit(v -> {
                    v.getSpec().getValidations().get(0).setExpression("object.spec.replicas > 2");
                    return v;
                }));
        p = awaitObserved("vap-generations", 3);
        // the force apply without warnings drops the ones applied before
        assertThat(warnings(p)).isEmpty();
    }

    /**
     * A custom resource's schema as the server publishes it: int-or-string (dyn), preserve-unknown-fields
     * without properties (an object without fields), an embedded resource (kind and apiVersion added). The
     * CRD is made after the controller started: its kind is found by refreshing discovery on the miss.
     */
    @Test
    void customResourcesAreCheckedAgainstTheirPublishedSchema() throws Exception {
        startController();
        String spec = "{\"type\":\"object\",\"properties\":{\"size\":{\"type\":\"integer\"},"
                + "\"ios\":{\"x-kubernetes-int-or-string\":true},"
                + "\"free\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true},"
                + "\"emb\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,"
                + "\"x-kubernetes-preserve-unknown-fields\":true,\"properties\":{\"n\":{\"type\":\"integer\"}}}}}";
        var crd = io.qkcm.runtime.Json.mapper().readValue("{\"apiVersion\":\"apiextensions.k8s.io/v1\","
                + "\"kind\":\"CustomResourceDefinition\",\"metadata\":{\"name\":\"widgets.qkcm.test\"},"
                + "\"spec\":{\"group\":\"qkcm.test\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\","
                + "\"singular\":\"widget\",\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},\"versions\":[{\"name\":\"v1\","
                + "\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
                + "\"properties\":{\"spec\":" + spec + "}}}}]}}",
                io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition.class);
        client.apiextensions().v1().customResourceDefinitions().resource(crd).serverSideApply();
        try {
            await().atMost(TIMEOUT).until(() -> {
                var c = client.apiextensions().v1().customResourceDefinitions().withName("widgets.qkcm.test").get();
                return c.getStatus() != null && c.getStatus().getConditions().stream()
                        .anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus()));
            });
            // the published schema may lag the CRD's establishment: re-check on a new generation until it shows
            ValidatingAdmissionPolicy vap = client.admissionRegistration().v1().validatingAdmissionPolicies().resource(
                    new ValidatingAdmissionPolicyBuilder().withNewMetadata().withName("vap-widgets")
                            .withLabels(Map.of(TEST_LABEL, "true")).endMetadata().withNewSpec()
                            .withValidations(validation("object.spec.size == 'x'", null),
                                    validation("object.spec.ios == 1 && object.spec.ios == 'a'", null),
                                    validation("object.spec.free.anything == 1", null),
                                    validation("object.spec.emb.kind == 1 && object.spec.emb.n == 'a'", null))
                            .withNewMatchConstraints().addNewResourceRule().withApiGroups("qkcm.test")
                            .withApiVersions("v1").withResources("widgets").withOperations("CREATE").endResourceRule()
                            .endMatchConstraints().endSpec().build())
                    .create();
            String gvk = "qkcm.test/v1, Kind=Widget: ";
            List<String> expected = List.of(
                    gvk + "ERROR: <input>:1:18: found no matching overload for '_==_' applied to '(int, string)'\n"
                            + " | object.spec.size == 'x'\n | .................^\n",
                    gvk + "ERROR: <input>:1:17: undefined field 'anything'\n | object.spec.free.anything == 1\n"
                            + " | ................^\n",
                    gvk + "ERROR: <input>:1:22: found no matching overload for '_==_' applied to '(string, int)'\n"
                            + " | object.spec.emb.kind == 1 && object.spec.emb.n == 'a'\n"
                            + " | .....................^\n"
                            + "ERROR: <input>:1:48: found no matching overload for '_==_' applied to '(int, string)'\n"
                            + " | object.spec.emb.kind == 1 && object.spec.emb.n == 'a'\n"
                            + " | ...............................................^\n");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                ValidatingAdmissionPolicy p = get("vap-widgets");
                if (p.getStatus() == null || !warnings(p).stream().map(ExpressionWarning::getWarning).toList()
                        .equals(expected)) {
                    // bump the generation so the controller checks again
                    Conflicts.retry(() -> client.admissionRegistration().v1().validatingAdmissionPolicies().withName("vap-widgets")
                            .edit(v -> {
                                v.getSpec().setFailurePolicy(
                                        "Fail".equals(v.getSpec().getFailurePolicy()) ? "Ignore" : "Fail");
                                return v;
                            }));
                }
                assertThat(warnings(get("vap-widgets"))).extracting(ExpressionWarning::getFieldRef,
                        ExpressionWarning::getWarning).containsExactly(
                                org.assertj.core.groups.Tuple.tuple("spec.validations[0].expression", expected.get(0)),
                                org.assertj.core.groups.Tuple.tuple("spec.validations[2].expression", expected.get(1)),
                                org.assertj.core.groups.Tuple.tuple("spec.validations[3].expression", expected.get(2)));
            });
            assertThat(vap).isNotNull();
        } finally {
            client.apiextensions().v1().customResourceDefinitions().withName("widgets.qkcm.test").delete();
        }
    }

    @Test
    void aPolicyAlreadyObservedIsNotCheckedAgain() throws Exception {
        create("vap-observed", validation("object.spec.replicas == 'x'", null));
        // status says generation 1 was seen already (as by an earlier leader): nothing to write
        client.admissionRegistration().v1().validatingAdmissionPolicies().withName("vap-observed").editStatus(v -> {
            v.setStatus(new io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyStatus());
            v.getStatus().setObservedGeneration(1L);
            return v;
        });
        startController();
        create("vap-marker", validation("object.spec.replicas > 1", null));
        awaitObserved("vap-marker", 1);
        ValidatingAdmissionPolicy p = get("vap-observed");
        assertThat(p.getStatus().getTypeChecking()).isNull();
        assertThat(p.getMetadata().getManagedFields())
                .noneMatch(f -> ValidatingAdmissionPolicyStatusController.FIELD_MANAGER.equals(f.getManager()));
    }
}
