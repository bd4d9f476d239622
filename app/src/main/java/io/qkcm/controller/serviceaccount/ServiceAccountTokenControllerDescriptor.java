package io.qkcm.controller.serviceaccount;

import io.qkcm.pki.PrivateKeys;
import java.io.IOException;
import java.nio.file.Path;

import org.jboss.logging.Logger;

import io.qkcm.controller.RootCA;
import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * serviceaccount-token-controller's descriptor and start function (upstream's
 * {@code newServiceAccountTokenControllerDescriptor} and its start function in
 * cmd/kube-controller-manager/app/controllermanager.go). It mints the tokens the other controllers' clients
 * authenticate with, so it is the one controller that requires special handling: it runs on the manager's own
 * credentials. Without --service-account-private-key-file it does not run (upstream's started=false).
 */
public final class ServiceAccountTokenControllerDescriptor {

    private static final Logger LOG = Logger.getLogger(ServiceAccountTokenControllerDescriptor.class);

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(TokensController.NAME)
            .withAliases("serviceaccount-token")
            .withClientName("tokens-controller")
            .requiringSpecialHandling()
            .startedBy(ServiceAccountTokenControllerDescriptor::start);

    private ServiceAccountTokenControllerDescriptor() {
    }

    /** Null (not started) without --service-account-private-key-file. */
    static Controller start(ControllerContext context) {
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
        return context.operate(new TokensController(context, generator, rootCA,
                context.options().concurrentSyncs("serviceaccount-token")).reconcilers());
    }
}
