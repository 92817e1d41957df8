/**
 * Every permission list a user copies for CI (`action.yml`, docs/ci.md) equals the command's own
 * (issue 23 item 3): each `--allow-env=` list there is the list `agentteams permissions audit` or
 * `agentteams permissions ledger verify --direct` prints, plus `AGENTTEAMS_BROAD_OK` where the copy
 * grants `--allow-read` whole (the tool warns of that unless told it is on purpose), and nothing
 * else; none grants the environment whole; each name is one the release flags grant too.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runCli } from "../_helpers/mod.ts";
import { BROAD_OK_ENV, releaseFlags } from "../../lib/permissions.ts";
import { withSandbox } from "./_team.ts";

/** The `--allow-env=` list of a printed launch line. */
function envOf(line: string): string[] {
  const m = /--allow-env=(\S+)/.exec(line);
  assert.ok(m !== null, `no --allow-env in ${line}`);
  return m[1].split(",").sort();
}

/** One `--allow-env=` copy: the command it grants, its list, whether it reads everything. */
interface Copy {
  readonly file: string;
  readonly line: number;
  readonly command: "audit" | "ledger verify" | "prose";
  readonly env: string[];
  readonly broadRead: boolean;
  readonly direct: boolean;
}

function copiesIn(file: string): Copy[] {
  const text = Deno.readTextFileSync(join(REPO_ROOT, file));
  const out: Copy[] = [];
  for (const m of text.matchAll(/--allow-env(=([A-Za-z0-9_,]+))?/g)) {
    const at = m.index;
    const line = text.slice(0, at).split("\n").length;
    const after = text.slice(at + m[0].length);
    if (m[2] === undefined) {
      // Only prose may name the flag bare ("every `--allow-env` list"): a command never may.
      assert.ok(after.startsWith("`"), `${file}:${line}: --allow-env grants every variable`);
      continue;
    }
    const env = m[2].split(",").sort();
    if (after.startsWith("`")) {
      out.push({ file, line, command: "prose", env, broadRead: false, direct: false });
      continue;
    }
    const cmd = /^[^`]{0,400}?main\.ts"?(?:\s|\\)+(audit|ledger verify)([^\n]*)/.exec(after);
    assert.ok(cmd !== null, `${file}:${line}: an --allow-env copy not followed by its command`);
    // The command's own line: from the line holding `deno run` down to its end.
    const start = text.lastIndexOf("deno run", at);
    const head = text.slice(start, at);
    out.push({
      file,
      line,
      command: cmd[1] as "audit" | "ledger verify",
      env,
      broadRead: /--allow-read(\s|\\)/.test(head + " "),
      direct: /--direct\b/.test(cmd[2]),
    });
  }
  return out;
}

Deno.test("every --allow-env list in action.yml and docs/ci.md equals the command's own (plus AGENTTEAMS_BROAD_OK with a whole --allow-read)", async () => {
  await withSandbox("ci-copies", async (sb) => {
    const printed = async (args: string[]) => {
      const r = await runCli(["permissions", ...args, "--project", sb.project], {
        env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
      });
      assert.equal(r.code, 0, r.stderr);
      return envOf(r.stdout);
    };
    const want = {
      audit: await printed(["audit"]),
      "ledger verify": await printed(["ledger", "verify", "--direct"]),
    };
    const release = new Set(envOf(releaseFlags().join(" ")));
    const copies = [...copiesIn("action.yml"), ...copiesIn("docs/ci.md")];
    // The action's two steps, the prose's two, the GitHub snippet's two, GitLab's three.
    assert.deepEqual(
      copies.map((c) => `${c.file} ${c.command}`),
      [
        "action.yml audit",
        "action.yml ledger verify",
        "docs/ci.md prose",
        "docs/ci.md prose",
        "docs/ci.md audit",
        "docs/ci.md ledger verify",
        "docs/ci.md audit",
        "docs/ci.md audit",
        "docs/ci.md ledger verify",
      ],
    );
    for (const c of copies) {
      // A list in prose names the command it is of just before it: it equals that one's.
      const base = c.command === "prose"
        ? (c.env.includes("LOG_TOKENS") ? want.audit : want["ledger verify"])
        : want[c.command];
      const expected = [...base, ...(c.broadRead ? [BROAD_OK_ENV] : [])].sort();
      assert.deepEqual(c.env, expected, `${c.file}:${c.line} (${c.command}) drifted`);
      for (const n of c.env) {
        assert.ok(release.has(n), `${c.file}:${c.line}: ${n} not in releaseFlags`);
      }
      if (c.command === "ledger verify") {
        assert.ok(c.direct, `${c.file}:${c.line}: ledger verify in CI needs --direct (no runner)`);
      }
    }
  });
});
