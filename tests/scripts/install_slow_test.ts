/**
 * First contact (issue 14, item 1): `scripts/install --prefix DIR` from a clean clone puts an
 * `agentteams` launcher in DIR/bin that works in a new shell with no Deno on PATH, twice over
 * (idempotent), and the README's "A session, by hand" block runs as written against it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, tempDir } from "../_helpers/mod.ts";
import { newcomerEnv } from "./_newcomer.ts";

const dec = new TextDecoder();

/** The README's block, as written, in the project directory, with the artifacts it names. */
const SESSION = `
set -e
agentteams keys init
agentteams brief check
nonce=$(agentteams dispatch --agent worker)
printf '{"kind": "change-proposal", "dispatch": "%s", "path": "src/hello.txt", "base_sha256": "absent", "content": "hello\\\\n", "rationale": "from the README"}' "$nonce" > proposal.json
printf '{"kind": "command-request", "dispatch": "%s", "argv": ["true"], "purpose": "from the README"}' "$nonce" > request.json
agentteams apply proposal.json --dry-run
agentteams apply proposal.json
agentteams run request.json
agentteams ledger verify
agentteams permissions run request.json
`;

async function sh(
  script: string,
  opts: { cwd: string; env: Record<string, string> },
): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command("bash", {
    args: ["-c", script],
    cwd: opts.cwd,
    clearEnv: true,
    env: opts.env,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(600_000), // a hang guard: npm may fetch Deno on a cold cache
  }).output();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

Deno.test("scripts/install: a launcher that works from a new shell, idempotent; the README's session runs against it", async () => {
  const dir = await tempDir("install");
  try {
    const clone = join(dir, "clone");
    const g = await sh(`git clone -q ${JSON.stringify(REPO_ROOT)} ${JSON.stringify(clone)}`, {
      cwd: dir,
      env: { PATH: "/usr/bin:/bin" },
    });
    assert.equal(g.code, 0, g.out);
    const env = newcomerEnv();
    // An empty Deno cache, as on a fresh machine: the install fetches what the bundle needs.
    env.DENO_DIR = join(dir, "deno-cache");
    const prefix = join(dir, "prefix");
    const first = await sh(`scripts/install --prefix ${JSON.stringify(prefix)}`, {
      cwd: clone,
      env,
    });
    assert.equal(first.code, 0, first.out);
    assert.match(first.out, new RegExp(`installed ${prefix}/bin/agentteams`));
    assert.match(first.out, /export PATH=/);
    const launcher = Deno.readTextFileSync(join(prefix, "bin/agentteams"));
    // The audit's and the run's own V8 options (COMMAND_V8_FLAGS), each for it alone.
    assert.match(launcher, /^ {2}audit\) v8=--v8-flags=--max-semi-space-size=2 ;;$/m);
    assert.match(launcher, /^ {2}run\) v8=--v8-flags=--min-semi-space-size=8 ;;$/m);
    assert.match(launcher, / --no-config \$v8 /);
    const again = await sh(`scripts/install --prefix ${JSON.stringify(prefix)}`, {
      cwd: clone,
      env,
    });
    assert.equal(again.code, 0, again.out);
    assert.equal(Deno.readTextFileSync(join(prefix, "bin/agentteams")), launcher, "idempotent");
    // A new shell: only the launcher's directory and the system's on PATH, a fresh HOME.
    const home = join(dir, "home");
    const project = join(dir, "project");
    await Deno.mkdir(home);
    await Deno.mkdir(join(project, "src"), { recursive: true });
    await Deno.writeTextFile(
      join(project, "agentteams.jsonc"),
      JSON.stringify({
        agent_policies: { worker: { write_scopes: ["src/"], commands: [{ prefix: ["true"] }] } },
        confined_programs: { worker: { exec: ["/usr/bin", "/bin"], write: ["src"] } },
      }),
    );
    // The user's own shell: a fresh HOME, so a fresh Deno cache too (the launcher needs none).
    const { DENO_DIR: _installCache, ...userEnv } = env;
    const user = { ...userEnv, HOME: home, PATH: `${prefix}/bin:/usr/bin:/bin` };
    const git = "git init -q && git add -A && " +
      "git -c user.name=n -c user.email=n@example.invalid commit -qm init";
    assert.equal((await sh(git, { cwd: project, env: user })).code, 0);
    const v = await sh("agentteams --version && agentteams --help", { cwd: project, env: user });
    assert.equal(v.code, 0, v.out);
    assert.match(v.out, /^agentteams \d+\.\d+\.\d+$/m);
    assert.match(v.out, /^usage: agentteams <command>/m);
    const s = await sh(SESSION, { cwd: project, env: user });
    assert.equal(s.code, 0, s.out);
    assert.match(s.out, /^ok: \S+agentteams\.jsonc passes \(1 agent\(s\): worker; 0 gate\(s\)\)$/m);
    assert.match(s.out, /dry run: src\/hello\.txt for worker passes every check; nothing written/);
    assert.match(s.out, /^wrote src\/hello\.txt for worker$/m);
    assert.match(s.out, /agentteams run: true exited 0 .*confined by bwrap/);
    assert.match(s.out, /^ok: \d+ rows verify$/m);
    assert.match(s.out, /deno run --no-prompt .* run --project \S+ request\.json$/m);
    assert.doesNotMatch(s.out, /warning: launched with broad/);
    assert.equal(Deno.readTextFileSync(join(project, "src/hello.txt")), "hello\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
