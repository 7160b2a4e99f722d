package dev.outboxkit.cli;

import dev.outboxkit.relay.Relay;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/** The operator console on its own: the sidecar's HTTP server without a relay, until SIGTERM/SIGINT. */
@Command(name = "console", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = "The operator console (docs/console.md) on its own HTTP server, without a relay: overview, dead letters, "
                + "where an event is; read-only unless --console-write-actions.")
final class ConsoleCommand implements Callable<Integer>, Main.NeedsSettings {

    /** What /health/ready says: there is no relay whose health it could report. */
    private static final Relay.Health NO_RELAY = new Relay.Health(true, true, "console only: no relay in this process");

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;
    @Mixin
    Options.Database db;
    @Mixin
    Options.Http http;
    @Mixin
    Options.ConsoleAccess access;
    private Settings settings;

    @Override
    public void settings(Settings settings) {
        this.settings = settings;
    }

    @Override
    public Integer call() throws Exception {
        db.requireUrl();
        try (Options.ConsoleMount mount = access.open(db, settings.env(), http.httpPort, null, null);
             SidecarServer server = new SidecarServer(http.httpPort, () -> NO_RELAY, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                     mount.console())) {
            Shutdown shutdown = Shutdown.onSignals();
            PrintWriter out = spec.commandLine().getOut();
            out.println("console on http://0.0.0.0:" + server.port() + mount.console().basePath() + "/ (" + db.describe() + ")");
            out.flush();
            shutdown.await();
        }
        return Main.OK;
    }
}
