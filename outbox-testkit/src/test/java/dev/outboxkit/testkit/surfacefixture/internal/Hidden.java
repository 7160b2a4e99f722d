package dev.outboxkit.testkit.surfacefixture.internal;

/** Not API: a stand-in internal type for PublicSurfaceTest. */
public class Hidden {

    /** An internal interface. */
    public interface Api {
    }

    /** An internal exception. */
    public static class Failure extends Exception {
    }
}
