/**
 * The acting context's loads (lib/cli/policy_ctx.ts) are shared by one invocation's permission
 * needs and its command, and by nothing else: a later invocation in the same process (an
 * embedding program calling `runCli` again) reads the brief and the artifact afresh.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { artifactOf, fullPolicy } from "../../lib/cli/policy_ctx.ts";
import type { Ctx } from "../../lib/cli/command_spec.ts";

/** One invocation's context: its own parsed arguments, `FILE` as given. */
function invocation(project: string, home: string, file: string): Ctx {
  return {
    name: "run",
    parsed: { flags: {}, positionals: { FILE: file } },
    env: { HOME: home },
    project,
    json: false,
    now: () => new Date(),
    note: () => {},
  };
}

function request(argv0: string): string {
  return JSON.stringify({
    kind: "command-request",
    dispatch: "0123456789abcdef0123456789abcdef",
    argv: [argv0],
    purpose: "p",
  });
}

function brief(agent: string): string {
  return JSON.stringify({ agent_policies: { [agent]: { write_scopes: ["src/"], commands: [] } } });
}

Deno.test("artifactOf and fullPolicy: read once per invocation, afresh for the next one", async () => {
  const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "agentteams-policy-ctx-" }));
  try {
    const project = join(dir, "p");
    const home = join(dir, "home");
    Deno.mkdirSync(project);
    Deno.mkdirSync(home);
    const file = join(dir, "r.json");
    Deno.writeTextFileSync(file, request("true"));
    Deno.writeTextFileSync(join(project, "agentteams.json"), brief("worker"));

    const first = invocation(project, home, file);
    assert.deepEqual(((await artifactOf(first)) as { argv: string[] }).argv, ["true"]);
    assert.deepEqual(Object.keys((await fullPolicy(first)).agents), ["worker"]);

    // Rewritten between the needs and the command of one invocation: it keeps what it read.
    Deno.writeTextFileSync(file, request("false"));
    Deno.writeTextFileSync(join(project, "agentteams.json"), brief("reviewer"));
    assert.deepEqual(((await artifactOf(first)) as { argv: string[] }).argv, ["true"]);
    assert.equal(await fullPolicy(first), await fullPolicy(first));
    assert.deepEqual(Object.keys((await fullPolicy(first)).agents), ["worker"]);

    // The next invocation, same paths: the files as they are now.
    const second = invocation(project, home, file);
    assert.deepEqual(((await artifactOf(second)) as { argv: string[] }).argv, ["false"]);
    assert.deepEqual(Object.keys((await fullPolicy(second)).agents), ["reviewer"]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
