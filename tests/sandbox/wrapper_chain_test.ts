/** The façade: one plan, three ways to run it. */

import {
  bwrapArgv,
  confineArgv,
  type ConfinementPlan,
  seatbeltArgv,
} from "../../lib/sandbox/mod.ts";
import { EXEC_GUARD_SCRIPT } from "../../lib/sandbox/exec_guard.ts";
import { commandFilter } from "../../lib/sandbox/seccomp.ts";
import assert from "node:assert/strict";

const PLAN: ConfinementPlan = {
  project: "/p",
  tmpdir: "/t",
  writeRoots: ["/p/build"],
  readOnly: [],
  masks: [],
  hidden: ["/h/keys"],
  exec: ["/usr/bin"],
  network: false,
  cwd: "/p/build",
  env: [["PATH", "/usr/bin"], ["TMPDIR", "/t"]],
  argv: ["/usr/bin/make", "-j2"],
};

const CLOSE_NR = Deno.build.arch === "aarch64" ? "57" : "3";

Deno.test("confine: bwrap, with the default /usr/bin/bwrap, runs behind the exec guard with the seccomp filter", () => {
  const c = confineArgv(PLAN, "bwrap");
  assert.deepEqual([c.program, ...c.args], [
    "/usr/bin/perl",
    "-e",
    EXEC_GUARD_SCRIPT,
    CLOSE_NR,
    commandFilter(Deno.build.arch, { network: false }).toHex(),
    "", // no pins: a literal plan binds by name
    ...bwrapArgv({ ...PLAN, bwrap: "/usr/bin/bwrap" }),
  ]);
  // The guard's own environment (bwrap clears it for the command and sets the plan's).
  assert.deepEqual(c.env, { PATH: "/usr/bin", TMPDIR: "/t", PERL_BADLANG: "0" });
  assert.deepEqual([c.cwd, c.backend, c.confined], ["/p/build", "bwrap", true]);
});

Deno.test("confine: seatbelt wraps with /usr/bin/sandbox-exec", () => {
  const c = confineArgv(PLAN, "seatbelt");
  assert.deepEqual(
    [c.program, ...c.args],
    seatbeltArgv({ ...PLAN, sandboxExec: "/usr/bin/sandbox-exec" }),
  );
  assert.deepEqual([c.backend, c.confined], ["seatbelt", true]);
});

Deno.test("confine: the unconfined opt-out runs the command itself and says so", () => {
  const c = confineArgv(PLAN, "unconfined-opt-out");
  assert.deepEqual([c.program, c.args, c.confined], ["/usr/bin/make", ["-j2"], false]);
  assert.deepEqual(c.env, { PATH: "/usr/bin", TMPDIR: "/t" });
});

Deno.test("confine: with network the guard passes the filter without the Unix-socket rule", () => {
  const c = confineArgv({ ...PLAN, network: true }, "bwrap");
  assert.deepEqual(c.args.slice(2, 6), [
    CLOSE_NR,
    commandFilter(Deno.build.arch, { network: true }).toHex(),
    "",
    "/usr/bin/bwrap",
  ]);
});

Deno.test("confine: custom program paths and architecture are honoured", () => {
  const c = confineArgv(PLAN, "bwrap", {
    bwrap: "/opt/bin/bwrap",
    sandboxExec: "/x",
    perl: "/opt/bin/perl",
    arch: "aarch64",
  });
  assert.deepEqual(c.program, "/opt/bin/perl");
  assert.deepEqual(c.args.slice(2, 6), [
    "57",
    commandFilter("aarch64", { network: false }).toHex(),
    "",
    "/opt/bin/bwrap",
  ]);
});

Deno.test("confine: pinned writable roots reach the guard as path, device and inode, one per line", () => {
  const pins = [{ path: "/t", dev: 2049, ino: 7 }, { path: "/p/build", dev: 2049, ino: 12 }];
  const c = confineArgv({ ...PLAN, pins }, "bwrap");
  assert.equal(c.args[4], "/t\t2049\t7\n/p/build\t2049\t12");
  // bwrap's own argv still names the binds; the guard swaps in `--bind-fd FD` for each pin.
  assert.deepEqual(c.args.slice(5), bwrapArgv({ ...PLAN, pins, bwrap: "/usr/bin/bwrap" }));
});
