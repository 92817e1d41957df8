/** The start-up probe (live on Linux) and the pure confinement decision. */

import { SandboxError } from "../../lib/errors.ts";
import {
  decideConfinement,
  type ProbeResult,
  probeSandbox,
  sandboxHost,
} from "../../lib/sandbox/mod.ts";
import { requireProgram } from "./_helpers.ts";
import assert from "node:assert/strict";
import { assertRefusal } from "../_helpers/assert.ts";

const OK: ProbeResult = { ok: true, backend: "bwrap", program: "/usr/bin/bwrap" };
const MAC: ProbeResult = { ok: true, backend: "seatbelt", program: "/usr/bin/sandbox-exec" };
const FAIL: ProbeResult = { ok: false, backend: "bwrap", program: "/usr/bin/bwrap", reason: "x" };

Deno.test("decide: a working probe always confines, whatever the opt-out says", () => {
  for (const allowUnconfined of [false, true]) {
    for (const direct of [false, true]) {
      assert.deepEqual(decideConfinement({ probe: OK, allowUnconfined, direct }), "bwrap");
      assert.deepEqual(decideConfinement({ probe: MAC, allowUnconfined, direct }), "seatbelt");
    }
  }
});

Deno.test("decide: unconfined only with allow_unconfined_runs AND a direct operator run", () => {
  assert.deepEqual(
    decideConfinement({ probe: FAIL, allowUnconfined: true, direct: true }),
    "unconfined-opt-out",
  );
  for (
    const [allowUnconfined, direct] of [[false, false], [false, true], [true, false]] as const
  ) {
    const e = assertRefusal(
      () => decideConfinement({ probe: FAIL, allowUnconfined, direct }),
      "SANDBOX_UNAVAILABLE",
      SandboxError,
      `allow=${allowUnconfined} direct=${direct}`,
    );
    assert.ok(e.message.includes("x"), "carries the probe's reason");
  }
});

if (Deno.build.os === "linux") {
  Deno.test("probe (live): bwrap works here", async () => {
    requireProgram("/usr/bin/bwrap");
    const probe = await probeSandbox();
    // With what this host offers its plans (bwrap's features, the kernel's Landlock).
    assert.deepEqual(probe, { ...OK, host: sandboxHost() });
    assert.ok(probe.ok && probe.host !== undefined && probe.host.landlock.abi >= 1, "Landlock");
  });

  Deno.test("probe (live): a missing or failing bwrap is a typed failure", async () => {
    const missing = await probeSandbox({ bwrap: "/nonexistent/bwrap" });
    assert.ok(!missing.ok && missing.backend === "bwrap", JSON.stringify(missing));
    const failing = await probeSandbox({ bwrap: "/bin/false" });
    assert.ok(!failing.ok && failing.reason.includes("exit 1"), JSON.stringify(failing));
    const relative = await probeSandbox({ bwrap: "bwrap" });
    assert.ok(!relative.ok && relative.reason.includes("absolute"), JSON.stringify(relative));
    // The exec guard in front of bwrap needs perl, and the seccomp filter the machine's numbers.
    const noPerl = await probeSandbox({ perl: "/nonexistent/perl" });
    assert.ok(!noPerl.ok && noPerl.reason.includes("perl"), JSON.stringify(noPerl));
    const otherArch = await probeSandbox({ arch: "riscv64" });
    assert.ok(!otherArch.ok && otherArch.reason.includes("riscv64"), JSON.stringify(otherArch));
    assertRefusal(
      () => decideConfinement({ probe: missing, allowUnconfined: false, direct: true }),
      "SANDBOX_UNAVAILABLE",
      SandboxError,
    );
  });
}

Deno.test("probe: an unsupported platform has no backend", async () => {
  const r = await probeSandbox({ os: "windows" });
  assert.deepEqual(r, {
    ok: false,
    backend: null,
    program: null,
    reason: "no sandbox backend for windows",
  });
});
