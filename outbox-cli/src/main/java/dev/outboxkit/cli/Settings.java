package dev.outboxkit.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Where option values come from when no flag gives them: the environment, then the properties
 * file, then the option's own default. One rule derives the names, so each option is defined
 * once (its picocli annotation) and its variable and file key follow from its long name:
 * {@code --jdbc-url} ↔ {@code OUTBOX_JDBC_URL} ↔ {@code jdbc-url=} in the file.
 * {@code kafka.*} keys pass through to the Kafka clients: from the file ({@code kafka.sasl.mechanism=…}),
 * the environment ({@code OUTBOX_KAFKA_SASL_MECHANISM}) and {@code --kafka key=value}, in rising precedence.
 */
final class Settings implements CommandLine.IDefaultValueProvider {

    static final String ENV_PREFIX = "OUTBOX_";
    static final String CONFIG_ENV = "OUTBOX_CONFIG";
    static final String KAFKA_PREFIX = "kafka.";

    private final Map<String, String> env;
    private final Properties file;
    private final Path fileName;

    private Settings(Map<String, String> env, Properties file, Path fileName) {
        this.env = env;
        this.file = file;
        this.fileName = fileName;
    }

    /** The environment the command was started with. */
    Map<String, String> env() {
        return env;
    }

    /** Reads the file named by {@code --config} in {@code args} or by {@code OUTBOX_CONFIG}. */
    static Settings load(String[] args, Map<String, String> env) {
        String config = env.get(CONFIG_ENV);
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--config") && i + 1 < args.length) {
                config = args[i + 1];
            } else if (args[i].startsWith("--config=")) {
                config = args[i].substring("--config=".length());
            }
        }
        Properties props = new Properties();
        Path path = null;
        if (config != null && !config.isBlank()) {
            path = Path.of(config);
            try (Reader in = Files.newBufferedReader(path)) {
                props.load(in);
            } catch (IOException e) {
                throw new ConfigurationException("Invalid value for option '--config': cannot read " + path
                        + " (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")");
            }
        }
        return new Settings(env, props, path);
    }

    /** {@code --jdbc-url} → {@code OUTBOX_JDBC_URL}. */
    static String envName(String longOption) {
        return ENV_PREFIX + bare(longOption).toUpperCase(Locale.ROOT).replace('-', '_');
    }

    /** {@code --jdbc-url} → {@code jdbc-url}. */
    static String fileKey(String longOption) {
        return bare(longOption);
    }

    private static String bare(String longOption) {
        return longOption.startsWith("--") ? longOption.substring(2) : longOption;
    }

    @Override
    public String defaultValue(ArgSpec argSpec) {
        if (!(argSpec instanceof OptionSpec option) || option.longestName().equals("--config")) {
            return null;
        }
        String name = option.longestName();
        String fromEnv = env.get(envName(name));
        if (fromEnv != null) {
            return fromEnv;
        }
        return file.getProperty(fileKey(name));
    }

    /** Kafka client properties from the file and the environment (flags are merged by the caller). */
    Map<String, String> kafkaProperties() {
        Map<String, String> out = new LinkedHashMap<>();
        for (String key : file.stringPropertyNames()) {
            if (key.startsWith(KAFKA_PREFIX)) {
                out.put(key.substring(KAFKA_PREFIX.length()), file.getProperty(key));
            }
        }
        String envPrefix = ENV_PREFIX + "KAFKA_";
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (e.getKey().startsWith(envPrefix) && e.getKey().length() > envPrefix.length()) {
                out.put(e.getKey().substring(envPrefix.length()).toLowerCase(Locale.ROOT).replace('_', '.'), e.getValue());
            }
        }
        return out;
    }

    Path fileName() {
        return fileName;
    }
}
