/**
 * The seccomp filter every confined command gets on Linux (through bwrap's `--seccomp FD`), as a
 * pure function of the machine's architecture and whether the command has network.
 *
 * - **No setuid or setgid bit, ever.** A write root is the operator's own directory: a command
 *   that makes a file there setuid (its owner, inside the sandbox's user namespace, is the
 *   operator) leaves a setuid-operator program on the host, setuid root when the operator is
 *   root, for any local user who can reach it. `chmod`, `fchmod`, `fchmodat`, `fchmodat2`,
 *   `open` and `openat` (creating: `O_CREAT` or `O_TMPFILE`), `creat`, `mknod` and `mknodat` with a
 *   mode holding `S_ISUID` or `S_ISGID` fail with `EPERM` (directories too: the filter cannot tell
 *   them apart, so `mkdir -m 2775` and `git init --shared=group` fail); `openat2`, whose mode hides behind a pointer, is refused (`ENOSYS`: C
 *   libraries then fall back to `openat`).
 * - **Without network, no Unix socket.** A network namespace stops TCP and UDP, but not
 *   `connect(2)` to a socket whose path the read-only root shows: the operator's ssh-agent,
 *   gpg-agent, user D-Bus, `docker.sock` or systemd's private socket would take the command's
 *   orders as the operator, some of them to start programs outside the sandbox. `connect`'s address
 *   cannot be inspected, so `socket(AF_UNIX, ...)` fails with `EACCES`, and so does a
 *   `socketpair(2)` of datagram sockets (which could `sendto` a host datagram socket by path);
 *   stream and seqpacket pairs, connected to each other only, stay allowed.
 * - io_uring, which can open files and make sockets without those system calls, is refused
 *   (`ENOSYS`, as on kernels without it), and so is every system call of another ABI (32-bit x86,
 *   x32), which the filter could not read the same way.
 * - **No new user namespace** where bwrap cannot disable them (`blockUserns`, bwrap before 0.8):
 *   `clone` and `unshare` with `CLONE_NEWUSER` fail with `EPERM`, `clone3` with `ENOSYS`.
 * - **No executable memfd** where Landlock holds exec (`execAllowlist`): `memfd_create` without
 *   `MFD_NOEXEC_SEAL`, and `memfd_secret`, fail with `ENOSYS` (Landlock does not see the kernel's
 *   internal mounts, so such a file could be written and run).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandFilter } from "./seccomp.ts";
 * assert.equal(commandFilter("x86_64", { network: false }).length % 8, 0); // a sock_filter program
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";

/** A system call whose mode argument is checked for the setuid and setgid bits. */
interface ModeCall {
  /** Its number. */
  readonly nr: number;
  /** Which argument holds the mode. */
  readonly arg: number;
  /**
   * For the open family: which argument holds the flags. The mode means something (and is then
   * checked) only with `O_CREAT` or `O_TMPFILE`; without them it may be leftover register content.
   */
  readonly flags?: number;
}

/** What the filter needs to know of an architecture. */
interface ArchInfo {
  /** `AUDIT_ARCH_*`. */
  readonly audit: number;
  /** `__NR_socket`. */
  readonly socket: number;
  /** `__NR_socketpair`. */
  readonly socketpair: number;
  /** Calls refused outright: io_uring's three, and `openat2`. */
  readonly refused: readonly number[];
  /** Calls whose mode may not carry the setuid or setgid bit. */
  readonly modes: readonly ModeCall[];
  /** Whether the x32 ABI shares the architecture's audit number (x86_64). */
  readonly x32: boolean;
  /** `__NR_clone`, `__NR_unshare` (flags in argument 0 of both) and `__NR_clone3`. */
  readonly clone: number;
  readonly unshare: number;
  readonly clone3: number;
  /** `__NR_memfd_create` (flags in argument 1) and `__NR_memfd_secret`. */
  readonly memfdCreate: number;
  readonly memfdSecret: number;
}

