package dev.outboxkit.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A Java main class in a child JVM with this JVM's class path: a relay, a consumer or a broker
 * that a test can SIGKILL, SIGSTOP/SIGCONT, SIGTERM and start again. Its output goes to a log
 * file (under {@code target/child-logs} when run by Maven) and can be waited on.
 */
public final class JavaProcess implements AutoCloseable {

    /** How long an exited child's last output may take to arrive. */
    private static final Duration DRAIN = Duration.ofSeconds(10);

    private final String name;
    private final Process process;
    private final Path log;
    private final StringBuffer output = new StringBuffer();
    private final Thread pump;

    private JavaProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
        pump = new Thread(this::pump, "child-" + name + "-output");
        pump.setDaemon(true);
        pump.start();
    }

    /** Starts {@code mainClass} with {@code args}, extra JVM options and environment. */
    public static JavaProcess start(String name, Class<?> mainClass, List<String> args, List<String> jvmOptions,
                                    Map<String, String> environment) {
        return start(name, mainClass, args, jvmOptions, environment, entry -> false);
    }

    /**
     * The same on the test class path less the entries {@code leaveOut} accepts (for example a library's jars, to
     * show the code runs without it).
     */
    public static JavaProcess start(String name, Class<?> mainClass, List<String> args, List<String> jvmOptions,
                                    Map<String, String> environment, java.util.function.Predicate<String> leaveOut) {
        String classPath = java.util.Arrays.stream(classPath().split(java.io.File.pathSeparator))
                .filter(entry -> !leaveOut.test(entry))
                .collect(java.util.stream.Collectors.joining(java.io.File.pathSeparator));
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx512m");
        command.add("-XX:+UseSerialGC");
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(classPath);
        command.add(mainClass.getName());
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        try {
            Path dir = Path.of(System.getProperty("outboxkit.child.logs", "target/child-logs"));
            Files.createDirectories(dir);
            Path log = dir.resolve(name + "-" + System.currentTimeMillis() + ".log");
            return new JavaProcess(name, builder.start(), log);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start child JVM " + name + ": " + e.getMessage(), e);
        }
    }

    /** The test class path (Surefire's real one when this runs under Surefire). */
    static String classPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    private void pump() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
             Writer out = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                output.append(line).append('\n');
                out.write(line);
                out.write('\n');
                out.flush();
            }
        } catch (IOException e) {
            // the child is gone; what it printed is kept
        }
    }

    public long pid() {
        return process.pid();
    }

    public String name() {
        return name;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Everything the child printed so far. */
    public String output() {
        return output.toString();
    }

    public Path logFile() {
        return log;
    }

    /** Waits until the child printed {@code text}; false on timeout or when it died first. */
    public boolean awaitOutput(String text, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (output.indexOf(text) >= 0) {
                return true;
            }
            try {
                if (!process.isAlive()) {
                    drain();
                    return output.indexOf(text) >= 0;
                }
                TimeUnit.MILLISECONDS.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
    }

    /** The child's threads ({@code jstack}), for a test that timed out waiting for it. */
    public String threadDump() {
        try {
            Process jstack = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jstack").toString(),
                    Long.toString(pid())).redirectErrorStream(true).start();
            String text = new String(jstack.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            jstack.waitFor(60, TimeUnit.SECONDS);
            return text;
        } catch (IOException e) {
            return "no thread dump of " + name + ": " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "no thread dump of " + name + ": interrupted";
        }
    }

    /**
     * SIGKILL: no shutdown hook, no finally block, no flush. Sent by this JVM itself ({@link ProcessHandle#destroyForcibly()}
     * is SIGKILL on Unix), not by a forked {@code kill}: on a loaded machine forking one took over a second, which a
     * failover measurement would count. (Not {@link Process#destroyForcibly()}: it closes the pipes, so the child's
     * last output would be lost.)
     */
    public void kill9() {
        process.toHandle().destroyForcibly();
        waitForExit(Duration.ofSeconds(30));
    }

    /** SIGSTOP: the JVM freezes (as in a long GC pause) and keeps its sockets open. */
    public void pause() {
        signal("STOP");
    }

    /** SIGCONT after {@link #pause()}. */
    public void resume() {
        signal("CONT");
    }

    /**
     * SIGTERM ({@link ProcessHandle#destroy()} is SIGTERM on Unix, sent without a fork; the pipes stay open for the
     * shutdown hooks' output) and wait for the exit code.
     */
    public int terminate(Duration timeout) {
        process.toHandle().destroy();
        return waitForExit(timeout);
    }

    /** The exit code, or throws when the child is still running after {@code timeout}. */
    public int waitForExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(name + " (pid " + pid() + ") still running after " + timeout);
            }
            drain();
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for " + name, e);
        }
    }

    /**
     * After the child exited: waits until its last lines are read from the pipe, so that {@link #output()} holds
     * everything it printed (the pump thread may lag behind the exit on a loaded machine). Bounded, because a
     * grandchild that inherited the pipe keeps it open.
     */
    private void drain() throws InterruptedException {
        pump.join(DRAIN.toMillis());
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).redirectErrorStream(true).start();
            kill.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot send SIG" + signal + " to " + name, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Kills the child if it still runs. */
    @Override
    public void close() {
        if (process.isAlive()) {
            signal("CONT");
            process.destroyForcibly();
            try {
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
