package io.qkcm.controller.certificates.cleaner;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * certificates.k8s.io/v1alpha1 PodCertificateRequest, new in v1.34 and not modelled by fabric8 7.4.0.
 * The cleaner reads only its metadata; spec and status carry v1alpha1's fields (byte fields as base64,
 * as Go's []byte) and keep any other, so the objects round-trip.
 */
@Group("certificates.k8s.io")
@Version("v1alpha1")
@Kind("PodCertificateRequest")
@Plural("podcertificaterequests")
@Singular("podcertificaterequest")
public class PodCertificateRequest extends CustomResource<PodCertificateRequest.Spec, PodCertificateRequest.Status>
        implements Namespaced {

    @Override
    protected Spec initSpec() {
        return new Spec();
    }

    @Override
    protected Status initStatus() {
        return new Status();
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Spec extends Unknown {
        @JsonProperty("signerName")
        public String signerName;
        @JsonProperty("podName")
        public String podName;
        @JsonProperty("podUID")
        public String podUID;
        @JsonProperty("serviceAccountName")
        public String serviceAccountName;
        @JsonProperty("serviceAccountUID")
        public String serviceAccountUID;
        @JsonProperty("nodeName")
        public String nodeName;
        @JsonProperty("nodeUID")
        public String nodeUID;
        @JsonProperty("maxExpirationSeconds")
        public Integer maxExpirationSeconds;
        @JsonProperty("pkixPublicKey")
        public byte[] pkixPublicKey;
        @JsonProperty("proofOfPossession")
        public byte[] proofOfPossession;
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Status extends Unknown {
        @JsonProperty("conditions")
        public List<Condition> conditions;
        @JsonProperty("certificateChain")
        public String certificateChain;
        @JsonProperty("notBefore")
        public String notBefore;
        @JsonProperty("beginRefreshAt")
        public String beginRefreshAt;
        @JsonProperty("notAfter")
        public String notAfter;
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
