package io.qkcm.controller.resourcequota.quota;

import java.util.List;

import io.fabric8.kubernetes.api.model.ScopeSelector;

/**
 * quota.UsageStatsOptions: the namespace measured, the quota's scopes and scope selector (null when
 * absent), and the resources wanted.
 */
public record UsageStatsOptions(String namespace, List<String> scopes, List<String> resources, ScopeSelector scopeSelector) {
}
