package io.qkcm.controller.validatingadmissionpolicystatus;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The hand-built types of the admission variables {@code request} and {@code namespaceObject} (upstream's
 * BuildRequestType and BuildNamespaceType in k8s.io/apiserver/pkg/admission/plugin/cel/compile.go): the
 * AdmissionRequest without uid, object and oldObject, and a Namespace without managedFields, ownerReferences
 * and the like.
 */
final class KubernetesTypes {

    private KubernetesTypes() {
    }

    private static DeclType.ListOf strings() {
        return new DeclType.ListOf(DeclType.STRING);
    }

    private static DeclType.ObjectType object(String name, Object... nameThenType) {
        Map<String, DeclType> fields = new LinkedHashMap<>();
        for (int i = 0; i < nameThenType.length; i += 2) {
            fields.put((String) nameThenType[i], (DeclType) nameThenType[i + 1]);
        }
        return new DeclType.ObjectType(name, fields);
    }

    static DeclType.ObjectType requestType() {
        DeclType gvk = object("kubernetes.GroupVersionKind",
                "group", DeclType.STRING, "version", DeclType.STRING, "kind", DeclType.STRING);
        DeclType gvr = object("kubernetes.GroupVersionResource",
                "group", DeclType.STRING, "version", DeclType.STRING, "resource", DeclType.STRING);
        DeclType userInfo = object("kubernetes.UserInfo",
                "username", DeclType.STRING, "uid", DeclType.STRING, "groups", strings(),
                "extra", new DeclType.MapOf(DeclType.STRING, strings()));
        return object("kubernetes.AdmissionRequest",
                "kind", gvk, "resource", gvr, "subResource", DeclType.STRING,
                "requestKind", gvk, "requestResource", gvr, "requestSubResource", DeclType.STRING,
                "name", DeclType.STRING, "namespace", DeclType.STRING, "operation", DeclType.STRING,
                "userInfo", userInfo, "dryRun", DeclType.BOOL, "options", DeclType.DYN);
    }

    static DeclType.ObjectType namespaceType() {
        DeclType spec = object("kubernetes.NamespaceSpec", "finalizers", strings());
        DeclType condition = object("kubernetes.NamespaceCondition",
                "status", DeclType.STRING, "type", DeclType.STRING, "lastTransitionTime", DeclType.TIMESTAMP,
                "message", DeclType.STRING, "reason", DeclType.STRING);
        DeclType status = object("kubernetes.NamespaceStatus",
                "conditions", new DeclType.ListOf(condition), "phase", DeclType.STRING);
        DeclType metadata = object("kubernetes.NamespaceMetadata",
                "name", DeclType.STRING, "generateName", DeclType.STRING, "namespace", DeclType.STRING,
                "labels", new DeclType.MapOf(DeclType.STRING, DeclType.STRING),
                "annotations", new DeclType.MapOf(DeclType.STRING, DeclType.STRING),
                "UID", DeclType.STRING, "creationTimestamp", DeclType.TIMESTAMP,
                "deletionGracePeriodSeconds", DeclType.INT, "deletionTimestamp", DeclType.TIMESTAMP,
                "generation", DeclType.INT, "resourceVersion", DeclType.STRING, "finalizers", strings());
        return object("kubernetes.Namespace", "metadata", metadata, "spec", spec, "status", status);
    }
}
