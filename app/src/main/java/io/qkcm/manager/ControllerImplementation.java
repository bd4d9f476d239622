package io.qkcm.manager;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;

/**
 * A controller implementation contributed as a CDI bean, attached to the upstream name it
 * implements on top of {@link ControllerCatalog#upstream()} (tests use this to run probe controllers
 * under an upstream name). Selection, leader election and metrics treat it like any other.
 */
public interface ControllerImplementation {

    /** The upstream controller name this implements, e.g. {@code bootstrap-signer-controller}. */
    String name();

    Controller create(ControllerContext context);
}
