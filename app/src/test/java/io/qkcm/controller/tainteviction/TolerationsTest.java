package io.qkcm.controller.tainteviction;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;

/** Upstream's TestFilterNoExecuteTaints and TestGetMinTolerationTime, and GetMatchingTolerations. */
class TolerationsTest {

    private static Taint taint(String key, String value, String effect) {
        return new TaintBuilder().withKey(key).withValue(value).withEffect(effect).build();
    }

    private static Toleration seconds(Long s) {
        return new TolerationBuilder().withTolerationSeconds(s).build();
    }

    @Test
    void onlyNoExecuteTaintsCount() {
        List<Taint> taints = Tolerations.noExecuteTaints(
                List.of(taint("one", "one", "NoExecute"), taint("two", "two", "NoSchedule")));
        assertThat(taints).extracting(Taint::getKey).containsExactly("one");
    }

    @Test
    void minTolerationTime() {
        assertThat(Tolerations.minTolerationTime(List.of())).isEqualTo(Duration.ZERO);
        assertThat(Tolerations.minTolerationTime(List.of(seconds(null)))).isNegative();
        assertThat(Tolerations.minTolerationTime(List.of(seconds(1L), seconds(2L)))).isEqualTo(Duration.ofSeconds(1));
        assertThat(Tolerations.minTolerationTime(List.of(seconds(1L), seconds(null)))).isEqualTo(Duration.ofSeconds(1));
        assertThat(Tolerations.minTolerationTime(List.of(seconds(null), seconds(1L)))).isEqualTo(Duration.ofSeconds(1));
        assertThat(Tolerations.minTolerationTime(List.of(seconds(5L), seconds(0L)))).isEqualTo(Duration.ZERO);
        assertThat(Tolerations.minTolerationTime(List.of(seconds(-3L)))).isEqualTo(Duration.ZERO);
        // Go's time.Duration(s) * time.Second wraps past 2^63 ns; 10^10 s becomes a negative duration,
        // which the taint manager reads as "forever"
        assertThat(Tolerations.minTolerationTime(List.of(seconds(10_000_000_000L)))).isNegative();
    }

    @Test
    void everyTaintNeedsATolerationAndTheFirstMatchIsUsed() {
        Taint t1 = taint("testTaint1", "test1", "NoExecute");
        Taint t2 = taint("testTaint2", "test2", "NoExecute");
        Toleration exact1 = new TolerationBuilder().withKey("testTaint1").withValue("test1").withEffect("NoExecute")
                .withTolerationSeconds(100L).build();
        Toleration exists2 = new TolerationBuilder().withKey("testTaint2").withOperator("Exists").build();
        Toleration anything = new TolerationBuilder().withOperator("Exists").build();
        Toleration otherValue = new TolerationBuilder().withKey("testTaint1").withValue("nope").build();
        Toleration noSchedule = new TolerationBuilder().withKey("testTaint1").withValue("test1").withEffect("NoSchedule").build();

        assertThat(Tolerations.matchingTolerations(List.of(), List.of())).isEqualTo(new Tolerations.Match(true, List.of()));
        assertThat(Tolerations.matchingTolerations(List.of(t1), List.of()).allTolerated()).isFalse();
        assertThat(Tolerations.matchingTolerations(List.of(t1, t2), List.of(exact1)).allTolerated()).isFalse();
        assertThat(Tolerations.matchingTolerations(List.of(t1, t2), List.of(exact1, exists2)))
                .isEqualTo(new Tolerations.Match(true, List.of(exact1, exists2)));
        assertThat(Tolerations.matchingTolerations(List.of(t1, t2), List.of(anything, exact1)))
                .isEqualTo(new Tolerations.Match(true, List.of(anything, anything)));
        assertThat(Tolerations.matchingTolerations(List.of(t1), List.of(otherValue)).allTolerated()).isFalse();
        assertThat(Tolerations.matchingTolerations(List.of(t1), List.of(noSchedule)).allTolerated()).isFalse();
    }
}
