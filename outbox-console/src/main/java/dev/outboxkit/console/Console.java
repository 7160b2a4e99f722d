package dev.outboxkit.console;

import dev.outboxkit.console.internal.ConsoleApp;
import dev.outboxkit.console.internal.ConsoleSettings;
import dev.outboxkit.console.internal.JdkHttpAdapter;
import dev.outboxkit.core.Secret;
import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.relay.Relay;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The operator console: server-rendered pages on an {@link OutboxAdmin}, answering "where is my event?".
 *
 * <pre>{@code
 * Console console = Console.builder().admin(admin).build();          // read-only at /console
 * ConsoleResponse response = console.handle(request);                // from any HTTP server
 * }</pre>
 *
 * <p>Read-only unless {@link Builder#writeActions(boolean)} is on. Write actions (retry, discard) need an operator: one
 * the host framework authenticated ({@link ConsoleRequest#operator()}), or one who logged in with the
 * {@link Builder#operatorToken operator token}. Every write is a POST checked against the session's CSRF token (and
 * the Origin header, when the browser sends one) and is written to the audit log ({@value OutboxAdmin#AUDIT_LOGGER})
 * under the operator's name. Payloads are never shown unless {@link Builder#showPayloads(boolean)} is on; credentials
 * and connection strings never.
 *
 * <p>Thread-safe. {@link #close()} stops the sampler (one status read every 10 s for the overview's charts).
 */
public final class Console implements AutoCloseable {

    /** The base path unless {@link Builder#basePath(String)} sets another. */
    public static final String DEFAULT_BASE_PATH = "/console";

    private final ConsoleApp app;

    private Console(ConsoleSettings settings) {
        this.app = new ConsoleApp(settings);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Answers one request; paths outside the {@link Builder#basePath base path} get 404. Never throws for a bad request. */
    public ConsoleResponse handle(ConsoleRequest request) {
        return app.handle(request);
    }

    /**
     * This console as a handler of the JDK's HTTP server: {@code server.createContext(console.basePath(),
     * console.httpHandler())}. Form bodies over 64 KiB are refused (413). Start the JVM with
     * {@code -Dsun.net.httpserver.nodelay=true} (the sidecar sets it): otherwise every response waits about 40 ms for
     * the client's delayed ACK.
     */
    public com.sun.net.httpserver.HttpHandler httpHandler() {
        return new JdkHttpAdapter(this::handle);
    }

    /** The base path the console answers under. */
    public String basePath() {
        return app.basePath();
    }

    @Override
    public void close() {
        app.close();
    }

    /** Configures a {@link Console}; only {@link #admin} is required. */
    public static final class Builder {

        /** The placeholder {@link #traceUrl} replaces with the trace id. */
        public static final String TRACE_ID = "{traceId}";

        private static final Pattern BASE_PATH = Pattern.compile("(/[A-Za-z0-9._-]+)+");
        private static final Pattern OPERATOR = Pattern.compile("[A-Za-z0-9@._-]{1,64}");

        private OutboxAdmin admin;
        private String basePath = DEFAULT_BASE_PATH;
        private boolean writeActions;
        private boolean showPayloads;
        private String operatorName;
        private Secret operatorToken;
        private Supplier<Relay.Health> relayHealth;
        private MeterRegistry relayMeters;
        private Duration sessionLifetime = Duration.ofHours(8);
        private String traceUrl;

        private Builder() {
        }

        /** The operations API the pages read and act through (its database role decides what they may do). */
        public Builder admin(OutboxAdmin admin) {
            this.admin = Objects.requireNonNull(admin, "admin");
            return this;
        }

        /** Where the console answers, e.g. {@code /console} (the default): segments of letters, digits, {@code ._-}. */
        public Builder basePath(String basePath) {
            if (basePath == null || !BASE_PATH.matcher(basePath).matches()) {
                throw new IllegalArgumentException("basePath must look like /console (segments of letters, digits, '.', '_', "
                        + "'-'; no trailing slash), got '" + basePath + "'");
            }
            this.basePath = basePath;
            return this;
        }

        /** Offer retry and discard of dead letters to a logged-in operator; default false (read-only). */
        public Builder writeActions(boolean enabled) {
            this.writeActions = enabled;
            return this;
        }

        /** Show event payloads where a page can; default false. */
        public Builder showPayloads(boolean enabled) {
            this.showPayloads = enabled;
            return this;
        }

        /**
         * Turns the built-in login on: whoever gives {@code token} acts as {@code operatorName} (the name the audit log
         * records; the token is never logged or shown). Give a long random token (32 characters or more).
         */
        public Builder operatorToken(String operatorName, Secret token) {
            if (operatorName == null || !OPERATOR.matcher(operatorName).matches()) {
                throw new IllegalArgumentException("operatorName must be 1 to 64 letters, digits or '@._-', got '" + operatorName + "'");
            }
            if (token == null || token.reveal() == null || token.reveal().strip().length() < 16) {
                throw new IllegalArgumentException("the operator token must have at least 16 characters (32 random ones are better)");
            }
            this.operatorName = operatorName;
            this.operatorToken = token;
            return this;
        }

        /** The health of a relay running in the same process, shown on the overview. */
        public Builder relayHealth(Supplier<Relay.Health> relayHealth) {
            this.relayHealth = Objects.requireNonNull(relayHealth, "relayHealth");
            return this;
        }

        /**
         * The registry the relays running in this process record their metrics into (the one given to their builders'
         * {@code meterRegistry}): the overview charts their publish rate from {@code outbox.relay.published}. Without
         * it the overview charts the backlog only.
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.relayMeters = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * The tracing UI's address of one trace, with the placeholder {@value #TRACE_ID}: the event page links the
         * trace that wrote the event there, e.g. {@code https://jaeger.example/trace/{traceId}} or
         * {@code https://grafana.example/explore?traceId={traceId}}. Null (the default): the page shows the trace id
         * without a link.
         *
         * @throws IllegalArgumentException unless it is an absolute http or https URL holding {@value #TRACE_ID} exactly
         *                                  once
         */
        public Builder traceUrl(String template) {
            if (template != null) {
                String problem = traceUrlProblem(template);
                if (problem != null) {
                    throw new IllegalArgumentException("the tracing UI's URL must be an absolute http or https URL holding "
                            + TRACE_ID + " exactly once, for example https://jaeger.example/trace/" + TRACE_ID + "; '"
                            + (template.length() > 200 ? template.substring(0, 200) + "…" : template) + "' " + problem);
                }
            }
            this.traceUrl = template;
            return this;
        }

        private static String traceUrlProblem(String template) {
            int times = template.split(Pattern.quote(TRACE_ID), -1).length - 1;
            if (times != 1) {
                return times == 0 ? "has no " + TRACE_ID : "holds " + TRACE_ID + " " + times + " times";
            }
            URI uri;
            try {
                uri = new URI(template.replace(TRACE_ID, "4bf92f3577b34da6a3ce929d0e0e4736"));
            } catch (URISyntaxException e) {
                return "is not a URL (" + e.getReason() + " at index " + e.getIndex() + ")";
            }
            String scheme = uri.getScheme();
            if (scheme == null || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))) {
                return scheme == null ? "is not absolute (no http:// or https://)" : "has the scheme '" + scheme
                        + "', not http or https";
            }
            if (uri.getHost() == null) {
                return "has no host";
            }
            return null;
        }

        /** How long a login lasts; default 8 hours, at most 24. */
        public Builder sessionLifetime(Duration lifetime) {
            if (lifetime == null || lifetime.isNegative() || lifetime.isZero() || lifetime.compareTo(Duration.ofHours(24)) > 0) {
                throw new IllegalArgumentException("sessionLifetime must be positive and at most 24 hours, got " + lifetime);
            }
            this.sessionLifetime = lifetime;
            return this;
        }

        /** @throws IllegalStateException when no admin was given */
        public Console build() {
            if (admin == null) {
                throw new IllegalStateException("Console.builder() needs admin(OutboxAdmin): the console reads and acts through it");
            }
            return new Console(new ConsoleSettings(admin, basePath, writeActions, showPayloads, operatorName, operatorToken,
                    relayHealth, relayMeters, sessionLifetime, traceUrl));
        }
    }
}
