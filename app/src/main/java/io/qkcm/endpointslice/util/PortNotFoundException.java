package io.qkcm.endpointslice.util;

/** A service port's named targetPort that the pod does not expose (upstream FindPort's error). */
public final class PortNotFoundException extends Exception {

    private static final long serialVersionUID = 1L;

    public PortNotFoundException(String message) {
        super(message);
    }
}