const ARCHES: Readonly<Record<string, ArchInfo>> = {
  x86_64: {
    audit: 0xc000003e,
    socket: 41,
    socketpair: 53,
    refused: [425, 426, 427, 437],
    modes: [
      { nr: 90, arg: 1 }, // chmod
      { nr: 91, arg: 1 }, // fchmod
      { nr: 268, arg: 2 }, // fchmodat
      { nr: 452, arg: 2 }, // fchmodat2
      { nr: 2, arg: 2, flags: 1 }, // open
      { nr: 257, arg: 3, flags: 2 }, // openat
      { nr: 85, arg: 1 }, // creat
      { nr: 133, arg: 1 }, // mknod
      { nr: 259, arg: 2 }, // mknodat
    ],
    x32: true,
    clone: 56,
    unshare: 272,
    clone3: 435,
    memfdCreate: 319,
    memfdSecret: 447,
  },
  aarch64: {
    audit: 0xc00000b7,
    socket: 198,
    socketpair: 199,
    refused: [425, 426, 427, 437],
    modes: [
      { nr: 52, arg: 1 }, // fchmod
      { nr: 53, arg: 2 }, // fchmodat
      { nr: 452, arg: 2 }, // fchmodat2
      { nr: 56, arg: 3, flags: 2 }, // openat
      { nr: 33, arg: 2 }, // mknodat
    ],
    x32: false,
    clone: 220,
    unshare: 97,
    clone3: 435,
    memfdCreate: 279,
    memfdSecret: 447,
  },
};

const X32_SYSCALL_BIT = 0x40000000;
const AF_UNIX = 1;
/** `O_CREAT | __O_TMPFILE` (the same on x86_64 and aarch64). */
const O_CREAT_TMPFILE = 0x40 | 0x400000;
/** The socket type bits of `socketpair`'s second argument, and the types that stay allowed. */
const SOCK_TYPE_MASK = 0xf;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
const S_ISUID_ISGID = 0o6000;
const CLONE_NEWUSER = 0x10000000;
const MFD_NOEXEC_SEAL = 0x0008;
const EPERM = 1;
const EACCES = 13;
const ENOSYS = 38;

// Classic BPF.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const ALU_AND_K = 0x54;
const RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;

// Offsets in `struct seccomp_data`: nr, arch, instruction pointer, then args[6] (u64 each; the
// low 32 bits first on these little-endian machines, and every argument checked is an int).
const OFF_NR = 0;
const OFF_ARCH = 4;
const argLow = (i: number): number => 16 + 8 * i;

/** One instruction; jump targets are labels, resolved to forward offsets. */
interface Insn {
  readonly code: number;
  readonly k: number;
  readonly jt?: string;
  readonly jf?: string;
  readonly label?: string;
}

/** Options of {@link commandFilter}. */
export interface FilterOptions {
  /** The command's entry has network (Unix sockets are then allowed too). */
  readonly network: boolean;
  /**
   * Refuse new user namespaces (bwrap without `--disable-userns`, before 0.8): `clone` and
   * `unshare` with `CLONE_NEWUSER` fail with `EPERM`, and `clone3`, whose flags hide behind a
   * pointer, with `ENOSYS` (C libraries then fall back to `clone`). Default false.
   */
  readonly blockUserns?: boolean;
  /**
   * The plan holds exec by Landlock, which does not see files on the kernel's internal mounts: a
   * `memfd_create` file, written and then `exec`ed through `/proc/self/fd`, would run whatever
   * the command put in it. So `memfd_create` without `MFD_NOEXEC_SEAL` (such a file can never be
   * made executable) fails with `ENOSYS` (as on kernels without it: callers fall back to a file),
   * and so does `memfd_secret`. Default false.
   */
  readonly execAllowlist?: boolean;
}

/**
 * The filter program (an array of `struct sock_filter`, 8 bytes each, little-endian) for `arch`
 * (`Deno.build.arch`).
 *
 * @throws {SandboxError} `CONFINED_INVALID` for an architecture it has no numbers for.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandFilter } from "./seccomp.ts";
 * const bpf = commandFilter("aarch64", { network: true });
 * assert.ok(bpf.length > 0 && bpf.length % 8 === 0); // whole instructions, 8 bytes each
 * ```
 */
