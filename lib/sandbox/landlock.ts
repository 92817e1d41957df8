/**
 * The exec allowlist on Linux: Landlock (`LANDLOCK_ACCESS_FS_EXECUTE`), applied inside the
 * sandbox by the inner guard, a few lines of Perl that bwrap runs in front of the command. bwrap
 * cannot be started under Landlock itself (a Landlock domain may not mount), so the order is:
 * bwrap sets up the mounts, runs the inner guard, which
 *
 * 1. checks that each writable place is the directory that was checked (device and inode, as the
 *    mount shows it): with a bwrap that has no `--bind-fd` (before 0.10 upstream) this is what
 *    catches a root swapped for a link between the check and the mount;
 * 2. when the kernel has Landlock: creates a ruleset that handles `EXECUTE` only, adds one
 *    `PATH_BENEATH` rule per exec path (each opened `O_PATH|O_NOFOLLOW` and compared with the
 *    device and inode the plan recorded), sets `no_new_privs` and restricts itself;
 * 3. execs the command. From then on every `execve` in the sandbox (and the ELF interpreter a
 *    program names) must lie under an exec path: a program on the read-only system paths, one the
 *    command wrote into a write root, or one an interpreter `exec`s, fails with `EACCES`.
 *
 * Everything here but the script is a pure function: the rules, the ruleset's bytes, the argv.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { innerGuardArgv } from "./landlock.ts";
 * const argv = innerGuardArgv({ perl: "/usr/bin/perl", arch: "x86_64" }, {
 *   abi: 7, rules: [{ path: "/usr/bin/true", dev: 1, ino: 2 }], checks: [], dropBadLang: false,
 * }, ["/usr/bin/true"]);
 * assert.deepEqual(argv.slice(3, 5), ["444,445,446,157", "0100000000000000"]);
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";
import type { BindPin } from "./exec_guard.ts";

/** `LANDLOCK_ACCESS_FS_EXECUTE`: the one access right the ruleset handles. */
export const LANDLOCK_ACCESS_FS_EXECUTE = 1;

/** An exec path as the plan recorded it: its real path and identity (device, inode). */
export type LandlockRule = BindPin;

/** What the kernel offers: the Landlock ABI (0: none) and, without one, why. */
export interface LandlockFacts {
  /** The best ABI the kernel offers (`landlock_create_ruleset(NULL, 0, VERSION)`), 0 for none. */
  readonly abi: number;
  /** Why there is none (`null` when `abi >= 1`). */
  readonly reason: string | null;
}

/**
 * How the plan holds exec to the declared programs: every exec by Landlock (with the ABI the
 * kernel offered), or only the top-level program (checked by the runner before the run), and why.
 */
export type ExecAllowlist =
  | { readonly kind: "landlock"; readonly abi: number; readonly rules: readonly LandlockRule[] }
  | { readonly kind: "top-level-only"; readonly reason: string };

/** The system calls the inner guard makes, by `Deno.build.arch`. */
const NR: Readonly<Record<string, readonly [number, number, number, number]>> = {
  // landlock_create_ruleset, landlock_add_rule, landlock_restrict_self, prctl
  x86_64: [444, 445, 446, 157],
  aarch64: [444, 445, 446, 167],
};

const ENOSYS = 38;
const EOPNOTSUPP = 95;

/**
 * What the kernel's answer to `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`
 * means: the ABI when positive, otherwise why there is no Landlock.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { landlockFacts } from "./landlock.ts";
 * assert.deepEqual(landlockFacts(7, 0), { abi: 7, reason: null });
 * assert.equal(landlockFacts(-1, 38).abi, 0); // the kernel was built without Landlock
 * ```
 */
export function landlockFacts(ret: number, errno: number): LandlockFacts {
  if (Number.isInteger(ret) && ret >= 1) return { abi: ret, reason: null };
  const reason = errno === ENOSYS
    ? "this kernel has no Landlock (landlock_create_ruleset: ENOSYS; Linux 5.13 or later built " +
      "with CONFIG_SECURITY_LANDLOCK is needed)"
    : errno === EOPNOTSUPP
    ? "Landlock is built into this kernel but not enabled (add landlock to the lsm= boot " +
      "parameter)"
    : `the Landlock probe failed (errno ${errno})`;
  return { abi: 0, reason };
}

