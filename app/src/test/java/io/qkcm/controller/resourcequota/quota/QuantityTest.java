package io.qkcm.controller.resourcequota.quota;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * Go's resource.Quantity canonical form and the format of sums (apimachinery quantity_test's
 * canonical cases), which decide how status.used reads once the API server stores it.
 */
class QuantityTest {

    private static String canonical(String s) {
        return Quantity.parse(s).toString();
    }

    @Test
    void canonicalFormsAsGo() {
        assertThat(canonical("0")).isEqualTo("0");
        assertThat(canonical("0m")).isEqualTo("0");
        assertThat(canonical("1")).isEqualTo("1");
        assertThat(canonical("1000m")).isEqualTo("1");
        assertThat(canonical("1500m")).isEqualTo("1500m");
        assertThat(canonical("1.5")).isEqualTo("1500m");
        assertThat(canonical("0.5")).isEqualTo("500m");
        assertThat(canonical("100")).isEqualTo("100");
        assertThat(canonical("1500")).isEqualTo("1500");
        assertThat(canonical("2000")).isEqualTo("2k");
        assertThat(canonical("100M")).isEqualTo("100M");
        assertThat(canonical("1G")).isEqualTo("1G");
        assertThat(canonical("1Gi")).isEqualTo("1Gi");
        assertThat(canonical("1024Mi")).isEqualTo("1Gi");
        assertThat(canonical("1536Mi")).isEqualTo("1536Mi");
        assertThat(canonical("512")).isEqualTo("512");
        // BinarySI below 1024 and fractional values fall back to DecimalSI
        assertThat(Quantity.parse("0.5Ki").toString()).isEqualTo("512");
        assertThat(Quantity.parse("1.5Mi").toString()).isEqualTo("1536Ki");
        assertThat(canonical("1e3")).isEqualTo("1e3");
        assertThat(canonical("1E6")).isEqualTo("1e6");
        assertThat(canonical("12e2")).isEqualTo("1200");
        // nano precision at most, rounded up
        assertThat(canonical("1.0000000001")).isEqualTo("1000000001n");
    }

    @Test
    void sumsTakeTheFormatOfTheFirstNonZeroOperand() {
        Quantity sum = Quantity.ZERO.add(Quantity.parse("1Gi")).add(Quantity.parse("512Mi"));
        assertThat(sum.toString()).isEqualTo("1536Mi");
        Quantity mixed = Quantity.parse("1Gi").add(Quantity.parse("1M"));
        assertThat(mixed.toString()).isEqualTo("1074741824");
        Quantity decimalFirst = Quantity.parse("1M").add(Quantity.parse("1Gi"));
        assertThat(decimalFirst.toString()).isEqualTo("1074741824");
        assertThat(Quantity.parse("100m").add(Quantity.parse("400m")).toString()).isEqualTo("500m");
        assertThat(Quantity.parse("500m").add(Quantity.parse("500m")).toString()).isEqualTo("1");
    }

    /** quota.Equals: values compared, formats not. */
    @Test
    void equalsComparesValues() {
        assertThat(ResourceLists.equals(Map.of("cpu", Quantity.parse("1")), Map.of("cpu", Quantity.parse("1000m")))).isTrue();
        assertThat(ResourceLists.equals(Map.of("cpu", Quantity.parse("1")), Map.of("cpu", Quantity.parse("2")))).isFalse();
        assertThat(ResourceLists.equals(Map.of("cpu", Quantity.parse("1")), Map.of("memory", Quantity.parse("1")))).isFalse();
        assertThat(ResourceLists.equals(Map.of("cpu", Quantity.parse("1")), Map.of())).isFalse();
        assertThat(ResourceLists.equals(Map.of(), Map.of())).isTrue();
    }

    /** resources_test's TestAdd, TestIntersection, TestDifference. */
    @Test
    void addIntersectionDifference() {
        Map<String, Quantity> sum = ResourceLists.add(Map.of("cpu", Quantity.parse("100m")),
                Map.of("cpu", Quantity.parse("100m"), "memory", Quantity.parse("1Gi")));
        assertThat(sum).containsOnlyKeys("cpu", "memory");
        assertThat(sum.get("cpu").toString()).isEqualTo("200m");
        assertThat(ResourceLists.intersection(java.util.List.of("c", "a", "b", "a"), java.util.List.of("a", "c", "d")))
                .containsExactly("a", "c");
        assertThat(ResourceLists.difference(java.util.List.of("c", "a", "b", "a"), java.util.List.of("a", "d")))
                .containsExactly("b", "c");
        assertThat(ResourceLists.mask(sum, java.util.List.of("memory", "pods"))).containsOnlyKeys("memory");
    }
}
