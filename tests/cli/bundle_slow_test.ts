/**
 * The release bundle (scripts/bundle.ts, as scripts/build.ts makes it) runs the same
 * commands as the source tree: keys, dispatch, a command request, a proposal and ledger verify,
 * end to end in a real git repository; `permissions` names the bundle's own entry.
 */
import assert from "node:assert/strict";
import { workerProject } from "../_helpers/git.ts";
import { REPO_ROOT, runDeno, type RunResult, sha256 } from "../_helpers/mod.ts";
import { bundleTo } from "../../scripts/bundle.ts";

/** The bundle's `entry` run with every permission. */
function cli(entry: string, args: string[], env: Record<string, string>): Promise<RunResult> {
  return runDeno(["run", "--allow-all", "--no-check", entry, ...args], { env });
}

Deno.test("the code-split bundle runs keys, dispatch, run, apply and verify", async () => {
  const work = Deno.makeTempDirSync({ prefix: "agentteams-bundle-" });
  try {
    const outdir = `${work}/dist`;
    const files = await bundleTo(REPO_ROOT, outdir);
    assert.ok(files.includes("main.js") && files.length > 3, files.join(" "));
    // Chunks are imported on first use, through specifiers Deno's graph builder does not follow.
    const js = files.map((f) => Deno.readTextFileSync(`${outdir}/${f}`)).join("\n");
    assert.doesNotMatch(js, /\bimport\(\s*["'`]\./);
    assert.match(js, /import\(String\("\.\/run_cmd-[A-Z0-9]+\.js"\)\)/);
    const entry = `${outdir}/main.js`;
    const project = `${work}/p`;
    await workerProject(project, `${work}/home`);
    const env: Record<string, string> = {
      HOME: `${work}/home`,
      PATH: "/usr/bin:/bin",
      AGENTTEAMS_KEY_DIR: `${work}/home/keys`,
    };
    assert.equal((await cli(entry, ["keys", "init"], env)).code, 0);
    const d = await cli(entry, ["dispatch", "--agent", "worker", "--project", project], env);
    assert.equal(d.code, 0, d.stderr);
    const nonce = d.stdout.trim();
    Deno.writeTextFileSync(
      `${work}/r.json`,
      JSON.stringify({ kind: "command-request", dispatch: nonce, argv: ["true"], purpose: "t" }),
    );
    const r = await cli(
      entry,
      ["run", `${work}/r.json`, "--unconfined", "--project", project],
      env,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /true exited 0/);
    Deno.writeTextFileSync(
      `${work}/p.json`,
      JSON.stringify({
        kind: "change-proposal",
        dispatch: nonce,
        path: "src/a.txt",
        base_sha256: sha256("old\n"),
        content: "new\n",
        rationale: "t",
      }),
    );
    const a = await cli(entry, ["apply", `${work}/p.json`, "--project", project], env);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(Deno.readTextFileSync(`${project}/src/a.txt`), "new\n");
    const v = await cli(entry, ["ledger", "verify", "--project", project], env);
    assert.equal(v.code, 0, v.stderr);
    const p = await cli(entry, ["permissions", "ledger", "verify", "--project", project], env);
    assert.equal(p.code, 0, p.stderr);
    assert.ok(p.stdout.includes(` ${entry} ledger verify `), p.stdout);
    // The printed narrow line, run as printed: the command's chunks are read on first use, so the
    // line grants reading the bundle's directory, and without it the refusal is NOT_CAPABLE.
    const line = p.stdout.trim().split(" ");
    assert.equal(line[0], Deno.execPath()); // this Deno, by absolute path: no PATH needed
    assert.equal(line[1], "run");
    assert.ok(line.some((w) => w.startsWith("--allow-read=") && w.split(/[=,]/).includes(outdir)));
    const narrow = await runDeno(line.slice(1), { env });
    assert.equal(narrow.code, 0, narrow.stderr);
    assert.match(narrow.stdout, /rows verify/);
    const noCode = line.slice(1).map((w) =>
      w.startsWith("--allow-read=")
        ? `--allow-read=${w.slice(13).split(",").filter((d) => d !== outdir).join(",")}`
        : w
    );
    const refused = await runDeno(noCode, { env });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refused: NOT_CAPABLE: .*--allow-read=/);
  } finally {
    Deno.removeSync(work, { recursive: true });
  }
});
