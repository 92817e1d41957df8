/**
 * `agentteams run` end to end, owned protected writes (issue 14, item 16): a registered command
 * whose entry's own `writes` glob covers a protected path (`tools/record.py` maintaining
 * `reports/<id>/counterexamples.json`) runs confined by bwrap and writes it, an existing record
 * (re-bound read-only for anyone else) and a new one alike. The same path reached only through
 * the agent's write scopes or a request's `expected_writes` is still `WRITES_NOT_ALLOWED`, and
 * the sandbox still keeps it read-only for that entry; an entry's writes glob never makes the
 * control plane writable. Needs bwrap: without it every run here fails (no skip).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  assertRunRefused,
  bytesOrNull,
  exists,
  jsonOut,
  newRows,
  shScript,
  withWorld,
  workerBrief,
  type WorldPaths,
} from "./_run_helpers.ts";

const RECORD = "reports/*/counterexamples.json";
const REC_ARG = "reports/[a-z0-9]+/counterexamples\\.json";

/** Writes `[$2]` to the path `$1`, making its directory. */
const WRITE_ARG = shScript('mkdir -p "$(dirname "$1")" && printf "[%s]\\n" "$2" > "$1"');

const SCRIPTS = { record: WRITE_ARG, notes: WRITE_ARG, vendor: WRITE_ARG };

function brief(p: WorldPaths) {
  return workerBrief(p, [
    // The owner: its writes glob is the protected pattern itself.
    { prefix: [join(p.scripts, "record")], args: [REC_ARG, "[0-9]+"], writes: [RECORD] },
    // Another tool over the same directory: its writes do not cover the record.
    {
      prefix: [join(p.scripts, "notes")],
      args: [REC_ARG, "[0-9]+"],
      writes: ["reports/*/notes.md"],
    },
    // A writes glob whose `*` crosses into a nested repository's control plane.
    {
      prefix: [join(p.scripts, "vendor")],
      args: ["vendor/lib/\\.git/config|vendor/\\.claude/settings\\.json", "[0-9]+"],
      writes: ["vendor/*"],
    },
  ], {
    scopes: ["src/", "reports/", "vendor/"],
    write: ["src", "reports", "vendor"],
    top: {
      protected_paths: [RECORD, "reports/lit/counterexamples.json", "secrets"],
    },
  });
}

const FILES = {
  "README.md": "hello\n",
  "src/a.txt": "hello\n",
  "reports/p1/counterexamples.json": "[0]\n",
  "reports/p1/notes.md": "notes\n",
  "vendor/lib/keep.txt": "keep\n",
};

const dec = new TextDecoder();

function text(path: string): string | null {
  const b = bytesOrNull(path);
  return b === null ? null : dec.decode(b);
}

Deno.test("run: an entry whose own writes glob covers a protected path writes it, confined by bwrap", async () => {
  await withWorld("owned", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    const cases: [string, string][] = [
      ["reports/p1/counterexamples.json", "1"], // exists: re-bound read-only for other entries
      ["reports/p2/counterexamples.json", "2"], // new, below a wildcard pattern
      ["reports/lit/counterexamples.json", "3"], // new, a literal protected path (masked otherwise)
    ];
    for (const [rel, n] of cases) {
      const r = await w.run({
        argv: [join(w.scripts, "record"), rel, n],
        expected_writes: [rel],
      }, { flags: ["--json"] });
      assert.equal(r.code, 0, `${rel}: ${r.stderr}\n${r.stdout}`);
      const out = jsonOut(r);
      assert.equal(out.backend, "bwrap", "the run is confined by bwrap (is bwrap installed?)");
      assert.equal(out.confined, true);
      assert.deepEqual(out.undeclared_writes, [], rel);
      assert.equal(text(join(w.project, rel)), `[${n}]\n`, `${rel} was written`);
      assert.deepEqual(newRows(w, r).map((x) => x.action), ["run-request-start", "run-request"]);
    }
    await w.verifyOk();
  });
});

Deno.test("run: a protected path reached only through write scopes or expected_writes stays WRITES_NOT_ALLOWED and read-only", async () => {
  await withWorld("not-owned", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    const existing = join(w.project, "reports/p1/counterexamples.json");
    const fresh = join(w.project, "reports/p9/counterexamples.json");
    const notes = join(w.scripts, "notes");
    // Declared: the agent's scope `reports/` covers it, the entry's writes do not.
    for (const rel of ["reports/p1/counterexamples.json", "reports/p9/counterexamples.json"]) {
      const r = await w.run({ argv: [notes, rel, "7"], expected_writes: [rel] });
      const refusal = await assertRunRefused(w, r, "WRITES_NOT_ALLOWED", {
        agent: "worker",
        absent: [fresh],
      });
      assert.match(r.stderr, new RegExp(`"${rel.replaceAll(".", "\\.")}" is a protected path`));
      assert.match(r.stderr, /write scopes and expected_writes never do/, refusal.reason);
    }
    // The owning entry itself, declaring a protected path it does not own, is refused too.
    const other = await w.run({
      argv: [join(w.scripts, "record"), "reports/p1/counterexamples.json", "8"],
      expected_writes: ["reports/p1/counterexamples.json", "secrets/k"],
    });
    await assertRunRefused(w, other, "WRITES_NOT_ALLOWED", { agent: "worker" });
    assert.match(other.stderr, /"secrets\/k" is a protected path/);
    assert.equal(text(existing), "[0]\n", "nothing was written");

    // Declared through a directory the scope allows: it runs, but the sandbox keeps the record
    // read-only for this entry, so the existing one is not changed.
    const viaDir = await w.run({
      argv: [notes, "reports/p1/counterexamples.json", "9"],
      expected_writes: ["reports/"],
    }, { flags: ["--json"] });
    const out = jsonOut(viaDir);
    assert.equal(out.backend, "bwrap");
    assert.notEqual(out.exit, 0, "the write failed inside the sandbox");
    assert.match(out.stderr as string, /Read-only file system|Permission denied/);
    assert.equal(text(existing), "[0]\n", "nothing was written");
    assert.equal(exists(fresh), false);
    await w.verifyOk();
  });
});

Deno.test("run: an entry's writes glob never makes the control plane writable", async () => {
  await withWorld("owned-plane", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    const vendor = join(w.scripts, "vendor");
    for (const rel of ["vendor/lib/.git/config", "vendor/.claude/settings.json"]) {
      const r = await w.run({ argv: [vendor, rel, "1"], expected_writes: [rel] });
      await assertRunRefused(w, r, "WRITES_NOT_ALLOWED", {
        agent: "worker",
        absent: [join(w.project, rel)],
        verify: false,
      });
      assert.match(r.stderr, /control plane/, r.stderr);
    }
    await w.verifyOk();
  });
});
