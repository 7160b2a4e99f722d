package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;

/** The operator's sentence for ACL and login failures (ManagedGroundTest in reliability sees them from a real broker). */
class OperatorActionsTest {

    private static final Map<String, Object> SCRAM = Map.of(
            "bootstrap.servers", "broker:9096", "security.protocol", "SASL_SSL", "sasl.mechanism", "SCRAM-SHA-512",
            "sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"relay\" "
                    + "password=\"s3cret\";",
            "ssl.truststore.location", "/etc/ca.pem");

    @Test
    void namesPrincipalOperationAndTopicButNeverThePassword() {
        String topic = OperatorActions.of(new TopicAuthorizationException(Set.of("orders")), SCRAM, "WRITE", List.of("x"));
        assertThat(topic).startsWith("User:relay may not WRITE topic orders").doesNotContain("s3cret");
        String cluster = OperatorActions.of(new ClusterAuthorizationException("Cluster authorization failed."), SCRAM,
                "WRITE", List.of("orders", "audit"));
        assertThat(cluster).startsWith("User:relay may not WRITE topics audit, orders").contains("IDEMPOTENT_WRITE");
        assertThat(OperatorActions.of(new SaslAuthenticationException("invalid credentials"), SCRAM, "WRITE", null))
                .isEqualTo("User:relay could not authenticate with SASL SCRAM-SHA-512 at broker:9096 (wrong user or "
                        + "password in sasl.jaas.config, or the mechanism is not enabled on the broker)");
        assertThat(OperatorActions.of(new SslAuthenticationException("PKIX path building failed"), SCRAM, "WRITE", null))
                .contains("broker:9096", "/etc/ca.pem");
        assertThat(OperatorActions.of(new RecordTooLargeException("big"), SCRAM, "WRITE", null)).isNull();
    }

    @Test
    void principalsWithoutASaslUserName() {
        assertThat(OperatorActions.principal(Map.of())).startsWith("User:ANONYMOUS");
        assertThat(OperatorActions.principal(Map.of("security.protocol", "SSL"))).contains("certificate");
        assertThat(OperatorActions.principal(Map.of("security.protocol", "SASL_SSL", "sasl.mechanism", "AWS_MSK_IAM")))
                .contains("AWS_MSK_IAM");
    }
}
