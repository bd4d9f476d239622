package io.qkcm.controller.util.resource;

import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceSliceSpec;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * resource.k8s.io/v1 ResourceSlice (cluster-scoped, no status), for the same reason as
 * {@link ResourceClaim}: fabric8 7.4.0 has no v1 model, v1beta2's spec has v1's shape. One class per
 * resource in the process, so that the shared informers keep one watch of it.
 */
@Group("resource.k8s.io")
@Version("v1")
@Kind("ResourceSlice")
@Plural("resourceslices")
@Singular("resourceslice")
public class ResourceSlice extends CustomResource<ResourceSliceSpec, Void> {
}
