package io.qkcm.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The process's one Jackson configuration for what qkcm reads and writes itself (patch bodies, metadata
 * lists, Go type layouts); API objects go through the fabric8 client's own serialization. Jackson's
 * defaults, shared: an ObjectMapper is thread-safe once configured, and this one is never reconfigured.
 */
public final class Json {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {
    }

    public static ObjectMapper mapper() {
        return MAPPER;
    }
}
