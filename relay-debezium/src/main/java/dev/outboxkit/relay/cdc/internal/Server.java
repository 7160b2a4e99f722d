package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.runtime.JdbcUrls;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The PostgreSQL server a connection reached, as far as the slot cares: where (an address of the URL), which cluster
 * ({@code system_identifier}: a streaming standby has its primary's) and which timeline (a promotion starts a new one),
 * and the major version (failover slots need 17).
 *
 * @param systemIdentifier null where the role may not call {@code pg_control_system()}
 */
record Server(JdbcUrls.HostPort address, Long systemIdentifier, int timeline, int versionNum) {

    /** The server {@code c} is connected to; {@code c} must not be in a failed transaction. */
    static Server of(Connection c) throws SQLException {
        JdbcUrls.HostPort address = JdbcUrls.connectedTo(c);
        int timeline;
        int version;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8), current_setting('server_version_num')::int")) {
            rs.next();
            timeline = Integer.parseInt(rs.getString(1), 16);
            version = rs.getInt(2);
        }
        Long system = null;
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT system_identifier FROM pg_control_system()")) {
            rs.next();
            system = rs.getLong(1);
        } catch (SQLException e) {
            if (!c.getAutoCommit()) {
                throw e; // a transaction the failure aborted: the caller's work cannot go on
            }
        }
        return new Server(address, system, timeline, version);
    }

    /** PostgreSQL 17 and later: failover slots ({@code failover => true}, synced to standbys). */
    boolean hasFailoverSlots() {
        return versionNum >= 170000;
    }

    /** Another cluster, or the same one on a later timeline (a promoted standby, a restore): a server change. */
    boolean changedFrom(Long recordedSystem, Integer recordedTimeline) {
        return recordedSystem != null && systemIdentifier != null && !recordedSystem.equals(systemIdentifier)
                || recordedTimeline != null && recordedTimeline != timeline;
    }

    /** {@code host:port (system S, timeline T)} for logs. */
    String describe() {
        return address + " (system " + (systemIdentifier == null ? "unknown" : systemIdentifier) + ", timeline " + timeline + ")";
    }
}
