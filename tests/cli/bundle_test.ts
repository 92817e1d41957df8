/**
 * The release bundle (scripts/bundle.ts, as scripts/build.ts makes it) runs the same
 * commands as the source tree: keys, dispatch, a command request, a proposal and ledger verify,
 * end to end in a real git repository; `permissions` names the bundle's own entry.
 */
import assert from "node:assert/strict";
import { GIT, gitEnv, sh } from "../_helpers/git.ts";
import { bundleTo } from "../../scripts/bundle.ts";

const deno = Deno.execPath();
const root = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const dec = new TextDecoder();

async function cli(
  entry: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(deno, {
    args: ["run", "--allow-all", "--no-check", entry, ...args],
    env,
    clearEnv: true,
  }).output();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("the code-split bundle runs keys, dispatch, run, apply and verify", async () => {
  const work = Deno.makeTempDirSync({ prefix: "agentteams-bundle-" });
  try {
    const outdir = `${work}/dist`;
    const files = await bundleTo(root, outdir);
    assert.ok(files.includes("main.js") && files.length > 3, files.join(" "));
    // Chunks are imported on first use, through specifiers Deno's graph builder does not follow.
    const js = files.map((f) => Deno.readTextFileSync(`${outdir}/${f}`)).join("\n");
    assert.doesNotMatch(js, /\bimport\(\s*["'`]\./);
    assert.match(js, /import\(String\("\.\/run-[A-Z0-9]+\.js"\)\)/);
    const entry = `${outdir}/main.js`;
    const project = `${work}/p`;
    Deno.mkdirSync(`${project}/src`, { recursive: true });
    Deno.writeTextFileSync(`${project}/src/a.txt`, "old\n");
    Deno.writeTextFileSync(
      `${project}/agentteams.json`,
      JSON.stringify({
        allow_unconfined_runs: true,
        agent_policies: { worker: { write_scopes: ["src/"], commands: [{ prefix: ["true"] }] } },
      }),
    );
    const env: Record<string, string> = {
      HOME: `${work}/home`,
      PATH: "/usr/bin:/bin",
      AGENTTEAMS_KEY_DIR: `${work}/home/keys`,
    };
    const ge = gitEnv(`${work}/home`);
    await sh(project, GIT, ["init", "-q", "."], ge);
    await sh(project, GIT, ["add", "-A"], ge);
    await sh(project, GIT, ["commit", "-qm", "init"], ge);
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
    const base = await crypto.subtle.digest("SHA-256", new TextEncoder().encode("old\n"));
    const hex = [...new Uint8Array(base)].map((x) => x.toString(16).padStart(2, "0")).join("");
    Deno.writeTextFileSync(
      `${work}/p.json`,
      JSON.stringify({
        kind: "change-proposal",
        dispatch: nonce,
        path: "src/a.txt",
        base_sha256: hex,
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
    assert.equal(line.slice(0, 2).join(" "), "deno run");
    assert.ok(line.some((w) => w.startsWith("--allow-read=") && w.split(/[=,]/).includes(outdir)));
    const narrow = await new Deno.Command(deno, { args: line.slice(1), env, clearEnv: true })
      .output();
    assert.equal(narrow.code, 0, dec.decode(narrow.stderr));
    assert.match(dec.decode(narrow.stdout), /rows verify/);
    const noCode = line.slice(1).map((w) =>
      w.startsWith("--allow-read=")
        ? `--allow-read=${w.slice(13).split(",").filter((d) => d !== outdir).join(",")}`
        : w
    );
    const refused = await new Deno.Command(deno, { args: noCode, env, clearEnv: true }).output();
    assert.equal(refused.code, 1);
    assert.match(dec.decode(refused.stderr), /refused: NOT_CAPABLE: .*--allow-read=/);
  } finally {
    Deno.removeSync(work, { recursive: true });
  }
});
