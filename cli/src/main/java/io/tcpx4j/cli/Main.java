package io.tcpx4j.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

/**
 * Entry point of {@code tcpx4j}: {@code bench}, {@code doctor}, {@code serve}, {@code nixl install}.
 *
 * <p>Exit codes: 0 ok, 1 failure at run time, 2 bad flags or a capability this build lacks
 * (one line on stderr), 3 {@code bench --check-consistency} found differing bytes.
 */
@Command(name = "tcpx4j", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Moves GPU and host memory between machines over GPUDirect-TCPX: benchmark, diagnose, serve.",
        footer = {"", "Run 'tcpx4j COMMAND --help' for a command's flags. Docs: docs/CLI.md"})
public final class Main implements Runnable {

    static final int EXIT_FAILURE = 1;
    static final int EXIT_USAGE = 2;

    /**
     * True when this JVM runs one command and exits ({@link #main}): commands may then take over
     * SIGINT and SIGTERM. Commands run in-process (tests) leave the signals alone.
     */
    static volatile boolean ownsProcess;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: bench, doctor, serve or nixl");
    }

    public static void main(String[] args) {
        Logs.configure(false);
        ownsProcess = true;
        System.exit(run(args, Io.system()));
    }

    /** Parses and runs one command line; returns the exit code. */
    static int run(String[] args, Io io) {
        return commandLine(io).execute(args);
    }

    /**
     * Runs one command line in this JVM, as {@link #main} does but without taking over the process: the
     * exit code is returned, signals are left alone, and stdout and stderr go to the streams given (for
     * programs and tests that embed the command line).
     */
    public static int run(String[] args, java.io.PrintStream out, java.io.PrintStream err) {
        return run(args, new Io(out, err, System.getenv()));
    }

    /** The configured command line, for {@link #run} and for tests that need a command object. */
    static CommandLine commandLine(Io io) {
        return commandLine(io, Backends.CUDA);
    }

    /** As {@link #commandLine(Io)}, with this host's GPUs as {@code gpus} says (tests pass a double). */
    static CommandLine commandLine(Io io, GpuHost gpus) {
        CommandLine cl = new CommandLine(new Main());
        cl.addSubcommand("bench", new BenchCommand(io, gpus));
        cl.addSubcommand("doctor", new DoctorCommand(io));
        cl.addSubcommand("serve", new ServeCommand(io, gpus));
        cl.addSubcommand("nixl", NixlInstallCommand.group(io));
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setOut(new PrintWriter(io.out(), true));
        cl.setErr(new PrintWriter(io.err(), true));
        cl.setParameterExceptionHandler((e, args) -> {
            // one line: what is wrong and where to look
            // the full command path: a subcommand of a subcommand ("nixl install") is named with its parent
            String hint = e.getCommandLine().getCommandSpec().qualifiedName() + " --help";
            io.err().println("tcpx4j: " + oneLine(e.getMessage()) + " (see '" + hint + "')");
            io.err().flush();
            return EXIT_USAGE;
        });
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            if (e instanceof Unavailable) {
                io.err().println("tcpx4j: " + oneLine(e.getMessage()));
                return EXIT_USAGE;
            }
            io.err().println("tcpx4j: " + commandPath(commandLine) + " failed: " + oneLine(describe(e)));
            if (parseResult.expandedArgs().contains("-v") || parseResult.expandedArgs().contains("--verbose")) {
                e.printStackTrace(io.err());
            }
            io.err().flush();
            return EXIT_FAILURE;
        });
        return cl;
    }

    /** The command as typed after "tcpx4j", e.g. "bench" or "nixl install". */
    static String commandPath(CommandLine commandLine) {
        String q = commandLine.getCommandSpec().qualifiedName();
        return q.startsWith("tcpx4j ") ? q.substring("tcpx4j ".length()) : q;
    }

    /** Native loaders put line breaks in their messages; errors here are one line. */
    static String oneLine(String message) {
        return message == null ? "" : message.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    /**
     * A short, one-line cause. Native loaders (JCuda) put whole stack traces into their messages;
     * keep the last "UnsatisfiedLinkError: library: reason" of such a message, else cut it at 300
     * characters.
     */
    static String shortCause(Throwable t) {
        String m = oneLine(String.valueOf(t));
        if (m.length() <= 300) {
            return m;
        }
        String marker = "UnsatisfiedLinkError: ";
        int at = m.lastIndexOf(marker);
        if (at >= 0) {
            String rest = m.substring(at + marker.length());
            int end = rest.indexOf(" at ");
            return "cannot load " + (end > 0 ? rest.substring(0, end) : rest);
        }
        return m.substring(0, 300) + "...";
    }

    private static String describe(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && (t.getMessage() == null || t instanceof java.io.UncheckedIOException)) {
            t = t.getCause();
        }
        if (t instanceof java.net.UnknownHostException && !String.valueOf(t.getMessage()).contains("resolve")) {
            // the JDK's message is the host name alone
            return "could not resolve host " + t.getMessage();
        }
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }

    /** The tcpx4j version, from the jar manifest (or "dev" when run from classes). */
    static String version() {
        String v = Main.class.getPackage().getImplementationVersion();
        return v != null ? v : "dev";
    }

    /** picocli version provider. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"tcpx4j " + version() + " (Java " + Runtime.version() + ", "
                    + System.getProperty("java.vendor") + ")"};
        }
    }
}
