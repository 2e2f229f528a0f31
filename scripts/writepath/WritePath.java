import com.sun.jdi.Bootstrap;
import com.sun.jdi.IntegerValue;
import com.sun.jdi.IncompatibleThreadStateException;
import com.sun.jdi.Method;
import com.sun.jdi.ReferenceType;
import com.sun.jdi.StackFrame;
import com.sun.jdi.ThreadGroupReference;
import com.sun.jdi.ThreadReference;
import com.sun.jdi.VirtualMachine;
import com.sun.jdi.connect.Connector;
import com.sun.jdi.connect.ListeningConnector;
import com.sun.jdi.event.BreakpointEvent;
import com.sun.jdi.event.ClassPrepareEvent;
import com.sun.jdi.event.Event;
import com.sun.jdi.event.EventSet;
import com.sun.jdi.event.MethodEntryEvent;
import com.sun.jdi.event.MethodExitEvent;
import com.sun.jdi.event.VMDeathEvent;
import com.sun.jdi.event.VMDisconnectEvent;
import com.sun.jdi.request.BreakpointRequest;
import com.sun.jdi.request.ClassPrepareRequest;
import com.sun.jdi.request.EventRequest;
import com.sun.jdi.request.EventRequestManager;
import com.sun.jdi.request.MethodEntryRequest;
import com.sun.jdi.request.MethodExitRequest;
import com.sun.tools.classfile.AccessFlags;
import com.sun.tools.classfile.Attribute;
import com.sun.tools.classfile.ClassFile;
import com.sun.tools.classfile.Code_attribute;
import com.sun.tools.classfile.ConstantPool;
import com.sun.tools.classfile.ConstantPool.CPRefInfo;
import com.sun.tools.classfile.Field;
import com.sun.tools.classfile.Instruction;
import com.sun.tools.classfile.SourceFile_attribute;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Counts what one WRITE runs in the domain, from the initiator's {@code Session.write} until the transfer
 * reports DONE, and two static measures of the domain's main code: its pass-through methods and its fields
 * written from another source file.
 *
 * <p>The trace (JDI): WritePath starts WriteDriver.java in a JVM with a debug agent, lets it warm two engines
 * with untraced WRITEs, and then, for each traced WRITE, records every entry into a method of
 * {@code io.tcpx4j.domain} and its sub-packages, on any thread, from the entry into {@code write} of the
 * domain class that implements {@code io.tcpx4j.api.Session} (on the driver's thread) until
 * {@code succeed()} (or {@code fail}) of the domain class that implements {@code io.tcpx4j.api.Transfer}
 * returns. Entries into {@code io.tcpx4j.api} are recorded beside them, reported apart.
 *
 * <p>Idle iterations: an agent thread runs its loop's outermost domain {@code doWork()I} once per iteration.
 * An iteration lasts from that method's entry until the next entry (the idle wait after it included); one
 * whose {@code doWork} returned 0 did no work, and its methods count only as "idle". What a thread ran in
 * the window before its first {@code doWork} there (a caller's thread, an I/O thread, an agent's wake-up)
 * counts as work, as does an iteration whose {@code doWork} was still running when the window closed and
 * had not returned by the time the driver's thread came back.
 *
 * <p>Timer work: what an agent's cycle does only when a timer is due (the accept poll and the housekeeping,
 * once a millisecond) runs in every traced iteration, because tracing stretches the window far beyond a
 * millisecond. Methods entered only below a domain method named in {@code --timer-work} (default
 * {@code acceptInto,housekeeping,reclaim}, the same names on every revision so far) are counted, and also
 * reported apart, with the counts without them ("no-timer-work").
 *
 * <p>Files: a class's file is its package and its {@code SourceFile} attribute, so nested classes fold into
 * the file that declares them. Lambda proxies (hidden classes) are left out; a lambda's body is a method
 * of the class that wrote it. Methods javac writes (bridges, an enum's {@code values()} and
 * {@code valueOf(String)}) are not counted; constructors are.
 *
 * <p>Usage: {@code java --add-modules jdk.jdi,jdk.jdeps --add-exports jdk.jdeps/com.sun.tools.classfile=ALL-UNNAMED
 * WritePath.java --classes DIR --classpath CP --driver WriteDriver.java [--warm N] [--samples N] [--size B]
 * [--inline-limit B] [--caller-drives] [--timer-work NAMES] [--label NAME] [--out DIR]}; DIR is the domain module's
 * {@code target/classes}, CP the class path the driver runs with. Prints the report; with {@code --out}
 * also writes it and the lists to files there.
 */
public final class WritePath {

    static final String DOMAIN = "io.tcpx4j.domain.";
    static final String API = "io.tcpx4j.api.";

