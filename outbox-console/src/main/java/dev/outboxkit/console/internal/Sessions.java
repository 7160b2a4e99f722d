package dev.outboxkit.console.internal;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Not API: the built-in login's server-side sessions. A session id is 256 random bits; the map holds at most
 * {@link #MAX_SESSIONS} (the oldest login goes first) and each lives for a fixed time from login. Each session has its
 * own CSRF token. Operators the host framework authenticated have no session here: their CSRF token is an HMAC of
 * their name under a key drawn when the console starts.
 */
public final class Sessions {

    /** Bound on live sessions: a login beyond it ends the oldest. */
    public static final int MAX_SESSIONS = 64;
    /** Wrong tokens accepted per minute, all clients together; beyond it every login waits for the minute to pass. */
    public static final int MAX_FAILED_LOGINS_PER_MINUTE = 10;

    /** A logged-in operator. */
    public record Session(String id, String operator, String csrf, Instant expiresAt) {
    }

    private final SecureRandom random = new SecureRandom();
    private final Map<String, Session> sessions = new LinkedHashMap<>();
    private final Duration lifetime;
    private final Clock clock;
    private final byte[] csrfKey = new byte[32];
    private Instant failureWindowStart = Instant.EPOCH;
    private int failuresInWindow;

    public Sessions(Duration lifetime, Clock clock) {
        this.lifetime = lifetime;
        this.clock = clock;
        random.nextBytes(csrfKey);
    }

    public Duration lifetime() {
        return lifetime;
    }

    /** A new session for {@code operator}. */
    public synchronized Session create(String operator) {
        expire();
        while (sessions.size() >= MAX_SESSIONS) {
            Iterator<String> oldest = sessions.keySet().iterator();
            oldest.next();
            oldest.remove();
        }
        Session s = new Session(token(), operator, token(), clock.instant().plus(lifetime));
        sessions.put(s.id(), s);
        return s;
    }

    /** False while {@link #MAX_FAILED_LOGINS_PER_MINUTE} wrong tokens were given in the current minute: guessing stays slow. */
    public synchronized boolean loginAllowed() {
        rollWindow();
        return failuresInWindow < MAX_FAILED_LOGINS_PER_MINUTE;
    }

    /** Counts a wrong token. */
    public synchronized void loginFailed() {
        rollWindow();
        failuresInWindow++;
    }

    private void rollWindow() {
        Instant now = clock.instant();
        if (!now.isBefore(failureWindowStart.plus(Duration.ofMinutes(1)))) {
            failureWindowStart = now;
            failuresInWindow = 0;
        }
    }

    /** The live session with this id, or null. */
    public synchronized Session find(String id) {
        if (id == null) {
            return null;
        }
        Session s = sessions.get(id);
        if (s != null && !clock.instant().isBefore(s.expiresAt())) {
            sessions.remove(id);
            return null;
        }
        return s;
    }

    public synchronized void end(String id) {
        if (id != null) {
            sessions.remove(id);
        }
    }

    /** The CSRF token of an operator the host framework authenticated. */
    public String hostCsrf(String operator) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(csrfKey, "HmacSHA256"));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(mac.doFinal(operator.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    /** Compares in time independent of where the strings differ (and of their lengths: both are hashed first). */
    public static boolean constantTimeEquals(String expected, String given) {
        if (expected == null || given == null) {
            return false;
        }
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            byte[] a = sha.digest(expected.getBytes(StandardCharsets.UTF_8));
            byte[] b = sha.digest(given.getBytes(StandardCharsets.UTF_8));
            return MessageDigest.isEqual(a, b);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }

    private void expire() {
        Instant now = clock.instant();
        sessions.values().removeIf(s -> !now.isBefore(s.expiresAt()));
    }

    private String token() {
        byte[] bytes = new byte[32];
        random.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
