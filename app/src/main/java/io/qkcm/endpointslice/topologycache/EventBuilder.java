package io.qkcm.endpointslice.topologycache;

/** An event to record about the Service once the reconcile is done (upstream topologycache.EventBuilder). */
public record EventBuilder(String eventType, String reason, String message) {

    // upstream's message texts
    public static final String NO_ZONE_SPECIFIED = "One or more endpoints do not have a zone specified";
    public static final String NO_ALLOCATED_HINTS_FOR_ZONES = "No hints allocated for zones";
    public static final String TOPOLOGY_AWARE_HINTS_ENABLED = "Topology Aware Hints has been enabled";
    public static final String TOPOLOGY_AWARE_HINTS_DISABLED = "Topology Aware Hints has been disabled";
    public static final String INSUFFICIENT_NODE_INFO = "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes";
    public static final String NODES_READY_IN_ONE_ZONE_ONLY = "Nodes only ready in one zone";
    public static final String INSUFFICIENT_NUMBER_OF_ENDPOINTS = "Insufficient number of endpoints";
    public static final String MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD = "Unable to allocate minimum required endpoints to each zone without exceeding overload threshold";

    public static final String REASON_DISABLED = "TopologyAwareHintsDisabled";
    public static final String REASON_ENABLED = "TopologyAwareHintsEnabled";

    public EventBuilder withMessage(String m) {
        return new EventBuilder(eventType, reason, m);
    }

    /** upstream FormatWithAddressType. */
    public static String formatWithAddressType(String s, String addressType) {
        return s + ", addressType: " + addressType;
    }
}
