import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { loadPolicy } from "../../lib/policy/brief.ts";
import { defaultBriefPath, MAX_BRIEF_BYTES } from "../../lib/policy/brief_file.ts";
import { REPO_ROOT, runDeno, snapshotTree } from "../_helpers/mod.ts";
import { expectPolicyErrorAsync } from "./_helpers.ts";
import { assertSameTree } from "../_helpers/assert.ts";

const BRIEF = `{
  // comments are fine
  "project_goal": "A careful project.",
  "agent_policies": { "worker": { "write_scopes": ["docs/",], }, },
}
`;

async function tempProject(): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix: "agentteams-policy-" }));
}

async function expectUnchanged(
  dir: string,
  fn: () => Promise<unknown>,
  code: string,
  reason?: string,
) {
  const before = await snapshotTree(dir);
  const err = await expectPolicyErrorAsync(fn, code);
  if (reason !== undefined) assert.equal(err.details.reason, reason, err.message);
  assertSameTree(before, await snapshotTree(dir), "the refusal changed the project");
  return err;
}

Deno.test("brief: loads JSONC, pins the SHA-256 of the raw bytes, computes briefRel", async () => {
  const root = await tempProject();
  try {
    const path = join(root, "agentteams.jsonc");
    await Deno.writeTextFile(path, BRIEF);
    const policy = await loadPolicy(path, { projectRoot: root });
    const expected = createHash("sha256").update(new TextEncoder().encode(BRIEF)).digest("hex");
    assert.equal(policy.briefSha256, expected);
    assert.equal(policy.briefPath, path);
    assert.equal(policy.briefRel, "agentteams.jsonc");
    assert.deepEqual(policy.agents.worker.writeScopes, ["docs/"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("brief: defaultBriefPath finds .jsonc or .json, refuses both (probe 22 Q2), else BRIEF_NOT_FOUND", async () => {
  const root = await tempProject();
  try {
    await expectPolicyErrorAsync(() => defaultBriefPath(root), "BRIEF_NOT_FOUND", root);
    await Deno.writeTextFile(join(root, "agentteams.json"), "{}");
    assert.equal(await defaultBriefPath(root), join(root, "agentteams.json"));
    await Deno.writeTextFile(join(root, "agentteams.jsonc"), "{}");
    await expectPolicyErrorAsync(() => defaultBriefPath(root), "BRIEF_UNREADABLE", "two briefs");
    await Deno.remove(join(root, "agentteams.json"));
    assert.equal(await defaultBriefPath(root), join(root, "agentteams.jsonc"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("brief: a symlinked brief is refused, and a symlinked .jsonc does not fall back to .json", async () => {
  const root = await tempProject();
  const elsewhere = await tempProject();
  try {
    await Deno.writeTextFile(join(elsewhere, "real.jsonc"), BRIEF);
    await Deno.writeTextFile(join(root, "agentteams.json"), "{}");
    await Deno.symlink(join(elsewhere, "real.jsonc"), join(root, "agentteams.jsonc"));
    // Two names: neither is chosen (no fall back to the .json).
    await expectPolicyErrorAsync(() => defaultBriefPath(root), "BRIEF_UNREADABLE", "two briefs");
    await Deno.remove(join(root, "agentteams.json"));
    const chosen = await defaultBriefPath(root);
    assert.equal(chosen, join(root, "agentteams.jsonc"));
    const err = await expectUnchanged(
      root,
      () => loadPolicy(chosen, { projectRoot: root }),
      "BRIEF_UNREADABLE",
      "SYMLINK",
    );
    assert.ok(err.message.includes("symlink"));
    // A link inside the project to a file inside the project is refused too.
    await Deno.writeTextFile(join(root, "team.jsonc"), BRIEF);
    await Deno.symlink(join(root, "team.jsonc"), join(root, "link.jsonc"));
    await expectUnchanged(
      root,
      () => loadPolicy(join(root, "link.jsonc"), { projectRoot: root }),
      "BRIEF_UNREADABLE",
      "SYMLINK",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(elsewhere, { recursive: true });
  }
});

Deno.test("brief: bytes that are not UTF-8 are refused", async () => {
  const root = await tempProject();
  try {
    const path = join(root, "agentteams.json");
    await Deno.writeFile(path, new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]));
    await expectUnchanged(
      root,
      () => loadPolicy(path, { projectRoot: root }),
      "BRIEF_UNREADABLE",
      "NOT_UTF8",
    );
    // Latin-1 text, a common accident.
    await Deno.writeFile(
      path,
      new Uint8Array([...new TextEncoder().encode('{"project_goal": "caf'), 0xe9, 0x22, 0x7d]),
    );
    await expectUnchanged(
      root,
      () => loadPolicy(path, { projectRoot: root }),
      "BRIEF_UNREADABLE",
      "NOT_UTF8",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("brief: more than 1 MiB is refused; exactly 1 MiB is read", async () => {
  const root = await tempProject();
  try {
    const path = join(root, "agentteams.json");
    const exact = "{}" + " ".repeat(MAX_BRIEF_BYTES - 2);
    await Deno.writeTextFile(path, exact);
    assert.equal((await loadPolicy(path, { projectRoot: root })).writePolicy, "default");
    await Deno.writeTextFile(path, exact + " ");
    await expectUnchanged(
      root,
      () => loadPolicy(path, { projectRoot: root }),
      "BRIEF_UNREADABLE",
      "FILE_TOO_LARGE",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("brief: a directory or a FIFO is not a brief", async () => {
  const root = await tempProject();
  try {
    const dir = join(root, "agentteams.jsonc");
    await Deno.mkdir(dir);
    await expectUnchanged(
      root,
      () => loadPolicy(dir, { projectRoot: root }),
      "BRIEF_UNREADABLE",
      "NOT_REGULAR_FILE",
    );
    const fifo = join(root, "fifo.json");
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.equal(made.code, 0, "mkfifo is required for this test");
    await expectUnchanged(
      root,
      () => loadPolicy(fifo, { projectRoot: root }),
      "BRIEF_UNREADABLE",
      "NOT_REGULAR_FILE",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("brief: a missing brief or directory is BRIEF_NOT_FOUND", async () => {
  const root = await tempProject();
  try {
    await expectUnchanged(
      root,
      () => loadPolicy(join(root, "nope.jsonc"), { projectRoot: root }),
      "BRIEF_NOT_FOUND",
    );
    await expectUnchanged(
      root,
      () => loadPolicy(join(root, "no/such/dir/b.json"), { projectRoot: root }),
      "BRIEF_NOT_FOUND",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("brief: briefRel is computed on real paths (symlinked directories), null outside", async () => {
  const root = await tempProject();
  const outside = await tempProject();
  try {
    await Deno.mkdir(join(root, "cfg"));
    await Deno.writeTextFile(join(root, "cfg", "team.json"), "{}");
    await Deno.symlink(join(root, "cfg"), join(root, "alias"));
    const viaAlias = await loadPolicy(join(root, "alias", "team.json"), { projectRoot: root });
    assert.equal(viaAlias.briefRel, "cfg/team.json");
    assert.equal(viaAlias.briefPath, join(root, "cfg", "team.json"));
    // The project root reached through a link resolves too.
    await Deno.symlink(root, join(outside, "rootlink"));
    const viaRootLink = await loadPolicy(join(root, "cfg", "team.json"), {
      projectRoot: join(outside, "rootlink"),
    });
    assert.equal(viaRootLink.briefRel, "cfg/team.json");
    // So a scope covering the real directory is caught even when the brief was named by its alias.
    await Deno.writeTextFile(
      join(root, "cfg", "team.json"),
      JSON.stringify({ agent_policies: { w: { write_scopes: ["cfg/"] } } }),
    );
    await expectUnchanged(
      root,
      () => loadPolicy(join(root, "alias", "team.json"), { projectRoot: root }),
      "POLICY_LINT",
    );
    await Deno.writeTextFile(join(outside, "brief.json"), "{}");
    assert.equal(
      (await loadPolicy(join(outside, "brief.json"), { projectRoot: root })).briefRel,
      null,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("brief: a lint failure from a file names the file and the line", async () => {
  const root = await tempProject();
  try {
    const path = join(root, "agentteams.jsonc");
    await Deno.writeTextFile(
      path,
      '{\n  "agent_policies": {\n    "worker": {\n      "commands": [{"prefix": ["/bin/bash"]}]\n    }\n  }\n}\n',
    );
    const err = await expectUnchanged(
      root,
      () => loadPolicy(path, { projectRoot: root }),
      "POLICY_LINT",
    );
    assert.ok(err.message.startsWith("agentteams.jsonc:4:"), err.message);
    assert.equal(err.details.path, "agent_policies.worker.commands[0].prefix[0]");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("brief: under flags that grant the brief but not its directory, a symlinked brief is still refused", async () => {
  const root = await tempProject();
  const outside = await tempProject();
  const scripts = await tempProject();
  try {
    await Deno.writeTextFile(join(outside, "real.json"), "{}");
    await Deno.symlink(join(outside, "real.json"), join(outside, "link.json"));
    // Loads the brief named by the first argument and prints the outcome, and whether the
    // brief's directory is readable (it must not be: that is the case tested).
    const script = join(scripts, "load.ts");
    await Deno.writeTextFile(
      script,
      `import { loadPolicy } from ${
        JSON.stringify(new URL("../../lib/policy/brief.ts", import.meta.url).href)
      };
const [brief, root, dir] = Deno.args;
const dirRead = (await Deno.permissions.query({ name: "read", path: dir })).state;
try {
  const p = await loadPolicy(brief, { projectRoot: root });
  console.log(JSON.stringify({ dirRead, briefPath: p.briefPath }));
} catch (e) {
  console.log(JSON.stringify({ dirRead, code: e.code, reason: e.details?.reason }));
}
`,
    );
    // The link's target is granted too, so following the link would load it.
    const grants = [root, join(outside, "link.json"), join(outside, "real.json")];
    const load = async (brief: string) => {
      const r = await runDeno([
        "run",
        "--no-lock",
        `--config=${join(REPO_ROOT, "deno.json")}`,
        `--allow-read=${grants.join(",")}`,
        script,
        brief,
        root,
        outside,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const { dirRead, ...outcome } = JSON.parse(r.stdout);
      assert.notEqual(dirRead, "granted", "the brief's directory is readable: not the narrow case");
      return outcome;
    };
    // The target itself loads under these flags, through the narrow-flags fallback.
    assert.deepEqual(await load(join(outside, "real.json")), {
      briefPath: join(outside, "real.json"),
    });
    const before = await snapshotTree(root, outside);
    assert.deepEqual(await load(join(outside, "link.json")), {
      code: "BRIEF_UNREADABLE",
      reason: "SYMLINK",
    });
    assertSameTree(before, await snapshotTree(root, outside), "the refusal changed the files");
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(outside, { recursive: true });
    await Deno.remove(scripts, { recursive: true });
  }
});

Deno.test("brief: read without read of the project directory (narrow flags), the root is taken as given only while the brief's real path lies inside it; a project reached through a link is refused, not read with its brief outside it", async () => {
  const dir = await tempProject();
  const real = join(dir, "real");
  const link = join(dir, "link");
  await Deno.mkdir(join(real, "config"), { recursive: true });
  await Deno.symlink(real, link);
  // A write scope covering the brief: refused by the lint when the brief is known to be inside.
  const brief = '{"agent_policies": {"w": {"write_scopes": ["config/"]}}}';
  await Deno.writeTextFile(join(real, "config", "team.jsonc"), brief);
  const lib = new URL("../../lib/policy/brief.ts", import.meta.url).href;
  // `deno run` of a script, not `deno eval` (which runs with every permission).
  const load = async (briefPath: string, root: string, read: string[]) => {
    const script = join(dir, "load.ts");
    await Deno.writeTextFile(
      script,
      `import { loadPolicy } from ${JSON.stringify(lib)};
      try {
        await loadPolicy(${JSON.stringify(briefPath)}, { projectRoot: ${JSON.stringify(root)} });
        console.log("loaded");
      } catch (e) { console.log(e.code ?? e.name); }`,
    );
    const r = await runDeno([
      "run",
      "--no-check",
      "--no-prompt",
      `--allow-read=${[...read, script].join(",")}`,
      script,
    ]);
    return r.stdout.trim() || r.stderr;
  };
  const realBrief = join(real, "config", "team.jsonc");
  // Read whole, the lint refuses the scope that covers the brief.
  assert.equal(await load(realBrief, link, [dir]), "POLICY_LINT");
  // Only the brief readable, the project named by its real path: read, and refused the same.
  assert.equal(await load(realBrief, real, [realBrief]), "POLICY_LINT");
  // Only the brief readable, the project named through the link: the brief would look outside
  // the project, so it is not read at all (Deno's NotCapable, as before the root was taken as
  // given), never loaded without the lint.
  assert.equal(await load(realBrief, link, [realBrief]), "NotCapable");
  await Deno.remove(dir, { recursive: true });
});
