package io.qkcm.controller.resourcequota.evaluator;

import io.qkcm.runtime.options.FeatureGates;

/** The feature gates the evaluators consult (upstream reads them from the default feature gate). */
public record QuotaFeatures(boolean inPlacePodVerticalScaling, boolean podLevelResources, boolean volumeAttributesClass,
        boolean recoverVolumeExpansionFailure) {

    public static QuotaFeatures from(FeatureGates gates) {
        return new QuotaFeatures(gates.enabled("InPlacePodVerticalScaling"), gates.enabled("PodLevelResources"),
                gates.enabled("VolumeAttributesClass"), gates.enabled("RecoverVolumeExpansionFailure"));
    }

    /** v1.34's defaults. */
    public static QuotaFeatures defaults() {
        return from(FeatureGates.defaults());
    }
}
