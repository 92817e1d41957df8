/**
 * The seccomp filter a confined command without network gets (Linux, through bwrap's
 * `--seccomp FD`), as a pure function of the machine's architecture.
 *
 * A network namespace stops TCP and UDP, but not a Unix socket whose path the read-only root
 * shows: `connect(2)` needs no write access. The operator's agent sockets (ssh-agent, gpg-agent,
 * the user D-Bus, `docker.sock`, systemd's private socket) would then take the command's orders as
 * the operator, some of them to start programs outside the sandbox. `connect`'s address cannot be
 * inspected by seccomp, so the filter refuses creating a Unix socket at all: `socket(AF_UNIX, ...)`
 * fails with `EACCES`. `socketpair(2)` (unnamed, connected pairs, which many programs use to talk
 * to their own children) stays allowed. io_uring, which can create sockets without the `socket`
 * system call, is refused (`ENOSYS`, as on kernels without it), and so is every system call of
 * another ABI (32-bit x86, x32), whose socket calls the filter could not see.
 *
 * @example
 * ```ts
 * import { unixSocketFilter } from "./seccomp.ts";
 * unixSocketFilter("x86_64").length % 8; // 0: a sock_filter program
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";

/** What the filter needs to know of an architecture. */
interface ArchInfo {
  /** `AUDIT_ARCH_*`. */
  readonly audit: number;
  /** `__NR_socket`. */
  readonly socket: number;
  /** `__NR_io_uring_setup`, `_enter`, `_register`. */
  readonly ioUring: readonly number[];
}

const ARCHES: Readonly<Record<string, ArchInfo>> = {
  x86_64: { audit: 0xc000003e, socket: 41, ioUring: [425, 426, 427] },
  aarch64: { audit: 0xc00000b7, socket: 198, ioUring: [425, 426, 427] },
};

/** x32 system calls on x86_64 carry this bit. */
const X32_SYSCALL_BIT = 0x40000000;
const AF_UNIX = 1;
const EACCES = 13;
const ENOSYS = 38;

// Classic BPF opcodes.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;

// Offsets in `struct seccomp_data`: nr, arch, instruction pointer, then args[6] (u64 each; the
// low 32 bits of args[0] come first on little-endian machines).
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0_LOW = 16;

type Insn = [code: number, jt: number, jf: number, k: number];

/**
 * The filter program (an array of `struct sock_filter`, 8 bytes each, little-endian) for `arch`
 * (`Deno.build.arch`).
 *
 * @throws {SandboxError} `CONFINED_INVALID` for an architecture it has no numbers for.
 * @example
 * ```ts
 * import { unixSocketFilter } from "./seccomp.ts";
 * const bpf = unixSocketFilter("aarch64");
 * bpf.length / 8; // instructions
 * ```
 */
export function unixSocketFilter(arch: string): Uint8Array {
  const a = Object.hasOwn(ARCHES, arch) ? ARCHES[arch] : undefined;
  if (a === undefined) {
    throw new SandboxError(
      "CONFINED_INVALID",
      `no seccomp filter for the ${arch} architecture: a command without network cannot be ` +
        "kept from the operator's Unix sockets here",
    );
  }
  const deny = (errno: number): Insn => [RET_K, 0, 0, SECCOMP_RET_ERRNO | errno];
  const allow: Insn = [RET_K, 0, 0, SECCOMP_RET_ALLOW];
  // Jump offsets count instructions after the jump. Layout:
  //   0 ld arch; 1 arch? 3 : 2; 2 deny ENOSYS;
  //   3 ld nr; 4 nr >= X32? 5 : 6; 5 deny ENOSYS;
  //   6.. io_uring? -> io deny; socket? -> arg check; allow
  const prog: Insn[] = [
    [LD_W_ABS, 0, 0, OFF_ARCH],
    [JEQ_K, 1, 0, a.audit],
    deny(ENOSYS),
    [LD_W_ABS, 0, 0, OFF_NR],
    [JGE_K, 0, 1, X32_SYSCALL_BIT],
    deny(ENOSYS),
  ];
  const n = a.ioUring.length;
  // After the io_uring checks: [socket?] [allow] [deny ENOSYS] [ld arg0] [AF_UNIX?] [allow] [deny EACCES]
  a.ioUring.forEach((nr, i) => {
    // To the ENOSYS deny: skip the rest of the checks, the socket check and the allow.
    prog.push([JEQ_K, n - 1 - i + 2, 0, nr]);
  });
  prog.push(
    [JEQ_K, 2, 0, a.socket], // to ld arg0
    allow,
    deny(ENOSYS),
    [LD_W_ABS, 0, 0, OFF_ARG0_LOW],
    [JEQ_K, 1, 0, AF_UNIX],
    allow,
    deny(EACCES),
  );
  const out = new Uint8Array(prog.length * 8);
  const view = new DataView(out.buffer);
  prog.forEach(([code, jt, jf, k], i) => {
    view.setUint16(i * 8, code, true);
    view.setUint8(i * 8 + 2, jt);
    view.setUint8(i * 8 + 3, jf);
    view.setUint32(i * 8 + 4, k >>> 0, true);
  });
  return out;
}
