package io.qkcm.controller.podautoscaler;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerCondition;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerStatus;

/** Upstream's setCondition: an HPA condition set in place; its transition time moves with its status. */
final class Conditions {

    static final String ABLE_TO_SCALE = "AbleToScale";
    static final String SCALING_ACTIVE = "ScalingActive";
    static final String SCALING_LIMITED = "ScalingLimited";

    private Conditions() {
    }

    static void set(HorizontalPodAutoscaler hpa, String type, String status, String reason, String message, Instant now) {
        if (hpa.getStatus() == null) {
            hpa.setStatus(new HorizontalPodAutoscalerStatus());
        }
        List<HorizontalPodAutoscalerCondition> list = hpa.getStatus().getConditions() == null ? new ArrayList<>()
                : new ArrayList<>(hpa.getStatus().getConditions());
        HorizontalPodAutoscalerCondition existing = null;
        for (HorizontalPodAutoscalerCondition c : list) {
            if (type.equals(c.getType())) {
                existing = c;
                break;
            }
        }
        if (existing == null) {
            existing = new HorizontalPodAutoscalerCondition();
            existing.setType(type);
            list.add(existing);
        }
        if (!status.equals(existing.getStatus())) {
            existing.setLastTransitionTime(now.truncatedTo(ChronoUnit.SECONDS).toString());
        }
        existing.setStatus(status);
        existing.setReason(reason);
        existing.setMessage(message);
        hpa.getStatus().setConditions(list);
    }

    static HorizontalPodAutoscalerCondition get(HorizontalPodAutoscaler hpa, String type) {
        if (hpa.getStatus() == null || hpa.getStatus().getConditions() == null) {
            return null;
        }
        return hpa.getStatus().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
    }
}
