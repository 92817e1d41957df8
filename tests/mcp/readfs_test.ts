/**
 * `agentteams mcp readfs`, driven by the official MCP SDK client over stdio and launched by the
 * exact line `agentteams permissions mcp readfs` prints (no --allow-write in it). Every refusal
 * is asserted by its code, as a tool error the server answers and survives, and the tree is
 * compared byte for byte before and after: the server wrote nothing.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  connect,
  type Connected,
  permissionsLine,
  serverEnv,
  snapshot,
  textOf,
} from "./_client.ts";
import { fileTempDir } from "../_helpers/mod.ts";

type Call = { content?: unknown; isError?: boolean; structuredContent?: Record<string, unknown> };

async function call(c: Connected, name: string, args: Record<string, unknown>): Promise<Call> {
  return await c.client.callTool({ name, arguments: args }) as Call;
}

function blocks(r: Call): string[] {
  return ((r.content ?? []) as { text: string }[]).map((b) => b.text);
}

async function refused(c: Connected, name: string, args: Record<string, unknown>, code: string) {
  const r = await call(c, name, args);
  assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} was not refused: ${textOf(r)}`);
  assert.ok(textOf(r).startsWith(`${code}: `), `${name} ${JSON.stringify(args)}: ${textOf(r)}`);
  assert.equal((r.structuredContent?.error as { code?: string })?.code, code);
}

function fixture(): { root: string; outside: string; home: string } {
  const base = fileTempDir("readfs");
  const root = `${base}/proj`;
  const outside = `${base}/outside`;
  const home = `${base}/home`;
  for (
    const d of [root, outside, home, `${root}/src/deep`, `${root}/.agentteams`, `${root}/.git`]
  ) {
    Deno.mkdirSync(d, { recursive: true });
  }
  Deno.mkdirSync(`${root}/.agentteams-queue/mcp-requests`, { recursive: true });
  Deno.writeTextFileSync(`${root}/src/a.ts`, "export const a = 1;\n// needle here\n");
  Deno.writeTextFileSync(`${root}/src/deep/b.md`, "# B\nAnother Needle\n");
  Deno.writeTextFileSync(`${root}/README.md`, "readme\n");
  Deno.writeFileSync(`${root}/bin.dat`, new Uint8Array([0, 1, 2, 255, 0, 7]));
  Deno.writeTextFileSync(`${root}/.agentteams/proposal-ledger.jsonl`, "secret ledger needle\n");
  Deno.writeTextFileSync(`${root}/.git/config`, "[core]\n needle\n");
  Deno.writeTextFileSync(`${outside}/secret.txt`, "outside needle\n");
  Deno.symlinkSync(`${outside}/secret.txt`, `${root}/out-link`);
  Deno.symlinkSync(outside, `${root}/out-dir`);
  Deno.symlinkSync("src/a.ts", `${root}/in-link`);
  Deno.symlinkSync(".agentteams/proposal-ledger.jsonl", `${root}/cp-link`);
  Deno.writeFileSync(`${root}/big.bin`, new Uint8Array(10 * 1024 * 1024));
  Deno.writeFileSync(`${root}/just-over.txt`, new Uint8Array(256 * 1024 + 1).fill(97));
  Deno.writeFileSync(`${root}/at-cap.txt`, new Uint8Array(256 * 1024).fill(98));
  new Deno.Command("mkfifo", { args: [`${root}/fifo`] }).outputSync();
  assert.ok(Deno.lstatSync(`${root}/fifo`).isFifo, "mkfifo is needed for this test");
  return { root, outside, home };
}

Deno.test("mcp readfs: launched by its permissions line, read-only tools over the SDK client", async (t) => {
  const { root, home } = fixture();
  const env = serverEnv(home);
  const argv = await permissionsLine(["mcp", "readfs", "--root", "."], root, env);
  await t.step("the permission line grants no write, no run, no net", () => {
    assert.ok(!argv.some((a) => a.startsWith("--allow-write")), argv.join(" "));
    assert.ok(!argv.some((a) => a.startsWith("--allow-run") || a.startsWith("--allow-net")));
    assert.ok(!argv.includes("-A") && !argv.includes("--allow-all"));
    const read = argv.find((a) => a.startsWith("--allow-read="));
    assert.ok(read !== undefined && read.split("=")[1].split(",").includes(root), read);
  });
  const before = snapshot(root);
  const c = await connect(argv, root, env);
  try {
    await t.step("initialize negotiated, server named agentteams_readfs", () => {
      assert.equal(c.client.getServerVersion()?.name, "agentteams_readfs");
      assert.ok(c.client.getServerCapabilities()?.tools !== undefined);
    });
    await t.step(
      "tools/list: exactly the tool names the audit accepts, all read-only",
      async () => {
        const { tools } = await c.client.listTools() as {
          tools: { name: string; annotations?: { readOnlyHint?: boolean } }[];
        };
        assert.deepEqual(tools.map((x) => x.name).sort(), [
          "find",
          "grep",
          "list_dir",
          "read_file",
          "stat",
        ]);
        for (const x of tools) assert.equal(x.annotations?.readOnlyHint, true, x.name);
      },
    );
    await t.step("ping", async () => {
      assert.deepEqual(await c.client.ping(), {});
    });
    await t.step("read_file: text and the sha256 a proposal's base_sha256 needs", async () => {
      const r = await call(c, "read_file", { path: "src/a.ts" });
      const bytes = Deno.readFileSync(`${root}/src/a.ts`);
      const want = createHash("sha256").update(bytes).digest("hex");
      assert.equal(r.isError, undefined);
      assert.equal(r.structuredContent?.sha256, want);
      assert.equal(blocks(r)[1], "export const a = 1;\n// needle here\n");
      assert.ok(textOf(r).includes(`sha256: ${want}`));
      // Lenient spelling, same file.
      assert.equal(
        (await call(c, "read_file", { path: "./src//a.ts" })).structuredContent?.sha256,
        want,
      );
    });
    await t.step(
      "read_file: a link inside the root is followed; its real path is named",
      async () => {
        const r = await call(c, "read_file", { path: "in-link" });
        assert.equal(r.structuredContent?.path, "src/a.ts");
      },
    );
    await t.step("read_file: a binary gives size and sha256, no content", async () => {
      const r = await call(c, "read_file", { path: "bin.dat" });
      assert.equal(r.structuredContent?.binary, true);
      assert.equal(r.structuredContent?.size, 6);
      assert.equal(blocks(r).length, 1);
    });
    await t.step("read_file: 256 KiB is read, one byte over and 10 MiB are refused", async () => {
      const r = await call(c, "read_file", { path: "at-cap.txt" });
      assert.equal(r.structuredContent?.size, 256 * 1024);
      await refused(c, "read_file", { path: "just-over.txt" }, "FILE_TOO_LARGE");
      await refused(c, "read_file", { path: "big.bin" }, "FILE_TOO_LARGE");
    });
    await t.step("read_file: a FIFO, a directory are refused (no hang)", async () => {
      await refused(c, "read_file", { path: "fifo" }, "NOT_REGULAR_FILE");
      await refused(c, "read_file", { path: "src" }, "NOT_REGULAR_FILE");
      await refused(c, "list_dir", { path: "README.md" }, "NOT_DIRECTORY");
      await refused(c, "read_file", { path: "missing.txt" }, "NOT_FOUND");
    });
    await t.step("path traversal in every tool's path argument", async () => {
      const bad: [string, string][] = [
        ["..", "PATH_OUTSIDE_PROJECT"],
        ["../outside/secret.txt", "PATH_OUTSIDE_PROJECT"],
        ["src/../../outside", "PATH_OUTSIDE_PROJECT"],
        ["/etc/passwd", "PATH_OUTSIDE_PROJECT"],
        [`${root}/src/a.ts`, "PATH_OUTSIDE_PROJECT"],
        ["~/x", "PATH_OUTSIDE_PROJECT"],
        ["~root/x", "PATH_OUTSIDE_PROJECT"],
        ["src/a\0.ts", "PATH_INVALID"],
        ["src\\a.ts", "PATH_INVALID"],
        [`${"d/".repeat(1600)}x`, "PATH_INVALID"],
        [`${"n".repeat(300)}`, "PATH_INVALID"],
        ["x".repeat(5000), "ARGUMENT_INVALID"],
        ["out-link", "PATH_OUTSIDE_PROJECT"],
        ["out-dir/secret.txt", "PATH_OUTSIDE_PROJECT"],
        ["out-dir", "PATH_OUTSIDE_PROJECT"],
      ];
      const tools: [string, Record<string, unknown>][] = [
        ["read_file", {}],
        ["list_dir", {}],
        ["stat", {}],
        ["find", { pattern: "*" }],
        ["grep", { pattern: "needle" }],
      ];
      for (const [tool, extra] of tools) {
        for (const [path, code] of bad) await refused(c, tool, { ...extra, path }, code);
      }
    });
    await t.step(
      "the control plane and the runner's folders, in any letter case, via links",
      async () => {
        for (
          const path of [
            ".agentteams/proposal-ledger.jsonl",
            ".AgentTeams/proposal-ledger.jsonl",
            ".agentteams",
            ".agentteams-queue/mcp-requests",
            ".AGENTTEAMS-QUEUE",
            ".agentteams-status",
            ".git/config",
            ".GIT/config",
            "src/.git/x",
            ".claude/settings.json",
            "references/x.csv",
            "cp-link",
          ]
        ) {
          for (const tool of ["read_file", "list_dir", "stat"]) {
            await refused(c, tool, { path }, "CONTROL_PLANE");
          }
        }
      },
    );
    await t.step(
      "list_dir leaves the control plane out; find and grep skip it and links",
      async () => {
        const r = await call(c, "list_dir", {});
        const names = (r.structuredContent?.entries as { name: string; kind: string }[]).map((e) =>
          e.name
        );
        assert.ok(names.includes("src") && names.includes("out-link"), names.join(","));
        for (const n of [".agentteams", ".agentteams-queue", ".git"]) {
          assert.ok(!names.includes(n), n);
        }
        assert.equal(
          (r.structuredContent?.entries as { name: string; kind: string }[]).find((e) =>
            e.name === "out-link"
          )?.kind,
          "symlink",
        );
        const f = await call(c, "find", { pattern: "*" });
        const paths = f.structuredContent?.paths as string[];
        assert.ok(paths.includes("src/deep/b.md") && paths.includes("src/"), paths.join(","));
        assert.ok(
          !paths.some((p) => p.startsWith(".agentteams") || p.startsWith(".git")),
          paths.join(","),
        );
        assert.ok(
          !paths.some((p) => p.startsWith("out-dir/")),
          "find followed a link out",
        );
        const g = await call(c, "grep", { pattern: "needle", ignore_case: true });
        const hits = (g.structuredContent?.matches as { path: string; line: number }[]).map((m) =>
          `${m.path}:${m.line}`
        );
        assert.deepEqual(hits, ["src/a.ts:2", "src/deep/b.md:2"]);
        const g2 = await call(c, "grep", { pattern: "needle", glob: "*.md", path: "src" });
        assert.equal((g2.structuredContent?.matches as unknown[]).length, 0);
        const g3 = await call(c, "grep", { pattern: "Needle", glob: "*.md", path: "src" });
        assert.equal((g3.structuredContent?.matches as unknown[]).length, 1);
        const s = await call(c, "find", { pattern: "src/*.ts" });
        assert.deepEqual(s.structuredContent?.paths, ["src/a.ts"]);
      },
    );
    await t.step("stat", async () => {
      const r = await call(c, "stat", { path: "in-link" });
      assert.equal(r.structuredContent?.kind, "file");
      assert.equal(r.structuredContent?.link, true);
      assert.equal(r.structuredContent?.path, "src/a.ts");
      const d = await call(c, "stat", {});
      assert.equal(d.structuredContent?.kind, "dir");
    });
    await t.step("bad arguments are tool errors; an unknown tool is a protocol error", async () => {
      await refused(c, "read_file", {}, "ARGUMENT_INVALID");
      await refused(c, "read_file", { path: 7 }, "ARGUMENT_INVALID");
      await refused(c, "read_file", { path: "a", extra: true }, "ARGUMENT_INVALID");
      await refused(c, "grep", { pattern: "" }, "PATH_INVALID");
      await assert.rejects(
        () => c.client.callTool({ name: "write_file", arguments: { path: "x" } }),
        (e: Error & { code?: number }) => e.code === -32602 && /unknown tool/.test(e.message),
      );
    });
    await t.step("still serving after every refusal", async () => {
      assert.equal(
        blocks(await call(c, "read_file", { path: "README.md" }))[1],
        "readme\n",
      );
    });
  } finally {
    await c.close();
  }
  assert.equal(snapshot(root), before, "the server changed the tree");
});

Deno.test("mcp readfs: the key dir is refused even inside the root", async () => {
  const { root, home } = fixture();
  Deno.mkdirSync(`${root}/keys`);
  Deno.writeTextFileSync(`${root}/keys/proposal-ledger.key`, "k".repeat(64));
  const env = serverEnv(home, { AGENTTEAMS_KEY_DIR: `${root}/keys` });
  const argv = await permissionsLine(["mcp", "readfs", "--root", "."], root, env);
  const c = await connect(argv, root, env);
  try {
    for (const path of ["keys/proposal-ledger.key", "KEYS/proposal-ledger.key", "keys"]) {
      await refused(c, "read_file", { path }, "KEY_DIR");
      await refused(c, "stat", { path }, "KEY_DIR");
    }
    const l = await call(c, "list_dir", {});
    assert.ok(!(l.structuredContent?.entries as { name: string }[]).some((e) => e.name === "keys"));
    const g = await call(c, "grep", { pattern: "kkkk" });
    assert.equal((g.structuredContent?.matches as unknown[]).length, 0);
  } finally {
    await c.close();
  }
});

Deno.test("mcp readfs: --root that is no directory is refused before serving", async () => {
  const { root } = fixture();
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../../main.ts", import.meta.url).pathname,
      "mcp",
      "readfs",
      "--root",
      `${root}/README.md`,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { AGENTTEAMS_BROAD_OK: "1" },
  }).output();
  assert.equal(out.code, 1);
  assert.equal(new TextDecoder().decode(out.stdout), "");
  assert.match(
    new TextDecoder().decode(out.stderr),
    /refused: NOT_DIRECTORY: the root .*README\.md is not a directory/,
  );
});

Deno.test("mcp readfs: a link created between list and read is refused at the read", async () => {
  const { root, home } = fixture();
  const env = serverEnv(home);
  const c = await connect(await permissionsLine(["mcp", "readfs"], root, env), root, env);
  try {
    const r = await call(c, "list_dir", { path: "src" });
    assert.ok((r.structuredContent?.entries as { name: string }[]).some((e) => e.name === "a.ts"));
    // An outside writer (not the server) swaps the file for a link out of the root.
    Deno.renameSync(`${root}/src/a.ts`, `${root}/src/a.ts.orig`);
    Deno.symlinkSync(`${root}/../outside/secret.txt`, `${root}/src/a.ts`);
    try {
      await refused(c, "read_file", { path: "src/a.ts" }, "PATH_OUTSIDE_PROJECT");
      const g = await call(c, "grep", { pattern: "outside needle" });
      assert.equal((g.structuredContent?.matches as unknown[]).length, 0);
    } finally {
      Deno.removeSync(`${root}/src/a.ts`);
      Deno.renameSync(`${root}/src/a.ts.orig`, `${root}/src/a.ts`);
    }
    assert.equal((await call(c, "read_file", { path: "src/a.ts" })).isError, undefined);
  } finally {
    await c.close();
  }
});
