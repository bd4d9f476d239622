package io.qkcm.manager;

import io.qkcm.runtime.options.FeatureGates;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/** {@code --controllers} with upstream's semantics, on upstream's controller table. */
class ControllerSelectionTest {

    private static Controller fake(String name) {
        return new Controller() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public void start() {
            }

            @Override
            public void shutdown(Duration timeout) {
            }
        };
    }

    /** Upstream's table with none of qkcm's implementations: a descriptor's name, aliases, gates and defaults. */
    private static ControllerDescriptor unimplemented(ControllerDescriptor d) {
        return new ControllerDescriptor(d.name(), d.aliases(), d.clientName(), d.requiredFeatureGates(),
                d.disabledByDefault(), d.cloudProvider(), Optional.empty(), Optional.empty(),
                d.requiresSpecialHandling());
    }

    /** The upstream table with three controllers implemented, one of them off by default. */
    private static ControllerCatalog catalog() {
        return ControllerCatalog.of(ControllerCatalog.descriptors().stream().map(ControllerSelectionTest::unimplemented)
                .toList())
                .implement("replicaset-controller", c -> fake("replicaset-controller"))
                .implement("deployment-controller", c -> fake("deployment-controller"))
                .implement("bootstrap-signer-controller", c -> fake("bootstrap-signer-controller"));
    }

    private static ControllerSelection select(String flag) {
        return select(flag, "");
    }

    private static ControllerSelection select(String flag, String gates) {
        List<String> list = Arrays.stream(flag.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
        assertThat(ControllerSelection.validate(catalog(), list)).isEmpty();
        return ControllerSelection.resolve(catalog(), list, FeatureGates.parse(gates));
    }

    private static List<String> running(ControllerSelection s) {
        return s.running().stream().map(ControllerDescriptor::name).toList();
    }

    @Test
    void starRunsEveryImplementedDefaultOnControllerAndReportsTheRest() {
        ControllerSelection s = select("*");
        assertThat(running(s)).containsExactly("deployment-controller", "replicaset-controller");
        assertThat(s.notImplemented()).contains("endpoints-controller", "garbage-collector-controller",
                "namespace-controller", "taint-eviction-controller")
                .doesNotContain("replicaset-controller", "deployment-controller")
                // default-off, not named
                .doesNotContain("bootstrap-signer-controller", "token-cleaner-controller")
                // cloud provider and disabled feature gates are skipped, not "not implemented"
                .doesNotContain("service-lb-controller", "podcertificaterequest-cleaner-controller");
        assertThat(s.skipped()).extracting(ControllerSelection.Skipped::name)
                .contains("service-lb-controller", "node-route-controller", "cloud-node-lifecycle-controller",
                        "podcertificaterequest-cleaner-controller");
    }

    @Test
    void minusRemovesByNameOrAlias() {
        assertThat(running(select("*,-replicaset-controller"))).containsExactly("deployment-controller");
        assertThat(running(select("*,-replicaset"))).containsExactly("deployment-controller");
        assertThat(select("*,-endpoint").notImplemented()).doesNotContain("endpoints-controller");
        assertThat(select("*,-garbagecollector,-podgc").notImplemented())
                .doesNotContain("garbage-collector-controller", "pod-garbage-collector-controller");
    }

    @Test
    void firstMentionWinsAsUpstream() {
        assertThat(running(select("-replicaset,*,replicaset"))).containsExactly("deployment-controller");
        assertThat(running(select("replicaset,-replicaset-controller"))).containsExactly("replicaset-controller");
    }

    @Test
    void defaultOffControllersRunOnlyWhenNamed() {
        assertThat(running(select("*,bootstrap-signer-controller"))).containsExactly(
                "deployment-controller", "replicaset-controller", "bootstrap-signer-controller");
        assertThat(running(select("*,bootstrapsigner"))).contains("bootstrap-signer-controller");
        assertThat(select("*,tokencleaner").notImplemented()).contains("token-cleaner-controller");
    }

    @Test
    void withoutStarOnlyNamedControllersRun() {
        ControllerSelection s = select("replicaset,tokencleaner");
        assertThat(running(s)).containsExactly("replicaset-controller");
        assertThat(s.notImplemented()).containsExactly("token-cleaner-controller");
        ControllerSelection none = select("");
        assertThat(none.running()).isEmpty();
        assertThat(none.notImplemented()).isEmpty();
    }

    @Test
    void featureGatedControllersFollowTheirGates() {
        assertThat(select("*", "PodCertificateRequest=true").notImplemented())
                .contains("podcertificaterequest-cleaner-controller");
        assertThat(select("*", "SeparateTaintEvictionController=false").notImplemented())
                .doesNotContain("taint-eviction-controller");
        assertThat(select("*", "SeparateTaintEvictionController=false").skipped())
                .anySatisfy(sk -> {
                    assertThat(sk.name()).isEqualTo("taint-eviction-controller");
                    assertThat(sk.reason()).contains("SeparateTaintEvictionController");
                });
    }

    @Test
    void unknownNamesAreReportedWithTheValidNames() {
        assertThat(ControllerSelection.validate(catalog(), List.of("*", "replicaset", "nosuch")))
                .hasValueSatisfying(m -> assertThat(m).contains("\"nosuch\"", "valid names", "replicaset-controller",
                        "token-cleaner-controller"));
        assertThat(ControllerSelection.validate(catalog(), List.of("*", "-nosuch"))).hasValueSatisfying(
                m -> assertThat(m).contains("\"nosuch\""));
        assertThat(ControllerSelection.validate(catalog(), List.of("-*"))).isPresent();
        assertThat(ControllerSelection.validate(catalog(), List.of("*", "-podgc", "csrsigning", "ttl-after-finished",
                "serviceaccount-token", "garbagecollector"))).isEmpty();
    }
}
