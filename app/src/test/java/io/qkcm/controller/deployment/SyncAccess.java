package io.qkcm.controller.deployment;

/** Test access to package-private helpers of {@link Sync}. */
public final class SyncAccess {

    private SyncAccess() {
    }

    public static String generateReplicaSetName(String deploymentName, String hash) {
        return Sync.generateReplicaSetName(deploymentName, hash);
    }
}
