package dev.outboxkit.testkit;

import dev.outboxkit.core.Secret;

/** A server someone else runs, from {@code OUTBOXKIT_TEST_POSTGRES_URL} (user needs CREATEDB). */
final class ExternalPostgres extends TestPostgres {

    private final String baseUrl;
    private final String user;
    private final String password;

    ExternalPostgres(String url, String user, String password) {
        if (url == null || !url.startsWith("jdbc:postgresql://")) {
            throw new IllegalArgumentException("OUTBOXKIT_TEST_POSTGRES_URL must be a jdbc:postgresql://host:port/ URL, got: "
                    + Secret.maskUrl(url));
        }
        int slash = url.indexOf('/', "jdbc:postgresql://".length());
        this.baseUrl = slash < 0 ? url + "/" : url.substring(0, slash + 1);
        this.user = user == null ? "postgres" : user;
        this.password = password == null ? "" : password;
    }

    @Override
    protected String baseUrl() {
        return baseUrl;
    }

    @Override
    public String adminUser() {
        return user;
    }

    @Override
    public String adminPassword() {
        return password;
    }

    @Override
    public String describe() {
        return "external PostgreSQL at " + Secret.maskUrl(baseUrl);
    }

    @Override
    public void close() {
        // not ours to stop
    }
}
