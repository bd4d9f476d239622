package io.qkcm.controller;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.KubernetesClientException;

/** apimachinery's api/errors predicates over fabric8's {@link KubernetesClientException}. */
public final class ApiErrors {

    /** core/v1 NamespaceTerminatingCause: creation refused because the namespace is being deleted. */
    public static final String NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating";

    private ApiErrors() {
    }

    public static int code(Throwable t) {
        return t instanceof KubernetesClientException k ? k.getCode() : 0;
    }

    private static String reason(Throwable t) {
        if (t instanceof KubernetesClientException k && k.getStatus() != null) {
            return k.getStatus().getReason();
        }
        return null;
    }

    public static boolean isNotFound(Throwable t) {
        return code(t) == 404 || "NotFound".equals(reason(t));
    }

    public static boolean isConflict(Throwable t) {
        return code(t) == 409 && !"AlreadyExists".equals(reason(t));
    }

    public static boolean isAlreadyExists(Throwable t) {
        return "AlreadyExists".equals(reason(t));
    }

    public static boolean isInvalid(Throwable t) {
        return code(t) == 422 || "Invalid".equals(reason(t));
    }

    public static boolean isForbidden(Throwable t) {
        return code(t) == 403 || "Forbidden".equals(reason(t));
    }

    /**
     * Whether a write failed without telling whether it happened: no answer came back (the
     * connection closed or reset after the request went out, or the client timed out), or the API
     * server answered 504 Timeout ("may still be processing the request"). A request that never left
     * (connection refused, unknown host, TLS handshake failure) is a plain failure, as is any other
     * answer. Controllers that count their own writes must not count such a write as failed: the
     * object may exist, and the watch that would show it may be the connection that just broke.
     */
    public static boolean isOutcomeUnknown(Throwable t) {
        if (t instanceof KubernetesClientException k && k.getCode() > 0) {
            return k.getCode() == 504 || "Timeout".equals(reason(t));
        }
        boolean answerless = false;
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof java.net.ConnectException || c instanceof java.net.UnknownHostException
                    || c instanceof java.net.NoRouteToHostException || c instanceof javax.net.ssl.SSLHandshakeException
                    || c instanceof InterruptedException) {
                return false;
            }
            if (c instanceof java.io.IOException || c instanceof java.util.concurrent.TimeoutException
                    || c instanceof io.vertx.core.VertxException) {
                answerless = true;
            }
        }
        return answerless;
    }

    /** Whether the error's status details carry a cause of {@code causeType}. */
    public static boolean hasStatusCause(Throwable t, String causeType) {
        if (!(t instanceof KubernetesClientException k)) {
            return false;
        }
        Status status = k.getStatus();
        if (status == null || status.getDetails() == null || status.getDetails().getCauses() == null) {
            return false;
        }
        for (StatusCause c : status.getDetails().getCauses()) {
            if (causeType.equals(c.getReason())) {
                return true;
            }
        }
        return false;
    }

    /**
     * The text Go's {@code err.Error()} gives for an API status error (the status message), used in
     * event messages and conditions; other errors give their message.
     */
    public static String message(Throwable t) {
        if (t instanceof KubernetesClientException k && k.getStatus() != null && k.getStatus().getMessage() != null) {
            return k.getStatus().getMessage();
        }
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }
}
