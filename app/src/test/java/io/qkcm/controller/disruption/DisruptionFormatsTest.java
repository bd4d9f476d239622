package io.qkcm.controller.disruption;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;

/**
 * What the controller writes in words and numbers, against Go's own output: a selector's {@code %v} in the
 * UnmanagedPods event, intstr's rounding and errors, meta.SetStatusCondition's transitions.
 */
class DisruptionFormatsTest {

    @Test
    void aSelectorPrintsAsGosGeneratedString() {
        assertThat(DisruptionController.goString(new LabelSelectorBuilder().withMatchLabels(Map.of("b", "2", "a", "1"))
                .addNewMatchExpression().withKey("tier").withOperator("In").withValues("web", "api").endMatchExpression()
                .addNewMatchExpression().withKey("x").withOperator("Exists").endMatchExpression().build()))
                .isEqualTo("&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]"
                        + "LabelSelectorRequirement{LabelSelectorRequirement{Key:tier,Operator:In,Values:[web api],},"
                        + "LabelSelectorRequirement{Key:x,Operator:Exists,Values:[],},},}");
        assertThat(DisruptionController.goString(null)).isEqualTo("nil");
    }

    @Test
    void percentagesRoundUpAndBadStringsAreIntstrsErrors() {
        assertThat(IntOrPercent.scaledValue(new IntOrString("34%"), 3, true)).isEqualTo(2);
        assertThat(IntOrPercent.scaledValue(new IntOrString("28%"), 11, true)).isEqualTo(4);
        assertThat(IntOrPercent.scaledValue(new IntOrString("30%"), 7, true)).isEqualTo(3);
        assertThat(IntOrPercent.scaledValue(new IntOrString(5), 3, true)).isEqualTo(5);
        assertThatThrownBy(() -> IntOrPercent.scaledValue(new IntOrString("3"), 3, true))
                .hasMessage("invalid value for IntOrString: invalid type: string is not a percentage");
        assertThatThrownBy(() -> IntOrPercent.scaledValue(null, 3, true)).hasMessage("nil value for IntOrString");
    }

    @Test
    void aConditionMovesItsTransitionTimeOnlyWhenItsStatusChanges() {
        Instant t0 = Instant.parse("2030-01-01T00:00:00Z");
        Instant t1 = Instant.parse("2030-01-01T00:01:00Z");
        List<Condition> conditions = new ArrayList<>();
        assertThat(BudgetStatus.setStatusCondition(conditions, condition("False", "InsufficientPods"), t0)).isTrue();
        assertThat(conditions.get(0).getLastTransitionTime()).isEqualTo("2030-01-01T00:00:00Z");
        assertThat(BudgetStatus.setStatusCondition(conditions, condition("False", "SyncFailed"), t1)).isTrue();
        assertThat(conditions.get(0).getLastTransitionTime()).isEqualTo("2030-01-01T00:00:00Z");
        assertThat(BudgetStatus.setStatusCondition(conditions, condition("True", "SufficientPods"), t1)).isTrue();
        assertThat(conditions.get(0).getLastTransitionTime()).isEqualTo("2030-01-01T00:01:00Z");
        assertThat(BudgetStatus.setStatusCondition(conditions, condition("True", "SufficientPods"), t1)).isFalse();
        assertThat(conditions).hasSize(1);
    }

    private static Condition condition(String status, String reason) {
        return new ConditionBuilder().withType("DisruptionAllowed").withStatus(status).withReason(reason)
                .withObservedGeneration(1L).build();
    }
}
