package io.qkcm.controller.endpointslicemirroring;

/** Event reasons of upstream's events.go (the first two are declared upstream but never recorded). */
final class Events {

    static final String FAILED_TO_LIST_ENDPOINT_SLICES = "FailedToListEndpointSlices";
    static final String FAILED_TO_UPDATE_ENDPOINT_SLICES = "FailedToUpdateEndpointSlices";
    /** An address of the Endpoints is not an IP address and was not mirrored. */
    static final String INVALID_IP_ADDRESS = "InvalidIPAddress";
    /** A subset had more addresses than --mirroring-max-endpoints-per-subset; the rest were not mirrored. */
    static final String TOO_MANY_ADDRESSES_TO_MIRROR = "TooManyAddressesToMirror";

    private Events() {
    }
}
