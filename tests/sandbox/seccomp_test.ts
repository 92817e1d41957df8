/**
 * The Unix-socket seccomp filter as bytes (golden), decoded back into instructions whose jumps
 * are checked by a tiny BPF interpreter over the cases that matter.
 */
import assert from "node:assert/strict";
import { unixSocketFilter } from "../../lib/sandbox/seccomp.ts";
import { SandboxError } from "../../lib/errors.ts";

/** Runs a classic BPF program over a seccomp_data (nr, arch, args[0]); returns the action word. */
function evaluate(bpf: Uint8Array, nr: number, arch: number, arg0: number): number {
  const view = new DataView(bpf.buffer, bpf.byteOffset, bpf.byteLength);
  const data = new DataView(new ArrayBuffer(64));
  data.setUint32(0, nr, true);
  data.setUint32(4, arch, true);
  data.setUint32(16, arg0, true);
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
    else if (code === 0x06) return k;
    else throw new Error(`unknown opcode ${code}`);
  }
  throw new Error("fell off the end");
}

const ALLOW = 0x7fff0000;
const EACCES = 0x00050000 | 13;
const ENOSYS = 0x00050000 | 38;

Deno.test("unixSocketFilter: socket(AF_UNIX) is EACCES, other families and socketpair allowed, io_uring and foreign ABIs ENOSYS", () => {
  for (
    const [arch, audit, socket, socketpair, read] of [
      ["x86_64", 0xc000003e, 41, 53, 0],
      ["aarch64", 0xc00000b7, 198, 199, 63],
    ] as const
  ) {
    const bpf = unixSocketFilter(arch);
    assert.equal(evaluate(bpf, socket, audit, 1), EACCES, `${arch} AF_UNIX`);
    assert.equal(evaluate(bpf, socket, audit, 2), ALLOW, `${arch} AF_INET`);
    assert.equal(evaluate(bpf, socket, audit, 16), ALLOW, `${arch} AF_NETLINK`);
    assert.equal(evaluate(bpf, socketpair, audit, 1), ALLOW, `${arch} socketpair(AF_UNIX)`);
    assert.equal(evaluate(bpf, read, audit, 1), ALLOW, `${arch} read`);
    for (const nr of [425, 426, 427]) assert.equal(evaluate(bpf, nr, audit, 0), ENOSYS);
    assert.equal(evaluate(bpf, socket, 0x40000003, 1), ENOSYS, `${arch} i386 ABI`);
    assert.equal(evaluate(bpf, 0x40000000 + 41, audit, 1), ENOSYS, `${arch} x32 call`);
  }
});

Deno.test("unixSocketFilter: golden bytes for x86_64", () => {
  assert.equal(
    unixSocketFilter("x86_64").toHex(),
    [
      "2000000004000000", // ld arch (code u16, jt, jf, k u32; little-endian)
      "150001003e0000c0", // arch == x86_64 ?
      "0600000026000500", // ENOSYS
      "2000000000000000", // ld nr
      "3500000100000040", // nr >= x32 bit ?
      "0600000026000500", // ENOSYS
      "15000400a9010000", // io_uring_setup
      "15000300aa010000", // io_uring_enter
      "15000200ab010000", // io_uring_register
      "1500020029000000", // socket
      "060000000000ff7f", // allow
      "0600000026000500", // ENOSYS
      "2000000010000000", // ld args[0]
      "1500010001000000", // AF_UNIX ?
      "060000000000ff7f", // allow
      "060000000d000500", // EACCES
    ].join(""),
  );
});

Deno.test("unixSocketFilter: an architecture without numbers is refused (CONFINED_INVALID)", () => {
  assert.throws(
    () => unixSocketFilter("riscv64"),
    (e) => e instanceof SandboxError && e.code === "CONFINED_INVALID",
  );
});
