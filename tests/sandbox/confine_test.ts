/** The façade: one plan, three ways to run it. */

import {
  bwrapArgv,
  confineArgv,
  type ConfinementPlan,
  seatbeltArgv,
} from "../../lib/sandbox/mod.ts";
import { assertEquals } from "./_assert.ts";

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

Deno.test("confine: bwrap wraps with the default /usr/bin/bwrap", () => {
  const c = confineArgv(PLAN, "bwrap");
  assertEquals([c.program, ...c.args], bwrapArgv({ ...PLAN, bwrap: "/usr/bin/bwrap" }));
  assertEquals(c.env, { PATH: "/usr/bin", TMPDIR: "/t" });
  assertEquals([c.cwd, c.backend, c.confined], ["/p/build", "bwrap", true]);
});

Deno.test("confine: seatbelt wraps with /usr/bin/sandbox-exec", () => {
  const c = confineArgv(PLAN, "seatbelt");
  assertEquals(
    [c.program, ...c.args],
    seatbeltArgv({ ...PLAN, sandboxExec: "/usr/bin/sandbox-exec" }),
  );
  assertEquals([c.backend, c.confined], ["seatbelt", true]);
});

Deno.test("confine: the unconfined opt-out runs the command itself and says so", () => {
  const c = confineArgv(PLAN, "unconfined-opt-out");
  assertEquals([c.program, c.args, c.confined], ["/usr/bin/make", ["-j2"], false]);
  assertEquals(c.env, { PATH: "/usr/bin", TMPDIR: "/t" });
});

Deno.test("confine: custom program paths are honoured", () => {
  const c = confineArgv(PLAN, "bwrap", { bwrap: "/opt/bin/bwrap", sandboxExec: "/x" });
  assertEquals(c.program, "/opt/bin/bwrap");
});
