package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class JdbcUrlsTest {

    @Test
    void hostsAndWhereReadOneHostOrSeveralAsTheDriverDoes() {
        assertThat(JdbcUrls.hosts("jdbc:postgresql://db:6432/shop")).containsExactly(new JdbcUrls.HostPort("db", 6432));
        assertThat(JdbcUrls.hosts("jdbc:postgresql://db/shop")).containsExactly(new JdbcUrls.HostPort("db", 5432));
        List<JdbcUrls.HostPort> two = JdbcUrls.hosts("jdbc:postgresql://h1:5432,h2:5433/shop?targetServerType=primary");
        assertThat(two).containsExactly(new JdbcUrls.HostPort("h1", 5432), new JdbcUrls.HostPort("h2", 5433));
        assertThat(JdbcUrls.where("jdbc:postgresql://h1:5432,h2:5433/shop?password=secret")).isEqualTo("h1:5432,h2:5433/shop");
        assertThat(JdbcUrls.where("not a url")).isEqualTo("(its data source)");
        assertThat(JdbcUrls.database("jdbc:postgresql://h1,h2/shop")).isEqualTo("shop");
    }

    @Test
    void withHostKeepsTheParametersButTheTargetServerType() {
        JdbcUrls.HostPort h2 = new JdbcUrls.HostPort("h2", 5433);
        assertThat(JdbcUrls.withHost("jdbc:postgresql://h1:5432,h2:5433/shop?sslmode=require&targetServerType=primary&x=1", h2))
                .isEqualTo("jdbc:postgresql://h2:5433/shop?sslmode=require&x=1");
        assertThat(JdbcUrls.withHost("jdbc:postgresql://h1,h2/shop", h2)).isEqualTo("jdbc:postgresql://h2:5433/shop");
    }

    @Test
    void severalHostsNeedTargetServerTypePrimary() {
        JdbcUrls.requirePrimaryTarget("jdbc:postgresql://db/shop", "jdbcUrl");
        JdbcUrls.requirePrimaryTarget("jdbc:postgresql://h1,h2/shop?targetServerType=primary", "jdbcUrl");
        JdbcUrls.requirePrimaryTarget("jdbc:postgresql://h1,h2/shop?targetServerType=master", "jdbcUrl");
        assertThatThrownBy(() -> JdbcUrls.requirePrimaryTarget("jdbc:postgresql://h1,h2/shop?password=hunter2", "--jdbc-url"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--jdbc-url 'jdbc:postgresql://h1,h2/shop?password=")
                .hasMessageContaining("names 2 hosts with no targetServerType")
                .hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> JdbcUrls.requirePrimaryTarget("jdbc:postgresql://h1,h2/shop?targetServerType=any", "jdbcUrl"))
                .hasMessageContaining("targetServerType=any");
    }
}
