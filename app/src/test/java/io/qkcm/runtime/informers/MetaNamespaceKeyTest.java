package io.qkcm.runtime.informers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;

/** client-go's SplitMetaNamespaceKey table (tools/cache/store_test.go) and MetaNamespaceKeyFunc. */
class MetaNamespaceKeyTest {

    @Test
    void splitsAsClientGo() {
        assertThat(MetaNamespaceKey.split("ns/name")).isEqualTo(new MetaNamespaceKey("ns", "name"));
        assertThat(MetaNamespaceKey.split("name")).isEqualTo(new MetaNamespaceKey("", "name"));
        // empty parts are not an error for the split: callers that need both check them
        assertThat(MetaNamespaceKey.split("/name")).isEqualTo(new MetaNamespaceKey("", "name"));
        assertThat(MetaNamespaceKey.split("ns/")).isEqualTo(new MetaNamespaceKey("ns", ""));
        assertThat(MetaNamespaceKey.split("")).isEqualTo(new MetaNamespaceKey("", ""));
        assertThatThrownBy(() -> MetaNamespaceKey.split("a/b/c")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unexpected key format");
    }

    @Test
    void keyOfAnObjectRoundTrips() {
        var cm = new ConfigMapBuilder().withNewMetadata().withNamespace("ns").withName("cm").endMetadata().build();
        var namespace = new NamespaceBuilder().withNewMetadata().withName("kube-system").endMetadata().build();
        assertThat(MetaNamespaceKey.of(cm)).isEqualTo("ns/cm");
        assertThat(MetaNamespaceKey.of(namespace)).isEqualTo("kube-system");
        assertThat(MetaNamespaceKey.split(MetaNamespaceKey.of(cm)).toString()).isEqualTo("ns/cm");
        assertThat(MetaNamespaceKey.split(MetaNamespaceKey.of(namespace)).toString()).isEqualTo("kube-system");
    }
}
