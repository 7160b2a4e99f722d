package dev.outboxkit.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.javaparser.ParserConfiguration;
import com.github.javaparser.StaticJavaParser;
import com.github.javaparser.ast.CompilationUnit;
import com.github.javaparser.ast.body.CallableDeclaration;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The relays' control code stays readable: no method or constructor in a relay module or the runtime they share runs
 * over {@value #MAX_LINES} lines, counted from its signature to its closing brace (annotations and Javadoc left out).
 * The ordering and fencing arguments live next to the steps they order, so a long method hides them.
 */
class MethodLengthTest {

    static final int MAX_LINES = 60;

    @ParameterizedTest
    @ValueSource(strings = {"relay-poller", "relay-debezium"})
    void noMethodOfARelayIsLongerThanTheLimit(String module) throws IOException {
        Path sources = Path.of("..", module, "src", "main", "java");
        assertThat(sources).as("the sources of " + module).isDirectory();
        List<String> tooLong = new ArrayList<>();
        int methods = 0;
        StaticJavaParser.getParserConfiguration().setLanguageLevel(ParserConfiguration.LanguageLevel.JAVA_17);
        try (Stream<Path> files = Files.walk(sources)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                CompilationUnit unit = StaticJavaParser.parse(file);
                for (CallableDeclaration<?> callable : unit.findAll(CallableDeclaration.class)) {
                    methods++;
                    int first = callable.getName().getBegin().orElseThrow().line;
                    int last = callable.getEnd().orElseThrow().line;
                    int lines = last - first + 1;
                    if (lines > MAX_LINES) {
                        tooLong.add(sources.relativize(file) + ":" + first + " " + callable.getNameAsString() + " has "
                                + lines + " lines; split it into named steps");
                    }
                }
            }
        }
        assertThat(methods).as("methods read in " + module).isGreaterThan(100);
        assertThat(tooLong).as("methods over " + MAX_LINES + " lines in " + module).isEmpty();
    }
}
