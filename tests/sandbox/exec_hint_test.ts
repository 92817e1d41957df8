/**
 * A confined program under none of the exec paths is refused with a message that says what to do:
 * the brief key (`confined_programs.<agent>.exec`, or the operator's confined-programs file) and
 * the directory to add, and for a program found through a link (Homebrew) or a script (a pyenv or
 * asdf shim) the real directory and the interpreter's. The live cases run real bwrap (the helper
 * throws, never skips, when it is missing) and assert nothing ran.
 */
import assert from "node:assert/strict";
import { SandboxError } from "../../lib/errors.ts";
import { execKeyPhrase, execRefusalMessage } from "../../lib/sandbox/exec_hint.ts";
import { confinedFilePath } from "../../lib/sandbox/operator_file.ts";
import { assertRefusal } from "../_helpers/assert.ts";
import { lexists, makeFixture, requireProgram, runConfined } from "./_helpers.ts";

const FILE = "/home/op/.config/agentteams/confined/p-0123456789ab.json";

Deno.test("exec hint: the key named follows whose list it is and where the block lives", () => {
  assert.equal(
    execKeyPhrase({ kind: "agent", agent: "worker", source: "brief" }, FILE),
    "confined_programs.worker.exec in the brief",
  );
  assert.equal(
    execKeyPhrase({ kind: "agent", agent: "worker", source: "operator-file" }, FILE),
    `worker.exec in the operator's confined-programs file ${FILE}`,
  );
  const none = execKeyPhrase({ kind: "agent", agent: "worker", source: null }, FILE);
  assert.ok(none.startsWith("confined_programs.worker.exec in the brief (or worker.exec in"), none);
  assert.ok(none.includes(FILE), none);
  const gate = execKeyPhrase({ kind: "gate", gate: "lint" }, FILE);
  assert.ok(gate.startsWith("proposal_gates.lint.exec in the brief"), gate);
  assert.ok(gate.includes(`gate_exec.lint in the operator's confined-programs file ${FILE}`), gate);
});

Deno.test("exec hint: a plain program names its directory and the key", () => {
  const m = execRefusalMessage({
    program: "/usr/bin/make",
    programReal: "/usr/bin/make",
    interpreter: null,
    execRoots: [],
    owner: { kind: "agent", agent: "worker", source: null },
    operatorFile: FILE,
  });
  assert.ok(m.includes("lies under none of the exec paths"), m);
  assert.ok(m.includes("none: confined_programs has no entry for worker"), m);
  assert.ok(m.includes('add "/usr/bin" to confined_programs.worker.exec in the brief'), m);
  assert.ok(!m.includes("link") && !m.includes("script"), m);
});

Deno.test("exec hint: a Homebrew-style link names the real directory; a shim names its interpreter", () => {
  const link = execRefusalMessage({
    program: "/opt/homebrew/bin/python3",
    programReal: "/opt/homebrew/Cellar/python@3.12/3.12.1/bin/python3.12",
    interpreter: null,
    execRoots: ["/opt/homebrew/bin"],
    owner: { kind: "agent", agent: "worker", source: "brief" },
    operatorFile: FILE,
  });
  assert.ok(
    link.includes(
      'add "/opt/homebrew/Cellar/python@3.12/3.12.1/bin" to confined_programs.worker.exec in the brief',
    ),
    link,
  );
  assert.ok(link.includes("/opt/homebrew/bin/python3 is a link to"), link);
  assert.ok(link.includes('listing "/opt/homebrew/bin" is not enough'), link);
  const shim = execRefusalMessage({
    program: "/home/op/.pyenv/shims/python",
    programReal: "/home/op/.pyenv/shims/python",
    interpreter: "/usr/bin/env",
    execRoots: ["/usr/lib"],
    owner: { kind: "agent", agent: "worker", source: "operator-file" },
    operatorFile: FILE,
  });
  assert.ok(shim.includes(`add "/home/op/.pyenv/shims" to worker.exec in the operator's`), shim);
  assert.ok(shim.includes('a script run by /usr/bin/env, so add "/usr/bin" too'), shim);
  assert.ok(shim.includes("`pyenv which python`"), shim);
  // An interpreter already allowed is not asked for again.
  const ok = execRefusalMessage({
    program: "/opt/t/run",
    programReal: "/opt/t/run",
    interpreter: "/usr/bin/dash",
    execRoots: ["/usr/bin"],
    owner: null,
    operatorFile: FILE,
  });
  assert.ok(ok.includes("a script run by /usr/bin/dash") && !ok.includes(", so add"), ok);
  assert.ok(ok.includes("to the exec list of the confinement"), ok);
});

