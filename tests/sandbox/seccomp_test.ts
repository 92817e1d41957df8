/**
 * The confined command's seccomp filter, run through a small classic-BPF interpreter over the cases
 * that matter (and its bytes pinned for x86_64).
 */
import assert from "node:assert/strict";
import { commandFilter } from "../../lib/sandbox/seccomp.ts";
import { SandboxError } from "../../lib/errors.ts";
import { assertRefusal } from "../_helpers/assert.ts";

/** Runs a classic BPF program over a seccomp_data (nr, arch, args); returns the action word. */
function evaluate(bpf: Uint8Array, nr: number, arch: number, args: number[] = []): number {
  const view = new DataView(bpf.buffer, bpf.byteOffset, bpf.byteLength);
  const data = new DataView(new ArrayBuffer(64));
  data.setUint32(0, nr, true);
  data.setUint32(4, arch, true);
  args.forEach((a, i) => data.setUint32(16 + 8 * i, a >>> 0, true));
  let acc = 0;
  for (let pc = 0; pc < bpf.length / 8;) {
    const code = view.getUint16(pc * 8, true);
    const jt = view.getUint8(pc * 8 + 2);
    const jf = view.getUint8(pc * 8 + 3);
    const k = view.getUint32(pc * 8 + 4, true);
    if (code === 0x20) {
      acc = data.getUint32(k, true);
      pc++;
    } else if (code === 0x15) pc += 1 + (acc === k ? jt : jf);
    else if (code === 0x35) pc += 1 + (acc >= k ? jt : jf);
    else if (code === 0x45) pc += 1 + ((acc & k) !== 0 ? jt : jf);
    else if (code === 0x54) {
      acc = (acc & k) >>> 0;
      pc++;
    } else if (code === 0x06) return k;
    else throw new Error(`unknown opcode ${code}`);
  }
  throw new Error("fell off the end");
}

const ALLOW = 0x7fff0000;
const EPERM = 0x00050000 | 1;
const EACCES = 0x00050000 | 13;
const ENOSYS = 0x00050000 | 38;

const ARCH = {
  x86_64: {
    audit: 0xc000003e,
    socket: 41,
    socketpair: 53,
    read: 0,
    chmod: [90, 1],
    fchmodat: [268, 2],
    openat: [257, 3],
    mknodat: [259, 2],
  },
  aarch64: {
    audit: 0xc00000b7,
    socket: 198,
    socketpair: 199,
    read: 63,
    chmod: [52, 1], // fchmod
    fchmodat: [53, 2],
    openat: [56, 3],
    mknodat: [33, 2],
  },
} as const;

Deno.test("commandFilter: no setuid/setgid mode through any mode-taking call (EPERM); other modes pass", () => {
  for (const [arch, n] of Object.entries(ARCH)) {
    for (const network of [false, true]) {
      const bpf = commandFilter(arch, { network });
      for (const [nr, arg] of [n.chmod, n.fchmodat, n.openat, n.mknodat]) {
        const call = (mode: number) => {
          const args = [0, 0, 0, 0];
          args[arg] = mode;
          if (nr === n.openat[0]) args[2] = 0o100; // O_CREAT
          return evaluate(bpf, nr, n.audit, args);
        };
        assert.equal(call(0o4755), EPERM, `${arch} ${nr} setuid`);
        assert.equal(call(0o2755), EPERM, `${arch} ${nr} setgid`);
        assert.equal(call(0o6777), EPERM, `${arch} ${nr} both`);
        assert.equal(call(0o1777), ALLOW, `${arch} ${nr} sticky`);
        assert.equal(call(0o755), ALLOW, `${arch} ${nr} plain`);
      }
      assert.equal(evaluate(bpf, n.read, n.audit, [0, 0o4000]), ALLOW, `${arch} read`);
      // An open that creates nothing: its mode argument is not looked at (it may be garbage).
      assert.equal(evaluate(bpf, n.openat[0], n.audit, [0, 0, 0, 0o4755]), ALLOW, `${arch} plain`);
      // O_TMPFILE creates too.
      assert.equal(evaluate(bpf, n.openat[0], n.audit, [0, 0, 0x410000, 0o4755]), EPERM);
      for (const nr of [425, 426, 427, 437]) assert.equal(evaluate(bpf, nr, n.audit), ENOSYS);
      assert.equal(evaluate(bpf, n.socket, 0x40000003, [1]), ENOSYS, `${arch} i386 ABI`);
    }
  }
  assert.equal(
    evaluate(commandFilter("x86_64", { network: false }), 0x40000000 + 2, 0xc000003e),
    ENOSYS,
  );
  // x86_64's legacy calls: open (mode arg 2), creat and mknod (arg 1).
  const x = commandFilter("x86_64", { network: false });
  assert.equal(evaluate(x, 2, 0xc000003e, [0, 0o100, 0o4755]), EPERM);
  assert.equal(evaluate(x, 2, 0xc000003e, [0, 0, 0o4755]), ALLOW);
  assert.equal(evaluate(x, 85, 0xc000003e, [0, 0o2755]), EPERM);
  assert.equal(evaluate(x, 133, 0xc000003e, [0, 0o4644]), EPERM);
});

