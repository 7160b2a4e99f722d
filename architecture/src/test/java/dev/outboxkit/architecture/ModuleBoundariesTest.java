package dev.outboxkit.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.codeUnits;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The boundaries between outboxkit's modules, on their compiled main classes (this module depends on each module's
 * jar alone). A package named {@code internal} belongs to its module: no other module uses it. What modules share is
 * named: the {@code spi} packages ({@code dev.outboxkit.core.spi}, {@code dev.outboxkit.writer.spi}, …) and
 * {@code dev.outboxkit.runtime}. The writer and the contract bring no Kafka client and no connection pool, and the
 * two relays never use each other.
 */
class ModuleBoundariesTest {

    private static JavaClasses classes;

    @BeforeAll
    static void importTheModules() {
        classes = new ClassFileImporter().withImportOption(new ImportOption.DoNotIncludeTests()).importPackages("dev.outboxkit");
    }

    /** Guards the other checks against passing on nothing: every module's classes were found, each in its own place. */
    @Test
    void everyModuleIsImported() {
        Set<String> modules = classes.stream().map(ModuleBoundariesTest::module).collect(Collectors.toCollection(TreeSet::new));
        assertThat(modules).contains("outbox-core", "outbox-runtime", "sql", "outbox-writer", "relay-poller",
                "relay-debezium", "consumer-dedupe", "outbox-ops", "outbox-console", "outbox-testkit", "outbox-cli", "outbox-dev-tools",
                "outbox-spring-boot-autoconfigure", "outbox-spring-boot-test", "benchmarks");
        assertThat(classes.contain("dev.outboxkit.writer.OutboxWriter")).isTrue();
        assertThat(classes.contain("dev.outboxkit.relay.poller.internal.PollerSql")).isTrue();
    }

    @Test
    void aModulesInternalPackagesAreUsedByThatModuleAlone() {
        classes().should(useNoInternalPackageOfAnotherModule()).check(classes);
    }

    @Test
    void theWriterAndTheContractBringNoKafkaClientAndNoPool() {
        noClasses().that().resideInAnyPackage("dev.outboxkit.core..", "dev.outboxkit.writer..")
                .should().dependOnClassesThat().resideInAnyPackage("org.apache.kafka..", "com.zaxxer..",
                        "dev.outboxkit.runtime..", "dev.outboxkit.relay")
                .check(classes);
    }

    @Test
    void theRelaysMeetOnlyInTheRuntime() {
        noClasses().that().resideInAPackage("dev.outboxkit.relay.poller..")
                .should().dependOnClassesThat().resideInAPackage("dev.outboxkit.relay.cdc..").check(classes);
        noClasses().that().resideInAPackage("dev.outboxkit.relay.cdc..")
                .should().dependOnClassesThat().resideInAPackage("dev.outboxkit.relay.poller..").check(classes);
    }

    /**
     * A relay reads its settings in one wiring place and hands each internal part the values it uses, so a reader
     * sees which value a class really depends on (as Kafka's producer hands its accumulator and sender plain values).
     */
    @Test
    void noInternalPartOfARelayTakesAWholeSettingsObject() {
        Set<String> bags = Set.of("dev.outboxkit.relay.poller.internal.PollerSettings",
                "dev.outboxkit.relay.cdc.internal.CdcSettings", "dev.outboxkit.runtime.SharedSettings");
        Set<String> wiring = Set.of("PollerSettings", "CdcSettings", "CdcWiring");
        codeUnits().that().areDeclaredInClassesThat().resideInAnyPackage("dev.outboxkit.relay.poller.internal",
                        "dev.outboxkit.relay.cdc.internal")
                .and().areDeclaredInClassesThat(new DescribedPredicate<>("are not the wiring") {
                    @Override
                    public boolean test(JavaClass c) {
                        String outermost = c.getName().substring(c.getPackageName().length() + 1).split("\\$")[0];
                        return !wiring.contains(outermost);
                    }
                })
                .should(new ArchCondition<>("take no settings object") {
                    @Override
                    public void check(JavaCodeUnit unit, ConditionEvents events) {
                        for (JavaClass parameter : unit.getRawParameterTypes()) {
                            if (bags.contains(parameter.getName())) {
                                events.add(SimpleConditionEvent.violated(unit, unit.getFullName() + " takes "
                                        + parameter.getSimpleName() + "; pass the values it uses instead"));
                            }
                        }
                    }
                })
                .check(classes);
    }

    private static ArchCondition<JavaClass> useNoInternalPackageOfAnotherModule() {
        return new ArchCondition<>("use no package named 'internal' of another module") {
            @Override
            public void check(JavaClass origin, ConditionEvents events) {
                String from = module(origin);
                for (Dependency d : origin.getDirectDependenciesFromSelf()) {
                    JavaClass target = d.getTargetClass().getBaseComponentType();
                    String pkg = target.getPackageName();
                    if (!pkg.startsWith("dev.outboxkit.") || !Arrays.asList(pkg.split("\\.")).contains("internal")) {
                        continue;
                    }
                    String to = module(target);
                    if (!from.equals(to)) {
                        events.add(SimpleConditionEvent.violated(d, from + " uses " + to + "'s internal "
                                + target.getName() + ": " + d.getDescription()
                                + " (share it through a named package such as " + to + "'s spi, or keep it in one module)"));
                    }
                }
            }
        };
    }

    /**
     * The module a class was compiled in: the folder before {@code target/classes} in a reactor build, the artifact of
     * the jar otherwise ({@code relay-poller-0.1.0-SNAPSHOT.jar} is relay-poller; {@code outboxkit-sql} is sql).
     */
    static String module(JavaClass type) {
        String uri = type.getSource().map(s -> s.getUri().toString())
                .orElseThrow(() -> new AssertionError("no class file for " + type.getName() + ": was its module built?"));
        int classesDir = uri.indexOf("/target/classes/");
        if (classesDir >= 0) {
            String dir = uri.substring(0, classesDir);
            return dir.substring(dir.lastIndexOf('/') + 1);
        }
        int jar = uri.indexOf(".jar!");
        if (jar >= 0) {
            String file = uri.substring(uri.lastIndexOf('/', jar) + 1, jar);
            String artifact = file.replaceFirst("-\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?$", "");
            return artifact.equals("outboxkit-sql") ? "sql" : artifact;
        }
        throw new AssertionError("cannot tell the module of " + type.getName() + " from " + uri);
    }
}
