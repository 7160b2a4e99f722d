package dev.outboxkit.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Checks a module's public surface: outside the packages that are not API, no public or protected
 * member of a public class may name a type from one of them (in a parameter, return type, exception,
 * type bound, field, superclass or interface), and every public top-level type in one of them says in
 * its class Javadoc that it is "Not API". Not API are packages named {@code internal} (one module's
 * own), packages named {@code spi} (what outboxkit's modules share) and {@code dev.outboxkit.runtime}
 * (the runtime the relays and the consumer share).
 *
 * <p>A module's test calls it with one class of the module (to find its compiled classes) and the
 * packages to check, and asserts the result is empty; the lists name each problem.
 */
public final class PublicSurface {

    private PublicSurface() {
    }

    /**
     * The leaks in the compiled classes beside {@code anchor} (its directory or jar) whose package is
     * one of {@code rootPackages} or below, one line each, sorted.
     */
    public static List<String> leaks(Class<?> anchor, String... rootPackages) {
        Set<String> found = new TreeSet<>();
        for (Class<?> type : classes(anchor, rootPackages)) {
            if (!isInternal(type) && exported(type)) {
                inspect(type, found);
            }
        }
        return List.copyOf(found);
    }

    /**
     * Public top-level types under {@code sourceRoot} (e.g. {@code src/main/java}) in an
     * {@code internal} package whose class Javadoc lacks "Not API", as source paths relative to it.
     * {@code exempt} names source files (e.g. {@code Forwarder.java}) to skip, for a change in flight.
     */
    public static List<String> internalTypesWithoutNotApiNote(Path sourceRoot, String... exempt) {
        Set<String> skip = Set.of(exempt);
        List<String> missing = new ArrayList<>();
        try (Stream<Path> files = Files.walk(sourceRoot)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                Path relative = sourceRoot.relativize(file);
                boolean internal = relative.getParent() != null
                        && isNotApi(relative.getParent().toString().replace('\\', '.').replace('/', '.'));
                if (internal && !skip.contains(file.getFileName().toString())
                        && !notedAsNotApi(Files.readString(file, StandardCharsets.UTF_8))) {
                    missing.add(relative.toString().replace('\\', '/'));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the sources under " + sourceRoot, e);
        }
        return missing;
    }

    /** The first top-level (unindented) public type declaration, and the Javadoc just before it. */
    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "(/\\*\\*((?:(?!\\*/).)*)\\*/\\s*)?^(@\\w+(\\([^)]*\\))?\\s*)*public\\s+((abstract|final|sealed|non-sealed)\\s+)*"
                    + "(class|interface|enum|record|@interface)\\s", Pattern.DOTALL | Pattern.MULTILINE);

    static boolean notedAsNotApi(String source) {
        Matcher m = PUBLIC_TYPE.matcher(source);
        if (!m.find()) {
            return true; // no public type: nothing a user could mistake for API
        }
        return m.group(2) != null && m.group(2).contains("Not API");
    }

    private static boolean isInternal(Class<?> type) {
        return isNotApi(type.getPackageName());
    }

    /** True for a package users must not rely on: named {@code internal} or {@code spi}, or the shared runtime. */
    static boolean isNotApi(String packageName) {
        List<String> segments = Arrays.asList(packageName.split("\\."));
        return segments.contains("internal") || segments.contains("spi")
                || packageName.equals("dev.outboxkit.runtime") || packageName.startsWith("dev.outboxkit.runtime.");
    }

    /** Public, or protected, all the way out: a user can name it. */
    private static boolean exported(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getDeclaringClass()) {
            if (!Modifier.isPublic(c.getModifiers()) && !Modifier.isProtected(c.getModifiers())) {
                return false;
            }
        }
        return !type.isAnonymousClass() && !type.isLocalClass() && !type.isSynthetic();
    }

    private static void inspect(Class<?> type, Set<String> found) {
        String name = type.getName();
        try {
            check(type.getGenericSuperclass(), name + " superclass", found);
            for (Type t : type.getGenericInterfaces()) {
                check(t, name + " interface", found);
            }
            typeParameters(type.getTypeParameters(), name, found);
            for (Constructor<?> c : type.getDeclaredConstructors()) {
                if (visible(c)) {
                    executable(c, name + "#<init>" + parameters(c), found);
                }
            }
            for (Method m : type.getDeclaredMethods()) {
                if (visible(m) && !m.isBridge()) {
                    String where = name + "#" + m.getName() + parameters(m);
                    check(m.getGenericReturnType(), where + " return type", found);
                    executable(m, where, found);
                }
            }
            for (Field f : type.getDeclaredFields()) {
                if (visible(f)) {
                    check(f.getGenericType(), name + "#" + f.getName() + " field", found);
                }
            }
        } catch (LinkageError e) {
            found.add(name + " cannot be inspected (a type in its signatures is missing from the class path): " + e);
        }
    }

    private static boolean visible(Member m) {
        return !m.isSynthetic() && (Modifier.isPublic(m.getModifiers()) || Modifier.isProtected(m.getModifiers()));
    }

    private static void executable(Executable e, String where, Set<String> found) {
        Type[] params = e.getGenericParameterTypes();
        for (int i = 0; i < params.length; i++) {
            check(params[i], where + " parameter " + (i + 1), found);
        }
        for (Type t : e.getGenericExceptionTypes()) {
            check(t, where + " throws", found);
        }
        typeParameters(e.getTypeParameters(), where, found);
    }

    private static void typeParameters(TypeVariable<?>[] variables, String where, Set<String> found) {
        for (TypeVariable<?> v : variables) {
            for (Type bound : v.getBounds()) {
                check(bound, where + " type parameter " + v.getName(), found);
            }
        }
    }

    private static String parameters(Executable e) {
        return Arrays.stream(e.getParameterTypes()).map(Class::getSimpleName)
                .reduce((a, b) -> a + ", " + b).map(s -> "(" + s + ")").orElse("()");
    }

    private static void check(Type type, String where, Set<String> found) {
        Set<Class<?>> named = new HashSet<>();
        collect(type, named, new HashSet<>());
        named.stream().filter(PublicSurface::isInternal).map(Class::getName).sorted()
                .forEach(internal -> found.add(where + " names " + internal));
    }

    /** Every class a (generic) type mentions: raw types, arguments, bounds, owners, array components. */
    private static void collect(Type type, Set<Class<?>> out, Set<Type> seen) {
        if (type == null || !seen.add(type)) {
            return;
        }
        if (type instanceof Class<?> c) {
            while (c.isArray()) {
                c = c.getComponentType();
            }
            out.add(c);
        } else if (type instanceof ParameterizedType p) {
            collect(p.getRawType(), out, seen);
            collect(p.getOwnerType(), out, seen);
            for (Type arg : p.getActualTypeArguments()) {
                collect(arg, out, seen);
            }
        } else if (type instanceof WildcardType w) {
            Stream.concat(Arrays.stream(w.getUpperBounds()), Arrays.stream(w.getLowerBounds()))
                    .forEach(b -> collect(b, out, seen));
        } else if (type instanceof TypeVariable<?> v) {
            for (Type b : v.getBounds()) {
                collect(b, out, seen);
            }
        } else if (type instanceof GenericArrayType a) {
            collect(a.getGenericComponentType(), out, seen);
        }
    }

    /** The classes in {@code anchor}'s directory or jar under the given packages, loaded without initialising. */
    private static List<Class<?>> classes(Class<?> anchor, String... rootPackages) {
        if (rootPackages.length == 0) {
            throw new IllegalArgumentException("name at least one package to check, e.g. \"" + anchor.getPackageName() + "\"");
        }
        Path location;
        try {
            location = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException | NullPointerException e) {
            throw new IllegalArgumentException("cannot tell where " + anchor.getName() + " was loaded from", e);
        }
        List<String> names;
        try {
            names = Files.isDirectory(location) ? classNamesInDirectory(location) : classNamesInJar(location);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the classes in " + location, e);
        }
        List<Class<?>> classes = new ArrayList<>();
        for (String name : names) {
            boolean wanted = Arrays.stream(rootPackages).anyMatch(p -> name.startsWith(p + "."));
            if (wanted) {
                try {
                    classes.add(Class.forName(name, false, anchor.getClassLoader()));
                } catch (ClassNotFoundException e) {
                    throw new IllegalStateException(name + " is in " + location + " but cannot be loaded", e);
                }
            }
        }
        if (classes.isEmpty()) {
            throw new IllegalArgumentException("no classes of " + Arrays.toString(rootPackages) + " in " + location
                    + ": check the package names");
        }
        classes.sort(Comparator.comparing(Class::getName));
        return classes;
    }

    private static List<String> classNamesInDirectory(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.map(f -> root.relativize(f).toString().replace('\\', '/'))
                    .filter(PublicSurface::isClassFile).map(PublicSurface::className).toList();
        }
    }

    private static List<String> classNamesInJar(Path jar) throws IOException {
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            return zip.stream().map(ZipEntry::getName).filter(PublicSurface::isClassFile)
                    .map(PublicSurface::className).toList();
        }
    }

    private static boolean isClassFile(String path) {
        return path.endsWith(".class") && !path.endsWith("module-info.class") && !path.endsWith("package-info.class")
                && !path.startsWith("META-INF/");
    }

    private static String className(String path) {
        return path.substring(0, path.length() - ".class".length()).replace('/', '.');
    }
}