export function commandFilter(arch: string, opts: FilterOptions): Uint8Array {
  const a = Object.hasOwn(ARCHES, arch) ? ARCHES[arch] : undefined;
  if (a === undefined) {
    throw new SandboxError(
      "CONFINED_INVALID",
      `no seccomp filter for the ${arch} architecture: a confined command cannot be kept from ` +
        "setuid bits and the operator's Unix sockets here",
    );
  }
  const argSlots = [...new Set(a.modes.map((m) => m.arg))];
  const flagged = [
    ...new Map(
      a.modes.filter((m) => m.flags !== undefined).map((m) => [`${m.flags}_${m.arg}`, m]),
    ).values(),
  ];
  const modeLabel = (m: ModeCall) =>
    m.flags === undefined ? `mode${m.arg}` : `open${m.flags}_${m.arg}`;
  const prog: Insn[] = [
    { code: LD_W_ABS, k: OFF_ARCH },
    { code: JEQ_K, k: a.audit, jt: "nr", jf: "enosys" },
    { code: LD_W_ABS, k: OFF_NR, label: "nr" },
    ...(a.x32 ? [{ code: JGE_K, k: X32_SYSCALL_BIT, jt: "enosys", jf: "next" }] : []),
    ...a.refused.map((nr) => ({ code: JEQ_K, k: nr, jt: "enosys", jf: "next" })),
    ...a.modes.map((m) => ({ code: JEQ_K, k: m.nr, jt: modeLabel(m), jf: "next" })),
    ...(opts.execAllowlist === true
      ? [
        { code: JEQ_K, k: a.memfdSecret, jt: "enosys", jf: "next" },
        { code: JEQ_K, k: a.memfdCreate, jt: "memfd", jf: "next" },
      ]
      : []),
    ...(opts.blockUserns === true
      ? [
        { code: JEQ_K, k: a.clone3, jt: "enosys", jf: "next" },
        { code: JEQ_K, k: a.clone, jt: "newuser", jf: "next" },
        { code: JEQ_K, k: a.unshare, jt: "newuser", jf: "next" },
      ]
      : []),
    ...(opts.network ? [] : [
      { code: JEQ_K, k: a.socket, jt: "socket", jf: "next" },
      { code: JEQ_K, k: a.socketpair, jt: "socketpair", jf: "next" },
    ]),
    { code: RET_K, k: SECCOMP_RET_ALLOW },
    { code: RET_K, k: SECCOMP_RET_ERRNO | ENOSYS, label: "enosys" },
    // The open family: only a creating open's mode is looked at.
    ...flagged.flatMap((m) => [
      { code: LD_W_ABS, k: argLow(m.flags as number), label: modeLabel(m) },
      { code: JSET_K, k: O_CREAT_TMPFILE, jt: `mode${m.arg}`, jf: "allow" },
    ]),
    ...argSlots.flatMap((arg) => [
      { code: LD_W_ABS, k: argLow(arg), label: `mode${arg}` },
      { code: JSET_K, k: S_ISUID_ISGID, jt: "eperm", jf: "allow" },
    ]),
    ...(opts.network ? [] : [
      { code: LD_W_ABS, k: argLow(0), label: "socket" },
      { code: JEQ_K, k: AF_UNIX, jt: "eacces", jf: "allow" },
      // A connected pair of stream or seqpacket sockets reaches nobody else; a datagram one could
      // still send to any host datagram socket by path (journald, syslog's /dev/log).
      { code: LD_W_ABS, k: argLow(1), label: "socketpair" },
      { code: ALU_AND_K, k: SOCK_TYPE_MASK },
      { code: JEQ_K, k: SOCK_STREAM, jt: "allow", jf: "next" },
      { code: JEQ_K, k: SOCK_SEQPACKET, jt: "allow", jf: "eacces" },
    ]),
    ...(opts.blockUserns === true
      ? [
        { code: LD_W_ABS, k: argLow(0), label: "newuser" },
        { code: JSET_K, k: CLONE_NEWUSER, jt: "eperm", jf: "allow" },
      ]
      : []),
    ...(opts.execAllowlist === true
      ? [
        { code: LD_W_ABS, k: argLow(1), label: "memfd" },
        { code: JSET_K, k: MFD_NOEXEC_SEAL, jt: "allow", jf: "enosys_late" },
      ]
      : []),
    { code: RET_K, k: SECCOMP_RET_ALLOW, label: "allow" },
    { code: RET_K, k: SECCOMP_RET_ERRNO | EPERM, label: "eperm" },
    { code: RET_K, k: SECCOMP_RET_ERRNO | EACCES, label: "eacces" },
    ...(opts.execAllowlist === true
      ? [{ code: RET_K, k: SECCOMP_RET_ERRNO | ENOSYS, label: "enosys_late" }]
      : []),
  ];
  const at = new Map<string, number>();
  prog.forEach((insn, i) => {
    if (insn.label !== undefined) at.set(insn.label, i);
  });
  const offset = (from: number, label: string | undefined): number => {
    if (label === undefined || label === "next") return 0;
    const to = at.get(label);
    if (to === undefined || to <= from || to - from - 1 > 255) {
      throw new Error(`seccomp: bad jump from ${from} to ${label}`);
    }
    return to - from - 1;
  };
  const out = new Uint8Array(prog.length * 8);
  const view = new DataView(out.buffer);
  prog.forEach((insn, i) => {
    view.setUint16(i * 8, insn.code, true);
    view.setUint8(i * 8 + 2, offset(i, insn.jt));
    view.setUint8(i * 8 + 3, offset(i, insn.jf));
    view.setUint32(i * 8 + 4, insn.k >>> 0, true);
  });
  return out;
}
