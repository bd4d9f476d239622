package io.qkcm.controller.volume.vacprotection;

import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * storage.k8s.io/v1 VolumeAttributesClass, the version v1.34 serves (GA; v1beta1 is off by default).
 * fabric8 7.4.0 models only v1alpha1 and v1beta1, so this is qkcm's own class: v1's fields
 * (driverName, parameters) and any field it does not know kept as it came.
 */
@Group("storage.k8s.io")
@Version("v1")
@Kind("VolumeAttributesClass")
@Plural("volumeattributesclasses")
@Singular("volumeattributesclass")
@JsonInclude(JsonInclude.Include.NON_NULL)
// a bean of its own, as fabric8's models: KubernetesResource's polymorphic deserializer would call back into it
@JsonDeserialize(using = JsonDeserializer.None.class)
@JsonPropertyOrder({ "apiVersion", "kind", "metadata", "driverName", "parameters" })
public class VolumeAttributesClass implements HasMetadata {

    private String apiVersion = "storage.k8s.io/v1";
    private String kind = "VolumeAttributesClass";
    private ObjectMeta metadata;
    private String driverName;
    private Map<String, String> parameters;
    @JsonIgnore
    private final Map<String, Object> additionalProperties = new LinkedHashMap<>();

    @Override
    public String getApiVersion() {
        return apiVersion;
    }

    @Override
    public void setApiVersion(String apiVersion) {
        this.apiVersion = apiVersion;
    }

    @Override
    public String getKind() {
        return kind;
    }

    public void setKind(String kind) {
        this.kind = kind;
    }

    @Override
    public ObjectMeta getMetadata() {
        return metadata;
    }

    @Override
    public void setMetadata(ObjectMeta metadata) {
        this.metadata = metadata;
    }

    public String getDriverName() {
        return driverName;
    }

    public void setDriverName(String driverName) {
        this.driverName = driverName;
    }

    public Map<String, String> getParameters() {
        return parameters;
    }

    public void setParameters(Map<String, String> parameters) {
        this.parameters = parameters;
    }

    @JsonAnyGetter
    public Map<String, Object> getAdditionalProperties() {
        return additionalProperties;
    }

    @JsonAnySetter
    public void setAdditionalProperty(String name, Object value) {
        additionalProperties.put(name, value);
    }
}
