package io.qkcm.controller.resourcequota;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.qkcm.controller.resourcequota.evaluator.CoreEvaluators;
import io.qkcm.controller.resourcequota.evaluator.QuotaFeatures;
import io.qkcm.controller.resourcequota.quota.Registry;

/** resource_quota_controller_test.go's TestAddQuota: which quotas go to the priority queue. */
class AddQuotaTest {

    private final Registry registry = new Registry(CoreEvaluators.newEvaluators(gr -> ns -> List.of(),
            Clock.systemUTC(), QuotaFeatures.defaults()));

    private static Map<String, Quantity> list(String... kv) {
        Map<String, Quantity> m = new TreeMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], new Quantity(kv[i + 1]));
        }
        return m;
    }

    private static ResourceQuota quota(Map<String, Quantity> spec, Map<String, Quantity> statusHard,
            Map<String, Quantity> used) {
        ResourceQuotaBuilder b = new ResourceQuotaBuilder().withNewMetadata().withNamespace("default").withName("rq")
                .endMetadata().withNewSpec().withHard(spec).endSpec();
        if (statusHard != null || used != null) {
            b.withNewStatus().withHard(statusHard).withUsed(used).endStatus();
        }
        return b.build();
    }

    @Test
    void priorityTable() {
        assertThat(ResourceQuotaController.needsPriority(quota(list("cpu", "4"), null, null), registry))
                .as("no status").isTrue();
        assertThat(ResourceQuotaController.needsPriority(quota(list("cpu", "4"), list("cpu", "4"), null), registry))
                .as("status, no usage").isTrue();
        assertThat(ResourceQuotaController.needsPriority(quota(list("requests.example/foobars.example.com", "4"),
                list("requests.example/foobars.example.com", "4"), null), registry))
                .as("status, no usage (extended resources)").isTrue();
        assertThat(ResourceQuotaController.needsPriority(quota(list("cpu", "4"), list("cpu", "6"), list("cpu", "0")),
                registry)).as("status, mismatch").isTrue();
        assertThat(ResourceQuotaController.needsPriority(quota(list("foobars.example.com", "4"),
                list("foobars.example.com", "4"), null), registry))
                .as("status, missing usage, but don't care (no evaluator)").isFalse();
        assertThat(ResourceQuotaController.needsPriority(quota(list("cpu", "4"), list("cpu", "4"), list("cpu", "0")),
                registry)).as("ready").isFalse();
        // semantic equality: 4 and 4000m are the same limit
        assertThat(ResourceQuotaController.needsPriority(quota(list("cpu", "4"), list("cpu", "4000m"), list("cpu", "0")),
                registry)).as("ready, other notation").isFalse();
    }
}
