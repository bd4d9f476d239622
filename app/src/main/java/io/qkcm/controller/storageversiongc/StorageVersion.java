package io.qkcm.controller.storageversiongc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * internal.apiserver.k8s.io/v1alpha1 StorageVersion (cluster-scoped), which fabric8 7.4.0 does not model.
 * Every field of v1alpha1's status is modelled, and fields this class does not know are kept, so that the
 * status this controller writes back loses nothing.
 */
@Group("internal.apiserver.k8s.io")
@Version("v1alpha1")
@Kind("StorageVersion")
@Plural("storageversions")
@Singular("storageversion")
public class StorageVersion extends CustomResource<StorageVersion.Spec, StorageVersion.Status> {

    /** v1alpha1's spec is an empty object. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public static class Spec extends Unknown {
    }

    @Override
    protected Spec initSpec() {
        return new Spec();
    }

    @Override
    protected Status initStatus() {
        return new Status();
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Status extends Unknown {
        @JsonProperty("storageVersions")
        public List<ServerStorageVersion> storageVersions;
        @JsonProperty("commonEncodingVersion")
        public String commonEncodingVersion;
        @JsonProperty("conditions")
        public List<Condition> conditions;

        List<ServerStorageVersion> storageVersions() {
            return storageVersions == null ? List.of() : storageVersions;
        }
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class ServerStorageVersion extends Unknown {
        @JsonProperty("apiServerID")
        public String apiServerID;
        @JsonProperty("encodingVersion")
        public String encodingVersion;
        @JsonProperty("decodableVersions")
        public List<String> decodableVersions;
        @JsonProperty("servedVersions")
        public List<String> servedVersions;

        public ServerStorageVersion() {
        }

        public ServerStorageVersion(String apiServerID, String encodingVersion, List<String> decodableVersions) {
            this.apiServerID = apiServerID;
            this.encodingVersion = encodingVersion;
            this.decodableVersions = new ArrayList<>(decodableVersions);
        }
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Condition extends Unknown {
        @JsonProperty("type")
        public String type;
        @JsonProperty("status")
        public String status;
        @JsonProperty("observedGeneration")
        public Long observedGeneration;
        @JsonProperty("lastTransitionTime")
        public String lastTransitionTime;
        @JsonProperty("reason")
        public String reason;
        @JsonProperty("message")
        public String message;
    }

    /** Fields a newer API server may add: read and written back untouched. */
    public abstract static class Unknown {
        private final Map<String, Object> additionalProperties = new LinkedHashMap<>();

        @JsonAnyGetter
        public Map<String, Object> getAdditionalProperties() {
            return additionalProperties;
        }

        @JsonAnySetter
        public void setAdditionalProperty(String name, Object value) {
            additionalProperties.put(name, value);
        }
    }
}