/**
 * The `struct landlock_ruleset_attr` the guard passes, as hex: `handled_access_fs` =
 * `EXECUTE` only (every ABI from 1 has it; reads and writes stay with the mounts), 8 bytes,
 * little-endian.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rulesetAttrHex } from "./landlock.ts";
 * assert.equal(rulesetAttrHex(), "0100000000000000");
 * ```
 */
export function rulesetAttrHex(): string {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(LANDLOCK_ACCESS_FS_EXECUTE), true);
  return b.toHex();
}

/**
 * The ELF interpreters a dynamically linked program names (`PT_INTERP`), by architecture: the
 * kernel opens the interpreter for execution too, so Landlock must allow it or no dynamically
 * linked program runs. The caller keeps those that exist (by real path).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loaderCandidates } from "./landlock.ts";
 * assert.equal(loaderCandidates("x86_64")[0], "/lib64/ld-linux-x86-64.so.2");
 * ```
 */
export function loaderCandidates(arch: string): readonly string[] {
  return arch === "aarch64"
    ? ["/lib/ld-linux-aarch64.so.1", "/lib/ld-musl-aarch64.so.1"]
    : ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-musl-x86_64.so.1"];
}

/**
 * How exec is held for a plan: Landlock over `rules` when the kernel offers an ABI, otherwise the
 * top-level check only, with the kernel's reason.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { execAllowlist } from "./landlock.ts";
 * assert.equal(execAllowlist({ abi: 0, reason: "no Landlock" }, []).kind, "top-level-only");
 * ```
 */
export function execAllowlist(
  facts: LandlockFacts,
  rules: readonly LandlockRule[],
): ExecAllowlist {
  if (facts.abi < 1) {
    return Object.freeze({
      kind: "top-level-only",
      reason: facts.reason ?? "no Landlock",
    });
  }
  const seen = new Set<string>();
  const kept: LandlockRule[] = [];
  for (const r of rules) {
    if (!r.path.startsWith("/") || /[\t\n]/.test(r.path)) {
      throw new SandboxError(
        "CONFINED_PATH_UNSAFE",
        `cannot allow exec of ${JSON.stringify(r.path)}`,
        {
          details: { path: r.path },
        },
      );
    }
    if (seen.has(r.path)) continue;
    seen.add(r.path);
    kept.push(Object.freeze({ ...r }));
  }
  return Object.freeze({ kind: "landlock", abi: facts.abi, rules: Object.freeze(kept) });
}

/**
 * The inner guard (argv after `-e`: the system call numbers, the ruleset attribute as hex or empty
 * for no Landlock, the checks and the rules as `path\tdev\tino` lines, whether to drop
 * `PERL_BADLANG`, then the command). Every handle it opens is close-on-exec (`$^F` stays 2), and
 * the ruleset's descriptor is made close-on-exec by the kernel.
 */
export const INNER_GUARD_SCRIPT: string = [
  "my ($nrs, $attr, $checks, $rules, $badlang, $prog, @args) = @ARGV;",
  "my ($create, $add, $restrict, $prctl) = split /,/, $nrs;",
  'delete $ENV{PERL_BADLANG} if $badlang eq "1";',
  "for my $c (split /\\n/, $checks) {",
  "  my ($path, $dev, $ino) = split /\\t/, $c;",
  '  my @st = lstat($path) or die "agentteams inner guard: $path: $!\\n";',
  '  die "agentteams inner guard: $path is not the directory that was checked; refused\\n"',
  "    unless -d _ && $st[0] == $dev && $st[1] == $ino;",
  "}",
  'if ($attr ne "") {',
  "  my $a = pack('H*', $attr);",
  "  my $fd = syscall($create, $a, length($a), 0);",
  '  die "agentteams inner guard: landlock_create_ruleset: $!\\n" if $fd < 0;',
  "  for my $r (split /\\n/, $rules) {",
  "    my ($path, $dev, $ino) = split /\\t/, $r;",
  "    my $h;",
  // O_PATH | O_NOFOLLOW: a final component swapped for a link opens the link, whose identity differs.
  '    sysopen($h, $path, 010400000) or die "agentteams inner guard: exec path $path: $!\\n";',
  '    my @st = stat($h) or die "agentteams inner guard: exec path $path: $!\\n";',
  '    die "agentteams inner guard: exec path $path changed since it was checked; refused\\n"',
  "      unless $st[0] == $dev && $st[1] == $ino && (-d _ || -f _);",
  "    syscall($add, $fd, 1, pack('Ql', 1, fileno($h)), 0) == 0",
  '      or die "agentteams inner guard: landlock_add_rule $path: $!\\n";',
  "  }",
  '  syscall($prctl, 38, 1, 0, 0, 0) == 0 or die "agentteams inner guard: no_new_privs: $!\\n";',
  '  syscall($restrict, $fd, 0) == 0 or die "agentteams inner guard: landlock_restrict_self: $!\\n";',
  "}",
  'exec { $prog } $prog, @args or die "agentteams inner guard: exec $prog: $!\\n";',
].join("\n");

