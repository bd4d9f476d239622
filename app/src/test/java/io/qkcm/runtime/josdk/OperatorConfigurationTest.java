package io.qkcm.runtime.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.config.BaseConfigurationService;
import io.javaoperatorsdk.operator.api.config.ConfigurationService;
import io.javaoperatorsdk.operator.api.config.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.retry.GenericRetry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.workqueue.WorkqueueMetrics;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;

/**
 * Flags → the JOSDK configuration of a controller's Operator, without an API server (nothing here
 * talks to one): workers from {@code --concurrent-*-syncs}, and every JOSDK behaviour kube-controller-manager
 * does not have turned off.
 */
class OperatorConfigurationTest {

    @Ignore
    static final class Probe extends KeyReconciler<ConfigMap> {
        Probe(ControllerContext context) {
            super(context, ConfigMap.class, "probe", context.options().concurrentSyncs("deployment"));
        }

        @Override
        protected void sync(String key) {
        }

        @Override
        protected List<SharedIndexInformer<?>> informers() {
            return List.of();
        }
    }

    @Test
    void flagsAndUpstreamsBehaviourBecomeTheOperatorsConfiguration() {
        ControllerManagerOptions options = new ControllerManagerOptions(Flags.upstream(),
                name -> Optional.ofNullable(Map.of("qkcm.concurrent-deployment-syncs", "7").get(name)));
        try (KubernetesClient client = new KubernetesClientBuilder()
                .withConfig(new io.fabric8.kubernetes.client.ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build())
                .build()) {
            SharedInformers informers = new SharedInformers(client, Duration.ofHours(12));
            Operators operators = new Operators(new BaseConfigurationService(),
                    new WorkqueueMetrics(new SimpleMeterRegistry()), Duration.ofSeconds(3));
            ControllerContext context = new ControllerContext("deployment-controller", client, informers, null, options,
                    null, operators);
            OperatorController controller = (OperatorController) context.operate(new Probe(context));

            assertThat(controller.name()).isEqualTo("deployment-controller");
            assertThat(controller.workerCount()).isEqualTo(7);
            assertThat(controller.operator().getRegisteredControllers()).singleElement().satisfies(registered -> {
                ControllerConfiguration<?> c = registered.getConfiguration();
                assertThat(c.getName()).isEqualTo("probe");
                assertThat(c.triggerReconcilerOnAllEvents()).isTrue();
                assertThat(c.isGenerationAware()).isFalse();
                assertThat(c.maxReconciliationInterval()).isEmpty();
                assertThat(((GenericRetry) c.getRetry()).getMaxAttempts()).isZero();
                assertThat(c.getRateLimiter().isLimited(c.getRateLimiter().initState())).isEmpty();
                assertThat(c.getInformerConfig().watchAllNamespaces()).isTrue();
                assertThat(c.getInformerConfig().getLabelSelector()).isNull();
                ConfigurationService s = c.getConfigurationService();
                assertThat(s.concurrentReconciliationThreads()).isEqualTo(7);
                assertThat(s.closeClientOnStop()).isFalse();
                assertThat(s.getLeaderElectionConfiguration()).isEmpty();
                assertThat(s.useSSAToPatchPrimaryResource()).isFalse();
                assertThat(s.ssaBasedCreateUpdateMatchForDependentResources()).isFalse();
                assertThat(s.previousAnnotationForDependentResourcesEventFiltering()).isFalse();
                assertThat(s.reconciliationTerminationTimeout()).isEqualTo(Duration.ofSeconds(3));
                // the client JOSDK builds informers with is the controller's own, wrapped for the shared caches
                assertThat(s.getKubernetesClient().getMasterUrl()).isEqualTo(client.getMasterUrl());
                assertThat(s.getKubernetesClient().toString()).startsWith("SharedInformerClient(");
            });
        }
    }
}