    private WritePath() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = options(args);
        Path classes = Path.of(require(opt, "classes"));
        DomainCode code = DomainCode.read(classes);
        Tracer.Settings settings = new Tracer.Settings(require(opt, "classpath"), require(opt, "driver"),
                Integer.parseInt(opt.getOrDefault("warm", "200")), Integer.parseInt(opt.getOrDefault("samples", "5")),
                Integer.parseInt(opt.getOrDefault("size", "4096")),
                Integer.parseInt(opt.getOrDefault("inline-limit", "-1")),
                opt.containsKey("caller-drives"),
                new TreeSet<>(List.of(opt.getOrDefault("timer-work", "acceptInto,housekeeping,reclaim").split(","))));
        Path out = opt.containsKey("out") ? Path.of(opt.get("out")) : null;
        if (out != null) {
            Files.createDirectories(out);
        }
        List<Sample> samples = new Tracer(code, settings, out).run();
        Report report = new Report(code, samples, settings, opt.getOrDefault("label", classes.toString()));
        report.print(System.out);
        if (out != null) {
            report.write(out);
        }
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> opt = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + args[i]);
            }
            String key = args[i].substring(2);
            if (key.equals("caller-drives")) {
                opt.put(key, "true");
            } else if (i + 1 < args.length) {
                opt.put(key, args[++i]);
            } else {
                throw new IllegalArgumentException("--" + key + " needs a value");
            }
        }
        return opt;
    }

    private static String require(Map<String, String> opt, String key) {
        String v = opt.get(key);
        if (v == null) {
            throw new IllegalArgumentException("--" + key + " is required");
        }
        return v;
    }

    /** A method as JDI and the class file both name it: {@code pkg.Class$Nested.name(descriptor)}. */
    static String key(String className, String name, String descriptor) {
        return className + "." + name + descriptor;
    }

    /** The class part of a method key. */
    static String classOf(String methodKey) {
        return methodKey.substring(0, methodKey.lastIndexOf('.', methodKey.indexOf('(')));
    }

    static boolean isLambdaProxy(String className) {
        return className.contains("$$Lambda");
    }

    /**
     * The domain's main code read from its class files (the JDK's class-file reader): the file of every
     * class, its methods, which of them are pass-throughs, and which fields are written or read from
     * another file.
     *
     * <p>A pass-through is a method other than a constructor, a static initializer, a bridge or an enum's
     * {@code values()}/{@code valueOf(String)} whose instructions are, in this order: any number of operand
     * pushes (a local variable's load, a {@code getfield}/{@code getstatic}, a constant, a {@code checkcast},
     * or a call of a domain getter, i.e. a method whose body is only {@code aload_0, getfield, return} or
     * {@code getstatic, return}); then one call ({@code invokevirtual/special/static/interface}, a getter's
     * too), the method it passes through to; then optionally a {@code checkcast}, or a {@code pop}/{@code
     * pop2} of the result; then a return. No branch, no arithmetic, no allocation, no store, no other call.
     */
    static final class DomainCode {
        /** Class name (dots) to its file, e.g. {@code session/RemoteSession.java}. */
        final Map<String, String> fileOf = new TreeMap<>();
        final Map<String, String> superOf = new HashMap<>();
        final Map<String, List<String>> interfacesOf = new HashMap<>();
        final Map<String, Set<String>> fieldsOf = new HashMap<>();
        /** Every method with code, by key. */
        final Map<String, MethodCode> methods = new TreeMap<>();
        /** Field ({@code Class.name} of its declaring class) to the other files that write it. */
        final Map<String, Set<String>> writtenFromOtherFiles = new TreeMap<>();
        /** Field to the other files that read or write it. */
        final Map<String, Set<String>> accessedFromOtherFiles = new TreeMap<>();

        /** {@code generated}: a bridge, or an enum's {@code values()}/{@code valueOf(String)}, which javac writes. */
        record MethodCode(String key, String className, String name, boolean generated, List<Instruction> code,
                          ConstantPool pool) {
            boolean initializer() {
                return name.startsWith("<");
            }
        }

        static DomainCode read(Path classesDir) throws IOException {
            DomainCode c = new DomainCode();
            Path root = classesDir.resolve(DOMAIN.replace('.', '/'));
            List<Path> files;
            try (Stream<Path> walk = Files.walk(root)) {
                files = walk.filter(p -> p.toString().endsWith(".class")).sorted().collect(Collectors.toList());
            }
            if (files.isEmpty()) {
                throw new IllegalArgumentException("no domain classes under " + root);
            }
            List<ClassFile> read = new ArrayList<>();
            for (Path p : files) {
                try {
                    read.add(ClassFile.read(p.toFile()));
                } catch (Exception e) {
                    throw new IOException("cannot read " + p, e);
                }
            }
            for (ClassFile cf : read) {
                c.add(cf);
            }
            c.fieldAccesses();
            return c;
        }

        private void add(ClassFile cf) {
            try {
                String name = cf.getName().replace('/', '.');
                if (name.endsWith(".package-info") || name.endsWith("module-info")) {
                    return;
                }
                String pkg = name.substring(DOMAIN.length(), name.lastIndexOf('.') + 1).replace('.', '/');
                SourceFile_attribute sf = (SourceFile_attribute) cf.attributes.get(Attribute.SourceFile);
                String source = sf != null ? sf.getSourceFile(cf.constant_pool)
                        : name.substring(name.lastIndexOf('.') + 1).split("\\$")[0] + ".java";
                fileOf.put(name, pkg + source);
                superOf.put(name, cf.super_class == 0 ? null : cf.getSuperclassName().replace('/', '.'));
                List<String> ifs = new ArrayList<>();
                for (int i = 0; i < cf.interfaces.length; i++) {
                    ifs.add(cf.getInterfaceName(i).replace('/', '.'));
                }
                interfacesOf.put(name, ifs);
                Set<String> fields = new TreeSet<>();
                for (Field f : cf.fields) {
                    fields.add(f.getName(cf.constant_pool));
                }
                fieldsOf.put(name, fields);
                for (com.sun.tools.classfile.Method m : cf.methods) {
                    Code_attribute code = (Code_attribute) m.attributes.get(Attribute.Code);
                    if (code == null) {
                        continue;
                    }
                    String mName = m.getName(cf.constant_pool);
                    String k = key(name, mName, m.descriptor.getValue(cf.constant_pool));
                    List<Instruction> ins = new ArrayList<>();
                    code.getInstructions().forEach(ins::add);
                    boolean generated = m.access_flags.is(AccessFlags.ACC_BRIDGE) || enumMethod(cf, name, k);
                    methods.put(k, new MethodCode(k, name, mName, generated, ins, cf.constant_pool));
                }
            } catch (Exception e) {
                throw new IllegalStateException("cannot read a class file: " + e, e);
            }
        }

        /** Whether {@code key} is an enum's {@code values()} or {@code valueOf(String)}. */
        private static boolean enumMethod(ClassFile cf, String className, String key) throws Exception {
            return cf.super_class != 0 && cf.getSuperclassName().equals("java/lang/Enum")
                    && (key.equals(key(className, "values", "()[L" + cf.getName() + ";"))
                    || key.equals(key(className, "valueOf", "(Ljava/lang/String;)L" + cf.getName() + ";")));
        }

        private void fieldAccesses() {
            for (MethodCode m : methods.values()) {
                String writer = fileOf.get(m.className());
                for (Instruction i : m.code()) {
                    String op = i.getOpcode().name();
                    if (!List.of("PUTFIELD", "PUTSTATIC", "GETFIELD", "GETSTATIC").contains(op)) {
                        continue;
                    }
                    String[] ref = ref(m.pool(), i);
                    String declaring = declaringClassOf(ref[0], ref[1]);
                    String owner = fileOf.get(declaring);
                    if (owner == null || owner.equals(writer)) {
                        continue;
                    }
                    String field = declaring + "." + ref[1];
                    accessedFromOtherFiles.computeIfAbsent(field, f -> new TreeSet<>()).add(writer);
                    if (op.startsWith("PUT")) {
                        writtenFromOtherFiles.computeIfAbsent(field, f -> new TreeSet<>()).add(writer);
                    }
                }
            }
        }

        /** The domain class that declares field {@code name} seen through {@code className}, else it. */
        private String declaringClassOf(String className, String name) {
            for (String c = className; c != null && fileOf.containsKey(c); c = superOf.get(c)) {
                if (fieldsOf.get(c).contains(name)) {
                    return c;
                }
            }
            return className;
        }

        /** {class (dots), name, descriptor} of the member an instruction refers to. */
        static String[] ref(ConstantPool pool, Instruction i) {
            try {
                CPRefInfo r = (CPRefInfo) pool.get(i.getUnsignedShort(1));
                return new String[] {r.getClassName().replace('/', '.'), r.getNameAndTypeInfo().getName(),
                        r.getNameAndTypeInfo().getType()};
            } catch (Exception e) {
                throw new IllegalStateException("bad constant pool reference: " + e, e);
            }
        }

        String file(String className) {
            return fileOf.get(className);
        }

        boolean implementsInterface(String className, String iface) {
            for (String c = className; c != null && fileOf.containsKey(c); c = superOf.get(c)) {
                if (interfacesOf.get(c).contains(iface)) {
                    return true;
                }
            }
            return false;
        }

        /** The domain method a call of {@code key} runs when the receiver's class is the referenced one. */
        MethodCode resolve(String className, String name, String descriptor) {
            for (String c = className; c != null && fileOf.containsKey(c); c = superOf.get(c)) {
                MethodCode m = methods.get(key(c, name, descriptor));
                if (m != null) {
                    return m;
                }
            }
            return null;
        }

        /** Whether the method {@code key} is one javac wrote (see {@link MethodCode}); such are not counted. */
        boolean generated(String methodKey) {
            MethodCode m = methods.get(methodKey);
            return m != null && m.generated();
        }

        boolean isGetter(String methodKey) {
            MethodCode m = methods.get(methodKey);
            return m != null && isGetter(m);
        }

        boolean isGetter(MethodCode m) {
            List<String> ops = m.code().stream().map(i -> i.getOpcode().name()).collect(Collectors.toList());
            return ops.size() == 3 && ops.get(0).equals("ALOAD_0") && ops.get(1).equals("GETFIELD")
                    && isReturn(ops.get(2))
                    || ops.size() == 2 && ops.get(0).equals("GETSTATIC") && isReturn(ops.get(1));
        }

        /** The key of the one method a pass-through calls, or null when {@code key} is not a pass-through. */
        String passThroughTarget(String methodKey) {
            MethodCode m = methods.get(methodKey);
            if (m == null || m.initializer() || m.generated()) {
                return null;
            }
            List<Instruction> code = m.code();
            int last = code.size() - 2;
            if (last < 0 || !isReturn(code.get(last + 1).getOpcode().name())) {
                return null;
            }
            if (List.of("CHECKCAST", "POP", "POP2").contains(code.get(last).getOpcode().name())) {
                last--;
            }
            if (last < 0 || !isCall(code.get(last).getOpcode().name())) {
                return null;
            }
            for (int i = 0; i < last; i++) {
                String op = code.get(i).getOpcode().name();
                if (!isPush(op) && !(isCall(op) && getterCall(m.pool(), code.get(i)))) {
                    return null;
                }
            }
            String[] r = ref(m.pool(), code.get(last));
            return key(r[0], r[1], r[2]);
        }

        private boolean getterCall(ConstantPool pool, Instruction call) {
            String[] r = ref(pool, call);
            MethodCode callee = resolve(r[0], r[1], r[2]);
            return callee != null && isGetter(callee);
        }

        private static boolean isCall(String op) {
            return op.startsWith("INVOKE") && !op.equals("INVOKEDYNAMIC");
        }

        private static boolean isPush(String op) {
            return op.matches("[ILFDA]LOAD(_\\d|_W)?") || op.equals("GETFIELD") || op.equals("GETSTATIC")
                    || op.equals("CHECKCAST") || op.equals("ACONST_NULL") || op.matches("[ILFD]CONST_(M1|\\d)")
                    || op.equals("BIPUSH") || op.equals("SIPUSH") || op.matches("LDC(_W|2_W)?");
        }

        private static boolean isReturn(String op) {
            return op.matches("[ILFDA]?RETURN");
        }

        /** The domain classes that implement an api interface, e.g. {@code io.tcpx4j.api.Session}. */
        Set<String> implementationsOf(String iface) {
            return fileOf.keySet().stream().filter(c -> implementsInterface(c, iface))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }

    /** One agent loop iteration (or, first, what a thread ran before its first one in the window). */
    static final class Iteration {
        final Set<String> methods = new TreeSet<>();
        /** Those of {@link #methods} entered at least once outside the timer work. */
        final Set<String> outsideTimer = new TreeSet<>();
        final Set<String> apiMethods = new TreeSet<>();
        /** "caller -> callee" for each domain method entered from a domain method. */
        final Set<String> calls = new TreeSet<>();
        /** null: not known (before the thread's first doWork in the window, or still running at the end). */
        Boolean work;
    }

    /** What one thread ran in one window. */
    static final class ThreadTrace {
        final String name;
        final List<Iteration> iterations = new ArrayList<>(List.of(new Iteration()));
        /** Frame count at which the outermost doWork runs on this thread, 0 when none runs. */
        int rootDepth;
        String rootMethod;

        ThreadTrace(String name) {
            this.name = name;
        }

        Iteration current() {
            return iterations.get(iterations.size() - 1);
        }

        boolean idle(Iteration i) {
            return Boolean.FALSE.equals(i.work);
        }
    }

    /** One traced WRITE. */
    static final class Sample {
        final int round;
        final Map<String, ThreadTrace> threads = new TreeMap<>();
        long events;
        String end = "open";
        String driverStatus;
        /** The deepest domain stack seen: files from the bottom up, consecutive frames of one file merged. */
        List<String> deepestFiles = List.of();
        int deepestFrames;

        Sample(int round) {
            this.round = round;
        }

        Set<String> methods(boolean includeIdle, boolean api) {
            Set<String> s = new TreeSet<>();
            for (ThreadTrace t : threads.values()) {
                for (Iteration i : t.iterations) {
                    if (includeIdle || !t.idle(i)) {
                        s.addAll(api ? i.apiMethods : i.methods);
                    }
                }
            }
            return s;
        }

        /** The methods of working iterations that ran at least once outside the timer work. */
        Set<String> methodsOutsideTimer() {
            Set<String> s = new TreeSet<>();
            for (ThreadTrace t : threads.values()) {
                t.iterations.stream().filter(i -> !t.idle(i)).forEach(i -> s.addAll(i.outsideTimer));
            }
            return s;
        }

        Set<String> calls() {
            Set<String> s = new TreeSet<>();
            for (ThreadTrace t : threads.values()) {
                t.iterations.stream().filter(i -> !t.idle(i)).forEach(i -> s.addAll(i.calls));
            }
            return s;
        }

        Set<String> methodsOf(ThreadTrace t) {
            Set<String> s = new TreeSet<>();
            for (Iteration i : t.iterations) {
                if (!t.idle(i)) {
                    s.addAll(i.methods);
                }
            }
            return s;
        }

        long iterations(Boolean work) {
            return threads.values().stream().flatMap(t -> t.iterations.stream().skip(1))
                    .filter(i -> work == null ? i.work == null : work.equals(i.work)).count();
        }
    }

    /** Runs the driver under a debugger and records the samples. */
    static final class Tracer {
        /** {@code timerWork}: names of the domain methods whose calls are timer work (see the class doc). */
        record Settings(String classpath, String driver, int warm, int samples, int size, int inlineLimit,
                        boolean callerDrives, Set<String> timerWork) {
        }

        private enum State { IDLE, ARMED, TRACING, DRAINING }

        private final DomainCode code;
        private final Settings settings;
        private final Path out;
        private final Set<String> sessionClasses;
        private final Set<String> transferClasses;
        private final List<Sample> samples = new ArrayList<>();
        private final Map<Long, String> threadNames = new HashMap<>();
        private final Map<String, MethodExitRequest> rootExits = new HashMap<>();
        private final List<EventRequest> window = new ArrayList<>();
        private EventRequestManager requests;
        private State state = State.IDLE;
        private Sample sample;
        private ThreadReference driverThread;

        Tracer(DomainCode code, Settings settings, Path out) {
            this.code = code;
            this.settings = settings;
            this.out = out;
            this.sessionClasses = code.implementationsOf("io.tcpx4j.api.Session");
            this.transferClasses = code.implementationsOf("io.tcpx4j.api.Transfer");
            if (sessionClasses.isEmpty() || transferClasses.isEmpty()) {
                throw new IllegalStateException("no domain class implements io.tcpx4j.api.Session or Transfer");
            }
        }

        List<Sample> run() throws Exception {
            ListeningConnector connector = Bootstrap.virtualMachineManager().listeningConnectors().stream()
                    .filter(c -> c.name().equals("com.sun.jdi.SocketListen")).findFirst().orElseThrow();
            Map<String, Connector.Argument> args = connector.defaultArguments();
            args.get("localAddress").setValue("127.0.0.1");
            args.get("port").setValue("0");
            String address = connector.startListening(args);
            List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-agentlib:jdwp=transport=dt_socket,server=n,suspend=y,address=" + address,
                    "-cp", settings.classpath(), settings.driver(),
                    String.valueOf(settings.warm()), String.valueOf(settings.samples()),
                    String.valueOf(settings.size()), String.valueOf(settings.inlineLimit()),
                    String.valueOf(settings.callerDrives()));
            Path log = out != null ? out.resolve("driver.log") : Files.createTempFile("writepath-driver", ".log");
            Process driver = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            VirtualMachine vm;
            try {
                vm = connector.accept(args);
            } finally {
                connector.stopListening(args);
            }
            requests = vm.eventRequestManager();
            ClassPrepareRequest prepare = requests.createClassPrepareRequest();
            prepare.addClassFilter("WriteDriver");
            prepare.enable();
            MethodEntryRequest domain = requests.createMethodEntryRequest();
            domain.addClassFilter(DOMAIN + "*");
            MethodEntryRequest api = requests.createMethodEntryRequest();
            api.addClassFilter(API + "*");
            window.add(domain);
            window.add(api);
            for (String t : transferClasses) {
                MethodExitRequest exit = requests.createMethodExitRequest();
                exit.addClassFilter(t);
                window.add(exit);
            }
            for (EventRequest r : window) {
                r.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
            }
            try {
                loop(vm);
            } catch (Exception | Error e) {
                driver.destroyForcibly();
                throw e;
            }
            int rc = driver.waitFor();
            List<String> lines = Files.readAllLines(log);
            String tail = String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
            if (rc != 0) {
                throw new IllegalStateException("the driver failed (exit " + rc + "):\n" + tail);
            }
            System.err.println(tail);
            if (samples.size() != settings.samples()) {
                throw new IllegalStateException("traced " + samples.size() + " of " + settings.samples() + " WRITEs");
            }
            return samples;
        }

        private void loop(VirtualMachine vm) throws Exception {
            while (true) {
                EventSet set = vm.eventQueue().remove();
                for (Event e : set) {
                    if (e instanceof VMDeathEvent || e instanceof VMDisconnectEvent) {
                        finish();
                        return;
                    }
                    try {
                        handle(e);
                    } catch (IncompatibleThreadStateException ex) {
                        throw new IllegalStateException("a traced thread was not suspended", ex);
                    }
                }
                set.resume();
            }
        }

        private void handle(Event e) throws IncompatibleThreadStateException {
            if (e instanceof ClassPrepareEvent p) {
                ReferenceType type = p.referenceType();
                for (String name : List.of("traceNext", "traced")) {
                    Method m = type.methodsByName(name).get(0);
                    BreakpointRequest b = requests.createBreakpointRequest(m.location());
                    b.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
                    b.enable();
                }
            } else if (e instanceof BreakpointEvent b) {
                if (b.location().method().name().equals("traceNext")) {
                    finish();
                    sample = new Sample(samples.size());
                    samples.add(sample);
                    driverThread = b.thread();
                    state = State.ARMED;
                    window.forEach(EventRequest::enable);
                    rootExits.values().forEach(EventRequest::enable);
                } else if (sample != null) {
                    sample.driverStatus = b.thread().frame(0).getArgumentValues().get(1).toString();
                    if (state == State.TRACING) {
                        sample.end = "driver";
                        drain();
                    }
                }
            } else if (e instanceof MethodEntryEvent m) {
                entry(m.thread(), m.method());
            } else if (e instanceof MethodExitEvent m) {
                exit(m);
            }
        }

        private void entry(ThreadReference thread, Method method) throws IncompatibleThreadStateException {
            String type = method.declaringType().name();
            if (isLambdaProxy(type)) {
                return;
            }
            if (state == State.ARMED && thread.equals(driverThread) && method.name().equals("write")
                    && sessionClasses.contains(type)) {
                state = State.TRACING;
            }
            if (state != State.TRACING) {
                return;
            }
            sample.events++;
            String k = key(type, method.name(), method.signature());
            List<StackFrame> frames = thread.frames();
            ThreadTrace t = sample.threads.computeIfAbsent(threadName(thread), ThreadTrace::new);
            if (type.startsWith(API)) {
                t.current().apiMethods.add(k);
                return;
            }
            if (t.iterations.size() == 1 && t.current().methods.isEmpty()) {
                findOpenRoot(t, frames);
            }
            if (t.rootDepth == 0 && method.name().equals("doWork") && method.signature().equals("()I")) {
                t.rootDepth = frames.size();
                t.rootMethod = k;
                t.iterations.add(new Iteration());
                watchExits(type);
            }
            if (!code.generated(k)) {
                t.current().methods.add(k);
                if (!underTimerWork(frames)) {
                    t.current().outsideTimer.add(k);
                }
            }
            if (frames.size() > 1) {
                Method caller = frames.get(1).location().method();
                String callerType = caller.declaringType().name();
                if (callerType.startsWith(DOMAIN) && !isLambdaProxy(callerType)) {
                    t.current().calls.add(key(callerType, caller.name(), caller.signature()) + " -> " + k);
                }
            }
            stackDepth(frames);
        }

        private boolean underTimerWork(List<StackFrame> frames) {
            for (StackFrame f : frames) {
                Method m = f.location().method();
                if (settings.timerWork().contains(m.name()) && m.declaringType().name().startsWith(DOMAIN)) {
                    return true;
                }
            }
            return false;
        }

        /** A thread whose window starts inside a doWork: that doWork is its open root. */
        private void findOpenRoot(ThreadTrace t, List<StackFrame> frames) {
            for (int i = frames.size() - 1; i >= 1; i--) {
                Method m = frames.get(i).location().method();
                String type = m.declaringType().name();
                if (type.startsWith(DOMAIN) && m.name().equals("doWork") && m.signature().equals("()I")) {
                    t.rootDepth = frames.size() - i;
                    t.rootMethod = key(type, m.name(), m.signature());
                    watchExits(type);
                    return;
                }
            }
        }

        private void watchExits(String type) {
            rootExits.computeIfAbsent(type, c -> {
                MethodExitRequest r = requests.createMethodExitRequest();
                r.addClassFilter(c);
                r.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
                r.enable();
                return r;
            });
        }

        private void stackDepth(List<StackFrame> frames) {
            List<String> files = new ArrayList<>();
            int domainFrames = 0;
            for (int i = frames.size() - 1; i >= 0; i--) {
                String type = frames.get(i).location().method().declaringType().name();
                String file = code.file(type);
                if (file == null) {
                    continue;
                }
                domainFrames++;
                if (files.isEmpty() || !files.get(files.size() - 1).equals(file)) {
                    files.add(file);
                }
            }
            if (files.size() > sample.deepestFiles.size()
                    || files.size() == sample.deepestFiles.size() && domainFrames > sample.deepestFrames) {
                sample.deepestFiles = files;
                sample.deepestFrames = domainFrames;
            }
        }

        private void exit(MethodExitEvent e) throws IncompatibleThreadStateException {
            Method method = e.method();
            String type = method.declaringType().name();
            if (state == State.TRACING && transferClasses.contains(type)
                    && (method.name().equals("succeed") || method.name().equals("fail"))) {
                sample.end = method.name();
                drain();
                return;
            }
            if (state != State.TRACING && state != State.DRAINING) {
                return;
            }
            ThreadTrace t = sample.threads.get(threadName(e.thread()));
            if (t == null || t.rootDepth == 0 || !key(type, method.name(), method.signature()).equals(t.rootMethod)
                    || e.thread().frameCount() != t.rootDepth) {
                return;
            }
            t.current().work = ((IntegerValue) e.returnValue()).value() != 0;
            t.rootDepth = 0;
            if (state == State.DRAINING && sample.threads.values().stream().allMatch(x -> x.rootDepth == 0)) {
                finish();
            }
        }

        /** The window is closed: no more entries; open iterations still report what their doWork returns. */
        private void drain() {
            state = State.DRAINING;
            window.forEach(EventRequest::disable);
            if (sample.threads.values().stream().allMatch(x -> x.rootDepth == 0)) {
                finish();
            }
        }

        private void finish() {
            window.forEach(EventRequest::disable);
            rootExits.values().forEach(EventRequest::disable);
            state = State.IDLE;
        }

        private String threadName(ThreadReference t) {
            return threadNames.computeIfAbsent(t.uniqueID(), id -> {
                ThreadGroupReference g = t.threadGroup();
                return (g == null ? "?" : g.name()) + "/" + t.name();
            });
        }
    }

    /** The counts and lists of one revision. */
    static final class Report {
        private final DomainCode code;
        private final List<Sample> samples;
        private final Tracer.Settings settings;
        private final String label;
        private final Sample typical;

        Report(DomainCode code, List<Sample> samples, Tracer.Settings settings, String label) {
            this.code = code;
            this.samples = samples;
            this.settings = settings;
            this.label = label;
            List<Sample> byMethods = new ArrayList<>(samples);
            byMethods.sort(Comparator.comparingInt(s -> s.methods(false, false).size()));
            this.typical = byMethods.get(byMethods.size() / 2);
        }

        Set<String> files(Set<String> methods) {
            return methods.stream().map(m -> code.file(classOf(m))).filter(f -> f != null)
                    .collect(Collectors.toCollection(TreeSet::new));
        }

        Set<String> apiFiles(Set<String> methods) {
            return methods.stream().map(m -> {
                String c = classOf(m).substring(API.length());
                return c.split("\\$")[0].replace('.', '/') + ".java";
            }).collect(Collectors.toCollection(TreeSet::new));
        }

        Map<String, String> passThroughs(Set<String> methods) {
            Map<String, String> p = new TreeMap<>();
            for (String m : methods) {
                String target = code.passThroughTarget(m);
                if (target != null) {
                    p.put(m, target);
                }
            }
            return p;
        }

        /**
         * Per file of {@code methods}: how many of them it holds, and how many of those are pass-throughs,
         * getters (only return a field) and constructors.
         */
        Map<String, int[]> perFile(Set<String> methods) {
            Map<String, int[]> m = new TreeMap<>();
            for (String k : methods) {
                String f = code.file(classOf(k));
                if (f == null) {
                    continue;
                }
                int[] c = m.computeIfAbsent(f, x -> new int[4]);
                c[0]++;
                c[1] += code.passThroughTarget(k) != null ? 1 : 0;
                c[2] += code.isGetter(k) ? 1 : 0;
                c[3] += k.contains(".<init>(") ? 1 : 0;
            }
            return m;
        }

        /** A line per file: counts as {@link #perFile}, and "forwards only" where each method run forwards or reads. */
        List<String> perFileLines(Set<String> methods) {
            List<String> lines = new ArrayList<>();
            perFile(methods).forEach((f, c) -> lines.add(String.format(
                    "%-42s %3d methods %2d pass-through %2d getter %2d constructor%s", f, c[0], c[1], c[2], c[3],
                    c[1] > 0 && c[1] + c[2] + c[3] == c[0] ? "  forwards only" : "")));
            return lines;
        }

        long toDomain(Map<String, String> passThroughs) {
            return passThroughs.values().stream().filter(t -> t.startsWith(DOMAIN)).count();
        }

        Set<String> union(boolean includeIdle) {
            Set<String> s = new TreeSet<>();
            samples.forEach(x -> s.addAll(x.methods(includeIdle, false)));
            return s;
        }

        Map<String, String> summary() {
            Map<String, String> s = new LinkedHashMap<>();
            Set<String> tm = typical.methods(false, false);
            Set<String> um = union(false);
            Map<String, String> tp = passThroughs(tm);
            Map<String, String> up = passThroughs(um);
            Map<String, String> all = passThroughs(code.methods.keySet());
            s.put("files", String.valueOf(files(tm).size()));
            s.put("files.union", String.valueOf(files(um).size()));
            s.put("files.with-idle", String.valueOf(files(typical.methods(true, false)).size()));
            s.put("methods", String.valueOf(tm.size()));
            s.put("methods.union", String.valueOf(um.size()));
            s.put("methods.with-idle", String.valueOf(typical.methods(true, false).size()));
            s.put("pass-throughs", String.valueOf(tp.size()));
            s.put("pass-throughs.to-domain", String.valueOf(toDomain(tp)));
            s.put("pass-throughs.union", String.valueOf(up.size()));
            Set<String> nt = typical.methodsOutsideTimer();
            s.put("files.no-timer-work", String.valueOf(files(nt).size()));
            s.put("methods.no-timer-work", String.valueOf(nt.size()));
            s.put("pass-throughs.no-timer-work", String.valueOf(passThroughs(nt).size()));
            s.put("deepest-stack.files", String.valueOf(typical.deepestFiles.size()));
            s.put("deepest-stack.frames", String.valueOf(typical.deepestFrames));
            s.put("api-files", String.valueOf(apiFiles(typical.methods(false, true)).size()));
            s.put("domain.files", String.valueOf(new TreeSet<>(code.fileOf.values()).size()));
            s.put("domain.methods", String.valueOf(code.methods.values().stream().filter(m -> !m.generated()).count()));
            s.put("domain.pass-throughs", String.valueOf(all.size()));
            s.put("domain.pass-throughs.to-domain", String.valueOf(toDomain(all)));
            s.put("shared-fields.written", String.valueOf(code.writtenFromOtherFiles.size()));
            s.put("shared-fields.read-or-written", String.valueOf(code.accessedFromOtherFiles.size()));
            return s;
        }

        void print(PrintStream o) {
            Set<String> tm = typical.methods(false, false);
            o.println("== " + label);
            o.printf("one %d-byte WRITE with a notification, loopback transport, inline limit %s,"
                            + " caller drives %s, %d warm WRITEs, %d traced%n", settings.size(),
                    settings.inlineLimit() < 0 ? "default" : String.valueOf(settings.inlineLimit()),
                    settings.callerDrives(), settings.warm(), settings.samples());
            o.println("session " + code.implementationsOf("io.tcpx4j.api.Session") + ", transfer "
                    + code.implementationsOf("io.tcpx4j.api.Transfer"));
            for (Sample s : samples) {
                o.printf("  sample %d: ended by %s, driver saw %s; %d domain entries; files %d, methods %d,"
                                + " pass-throughs %d; with idle iterations: files %d, methods %d;"
                                + " agent iterations: %d with work, %d idle, %d open%n",
                        s.round, s.end, s.driverStatus, s.events, files(s.methods(false, false)).size(),
                        s.methods(false, false).size(), passThroughs(s.methods(false, false)).size(),
                        files(s.methods(true, false)).size(), s.methods(true, false).size(),
                        s.iterations(true), s.iterations(false), s.iterations(null));
            }
            o.println("typical sample (median by methods): " + typical.round);
            summary().forEach((k, v) -> o.printf("  %-34s %s%n", k, v));
            o.println("files of the typical WRITE, with the threads that ran them:");
            Map<String, Set<String>> threadsOf = new TreeMap<>();
            for (ThreadTrace t : typical.threads.values()) {
                for (String f : files(typical.methodsOf(t))) {
                    threadsOf.computeIfAbsent(f, x -> new TreeSet<>()).add(t.name);
                }
            }
            threadsOf.forEach((f, ts) -> o.printf("  %-40s %s%n", f, ts));
            Set<String> unionOnly = files(union(false));
            unionOnly.removeAll(threadsOf.keySet());
            o.println("files other samples added: " + unionOnly);
            o.println("per thread (files, methods):");
            for (ThreadTrace t : typical.threads.values()) {
                Set<String> m = typical.methodsOf(t);
                o.printf("  %-40s %2d files, %3d methods: %s%n", t.name, files(m).size(), m.size(), files(m));
            }
            o.println("per file (methods run; of them pass-throughs, getters, constructors):");
            perFileLines(tm).forEach(l -> o.println("  " + l));
            Set<String> idleOnly = typical.methods(true, false);
            idleOnly.removeAll(tm);
            o.println("left out, run only in idle iterations: " + idleOnly.size() + " methods "
                    + idleOnly.stream().map(WritePath::shortName).collect(Collectors.toList()));
            Set<String> timerOnly = new TreeSet<>(tm);
            timerOnly.removeAll(typical.methodsOutsideTimer());
            o.println("run only as timer work (under " + settings.timerWork() + "): " + timerOnly.size() + " methods "
                    + timerOnly.stream().map(WritePath::shortName).collect(Collectors.toList()));
            o.println("deepest domain stack: " + typical.deepestFrames + " frames over " + typical.deepestFiles.size()
                    + " files: " + String.join(" > ", typical.deepestFiles));
            o.println("pass-throughs run (method -> the one it calls):");
            passThroughs(tm).forEach((m, t) -> o.println("  " + shortName(m) + " -> " + shortName(t)));
            o.println("api files run: " + apiFiles(typical.methods(false, true)));
            o.println("fields written from another file: " + code.writtenFromOtherFiles.size());
            code.writtenFromOtherFiles.forEach((f, by) -> o.println("  " + shortName(f) + " <- " + by));
        }

        void write(Path out) throws IOException {
            Set<String> tm = typical.methods(false, false);
            Files.write(out.resolve("summary.properties"), summary().entrySet().stream()
                    .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.toList()));
            Files.write(out.resolve("files.txt"), files(tm));
            Files.write(out.resolve("per-file.txt"), perFileLines(tm));
            Files.write(out.resolve("methods.txt"), tm.stream().map(WritePath::shortName).collect(Collectors.toList()));
            Files.write(out.resolve("pass-throughs.txt"), passThroughs(tm).entrySet().stream()
                    .map(e -> shortName(e.getKey()) + " -> " + shortName(e.getValue())).collect(Collectors.toList()));
            Files.write(out.resolve("calls.txt"),
                    typical.calls().stream().map(WritePath::shortEdge).collect(Collectors.toList()));
            Files.write(out.resolve("domain-pass-throughs.txt"), passThroughs(code.methods.keySet()).entrySet().stream()
                    .map(e -> shortName(e.getKey()) + " -> " + shortName(e.getValue())).collect(Collectors.toList()));
            Files.write(out.resolve("shared-fields.txt"), code.writtenFromOtherFiles.entrySet().stream()
                    .map(e -> shortName(e.getKey()) + " <- " + e.getValue()).collect(Collectors.toList()));
            Files.write(out.resolve("shared-fields-read-or-written.txt"), code.accessedFromOtherFiles.entrySet()
                    .stream().map(e -> shortName(e.getKey()) + " <- " + e.getValue()).collect(Collectors.toList()));
            try (PrintStream p = new PrintStream(Files.newOutputStream(out.resolve("report.txt")), true, "UTF-8")) {
                print(p);
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
        }
    }

    /** A key without the domain's package prefix and with the descriptor's parameters only. */
    static String shortName(String key) {
        String s = key.startsWith(DOMAIN) ? key.substring(DOMAIN.length()) : key;
        int close = s.indexOf(')');
        return close < 0 ? s : s.substring(0, close + 1);
    }

    static String shortEdge(String edge) {
        String[] p = edge.split(" -> ");
        return shortName(p[0]) + " -> " + shortName(p[1]);
    }
}