/** What the inner guard does for one run. */
export interface InnerGuardSpec {
  /** The Landlock ABI to use (0: none, only the checks). */
  readonly abi: number;
  /** The exec paths (ignored without Landlock). */
  readonly rules: readonly LandlockRule[];
  /** The writable places to check inside the sandbox. */
  readonly checks: readonly BindPin[];
  /** Drop `PERL_BADLANG` (set only for the guard's own Perl) before the command runs. */
  readonly dropBadLang: boolean;
}

function lines(pins: readonly BindPin[]): string {
  for (const p of pins) {
    if (!p.path.startsWith("/") || /[\t\n]/.test(p.path)) {
      throw new SandboxError("CONFINED_PATH_UNSAFE", `cannot pin ${JSON.stringify(p.path)}`, {
        details: { path: p.path },
      });
    }
  }
  return pins.map((p) => `${p.path}\t${p.dev}\t${p.ino}`).join("\n");
}

/**
 * The command's argv (program first) behind the inner guard.
 *
 * @throws {SandboxError} `CONFINED_INVALID` for an architecture it has no numbers for, and
 *   `CONFINED_PATH_UNSAFE` for a relative path or one holding a tab or newline.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { innerGuardArgv } from "./landlock.ts";
 * const argv = innerGuardArgv({ perl: "/usr/bin/perl", arch: "aarch64" }, {
 *   abi: 0, rules: [], checks: [{ path: "/t", dev: 1, ino: 2 }], dropBadLang: true,
 * }, ["/bin/true"]);
 * assert.deepEqual(argv.slice(3), ["444,445,446,167", "", "/t\t1\t2", "", "1", "/bin/true"]);
 * ```
 */
export function innerGuardArgv(
  host: { readonly perl: string; readonly arch: string },
  spec: InnerGuardSpec,
  argv: readonly string[],
): string[] {
  const nrs = Object.hasOwn(NR, host.arch) ? NR[host.arch] : undefined;
  if (nrs === undefined) {
    throw new SandboxError("CONFINED_INVALID", `no inner guard for the ${host.arch} architecture`);
  }
  return [
    host.perl,
    "-e",
    INNER_GUARD_SCRIPT,
    nrs.join(","),
    spec.abi >= 1 ? rulesetAttrHex() : "",
    lines(spec.checks),
    spec.abi >= 1 ? lines(spec.rules) : "",
    spec.dropBadLang ? "1" : "",
    ...argv,
  ];
}

/**
 * The probe the host runs (no FFI: Perl's `syscall`): prints the kernel's Landlock ABI, or `e`
 * and the errno.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { landlockProbeArgv } from "./landlock.ts";
 * assert.equal(landlockProbeArgv("/usr/bin/perl", "x86_64")[0], "/usr/bin/perl");
 * ```
 */
export function landlockProbeArgv(perl: string, arch: string): string[] {
  const nr = Object.hasOwn(NR, arch) ? NR[arch][0] : 444;
  return [
    perl,
    "-e",
    'my $r = syscall($ARGV[0], 0, 0, 1); print $r < 0 ? "e" . ($! + 0) : $r;',
    String(nr),
  ];
}

/**
 * Reads the probe's output (`7`, or `e38`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseLandlockProbe } from "./landlock.ts";
 * assert.equal(parseLandlockProbe("e38").abi, 0);
 * ```
 */
export function parseLandlockProbe(out: string): LandlockFacts {
  const t = out.trim();
  if (/^[0-9]+$/.test(t)) return landlockFacts(Number(t), 0);
  const m = /^e([0-9]+)$/.exec(t);
  return m ? landlockFacts(-1, Number(m[1])) : landlockFacts(-1, -1);
}
