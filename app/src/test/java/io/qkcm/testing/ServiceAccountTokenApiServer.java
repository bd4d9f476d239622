package io.qkcm.testing;

import java.util.List;

/**
 * The API server for service-account token tests: a separate instance that also trusts the test
 * service-account public key ({@link TestPki}), so legacy tokens signed by qkcm authenticate. Legacy
 * tokens (issuer kubernetes/serviceaccount) are checked by the API server's legacy authenticator,
 * which accepts that issuer for every --service-account-key-file key.
 */
public final class ServiceAccountTokenApiServer {

    private ServiceAccountTokenApiServer() {
    }

    public static RealApiServer get() {
        return RealApiServer.withFlags(
                List.of("--service-account-key-file=" + TestPki.get().serviceAccountPublicKey()));
    }
}
