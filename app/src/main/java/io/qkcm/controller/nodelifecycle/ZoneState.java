package io.qkcm.controller.nodelifecycle;

/** Upstream's ZoneState: how much of a zone's nodes are not Ready. */
enum ZoneState {
    INITIAL("Initial"),
    NORMAL("Normal"),
    FULL_DISRUPTION("FullDisruption"),
    PARTIAL_DISRUPTION("PartialDisruption");

    final String upstreamName;

    ZoneState(String upstreamName) {
        this.upstreamName = upstreamName;
    }

    @Override
    public String toString() {
        return upstreamName;
    }
}
