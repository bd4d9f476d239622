package io.qkcm.controller.validatingadmissionpolicystatus;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.ExpressionWarning;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.informers.ApiDiscovery;
import io.qkcm.runtime.informers.MetadataClient;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * validatingadmissionpolicy-status-controller (upstream pkg/controller/validatingadmissionpolicystatus): for a
 * ValidatingAdmissionPolicy whose generation is newer than status.observedGeneration, type checks its
 * validation and message expressions ({@link TypeChecker}) and applies status.observedGeneration and
 * status.typeChecking.expressionWarnings, server-side, as field manager {@value #FIELD_MANAGER} with force. A
 * policy that checks clean gets an empty typeChecking, which drops warnings it had before. Upstream queues a
 * policy on add and update; a deleted policy is not found in the cache and nothing is done.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class ValidatingAdmissionPolicyStatusController extends KeyReconciler<ValidatingAdmissionPolicy> {

    public static final String NAME = "validatingadmissionpolicy-status-controller";
    /** Upstream's ControllerName: its queue's name and the field manager of its status applies. */
    public static final String FIELD_MANAGER = "validatingadmissionpolicy-status";
    public static final String QUEUE = FIELD_MANAGER;

    private final SharedIndexInformer<ValidatingAdmissionPolicy> policies;
    private final TypeChecker typeChecker;

    /** {@code workers}: --concurrent-validating-admission-policy-status-syncs. */
    public ValidatingAdmissionPolicyStatusController(ControllerContext context, int workers) {
        this(context, workers, defaultTypeChecker(context));
    }

    ValidatingAdmissionPolicyStatusController(ControllerContext context, int workers, TypeChecker typeChecker) {
        super(context, ValidatingAdmissionPolicy.class, QUEUE, workers);
        this.policies = context.informers().informerFor(ValidatingAdmissionPolicy.class);
        this.typeChecker = typeChecker;
    }

    /** Kinds from API discovery (reset at most once per policy on a miss), schemas from /openapi/v3. */
    static TypeChecker defaultTypeChecker(ControllerContext context) {
        MetadataClient metadata = new MetadataClient(context.client());
        ApiDiscovery discovery = new ApiDiscovery(metadata);
        TypeChecker.RestMapper restMapper = new TypeChecker.RestMapper() {
            private volatile ApiDiscovery.Snapshot snapshot;

            @Override
            public List<TypeChecker.GroupVersionKind> kindsFor(String group, String version, String resource) {
                ApiDiscovery.Snapshot s = snapshot;
                if (s == null) {
                    try {
                        s = discovery.discover();
                    } catch (RuntimeException e) {
                        // upstream's KindsFor error: the rule's resource is skipped, never the policy failed
                        return List.of();
                    }
                    snapshot = s;
                }
                List<TypeChecker.GroupVersionKind> out = new ArrayList<>();
                for (ApiDiscovery.ApiResource r : s.all()) {
                    if (r.gvr().group().equals(group) && r.gvr().version().equals(version)
                            && r.gvr().resource().equals(resource)) {
                        out.add(new TypeChecker.GroupVersionKind(group, version, r.kind()));
                    }
                }
                return out;
            }

            @Override
            public void reset() {
                snapshot = null;
            }
        };
        return new TypeChecker(new OpenApiSchemaResolver(metadata::getJson), restMapper,
                () -> Instant.now().getNano());
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(policies);
    }

    @Override
    public void onStart() {
        log.infof("Starting %s", NAME);
    }

    @Override
    public void onShutdown() {
        log.infof("Shutting down %s", NAME);
    }

    @Override
    protected void sync(String key) throws Exception {
        ValidatingAdmissionPolicy policy = policies.getStore().getByKey(key);
        if (policy == null) {
            // being deleted: nothing to do
            return;
        }
        reconcile(policy);
    }

    /** Upstream's reconcile. */
    void reconcile(ValidatingAdmissionPolicy policy) {
        long generation = policy.getMetadata().getGeneration() == null ? 0 : policy.getMetadata().getGeneration();
        Long observed = policy.getStatus() == null ? null : policy.getStatus().getObservedGeneration();
        if (generation <= (observed == null ? 0 : observed)) {
            return;
        }
        List<ExpressionWarning> warnings = typeChecker.check(policy);
        List<Map<String, Object>> warningsConfig = new ArrayList<>();
        for (ExpressionWarning w : warnings) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("fieldRef", w.getFieldRef());
            m.put("warning", w.getWarning());
            warningsConfig.add(m);
        }
        Map<String, Object> typeChecking = new LinkedHashMap<>();
        if (!warningsConfig.isEmpty()) {
            typeChecking.put("expressionWarnings", warningsConfig);
        }
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("observedGeneration", generation);
        status.put("typeChecking", typeChecking);
        Map<String, Object> apply = new LinkedHashMap<>();
        apply.put("kind", "ValidatingAdmissionPolicy");
        apply.put("apiVersion", "admissionregistration.k8s.io/v1");
        apply.put("metadata", Map.of("name", policy.getMetadata().getName()));
        apply.put("status", status);
        context.client().admissionRegistration().v1().validatingAdmissionPolicies()
                .withName(policy.getMetadata().getName()).subresource("status")
                .patch(new PatchContext.Builder().withPatchType(PatchType.SERVER_SIDE_APPLY)
                        .withFieldManager(FIELD_MANAGER).withForce(true).build(), Json.api().asJson(apply));
    }
}
