package io.qkcm.controller.resourceclaim.api;

import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimTemplateSpec;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/** resource.k8s.io/v1 ResourceClaimTemplate (see {@link io.qkcm.controller.util.resource.ResourceClaim} for why this is qkcm's own class). */
@Group("resource.k8s.io")
@Version("v1")
@Kind("ResourceClaimTemplate")
@Plural("resourceclaimtemplates")
@Singular("resourceclaimtemplate")
public class ResourceClaimTemplate extends CustomResource<ResourceClaimTemplateSpec, Void> implements Namespaced {
}