Deno.test("commandFilter: without network socket(AF_UNIX) and datagram socketpairs are EACCES, other families and stream pairs pass; with network all pass", () => {
  for (const [arch, n] of Object.entries(ARCH)) {
    const off = commandFilter(arch, { network: false });
    assert.equal(evaluate(off, n.socket, n.audit, [1]), EACCES, `${arch} AF_UNIX`);
    assert.equal(evaluate(off, n.socket, n.audit, [2]), ALLOW, `${arch} AF_INET`);
    assert.equal(evaluate(off, n.socket, n.audit, [16]), ALLOW, `${arch} AF_NETLINK`);
    // A connected stream or seqpacket pair reaches nobody else; a datagram one could sendto a
    // host datagram socket by path. Type flags (SOCK_CLOEXEC, SOCK_NONBLOCK) do not matter.
    for (
      const [type, want] of [[1, ALLOW], [5, ALLOW], [0x80001, ALLOW], [2, EACCES], [
        0x80802,
        EACCES,
      ], [3, EACCES]]
    ) {
      assert.equal(evaluate(off, n.socketpair, n.audit, [1, type]), want, `${arch} pair ${type}`);
    }
    const on = commandFilter(arch, { network: true });
    assert.equal(evaluate(on, n.socket, n.audit, [1]), ALLOW, `${arch} AF_UNIX with network`);
    assert.equal(evaluate(on, n.socketpair, n.audit, [1, 2]), ALLOW, `${arch} dgram pair`);
  }
});

Deno.test("commandFilter: golden bytes for x86_64 without network", () => {
  const hex = commandFilter("x86_64", { network: false }).toHex();
  assert.equal(hex.length / 16, 40);
  // The head: ld arch (code u16, jt, jf, k u32; little-endian), arch check, ld nr, x32 check.
  assert.equal(
    hex.slice(0, 64),
    "2000000004000000" + "150000123e0000c0" + "2000000000000000" + "3500100000000040",
  );
  // The tail: allow, EPERM, EACCES.
  assert.equal(hex.slice(-48), "060000000000ff7f" + "0600000001000500" + "060000000d000500");
});

Deno.test("commandFilter: an architecture without numbers is refused (CONFINED_INVALID)", () => {
  assertRefusal(
    () => commandFilter("riscv64", { network: false }),
    "CONFINED_INVALID",
    SandboxError,
  );
});

Deno.test("commandFilter blockUserns (bwrap before 0.8): clone and unshare with CLONE_NEWUSER are EPERM, clone3 ENOSYS; other clones pass; without it all pass", () => {
  const NEWUSER = 0x10000000;
  const nums = { x86_64: { clone: 56, unshare: 272 }, aarch64: { clone: 220, unshare: 97 } };
  for (const [arch, n] of Object.entries(ARCH)) {
    const c = nums[arch as keyof typeof nums];
    for (const network of [false, true]) {
      const f = commandFilter(arch, { network, blockUserns: true });
      assert.equal(evaluate(f, c.unshare, n.audit, [NEWUSER]), EPERM, `${arch} unshare(NEWUSER)`);
      assert.equal(evaluate(f, c.unshare, n.audit, [NEWUSER | 0x20000]), EPERM, `${arch} +NEWNS`);
      assert.equal(evaluate(f, c.clone, n.audit, [NEWUSER | 0x11]), EPERM, `${arch} clone`);
      assert.equal(evaluate(f, 435, n.audit, [0, 88]), ENOSYS, `${arch} clone3`);
      // fork-like clones, threads and other namespaces (the command has no capability for them).
      assert.equal(evaluate(f, c.clone, n.audit, [0x01200011]), ALLOW, `${arch} fork clone`);
      assert.equal(evaluate(f, c.unshare, n.audit, [0x20000]), ALLOW, `${arch} unshare(NEWNS)`);
      assert.equal(evaluate(f, n.read, n.audit, []), ALLOW, `${arch} read`);
      // The other rules hold as before.
      assert.equal(evaluate(f, n.fchmodat[0], n.audit, [0, 0, 0o4755]), EPERM);
      assert.equal(evaluate(f, n.socket, n.audit, [1]), network ? ALLOW : EACCES);
      const plain = commandFilter(arch, { network });
      assert.equal(evaluate(plain, c.unshare, n.audit, [NEWUSER]), ALLOW, `${arch} default`);
      assert.equal(evaluate(plain, 435, n.audit, [0, 88]), ALLOW, `${arch} clone3 default`);
    }
  }
});

Deno.test("commandFilter execAllowlist (Landlock holds exec): memfd_create without MFD_NOEXEC_SEAL and memfd_secret are ENOSYS; a sealed memfd passes; without it all pass", () => {
  const nums = { x86_64: { memfd: 319 }, aarch64: { memfd: 279 } };
  for (const [arch, n] of Object.entries(ARCH)) {
    const m = nums[arch as keyof typeof nums].memfd;
    for (const blockUserns of [false, true]) {
      const f = commandFilter(arch, { network: false, execAllowlist: true, blockUserns });
      assert.equal(evaluate(f, m, n.audit, [0, 0]), ENOSYS, `${arch} memfd_create(0)`);
      assert.equal(evaluate(f, m, n.audit, [0, 0x1 | 0x2]), ENOSYS, `${arch} CLOEXEC|SEAL`);
      assert.equal(evaluate(f, m, n.audit, [0, 0x10]), ENOSYS, `${arch} MFD_EXEC`);
      assert.equal(evaluate(f, m, n.audit, [0, 0x8 | 0x1]), ALLOW, `${arch} NOEXEC_SEAL`);
      assert.equal(evaluate(f, 447, n.audit, [0]), ENOSYS, `${arch} memfd_secret`);
      assert.equal(evaluate(f, n.read, n.audit, []), ALLOW);
      assert.equal(evaluate(f, n.socket, n.audit, [1]), EACCES);
    }
    const plain = commandFilter(arch, { network: false });
    assert.equal(evaluate(plain, m, n.audit, [0, 0]), ALLOW, `${arch} default`);
    assert.equal(evaluate(plain, 447, n.audit, [0]), ALLOW, `${arch} default secret`);
  }
});
