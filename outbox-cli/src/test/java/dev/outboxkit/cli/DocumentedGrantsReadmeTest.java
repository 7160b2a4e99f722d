package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.Grant;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The least-privilege sections of the module READMEs list at least what each role's one grants definition
 * (outbox-core's RoleGrants, as the testkit's {@link DocumentedGrants} derives it) demands: a grant added to the code
 * and not to the README fails here, before a user following the README meets the component's start-up check. Read
 * from the READMEs' {@code sql} blocks; the schema names in the examples vary, so only the table (or sequence) name
 * is compared.
 */
class DocumentedGrantsReadmeTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern GRANT = Pattern.compile("\\bGRANT\\s+(.+?)\\s+ON\\s+(SCHEMA\\s+|SEQUENCE\\s+|DATABASE\\s+)?(.+?)\\s+TO\\s");
    private static final Pattern MEMBERSHIP = Pattern.compile("\\bGRANT\\s+\\w+\\s+TO\\s");

    @Test
    void everyModuleReadmeListsWhatItsRolesAreChecked() throws IOException {
        assertListed("outbox-ops/README.md", DocumentedGrants.journal()); // the console's Runs page
        assertListed("relay-poller/README.md", DocumentedGrants.pollingRelay());
        assertListed("relay-debezium/README.md", DocumentedGrants.cdcRelay(true));
        assertListed("consumer-dedupe/README.md", DocumentedGrants.consumer());
        assertListed("outbox-writer/README.md", DocumentedGrants.writer(true), DocumentedGrants.writer(false),
                DocumentedGrants.idempotencyKeys());
        assertListed("outbox-cli/README.md", DocumentedGrants.status(), DocumentedGrants.deadLettersList(),
                DocumentedGrants.deadLettersDiscard(), DocumentedGrants.deadLettersRetry(), DocumentedGrants.replay());
        assertListed("outbox-ops/README.md", DocumentedGrants.reconcileOutboxDatabase(), DocumentedGrants.reconcileConsumer("db"),
                DocumentedGrants.purge("owner"), DocumentedGrants.purgeInbox(), DocumentedGrants.traceEvent(),
                DocumentedGrants.idempotencyKeyState(), DocumentedGrants.relayMembers(), DocumentedGrants.relayReports(),
                DocumentedGrants.eventPayload());
    }

    @SafeVarargs
    private static void assertListed(String readme, List<Grant>... roles) throws IOException {
        Set<String> listed = listed(ROOT.resolve(readme));
        assertThat(listed).as("GRANT statements read from %s", readme).isNotEmpty();
        for (List<Grant> role : roles) {
            List<String> wanted = role.stream().map(DocumentedGrantsReadmeTest::key).toList();
            assertThat(listed).as("%s's least-privilege grants (read: %s)", readme, listed).containsAll(wanted);
        }
    }

    /** What a grant comes to in a README: privilege and kind, and the object where the examples do not vary it. */
    private static String key(Grant g) {
        return switch (g.kind()) {
            case "SCHEMA", "DATABASE" -> g.privilege() + " " + g.kind();
            case "MEMBER" -> "MEMBER";
            case "ROLE" -> "REPLICATION";
            default -> g.privilege() + " " + g.kind() + " " + g.object();
        };
    }

    /** The keys of every GRANT (and REPLICATION attribute) inside the README's {@code sql} blocks. */
    private static Set<String> listed(Path readme) throws IOException {
        Set<String> keys = new LinkedHashSet<>();
        boolean sql = false;
        for (String line : Files.readAllLines(readme)) {
            if (line.startsWith("```")) {
                sql = !sql && line.trim().equals("```sql");
                continue;
            }
            if (!sql) {
                continue;
            }
            String code = line.replaceAll("--.*$", "");
            if (code.contains("REPLICATION")) {
                keys.add("REPLICATION");
            }
            if (MEMBERSHIP.matcher(code).find() && !code.contains(" ON ")) {
                keys.add("MEMBER");
            }
            Matcher m = GRANT.matcher(code);
            if (!m.find()) {
                continue;
            }
            String kind = m.group(2) == null ? "TABLE" : m.group(2).trim().toUpperCase(Locale.ROOT);
            for (String privilege : items(m.group(1))) {
                if (kind.equals("SCHEMA") || kind.equals("DATABASE")) {
                    keys.add(privilege + " " + kind);
                    continue;
                }
                for (String object : items(m.group(3))) {
                    String name = object.contains(".") ? object.substring(object.lastIndexOf('.') + 1) : object;
                    keys.add(privilege + " " + kind + " " + name.replace("\"", ""));
                }
            }
        }
        return keys;
    }

    /** A comma-separated list, commas inside parentheses (a column list) kept. */
    private static List<String> items(String list) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        StringBuilder item = new StringBuilder();
        for (char ch : list.toCharArray()) {
            if (ch == ',' && depth == 0) {
                out.add(item.toString().trim());
                item.setLength(0);
                continue;
            }
            depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
            item.append(ch);
        }
        out.add(item.toString().trim());
        return Stream.of(out.toArray(String[]::new)).filter(s -> !s.isEmpty()).toList();
    }
}
