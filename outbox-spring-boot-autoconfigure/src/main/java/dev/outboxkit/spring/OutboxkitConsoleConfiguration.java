package dev.outboxkit.spring;

import dev.outboxkit.console.Console;
import dev.outboxkit.ops.admin.OutboxAdmin;
import io.micrometer.core.instrument.MeterRegistry;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;

/**
 * The operator console (outbox-console) in the management context: at the Actuator base path +
 * {@value #SEGMENT}, on {@code management.server.port} when the application sets one. Loaded by Actuator's
 * management-context import (META-INF/spring/...ManagementContextConfiguration.imports), so it lives wherever the
 * Actuator endpoints live. Not API.
 */
@ManagementContextConfiguration(proxyBeanMethods = false)
@ConditionalOnClass(name = {"dev.outboxkit.console.Console", "jakarta.servlet.http.HttpServlet"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty("outboxkit.console.enabled")
@EnableConfigurationProperties(OutboxkitProperties.class)
class OutboxkitConsoleConfiguration {

    /** The console's path under the Actuator base path: beside {@code /actuator/outboxkit}, not inside its selectors. */
    static final String SEGMENT = "/outboxkit-console";

    private static final Logger log = LoggerFactory.getLogger(OutboxkitConsoleConfiguration.class);

    @Bean
    @ConditionalOnMissingBean(name = "outboxkitConsole")
    ServletRegistrationBean<ConsoleServlet> outboxkitConsole(ObjectProvider<DataSource> dataSource, OutboxkitProperties properties,
                                                            ObjectProvider<WebEndpointProperties> endpoints,
                                                            ObjectProvider<RelayLifecycle> relay,
                                                            ObjectProvider<MeterRegistry> meterRegistry) {
        DataSource db = dataSource.getIfUnique();
        if (db == null) {
            throw new IllegalStateException("outboxkit.console.enabled=true needs one DataSource (spring.datasource.*) "
                    + "holding the outboxkit tables; this application has none or several");
        }
        OutboxkitProperties.Console settings = properties.getConsole();
        if (settings.getOperatorRole() == null || settings.getOperatorRole().isBlank()) {
            throw new IllegalStateException("outboxkit.console.operator-role must name a role (default OUTBOX_OPERATOR), got '"
                    + settings.getOperatorRole() + "'");
        }
        try {
            Console.builder().traceUrl(settings.getTraceUrl()); // checked at start, not at the first request
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("outboxkit.console.trace-url: " + e.getMessage(), e);
        }
        WebEndpointProperties web = endpoints.getIfAvailable();
        String path = (web == null ? "/actuator" : web.getBasePath()) + SEGMENT;
        RelayLifecycle inApp = relay.getIfAvailable();
        // The relay records into the application's registry (when it has exactly one): the overview charts its publish rate.
        MeterRegistry relayMeters = inApp == null ? null : meterRegistry.getIfUnique();
        if (settings.isWriteActions() && !securityOnClassPath()) {
            log.warn("outboxkit.console.write-actions=true, but Spring Security is not on the class path: the console "
                    + "offers Retry and Discard only to a user the servlet container authenticated with role {}",
                    settings.getOperatorRole());
        }
        ConsoleServlet servlet = new ConsoleServlet(contextPath -> {
            Console.Builder b = Console.builder()
                    .admin(OutboxAdmin.builder().outboxDatabase(db, properties.getSchema()).build())
                    .basePath(contextPath + path)
                    .writeActions(settings.isWriteActions())
                    .showPayloads(settings.isShowPayloads())
                    .traceUrl(settings.getTraceUrl());
            if (inApp != null) {
                b.relayHealth(() -> inApp.relay().health());
            }
            if (relayMeters != null) {
                b.meterRegistry(relayMeters);
            }
            return b.build();
        }, settings.getOperatorRole());
        ServletRegistrationBean<ConsoleServlet> registration = new ServletRegistrationBean<>(servlet, path + "/*", path);
        registration.setName("outboxkitConsole");
        registration.setLoadOnStartup(1);
        log.info("outboxkit console at {} (write actions {}, role {})", path + "/", settings.isWriteActions() ? "on" : "off",
                settings.getOperatorRole());
        return registration;
    }

    private static boolean securityOnClassPath() {
        try {
            Class.forName("org.springframework.security.web.SecurityFilterChain", false,
                    OutboxkitConsoleConfiguration.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
