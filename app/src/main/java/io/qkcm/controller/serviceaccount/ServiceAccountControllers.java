package io.qkcm.controller.serviceaccount;

import java.io.IOException;
import java.nio.file.Path;

import org.jboss.logging.Logger;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.RootCA;

/**
 * How upstream's cmd/kube-controller-manager starts the service-account controllers and the root CA
 * publisher (controllermanager.go, core.go, certificates.go): what they read from the flags, and when
 * they do not run. A null controller means "disabled", as upstream's {@code started=false}.
 */
public final class ServiceAccountControllers {

    private static final Logger LOG = Logger.getLogger(ServiceAccountControllers.class);

    private ServiceAccountControllers() {
    }

    /** serviceaccount-token-controller: needs --service-account-private-key-file. */
    public static Controller tokens(ControllerContext context) {
        String keyFile = context.options().string("service-account-private-key-file");
        if (keyFile.isEmpty()) {
            LOG.infof("Controller is disabled because there is no private key: controller=%s", TokensController.NAME);
            return null;
        }
        PrivateKeys.KeyPair key;
        try {
            key = PrivateKeys.fromFile(Path.of(keyFile));
        } catch (IOException e) {
            throw new IllegalArgumentException("error reading key for service account token controller: "
                    + e.getMessage());
        }
        byte[] rootCA = RootCA.load(context);
        LegacyTokenGenerator generator;
        try {
            generator = new LegacyTokenGenerator(key);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("failed to build token generator: " + e.getMessage());
        }
        return context.operate(new TokensController(context, generator, rootCA).reconcilers());
    }

    /** legacy-serviceaccount-token-cleaner-controller: --legacy-service-account-token-clean-up-period. */
    public static Controller legacyTokenCleaner(ControllerContext context) {
        return context.operate(new LegacyServiceAccountTokenCleaner(context,
                context.options().duration("legacy-service-account-token-clean-up-period"),
                context.options().duration("legacy-service-account-token-cleaner-sync-interval")));
    }
}
