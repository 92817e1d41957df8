/**
 * `agentteams apply` refuses by the artifact, its gates, its nonce, the brief and the key,
 * through the real CLI: schema violations (gates as a string, unknown fields, a wrong kind, a
 * command request, bad patterns, unreadable artifact files), an unknown requested gate, a gate
 * that exits non-zero (requested, or matched by its glob), gates that try to write into the
 * project, `.git/hooks`, the ledger, HOME, the key dir and beside the project (under bwrap they
 * cannot: the files are absent whatever the gate's exit), a forged nonce, an expired nonce, a
 * claimed agent that differs from the dispatch, a brief with an unknown key (nothing recorded:
 * there is no policy), and no key at all (nothing written anywhere).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadLedgerKey } from "../../lib/crypto/keys.ts";
import { issueDispatch } from "../../lib/ledger/dispatch.ts";
import {
  apply,
  applyFile,
  assertApplyRefused,
  assertLedgerVerifies,
  assertOnlyChanged,
  assertRefusalRecorded,
  before,
  change,
  deletion,
  dispatch,
  dispatchBeforeBriefChanged,
  exists,
  expectRefusal,
  type Json,
  makeProject,
  type Project,
  sha256,
  snapshot,
  stateSet,
  withProject,
  writeArtifact,
} from "./_helpers.ts";

function brief(p: { root: string; home: string; outside: string; keyDir: string }): string {
  const gates: Record<string, Json> = {
    pass: { argv: ["/usr/bin/true"] },
    fail: { argv: ["/usr/bin/false"] },
    "docs-approved": { glob: "docs/*.md", argv: ["/usr/bin/grep", "-q", "approved", "{file}"] },
    "touch-project": { argv: ["/usr/bin/touch", `${p.root}/src/gate-wrote.txt`] },
    "touch-home": { argv: ["/usr/bin/touch", `${p.home}/gate-wrote.txt`] },
    "touch-outside": { argv: ["/usr/bin/touch", `${p.outside}/gate-wrote.txt`] },
    "cp-hook": { argv: ["/usr/bin/cp", "{file}", `${p.root}/.git/hooks/pre-commit`] },
    "cp-ledger": {
      argv: ["/usr/bin/cp", "{file}", `${p.root}/.agentteams/proposal-ledger.jsonl`],
    },
    "cp-key": { argv: ["/usr/bin/cp", "{file}", `${p.keyDir}/proposal-ledger.key`] },
  };
  return JSON.stringify(
    {
      agent_policies: {
        worker: { write_scopes: ["src/", "docs/"] },
        reader: { write_scopes: ["docs/"] },
      },
      proposal_gates: gates,
    },
    null,
    2,
  ) + "\n";
}

function setup(prefix: string): Promise<Project> {
  return makeProject(prefix, {
    brief,
    files: { "src/a.txt": "hello\n", "docs/readme.md": "# approved docs\n" },
  });
}

const HELLO = sha256("hello\n");

Deno.test("apply refuses malformed artifacts before identity (ARTIFACT_INVALID, agent '?')", async (t) => {
  await withProject(setup("artifact"), async (p) => {
    const nonce = await dispatch(p, "worker");
    const ok = change(nonce, "src/a.txt", "new\n", HELLO);
    const cases: [string, Json | string][] = [
      ["gates given as a string", { ...ok, gates: "pass" }],
      ["gates with a non-string entry", { ...ok, gates: ["pass", 1] }],
      ["an unknown field", { ...ok, mode: "0777" }],
      ["an unknown field that sounds authoritative", { ...ok, approved_by: "operator" }],
      ["a wrong kind", { ...ok, kind: "change" }],
      ["no kind", Object.fromEntries(Object.entries(ok).filter(([k]) => k !== "kind"))],
      ["a command request given to apply", {
        kind: "command-request",
        dispatch: nonce,
        argv: ["/usr/bin/true"],
        purpose: "p",
      }],
      ["an upper-case nonce", { ...ok, dispatch: nonce.toUpperCase() }],
      ["a short nonce", { ...ok, dispatch: nonce.slice(1) }],
      ["an upper-case base", { ...ok, base_sha256: HELLO.toUpperCase() }],
      ["base 'ABSENT'", { ...ok, base_sha256: "ABSENT" }],
      ["a deletion with base 'absent'", deletion(nonce, "src/a.txt", "absent")],
      ["content that is not a string", { ...ok, content: 42 }],
      ["no rationale", Object.fromEntries(Object.entries(ok).filter(([k]) => k !== "rationale"))],
      ["a claimed agent that is not a slug", { ...ok, agent: "Worker" }],
      ["a JSON array", [ok]],
      ["text that is not JSON", "{kind: change-proposal"],
      ["strict JSON only: a trailing comma", JSON.stringify(ok).replace(/}$/, ",}")],
      ["a byte order mark before the JSON", "\ufeff" + JSON.stringify(ok)],
      // The refusal quotes the key; a lone surrogate in it must not keep the refusal unrecorded.
      [
        "an unknown key with a lone surrogate",
        JSON.stringify(ok).replace(/}$/, ', "x\\ud800": 1}'),
      ],
      [
        "an object for a string, whose constructor names a lone surrogate",
        JSON.stringify({ ...ok, path: { constructor: { name: "\ud800" } } }),
      ],
      // JSON.parse keeps the last `path`; a reviewer's reader might show the first.
      [
        "a repeated key (two paths)",
        JSON.stringify(ok).replace('"path":', '"path": "agentteams.jsonc", "path":'),
      ],
    ];
    for (const [name, artifact] of cases) {
      await t.step(name, async () => {
        await expectRefusal(p, artifact, "ARTIFACT_INVALID", { agent: "?", attempts: 0 });
      });
    }
    await t.step("an artifact file that is a symlink", async () => {
      const real = await writeArtifact(p, ok);
      const link = join(p.artifacts, "link.json");
      await Deno.symlink(real, link);
      const b = await before(p);
      assertApplyRefused(await applyFile(p, link), "ARTIFACT_INVALID");
      await assertRefusalRecorded(p, b, "ARTIFACT_INVALID", { agent: "?", attempts: 0 });
    });
    await t.step("an artifact file that is not UTF-8", async () => {
      const file = join(p.artifacts, "latin1.json");
      const text = JSON.stringify({ ...ok, rationale: "caf\u00e9" });
      // The same JSON in Latin-1: "é" as the single byte 0xe9.
      await Deno.writeFile(file, Uint8Array.from(text, (c) => c.charCodeAt(0)));
      const b = await before(p);
      const run = await applyFile(p, file);
      assertApplyRefused(run, "ARTIFACT_INVALID");
      assert.match(run.stderr, /not UTF-8/);
      await assertRefusalRecorded(p, b, "ARTIFACT_INVALID", { agent: "?", attempts: 0 });
    });
    await t.step("an artifact path that is a directory", async () => {
      const dir = join(p.artifacts, "dir.json");
      await Deno.mkdir(dir);
      const b = await before(p);
      assertApplyRefused(await applyFile(p, dir), "ARTIFACT_INVALID");
      await assertRefusalRecorded(p, b, "ARTIFACT_INVALID", { agent: "?", attempts: 0 });
    });
    await t.step("an artifact path that is a FIFO: refused without hanging", async () => {
      const fifo = join(p.artifacts, "fifo.json");
      const mk = await new Deno.Command("/usr/bin/mkfifo", { args: [fifo] }).output();
      assert.equal(mk.code, 0, new TextDecoder().decode(mk.stderr));
      const b = await before(p);
      assertApplyRefused(await applyFile(p, fifo, { hangGuardMs: 20_000 }), "ARTIFACT_INVALID");
      await assertRefusalRecorded(p, b, "ARTIFACT_INVALID", { agent: "?", attempts: 0 });
    });
    await t.step("an artifact file that does not exist", async () => {
      const b = await before(p);
      assertApplyRefused(
        await applyFile(p, join(p.artifacts, "missing.json")),
        "ARTIFACT_INVALID",
      );
      await assertRefusalRecorded(p, b, "ARTIFACT_INVALID", { agent: "?", attempts: 0 });
    });
    await t.step("an artifact over 2 MiB", async () => {
      await expectRefusal(
        p,
        { ...ok, rationale: "r", content: "x".repeat(2 * 1024 * 1024) },
        "ARTIFACT_INVALID",
        { agent: "?", attempts: 0 },
      );
    });
  });
});

Deno.test("apply refuses unknown and failing gates", async (t) => {
  await withProject(setup("gates"), async (p) => {
    const nonce = await dispatch(p, "worker");
    const exp = { agent: "worker", attempts: 1 } as const;
    for (const gate of ["nope", "constructor", "__proto__", "PASS"]) {
      await t.step(`an unknown requested gate ${JSON.stringify(gate)} (UNKNOWN_GATE)`, async () => {
        await expectRefusal(
          p,
          change(nonce, "src/a.txt", "new\n", HELLO, { gates: ["pass", gate] }),
          "UNKNOWN_GATE",
          exp,
        );
      });
    }
    await t.step("a requested gate that exits non-zero (GATE_FAILED)", async () => {
      const { row } = await expectRefusal(
        p,
        change(nonce, "src/a.txt", "new\n", HELLO, { gates: ["pass", "fail"] }),
        "GATE_FAILED",
        exp,
      );
      assert.match(String(row?.reason), /fail/);
    });
    await t.step(
      "a glob-matched gate that fails on the proposed content (GATE_FAILED)",
      async () => {
        // docs-approved runs on docs/*.md, unrequested, and greps the proposed content (the file
        // on disk does contain "approved": the gate must see the proposal, not the file).
        await expectRefusal(
          p,
          change(nonce, "docs/readme.md", "# rejected docs\n", sha256("# approved docs\n")),
          "GATE_FAILED",
          exp,
        );
      },
    );
    await t.step(
      "the glob is case-insensitive: docs/NEW.MD is gated too (GATE_FAILED)",
      async () => {
        await expectRefusal(p, change(nonce, "docs/NEW.MD", "nothing\n"), "GATE_FAILED", exp);
      },
    );
  });
});

Deno.test("gates that try to write elsewhere change nothing (confined by bwrap)", async (t) => {
  await withProject(setup("gate-writes"), async (p) => {
    const nonce = await dispatch(p, "worker");
    const keyFile = join(p.sb.keyDir, "proposal-ledger.key");
    const keyBytes = await Deno.readFile(keyFile);
    const cases: [string, string[]][] = [
      ["touch-project", [join(p.root, "src/gate-wrote.txt")]],
      ["touch-home", [join(p.sb.home, "gate-wrote.txt")]],
      ["touch-outside", [join(p.outside, "gate-wrote.txt")]],
      ["cp-hook", [join(p.root, ".git/hooks/pre-commit")]],
      ["cp-ledger", []],
      ["cp-key", []],
    ];
    let n = 0;
    for (const [gate, victims] of cases) {
      await t.step(gate, async () => {
        const rel = `src/gated-${++n}.txt`;
        const b = await before(p);
        const r = await apply(p, change(nonce, rel, "gate input\n", "absent", { gates: [gate] }));
        for (const v of victims) assert.equal(await exists(v), false, `the gate wrote ${v}`);
        assert.deepEqual(await Deno.readFile(keyFile), keyBytes, "the key changed");
        if (r.code === 0) {
          // The gate "succeeded" inside its sandbox: only the proposal itself landed.
          const allowed = new Set([...stateSet(p.root), join(p.root, rel)]);
          assertOnlyChanged(b.tree, await snapshot(p), allowed, `after gate ${gate}`);
          assert.equal(await Deno.readTextFile(join(p.root, rel)), "gate input\n");
          assertLedgerVerifies(p);
        } else {
          assertApplyRefused(r, "GATE_FAILED");
          await assertRefusalRecorded(p, b, "GATE_FAILED", { agent: "worker", attempts: 1 });
        }
      });
    }
  });
});

Deno.test("apply refuses forged, expired and mismatched dispatches", async (t) => {
  await withProject(setup("dispatch"), async (p) => {
    await t.step("a forged nonce: valid hex, never issued (DISPATCH_UNKNOWN)", async () => {
      await dispatch(p, "worker"); // the store exists and holds a real dispatch
      const forged = "0123456789abcdef0123456789abcdef";
      await expectRefusal(p, change(forged, "src/a.txt", "x\n", HELLO), "DISPATCH_UNKNOWN", {
        agent: "?",
        attempts: 0,
      });
    });
    await t.step("an expired nonce (DISPATCH_EXPIRED)", async () => {
      // Issued through the library with a clock 25 hours back; nothing issues after it, so no
      // compaction removes it before the apply.
      const key = loadLedgerKey({ env: p.env, mode: "direct" });
      const past = new Date(Date.now() - 25 * 3600_000);
      const { nonce } = await issueDispatch(p.root, key.hmac, "worker", { now: () => past });
      await expectRefusal(p, change(nonce, "src/a.txt", "x\n", HELLO), "DISPATCH_EXPIRED", {
        agent: "?",
        attempts: 0,
      });
    });
    await t.step("a claimed agent that differs from the dispatch (AGENT_MISMATCH)", async () => {
      // The identity is the signed dispatch record's: the refusal is attributed to it (worker),
      // never to the agent the artifact claims (reader).
      const nonce = await dispatch(p, "worker");
      await expectRefusal(
        p,
        change(nonce, "docs/x.md", "approved\n", "absent", { agent: "reader" }),
        "AGENT_MISMATCH",
        { agent: "worker", attempts: 1 },
      );
    });
  });
});

Deno.test("a brief with an unknown key refuses everything; the refusal is recorded (BRIEF_UNKNOWN_KEY)", async () => {
  const made = makeProject("brief-unknown", {
    brief: `{"agent_polices": {"worker": {"write_scopes": ["src/"]}}}\n`,
    files: { "src/a.txt": "hello\n" },
  });
  await withProject(made, async (p) => {
    // `dispatch` refuses this brief too; a nonce issued before it broke meets apply's check.
    const nonce = await dispatchBeforeBriefChanged(p, "worker");
    const b = await before(p);
    const r = await apply(p, change(nonce, "src/a.txt", "pwned\n", HELLO));
    assertApplyRefused(r, "BRIEF_UNKNOWN_KEY");
    // No policy, so no identity and no attempt: one refusal row with agent "?", nothing else.
    await assertRefusalRecorded(p, b, "BRIEF_UNKNOWN_KEY", { agent: "?", attempts: 0 });
  });
});

Deno.test("without a key nothing is written anywhere (NO_KEY)", async () => {
  await withProject(setup("nokey"), async (p) => {
    const nonce = await dispatch(p, "worker");
    const b = await before(p);
    const env = { HOME: p.sb.home, AGENTTEAMS_KEY_DIR: join(p.sb.dir, "no-such-key-dir") };
    const r = await apply(p, change(nonce, "src/a.txt", "pwned\n", HELLO), { env });
    assertApplyRefused(r, "NO_KEY");
    assertOnlyChanged(b.tree, await snapshot(p), new Set(), "after NO_KEY");
    // A dry run without a key is refused the same way.
    const d = await apply(p, change(nonce, "src/a.txt", "pwned\n", HELLO), { env, dryRun: true });
    assertApplyRefused(d, "NO_KEY");
    assertOnlyChanged(b.tree, await snapshot(p), new Set(), "after a dry-run NO_KEY");
  });
});