Deno.test("exec hint (live, bwrap): a shim script is refused naming the key, its directory and its interpreter; nothing runs", async () => {
  requireProgram("/usr/bin/bwrap");
  const fx = makeFixture();
  try {
    const shims = `${fx.base}/tools/.pyenv/shims`;
    Deno.mkdirSync(shims, { recursive: true });
    const marker = `${fx.project}/build/pwned`;
    Deno.writeTextFileSync(`${shims}/python`, `#!/usr/bin/env sh\necho pwn > ${marker}\n`);
    Deno.chmodSync(`${shims}/python`, 0o755);
    const e = await assertRefusal(
      () =>
        runConfined(fx, [`${shims}/python`], {
          extra: {
            agent: { exec: ["/usr/lib"], write: ["build"] },
            execOwner: { kind: "agent", agent: "worker", source: null },
          },
        }),
      "CONFINED_INVALID",
      SandboxError,
    );
    assert.ok(e.message.includes(`add "${shims}" to confined_programs.worker.exec in the brief`));
    assert.ok(e.message.includes(confinedFilePath(fx.project, fx.home)), e.message);
    assert.ok(e.message.includes('a script run by /usr/bin/env, so add "/usr/bin" too'), e.message);
    assert.ok(e.message.includes("`pyenv which python`"), e.message);
    assert.ok(!lexists(marker), "the shim ran");
  } finally {
    fx.cleanup();
  }
});

Deno.test("exec hint (live, bwrap): a program found through a link is refused naming the real directory; nothing runs", async () => {
  requireProgram("/usr/bin/bwrap");
  const fx = makeFixture();
  try {
    const cellar = `${fx.base}/brew/Cellar/tool/1.0/bin`;
    const bin = `${fx.base}/brew/bin`;
    Deno.mkdirSync(cellar, { recursive: true });
    Deno.mkdirSync(bin, { recursive: true });
    const marker = `${fx.project}/build/pwned`;
    Deno.writeTextFileSync(`${cellar}/tool`, `#!/bin/sh\necho pwn > ${marker}\n`);
    Deno.chmodSync(`${cellar}/tool`, 0o755);
    Deno.symlinkSync(`${cellar}/tool`, `${bin}/tool`);
    const e = await assertRefusal(
      () =>
        runConfined(fx, [`${bin}/tool`], {
          extra: {
            agent: { exec: [bin, "/usr/bin"], write: ["build"] },
            execOwner: { kind: "agent", agent: "worker", source: "operator-file" },
          },
        }),
      "CONFINED_INVALID",
      SandboxError,
    );
    const file = confinedFilePath(fx.project, fx.home);
    assert.ok(
      e.message.includes(
        `add "${cellar}" to worker.exec in the operator's confined-programs file ${file}`,
      ),
      e.message,
    );
    assert.ok(e.message.includes(`${bin}/tool is a link to ${cellar}/tool`), e.message);
    assert.ok(e.message.includes(`listing "${bin}" is not enough`), e.message);
    // Its interpreter (/bin/sh, really /usr/bin/dash) is under /usr/bin already: not asked for.
    assert.ok(!e.message.includes(", so add"), e.message);
    assert.ok(!lexists(marker), "the program ran");
  } finally {
    fx.cleanup();
  }
});
