package dev.outboxkit.console.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Properties;

/**
 * Not API: the static files the pages load, read once from the class path: the console's own CSS and script, htmx
 * and uPlot from their WebJars (nothing comes from a CDN, so {@code default-src 'self'} holds).
 */
public final class Assets {

    /** A file and its content type. */
    public record Asset(String contentType, byte[] bytes) {
    }

    private final Map<String, Asset> byName;

    public Assets() {
        String htmx = "META-INF/resources/webjars/htmx.org/" + webJarVersion("htmx.org") + "/dist/";
        String uplot = "META-INF/resources/webjars/uplot/" + webJarVersion("uplot") + "/dist/";
        String own = "dev/outboxkit/console/internal/assets/";
        byName = Map.of(
                "console.css", load(own + "console.css", "text/css; charset=utf-8"),
                "console.js", load(own + "console.js", "text/javascript; charset=utf-8"),
                "htmx.min.js", load(htmx + "htmx.min.js", "text/javascript; charset=utf-8"),
                "uPlot.iife.min.js", load(uplot + "uPlot.iife.min.js", "text/javascript; charset=utf-8"),
                "uPlot.min.css", load(uplot + "uPlot.min.css", "text/css; charset=utf-8"));
    }

    /** The asset called {@code name}, or null. */
    public Asset get(String name) {
        return byName.get(name);
    }

    private static String webJarVersion(String artifact) {
        String path = "META-INF/maven/org.webjars.npm/" + artifact + "/pom.properties";
        try (InputStream in = Assets.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("the WebJar org.webjars.npm:" + artifact + " is not on the class path (" + path
                        + " is missing); outbox-console depends on it at run time: keep it in the application's dependencies");
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path, e);
        }
    }

    private static Asset load(String path, String type) {
        try (InputStream in = Assets.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("the console's asset " + path + " is not on the class path: a broken outbox-console jar?");
            }
            return new Asset(type, in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path, e);
        }
    }
}
