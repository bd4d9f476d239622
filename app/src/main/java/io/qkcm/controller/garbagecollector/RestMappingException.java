package io.qkcm.controller.garbagecollector;

/** Upstream's restMappingError: a kind the REST mapper does not (yet) know. */
final class RestMappingException extends Exception {

    RestMappingException(String kind, String apiVersion) {
        super("unable to get REST mapping for " + apiVersion + "/" + kind + ".", null, false, false);
    }
}
