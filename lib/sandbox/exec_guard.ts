/**
 * The exec guard: a few lines of Perl (`perl -e`, no module loaded) that stand between this process
 * and bwrap. Before exec'ing bwrap it
 *
 * 1. closes every file descriptor above 2. Deno's spawn, like bwrap, passes on whatever the caller
 *    of `agentteams` left open without close-on-exec (a `flock 9` wrapper, a Node parent's IPC
 *    channel, systemd's sockets): an open directory descriptor would let the command walk the host
 *    tree past every mount the sandbox set up (the hidden key dir included);
 * 2. writes the seccomp filter (`seccomp.ts`) into a pipe and passes the pipe's read end to bwrap as
 *    `--seccomp FD`: Deno cannot hand a child any descriptor but 0, 1 and 2;
 * 3. opens each writable root the plan pinned (`O_PATH`), checks that it is still the directory
 *    that was checked (device and inode), and has bwrap bind that descriptor (`--bind-fd FD P`)
 *    instead of looking the name up again: a root swapped for a symlink between the check and
 *    the mount (a relative link bwrap would follow) is refused, never followed.
 *
 * The `close` system call's number is passed in (it differs by architecture), so the guard needs no
 * Perl module: loading POSIX alone would triple its start-up.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { guardedArgv } from "./exec_guard.ts";
 * assert.deepEqual(guardedArgv({ perl: "/usr/bin/perl", arch: "x86_64" }, null, ["/usr/bin/bwrap", "--", "/bin/true"])
 *   .slice(3), ["3", "", "", "/usr/bin/bwrap", "--", "/bin/true"]);
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";

/**
 * The variable that names, to the guard, the file bwrap's `--info-fd` writes (its PID namespace's
 * init, as this side sees it): `executeRun` waits for that init to end, so nothing the command
 * left running in the sandbox outlives the run (bwrap reports the command's exit before its
 * namespace is gone). bwrap's `--clearenv` keeps it from the command.
 */
export const BWRAP_INFO_ENV = "AGENTTEAMS_BWRAP_INFO";

/** Linux's `O_PATH` (the same on x86_64 and aarch64): a descriptor naming a directory, no access. */
const O_PATH = "010000000";

/** A writable root the guard binds by descriptor: its path and the identity that was checked. */
export interface BindPin {
  /** The absolute real path, as the plan binds it. */
  readonly path: string;
  /** `st_dev` when it was checked. */
  readonly dev: number;
  /** `st_ino` when it was checked. */
  readonly ino: number;
}

/** `__NR_close` by `Deno.build.arch`. */
const CLOSE_NR: Readonly<Record<string, number>> = { x86_64: 3, aarch64: 57 };

/**
 * The guard (argv after `-e`: close's number, the filter as hex or empty, then the program and its
 * arguments). `$^F` set high keeps the pipe open across exec; everything else this process opens
 * is closed or close-on-exec.
 */
export const EXEC_GUARD_SCRIPT: string = [
  "my ($close, $hex, $pins, $prog, @args) = @ARGV;",
  'opendir(my $d, "/proc/self/fd") or die "agentteams exec guard: /proc/self/fd: $!\\n";',
  "my @fds = grep { /^[0-9]+\\z/ && $_ > 2 } readdir($d);",
  "closedir($d);",
  "syscall($close, $_ + 0) for @fds;",
  // Declared out here: a handle that goes out of scope is closed, before the exec.
  "my (@seccomp, $r, $w, @info, $i, @pinned);",
  `my $info = $ENV{${BWRAP_INFO_ENV}};`,
  '$^F = 1 << 30 if $hex ne "" || defined $info || $pins ne "";',
  // The options end at the first `--`; only a `--bind P P` before it is a root's bind.
  'my $end = 0; $end++ while $end < @args && $args[$end] ne "--";',
  "for my $pin (split /\n/, $pins) {",
  "  my ($path, $dev, $ino) = split /\t/, $pin;",
  "  my $h;",
  `  sysopen($h, $path, ${O_PATH}) or die "agentteams exec guard: $path: $!\n";`,
  '  my @st = stat($h) or die "agentteams exec guard: $path: $!\n";',
  '  die "agentteams exec guard: $path changed since it was checked; refused\n"',
  "    unless $st[0] == $dev && $st[1] == $ino;",
  "  push @pinned, $h;",
  "  my $bound = 0;",
  "  for (my $k = 0; $k + 2 < $end; $k++) {",
  '    next unless $args[$k] eq "--bind" && $args[$k + 1] eq $path && $args[$k + 2] eq $path;',
  '    @args[$k, $k + 1] = ("--bind-fd", fileno($h));',
  "    $bound = 1;",
  "  }",
  '  die "agentteams exec guard: $path is not bound\n" unless $bound;',
  "}",
  // bwrap writes its namespace's init pid here (O_WRONLY|O_CREAT|O_EXCL: never an existing path).
  "if (defined $info) {",
  '  sysopen($i, $info, 193, 0600) or die "agentteams exec guard: $info: $!\\n";',
  '  @info = ("--info-fd", fileno($i));',
  "}",
  'if ($hex ne "") {',
  '  pipe($r, $w) or die "agentteams exec guard: pipe: $!\\n";',
  "  my $bpf = pack('H*', $hex);",
  '  syswrite($w, $bpf) == length($bpf) or die "agentteams exec guard: write: $!\\n";',
  "  close($w);",
  '  @seccomp = ("--seccomp", fileno($r));',
  "}",
  'exec { $prog } $prog, @seccomp, @info, @args or die "agentteams exec guard: exec $prog: $!\\n";',
].join("\n");

/** The programs and machine the guard is built for. */
export interface GuardHost {
  /** Absolute path of `perl`. */
  readonly perl: string;
  /** `Deno.build.arch`. */
  readonly arch: string;
}

/**
 * `argv` (bwrap first) wrapped in the guard; `filter` is passed to bwrap as `--seccomp FD`, inserted
 * right after `argv[0]`.
 *
 * @throws {SandboxError} `CONFINED_INVALID` for an architecture it has no numbers for.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { guardedArgv } from "./exec_guard.ts";
 * const argv = guardedArgv({ perl: "/usr/bin/perl", arch: "aarch64" }, new Uint8Array([1, 2]), [
 *   "/usr/bin/bwrap", "--", "/bin/true",
 * ]);
 * assert.deepEqual(argv.slice(3, 5), ["57", "0102"]);
 * ```
 */
export function guardedArgv(
  host: GuardHost,
  filter: Uint8Array | null,
  argv: readonly string[],
  pins: readonly BindPin[] = [],
): string[] {
  const close = Object.hasOwn(CLOSE_NR, host.arch) ? CLOSE_NR[host.arch] : undefined;
  if (close === undefined) {
    throw new SandboxError(
      "CONFINED_INVALID",
      `no exec guard for the ${host.arch} architecture`,
    );
  }
  for (const p of pins) {
    // Tabs and newlines separate the pins; a sandbox path never holds them (safe_path.ts).
    if (/[\t\n]/.test(p.path) || !p.path.startsWith("/")) {
      throw new SandboxError("CONFINED_PATH_UNSAFE", `cannot pin ${JSON.stringify(p.path)}`);
    }
  }
  return [
    host.perl,
    "-e",
    EXEC_GUARD_SCRIPT,
    String(close),
    filter === null ? "" : filter.toHex(),
    pins.map((p) => `${p.path}\t${p.dev}\t${p.ino}`).join("\n"),
    ...argv,
  ];
}
