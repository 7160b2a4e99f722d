package dev.outboxkit.core;

import java.util.List;

/**
 * A component's database role lacks privileges it needs, found at start before anything was done: the message and
 * {@link #grants()} give the exact statements to run (as the owner of the outboxkit tables). The sidecar exits 2.
 */
public class MissingGrantsException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String role;
    private final List<String> grants;

    public MissingGrantsException(String component, String role, List<String> grants) {
        super(component + " cannot start: database role \"" + role + "\" lacks " + grants.size() + " privilege"
                + (grants.size() == 1 ? "" : "s") + " it needs. Run as the owner of the outboxkit tables: "
                + String.join("; ", grants) + ";");
        this.role = role;
        this.grants = List.copyOf(grants);
    }

    /** The role that connected ({@code current_user}). */
    public String role() {
        return role;
    }

    /** The statements that give {@link #role()} what it lacks, one privilege set per object, without the semicolon. */
    public List<String> grants() {
        return grants;
    }
}
