package io.qkcm.controller.util.resource;

import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimSpec;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimStatus;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * resource.k8s.io/v1 ResourceClaim, the version v1.34 serves by default (v1beta1/v1beta2 are off by
 * default there). fabric8 7.4.0 models only v1alpha2…v1beta2; v1beta2's spec and status have v1's
 * shape (v1 was promoted from it unchanged), and fabric8's models keep fields they do not know.
 * In the kit because two controllers read it (resourceclaim-controller, resourcequota-controller's
 * claim evaluator) and the process keeps one informer per class.
 */
@Group("resource.k8s.io")
@Version("v1")
@Kind("ResourceClaim")
@Plural("resourceclaims")
@Singular("resourceclaim")
public class ResourceClaim extends CustomResource<ResourceClaimSpec, ResourceClaimStatus> implements Namespaced {

    /** v1's {@code resource.kubernetes.io/delete-protection}: the finalizer of the built-in allocator. */
    public static final String FINALIZER = "resource.kubernetes.io/delete-protection";
}
