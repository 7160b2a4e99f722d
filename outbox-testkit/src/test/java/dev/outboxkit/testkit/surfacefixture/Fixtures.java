package dev.outboxkit.testkit.surfacefixture;

import dev.outboxkit.testkit.surfacefixture.internal.Hidden;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** One public class per way a signature can leak an internal type, and two that do not. */
public final class Fixtures {

    private Fixtures() {
    }

    public static class ReturnType {
        public Hidden get() {
            return null;
        }
    }

    public static class Parameter {
        public void take(String first, List<? extends Hidden> second) {
        }
    }

    public static class ProtectedMethod {
        protected Map<String, Hidden[]> get() {
            return null;
        }
    }

    public static class PublicField {
        public Supplier<Hidden> field;
    }

    public static class Superclass extends Hidden {
    }

    public static class Interface implements Hidden.Api {
    }

    public static class Throws {
        public void run() throws Hidden.Failure {
        }
    }

    public static class Constructor {
        public Constructor(Hidden hidden) {
        }
    }

    public static class Bound {
        public <T extends Hidden> T get() {
            return null;
        }
    }

    public static class ClassBound<T extends Hidden.Api> {
    }

    public static class Outer {
        public static class Inner {
            public Hidden get() {
                return null;
            }
        }
    }

    /** Names Hidden only where a user cannot see it. */
    public static class Clean {
        private Hidden hidden;

        Clean(Hidden hidden) {
            this.hidden = hidden;
        }

        Hidden packagePrivate() {
            return hidden;
        }

        private void privateMethod(Hidden h) {
        }

        public String name() {
            return "clean";
        }
    }

    /** Not exported (package-private), so its public method does not leak. */
    static class NotExported {
        public Hidden get() {
            return null;
        }
    }
}
