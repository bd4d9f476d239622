package io.qkcm.controller.util.resource;

import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceClassSpec;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * resource.k8s.io/v1 DeviceClass (cluster-scoped, no status), for the same reason as {@link ResourceClaim}.
 */
@Group("resource.k8s.io")
@Version("v1")
@Kind("DeviceClass")
@Plural("deviceclasses")
@Singular("deviceclass")
public class DeviceClass extends CustomResource<DeviceClassSpec, Void> {
}
