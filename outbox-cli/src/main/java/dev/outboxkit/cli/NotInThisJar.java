package dev.outboxkit.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * What {@code outbox dev} and {@code outbox demo} answer in the sidecar jar and the image, which hold no test servers:
 * where the command is, and exit status 2 (a usage error), whatever arguments follow.
 */
@Command(description = {"Not in the sidecar (this jar, the container image): in the dev-tools jar,",
        "outbox-dev-tools/target/outbox-dev-tools.jar, which bin/outbox in the repository runs."})
final class NotInThisJar implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Unmatched
    List<String> ignored;

    @Override
    public Integer call() {
        spec.commandLine().getErr().println("outbox: '" + spec.qualifiedName() + "' is not in this jar: the sidecar jar and"
                + " the container image hold the relays and the operations commands only, without the embedded PostgreSQL"
                + " and Kafka it needs. It is in the dev-tools jar: in a clone of the repository run"
                + " ./mvnw -B -DskipTests -pl outbox-dev-tools -am package, then bin/outbox " + spec.name()
                + " (it runs outbox-dev-tools/target/outbox-dev-tools.jar).");
        return Main.USAGE;
    }
}
