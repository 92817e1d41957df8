/**
 * `agentteams apply` refuses proposals by their path, each case through the real CLI: `..` in
 * every position, absolute and home paths, NUL and other control characters, backslashes, empty
 * and `.` segments, a trailing `/`; every control-plane entry in any letter case; the brief (in
 * use, under another letter case, and the default brief names); protected paths (a literal that
 * covers everything below it, and a glob); paths outside the agent's write scopes; an agent with
 * no policy. Every case asserts the code, that no byte on disk changed (project with `.git`,
 * HOME, keys, outside dir), the `apply-proposal-refused` row, and that the ledger verifies.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadLedgerKey } from "../../lib/crypto/keys.ts";
import { issueDispatch } from "../../lib/ledger/dispatch.ts";
import { runCli } from "../_helpers/mod.ts";
import { assertCliRefused } from "../_helpers/assert.ts";
import {
  change,
  dispatch,
  dispatchBeforeBriefChanged,
  expectRefusal,
  makeProject,
  type Project,
  sha256,
  withProject,
} from "./_helpers.ts";

const BRIEF = `{
  // Ignored description fields are allowed beside the policy.
  "project_name": "paths",
  "agent_policies": {
    "worker": { "write_scopes": ["src/", "docs/", "notes.txt"] },
    "reader": { "write_scopes": ["docs/"] },
  },
  "protected_paths": ["src/secrets", "src/*.key"],
}
`;

const FILES = {
  "src/a.txt": "hello\n",
  "src/secrets/token.txt": "s3cret\n",
  "src/app.key": "key\n",
  "docs/readme.md": "# docs\n",
  "notes.txt": "notes\n",
  "conf/team.jsonc": BRIEF,
};

function setup(prefix: string): Promise<Project> {
  return makeProject(prefix, { brief: BRIEF, files: FILES });
}

Deno.test("apply refuses malformed and escaping paths (one refusal per case)", async (t) => {
  await withProject(setup("syntax"), async (p) => {
    const nonce = await dispatch(p, "worker");
    const cases: [string, string][] = [
      ["../x", "PATH_OUTSIDE_PROJECT"],
      ["a/../b", "PATH_OUTSIDE_PROJECT"],
      ["a/..", "PATH_OUTSIDE_PROJECT"],
      ["..", "PATH_OUTSIDE_PROJECT"],
      ["src/../../outside/x", "PATH_OUTSIDE_PROJECT"],
      ["src/a/../../notes.txt", "PATH_OUTSIDE_PROJECT"],
      ["/etc/passwd", "PATH_OUTSIDE_PROJECT"],
      [join(p.root, "src/a.txt"), "PATH_OUTSIDE_PROJECT"],
      [join(p.outside, "x"), "PATH_OUTSIDE_PROJECT"],
      ["//src/a.txt", "PATH_OUTSIDE_PROJECT"],
      ["~/x", "PATH_OUTSIDE_PROJECT"],
      ["~", "PATH_OUTSIDE_PROJECT"],
      ["~root/.bashrc", "PATH_OUTSIDE_PROJECT"],
      ["src/a\u0000.txt", "PATH_INVALID"],
      ["src/a.txt\u0000", "PATH_INVALID"],
      ["src/a\nb.txt", "PATH_INVALID"],
      ["src/\tx.txt", "PATH_INVALID"],
      ["src/\rx.txt", "PATH_INVALID"],
      ["src/\u001b[31mx.txt", "PATH_INVALID"],
      ["src/x\u007f.txt", "PATH_INVALID"],
      // C1 (a terminal's CSI), a right-to-left override, a zero-width space, a line separator.
      ["src/x\u009b31m.txt", "PATH_INVALID"],
      ["src/report\u202etxt.exe", "PATH_INVALID"],
      ["src/a\u200bb.txt", "PATH_INVALID"],
      ["src/a\u2028b.txt", "PATH_INVALID"],
      ["src\\a.txt", "PATH_INVALID"],
      ["src/a\\b", "PATH_INVALID"],
      ["..\\x", "PATH_INVALID"],
      ["src//a.txt", "PATH_INVALID"],
      ["./src/a.txt", "PATH_INVALID"],
      ["src/./a.txt", "PATH_INVALID"],
      [".", "PATH_INVALID"],
      ["src/.", "PATH_INVALID"],
      ["src/", "PATH_INVALID"],
      ["src/new/", "PATH_INVALID"],
    ];
    for (const [path, code] of cases) {
      await t.step(`${JSON.stringify(path)} -> ${code}`, async () => {
        await expectRefusal(p, change(nonce, path, "pwned\n"), code, {
          agent: "worker",
          attempts: 1,
        });
      });
    }
    await t.step("deletions are checked by the same rules", async () => {
      const base = sha256("hello\n");
      for (const path of ["src/../src/a.txt", "/" + "src/a.txt", "src//a.txt"]) {
        await expectRefusal(
          p,
          {
            kind: "delete-proposal",
            dispatch: nonce,
            path,
            base_sha256: base,
            rationale: "x",
          },
          path.includes("..") || path.startsWith("/") ? "PATH_OUTSIDE_PROJECT" : "PATH_INVALID",
          { agent: "worker", attempts: 1 },
        );
      }
    });
    await t.step("an empty path fails the schema (ARTIFACT_INVALID, before identity)", async () => {
      await expectRefusal(p, change(nonce, "", "x"), "ARTIFACT_INVALID", {
        agent: "?",
        attempts: 0,
      });
    });
  });
});

Deno.test("apply refuses every control-plane entry, case-folded (CONTROL_PLANE)", async (t) => {
  await withProject(setup("control"), async (p) => {
    const nonce = await dispatch(p, "worker");
    const paths = [
      ".git",
      ".git/config",
      ".git/hooks/pre-commit",
      ".Git/hooks/x",
      ".GIT/HEAD",
      ".claude/settings.json",
      ".Claude/agents/x.md",
      ".goose/config.yaml",
      ".codex/config.toml",
      ".mcp.json",
      "tools/.MCP.json",
      ".vscode/tasks.json",
      "web/.VSCode/settings.json",
      ".github/agents/x.md",
      ".github/hooks/pre-push",
      ".GitHub/Hooks/x",
      ".github/AGENTS/y.md",
      "sandbox/profile.sb",
      "SandBox/x",
      ".agentteams/proposal-ledger.jsonl",
      ".agentteams/dispatches.jsonl",
      ".AGENTTEAMS/x",
      ".agentteams-queue/requests/0123456789abcdef0123456789abcdef.json",
      ".AgentTeams-Queue/x",
      ".agentteams-status/x",
      ".agentteams-STATUS/heartbeat",
    ];
    for (const path of paths) {
      await t.step(path, async () => {
        await expectRefusal(p, change(nonce, path, "pwned\n"), "CONTROL_PLANE", {
          agent: "worker",
          attempts: 1,
        });
      });
    }
    await t.step("a deletion of .git/HEAD", async () => {
      await expectRefusal(
        p,
        {
          kind: "delete-proposal",
          dispatch: nonce,
          path: ".git/HEAD",
          base_sha256: sha256(await Deno.readFile(join(p.root, ".git/HEAD"))),
          rationale: "x",
        },
        "CONTROL_PLANE",
        { agent: "worker", attempts: 1 },
      );
    });
  });
});

Deno.test("apply refuses the brief, the default brief names, protected and out-of-scope paths", async (t) => {
  await withProject(setup("policy"), async (p) => {
    const nonce = await dispatch(p, "worker");
    const briefBase = sha256(BRIEF);
    const brief = (path: string, base = "absent") => change(nonce, path, "{}\n", base);
    await t.step("the brief in use (BRIEF_PATH)", async () => {
      await expectRefusal(p, brief("agentteams.jsonc", briefBase), "BRIEF_PATH", {
        agent: "worker",
        attempts: 1,
      });
    });
    for (const path of ["AgentTeams.JSONC", "AGENTTEAMS.jsonc"]) {
      await t.step(`the brief under another letter case: ${path} (BRIEF_PATH)`, async () => {
        await expectRefusal(p, brief(path), "BRIEF_PATH", { agent: "worker", attempts: 1 });
      });
    }
    for (const path of ["agentteams.json", "AgentTeams.Json"]) {
      await t.step(`the other default brief name: ${path} (BRIEF_PATH)`, async () => {
        await expectRefusal(p, brief(path), "BRIEF_PATH", { agent: "worker", attempts: 1 });
      });
    }
    const other = join(p.root, "conf/team.jsonc");
    await t.step("with --brief conf/team.jsonc: that file, in any case (BRIEF_PATH)", async () => {
      for (const path of ["conf/team.jsonc", "Conf/TEAM.jsonc"]) {
        await expectRefusal(
          p,
          brief(path, path === "conf/team.jsonc" ? briefBase : "absent"),
          "BRIEF_PATH",
          {
            agent: "worker",
            attempts: 1,
            brief: other,
          },
        );
      }
    });
    await t.step("with --brief conf/team.jsonc: the default names stay refused", async () => {
      for (const path of ["agentteams.jsonc", "agentteams.json"]) {
        await expectRefusal(p, brief(path), "BRIEF_PATH", {
          agent: "worker",
          attempts: 1,
          brief: other,
        });
      }
    });

    const protectedCases: [string, string][] = [
      ["src/secrets", "absent"],
      ["src/secrets/token.txt", sha256("s3cret\n")],
      ["src/secrets/new/deep.txt", "absent"],
      ["SRC/Secrets/x.txt", "absent"],
      ["src/app.key", sha256("key\n")],
      ["src/deep/er/b.key", "absent"],
      ["src/X.KEY", "absent"],
    ];
    for (const [path, base] of protectedCases) {
      await t.step(`protected inside the write scope: ${path} (PROTECTED_PATH)`, async () => {
        await expectRefusal(p, change(nonce, path, "x\n", base), "PROTECTED_PATH", {
          agent: "worker",
          attempts: 1,
        });
      });
    }

    // Scopes match case exactly (and no other spelling of `k`): `Src/` and `DOCS/` are other
    // directories on a case-sensitive file system.
    for (
      const path of [
        "lib/x.ts",
        "README.md",
        "srcx/a.txt",
        "notes.txt/x",
        "docsy/a.md",
        "Src/a.txt",
        "DOCS/new.md",
        "Notes.txt",
      ]
    ) {
      await t.step(`outside worker's scopes: ${path} (OUT_OF_SCOPE)`, async () => {
        await expectRefusal(p, change(nonce, path, "x\n"), "OUT_OF_SCOPE", {
          agent: "worker",
          attempts: 1,
        });
      });
    }
    await t.step("reader may write docs/ only: src/a.txt (OUT_OF_SCOPE)", async () => {
      const rn = await dispatch(p, "reader");
      await expectRefusal(p, change(rn, "src/a.txt", "x\n", sha256("hello\n")), "OUT_OF_SCOPE", {
        agent: "reader",
        attempts: 1,
      });
    });
    await t.step("an agent with no agent_policies entry (UNKNOWN_AGENT)", async () => {
      // The CLI issues no nonce to an agent the brief lacks; one issued before the brief
      // dropped it is refused here too.
      const gn = await dispatchBeforeBriefChanged(p, "ghost");
      await expectRefusal(p, change(gn, "src/a.txt", "x\n", sha256("hello\n")), "UNKNOWN_AGENT", {
        agent: "ghost",
        attempts: 1,
      });
      // "constructor" is a valid slug; it must not find an inherited policy. (Issued through the
      // library: the CLI's argv parsing trips over this word, see the test below.)
      const key = loadLedgerKey({ env: p.env, mode: "direct" });
      const cn = (await issueDispatch(p.root, key.hmac, "constructor")).nonce;
      await expectRefusal(p, change(cn, "docs/x.md", "x\n"), "UNKNOWN_AGENT", {
        agent: "constructor",
        attempts: 1,
      });
    });
  });
});

Deno.test("dispatch --agent constructor issues a nonce when the brief names it (argv words are not looked up on Object.prototype)", async () => {
  // A slug that is also an Object.prototype key must be an ordinary value on the command line;
  // otherwise an agent of that name can never be dispatched (and apply FILE named so crashes).
  // Dispatch issues nonces only to the brief's agents: one the brief does not name is refused
  // by name (not found on Object.prototype); once the brief names it, it is issued one.
  const p = await makeProject("proto", {
    brief: `{"agent_policies": {"tostring": {"write_scopes": ["src/"]}}}\n`,
    files: FILES,
  });
  try {
    const proto = await runCli(["dispatch", "--agent", "constructor", "--project", p.root], {
      env: p.env,
      cwd: p.root,
    });
    assertCliRefused(proto, "dispatch", "UNKNOWN_AGENT");
    Deno.writeTextFileSync(
      join(p.root, "agentteams.jsonc"),
      `{"agent_policies": {"constructor": {"write_scopes": ["src/"]}, ` +
        `"tostring": {"write_scopes": ["src/"]}}}\n`,
    );
    for (const agent of ["constructor", "tostring"]) {
      const r = await runCli(["dispatch", "--agent", agent, "--project", p.root], {
        env: p.env,
        cwd: p.root,
      });
      assert.equal(r.code, 0, `dispatch --agent ${agent}: ${r.stderr}`);
      assert.match(r.stdout.trim(), /^[0-9a-f]{32}$/);
    }
  } finally {
    await p.dispose();
  }
});
