package dev.outboxkit.devtools;

import dev.outboxkit.cli.Main;
import dev.outboxkit.devtools.demo.DemoRun;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "demo", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = {"The whole path on an embedded stack, no setup: a ledger makes transfers (idempotency keys, lost",
                "responses and double sends), a relay publishes (half-way a second one starts and the first is killed",
                "-9: the failover gap is reported), a projection applies the events through consumer-dedupe.",
                "Exit 0 only if nothing was lost or applied twice,",
                "nothing was reordered, and ledger and projection agree."})
final class DemoCommand implements Callable<Integer> {

    enum RelayKind { poll, cdc }

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--relay", defaultValue = "poll", description = "Which relay publishes: ${COMPLETION-CANDIDATES}.")
    RelayKind relay;

    @Option(names = "--events", defaultValue = "40000", description = "Events to write (two per transfer).")
    int events;

    @Option(names = "--rate", defaultValue = "800", description = "Events per second the clients aim for, in total.")
    double rate;

    @Option(names = "--clients", defaultValue = "8", description = "Concurrent clients.")
    int clients;

    @Option(names = "--accounts", defaultValue = "200", description = "Accounts in the ledger.")
    int accounts;

    @Option(names = "--lost-ack-rate", defaultValue = "0.05", description = "Share of requests whose response is lost (the client retries).")
    double lostAckRate;

    @Option(names = "--double-send-rate", defaultValue = "0.02", description = "Share of requests sent twice at once.")
    double doubleSendRate;

    @Option(names = "--seed", defaultValue = "42", description = "Seed of the clients' choices.")
    long seed;

    @Override
    public Integer call() throws Exception {
        if (events < 2 || rate <= 0 || clients < 1 || accounts < 2 || lostAckRate < 0 || lostAckRate > 1
                || doubleSendRate < 0 || doubleSendRate > 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "need --events >= 2, --rate > 0, --clients >= 1, --accounts >= 2 and rates between 0 and 1");
        }
        DemoRun.Settings settings = new DemoRun.Settings(relay.name(), events / 2, rate / 2, clients, accounts,
                lostAckRate, doubleSendRate, seed);
        boolean ok = new DemoRun(settings, spec.commandLine().getOut()).run();
        return ok ? Main.OK : Main.FAILED;
    }
}
