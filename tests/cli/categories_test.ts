/**
 * A command that states its categories (`CommandSpec.categories`: `apply` and `run`) states those
 * its needs ask for: with read granted wholesale (these tests run under -A) the start keeps what
 * the stated categories say and revokes the rest without working the lists out, so a category
 * stated too few would be revoked under the command, one too many left granted. Each is held to
 * `neededCategories(needsOf(...))` in direct mode (with and without `--unconfined`), in queue
 * mode, and with no brief at all.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { findCommand, neededOf, needsOf } from "../../lib/cli/commands.ts";
import { parseArgs } from "../../lib/cli/args.ts";
import { COMMON_FLAGS } from "../../lib/cli/common_flags.ts";
import type { Ctx } from "../../lib/cli/command_spec.ts";
import { readEnv } from "../../lib/env.ts";
import { neededCategories } from "../../lib/permissions.ts";

function ctxFor(words: string[], args: string[], project: string, home: string): Ctx {
  const found = findCommand(words);
  assert.ok(found !== null);
  const { spec } = found;
  return {
    name: spec.words.join(" "),
    parsed: parseArgs(args, [...spec.flags, ...COMMON_FLAGS], spec.positionals),
    env: { ...readEnv(spec.env), HOME: home, AGENTTEAMS_KEY_DIR: join(home, "keys") },
    project,
    json: false,
    now: () => new Date(),
    note: () => {},
  };
}

async function git(dir: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", { args, cwd: dir, stdout: "null", stderr: "piped" })
    .output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
}

Deno.test("apply's and run's stated categories are their needs' categories: direct, unconfined, queue mode, no brief", async () => {
  const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "agentteams-categories-" }));
  try {
    const home = join(dir, "home");
    Deno.mkdirSync(join(home, "keys"), { recursive: true });
    const request = join(dir, "r.json");
    Deno.writeTextFileSync(
      request,
      JSON.stringify({
        kind: "command-request",
        dispatch: "0123456789abcdef0123456789abcdef",
        argv: ["true"],
        purpose: "p",
      }),
    );
    const proposal = join(dir, "p.json");
    Deno.writeTextFileSync(
      proposal,
      JSON.stringify({
        kind: "change-proposal",
        dispatch: "0123456789abcdef0123456789abcdef",
        path: "src/a.txt",
        content: "a\n",
        purpose: "p",
      }),
    );
    const brief = (extra: Record<string, unknown>) =>
      JSON.stringify({
        ...extra,
        allow_unconfined_runs: true,
        agent_policies: {
          worker: {
            write_scopes: ["src/"],
            commands: [{ prefix: ["true"], cwd: ".", writes: [], timeout: 5 }],
          },
        },
      });
    const projects: [string, string | null][] = [
      ["direct", brief({})],
      ["queue", brief({ write_policy: "orchestrator-only" })],
      ["no brief", null],
    ];
    let seen = 0;
    for (const [label, text] of projects) {
      const project = join(dir, label.replace(" ", "-"));
      Deno.mkdirSync(join(project, "src"), { recursive: true });
      await git(project, "init", "-q");
      if (text !== null) Deno.writeTextFileSync(join(project, "agentteams.json"), text);
      const cases: [string[], string[]][] = [
        [["run"], [request]],
        [["run"], [request, "--unconfined"]],
        [["apply"], [proposal]],
        [["apply"], [proposal, "--unconfined"]],
      ];
      for (const [words, args] of cases) {
        const what = `${label}: ${[...words, ...args.slice(1)].join(" ")}`;
        const spec = findCommand(words)!.spec;
        assert.ok(spec.categories !== undefined, what);
        // Separate invocations: neither shares the other's loads.
        const full = neededCategories(await needsOf(spec, ctxFor(words, args, project, home)));
        const stated = await neededOf(spec, ctxFor(words, args, project, home));
        assert.deepEqual([...stated], full, what);
        seen++;
      }
    }
    assert.equal(seen, 12);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
