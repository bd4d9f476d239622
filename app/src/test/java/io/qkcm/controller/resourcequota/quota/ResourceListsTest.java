package io.qkcm.controller.resourcequota.quota;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.qkcm.controller.util.GoQuantity;

/**
 * quota's resource lists (apimachinery's quota/v1 resources.go) and the format of sums, which decide how
 * status.used reads once the API server stores it; the quantity arithmetic itself is the kit's
 * GoQuantity (GoQuantityVectorsTest).
 */
class ResourceListsTest {

    @Test
    void sumsTakeTheFormatOfTheFirstNonZeroOperand() {
        GoQuantity sum = GoQuantity.ZERO.add(GoQuantity.parse("1Gi")).add(GoQuantity.parse("512Mi"));
        assertThat(sum.toString()).isEqualTo("1536Mi");
        GoQuantity mixed = GoQuantity.parse("1Gi").add(GoQuantity.parse("1M"));
        assertThat(mixed.toString()).isEqualTo("1074741824");
        GoQuantity decimalFirst = GoQuantity.parse("1M").add(GoQuantity.parse("1Gi"));
        assertThat(decimalFirst.toString()).isEqualTo("1074741824");
        assertThat(GoQuantity.parse("100m").add(GoQuantity.parse("400m")).toString()).isEqualTo("500m");
        assertThat(GoQuantity.parse("500m").add(GoQuantity.parse("500m")).toString()).isEqualTo("1");
    }

    /** quota.Equals: values compared, formats not. */
    @Test
    void equalsComparesValues() {
        assertThat(ResourceLists.equals(Map.of("cpu", GoQuantity.parse("1")), Map.of("cpu", GoQuantity.parse("1000m")))).isTrue();
        assertThat(ResourceLists.equals(Map.of("cpu", GoQuantity.parse("1")), Map.of("cpu", GoQuantity.parse("2")))).isFalse();
        assertThat(ResourceLists.equals(Map.of("cpu", GoQuantity.parse("1")), Map.of("memory", GoQuantity.parse("1")))).isFalse();
        assertThat(ResourceLists.equals(Map.of("cpu", GoQuantity.parse("1")), Map.of())).isFalse();
        assertThat(ResourceLists.equals(Map.of(), Map.of())).isTrue();
    }

    /** resources_test's TestAdd, TestIntersection, TestDifference. */
    @Test
    void addIntersectionDifference() {
        Map<String, GoQuantity> sum = ResourceLists.add(Map.of("cpu", GoQuantity.parse("100m")),
                Map.of("cpu", GoQuantity.parse("100m"), "memory", GoQuantity.parse("1Gi")));
        assertThat(sum).containsOnlyKeys("cpu", "memory");
        assertThat(sum.get("cpu").toString()).isEqualTo("200m");
        assertThat(ResourceLists.intersection(java.util.List.of("c", "a", "b", "a"), java.util.List.of("a", "c", "d")))
                .containsExactly("a", "c");
        assertThat(ResourceLists.difference(java.util.List.of("c", "a", "b", "a"), java.util.List.of("a", "d")))
                .containsExactly("b", "c");
        assertThat(ResourceLists.mask(sum, java.util.List.of("memory", "pods"))).containsOnlyKeys("memory");
    }
}
