/** Pure readers of git's output and files: version, status -z, index (v2/v3/v4), ls-files, rev-parse, path bytes. */

import { RequestError } from "../../lib/errors.ts";
import { assertRefusal } from "../_helpers/assert.ts";
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import {
  gitControlPaths,
  gitEnv,
  openGitContext,
  parseConfigOrigins,
  parseLsFiles,
  parseRevParse,
} from "../../lib/git/context.ts";
import { parseIndex } from "../../lib/git/index_file.ts";
import { parseStatusZ } from "../../lib/git/status_z.ts";
import {
  gitVersionProblem,
  isGitVersionSupported,
  parseGitVersion,
} from "../../lib/git/git_version.ts";
import { compareCodePoints, renderPathBytes } from "../../lib/git/path_bytes.ts";
import { cleanup, tempRepo } from "../requests/_helpers.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("git version lines are parsed and gated at 2.31", () => {
  assert.deepEqual(parseGitVersion("git version 2.43.0\n"), { major: 2, minor: 43, patch: 0 });
  assert.deepEqual(parseGitVersion("git version 2.39.3 (Apple Git-146)"), {
    major: 2,
    minor: 39,
    patch: 3,
  });
  assert.deepEqual(parseGitVersion("git version 2.45.1.windows.1"), {
    major: 2,
    minor: 45,
    patch: 1,
  });
  assert.deepEqual(parseGitVersion("git version 2.44.0-rc1"), { major: 2, minor: 44, patch: 0 });
  assert.deepEqual(parseGitVersion("git version 3.0"), { major: 3, minor: 0, patch: 0 });
  for (
    const bad of ["", "git version", "hub version 2.14.2", "git version two", "version 2.40.0"]
  ) {
    assert.equal(parseGitVersion(bad), null, bad);
  }
  assert.equal(isGitVersionSupported({ major: 2, minor: 31, patch: 0 }), true);
  assert.equal(isGitVersionSupported({ major: 2, minor: 30, patch: 9 }), false);
  assert.equal(isGitVersionSupported({ major: 1, minor: 99, patch: 0 }), false);
  assert.equal(isGitVersionSupported({ major: 3, minor: 0, patch: 0 }), true);
  assert.equal(gitVersionProblem("git version 2.31.0"), null);
  assert.match(gitVersionProblem("git version 2.30.2") ?? "", /older than 2\.31/);
  assert.match(gitVersionProblem("nonsense") ?? "", /cannot read/);
});

Deno.test("status -z records, including rename sources and odd bytes", () => {
  const out = new Uint8Array([
    ...enc(" M a.ts\0?? new dir/x y.txt\0R  to.ts\0from.ts\0D  gone\0?? "),
    0x61,
    0xff,
    0x0a,
    0,
  ]);
  const entries = parseStatusZ(out);
  assert.deepEqual(entries.map((e) => e.xy), [" M", "??", "R ", "R ", "D ", "??"]);
  assert.deepEqual(entries.slice(0, 5).map((e) => dec(e.path)), [
    "a.ts",
    "new dir/x y.txt",
    "to.ts",
    "from.ts",
    "gone",
  ]);
  assert.deepEqual([...entries[5].path], [0x61, 0xff, 0x0a]);
  assert.deepEqual(parseStatusZ(new Uint8Array(0)), []);
  assert.throws(() => parseStatusZ(enc("??x\0")));
  assert.throws(() => parseStatusZ(enc(" M a.ts")), /mid-record/);
  assert.throws(() => parseStatusZ(enc("R  a\0")), /mid-record/);
});

Deno.test("rev-parse output: eleven lines, absolute paths, known object format", () => {
  const good =
    "/p\n/p/.git\n/main/.git\n/p/.git/index\n/p/.git/hooks\n/p/.git/config\n/p/.git/config.worktree\n/p/.git/info\nsha1\nsub/\n";
  const r = parseRevParse(good);
  assert.ok(r !== null);
  assert.equal(r.prefix, "sub/");
  assert.equal(r.commonDir, "/main/.git");
  assert.equal(r.watched.hooks, "/p/.git/hooks");
  assert.equal(parseRevParse(good.replace("/main/.git", "main/.git")), null);
  assert.equal(parseRevParse(good.replace("sha1", "md5")), null);
  assert.equal(parseRevParse(good.replace("/p/.git/hooks", "--path-format=absolute")), null);
  assert.equal(parseRevParse(good.replace("sub/\n", "")), null);
  assert.equal(parseRevParse(good + "extra\n"), null);
});

Deno.test("ls-files -s -t -v records", () => {
  const oid = "ab".repeat(20);
  const out = enc(
    `H 100644 ${oid} 0\ta.txt\0h 100755 ${oid} 0\tb\0S 120000 ${oid} 0\tc\0M 100644 ${oid} 2\td\0`,
  );
  const e = parseLsFiles(out);
  assert.ok(e !== null);
  assert.deepEqual(e.map((x) => [dec(x.path), x.mode, x.stage, x.assumeValid, x.skipWorktree]), [
    ["a.txt", 0o100644, 0, false, false],
    ["b", 0o100755, 0, true, false],
    ["c", 0o120000, 0, false, true],
    ["d", 0o100644, 2, false, false],
  ]);
  assert.equal(e[0].oid.toHex(), oid);
  assert.equal(parseLsFiles(enc("garbage\0")), null);
  assert.equal(parseLsFiles(enc(`H 100644 ${oid} 0\tunterminated`)), null);
});

async function lsFiles(git: (...a: string[]) => Promise<string>): Promise<string[]> {
  const out = await git("ls-files", "-z", "-s", "-t", "-v");
  return out.split("\0").filter((l) => l !== "");
}

function render(entries: ReturnType<typeof parseIndex>): string[] {
  assert.ok(entries.ok, entries.ok ? "" : entries.reason);
  return entries.entries.map((e) => {
    const tag = e.skipWorktree ? "S" : "H";
    return `${e.assumeValid ? tag.toLowerCase() : tag} ${
      e.mode.toString(8)
    } ${e.oid.toHex()} ${e.stage}\t${dec(e.path)}`;
  });
}

Deno.test("the index file is read like git reads it: versions 2, 3 and 4", async () => {
  const files: Record<string, string> = {
    "README.md": "r\n",
    "a/b/c.txt": "c\n",
    "a/b/d.txt": "d\n",
    "a/bb.txt": "bb\n",
    "z": "z\n",
  };
  for (let i = 0; i < 40; i++) files[`many/dir${i % 3}/file-${i}.txt`] = `${i}\n`;
  const { root, git } = await tempRepo(files);
  try {
    Deno.chmodSync(`${root}/z`, 0o755);
    Deno.symlinkSync("README.md", `${root}/link`);
    await git("add", "-A");
    // A path longer than the 12-bit name-length field: index-only (no file could hold it).
    const oid = (await git("rev-parse", "HEAD:README.md")).trim();
    const long = `${`${"d".repeat(200)}/`.repeat(22)}end.txt`;
    await git("update-index", "--add", "--cacheinfo", `100644,${oid},${long}`);
    await git("update-index", "--assume-unchanged", "a/bb.txt");
    for (const version of ["2", "3", "4"]) {
      await git("update-index", "--index-version", version);
      if (version === "3") await git("update-index", "--skip-worktree", "a/b/d.txt");
      const parsed = parseIndex(Deno.readFileSync(`${root}/.git/index`), 20);
      assert.ok(parsed.ok);
      assert.equal(parsed.version, Number(version));
      assert.deepEqual(render(parsed), await lsFiles(git), `index v${version}`);
      assert.ok(parsed.entries.some((e) => e.path.length > 0xfff), "long path read");
    }
  } finally {
    cleanup(root);
  }
});

Deno.test("a split index and malformed bytes are reported unsupported, never misread", async () => {
  const { root, git } = await tempRepo();
  try {
    await git("update-index", "--split-index");
    const parsed = parseIndex(Deno.readFileSync(`${root}/.git/index`), 20);
    assert.equal(parsed.ok, false);
    assert.match(parsed.ok ? "" : parsed.reason, /required extension "link"/);
  } finally {
    cleanup(root);
  }
  assert.equal(parseIndex(enc("DIRX\0\0\0\x02\0\0\0\0" + "x".repeat(20)), 20).ok, false);
  assert.equal(parseIndex(enc("DIRC\0\0\0\x05\0\0\0\0" + "x".repeat(20)), 20).ok, false);
  const empty = parseIndex(enc("DIRC\0\0\0\x02\0\0\0\0" + "x".repeat(20)), 20);
  assert.ok(empty.ok && empty.entries.length === 0);
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (tail) => {
      const bytes = new Uint8Array([...enc("DIRC\0\0\0\x02\0\0\0\x03"), ...tail]);
      const r = parseIndex(bytes, 20);
      assert.ok(typeof r.ok === "boolean", "never throws on garbage");
    }),
  );
});

Deno.test("path bytes render losslessly and unambiguously", () => {
  assert.deepEqual(renderPathBytes(enc("src/é.ts")), { text: "src/é.ts", utf8: true });
  assert.deepEqual(renderPathBytes(new Uint8Array([0x61, 0xff, 0x62])), {
    text: "a\\xffb",
    utf8: false,
  });
  assert.equal(renderPathBytes(enc("a\\xffb")).text, "a\\\\xffb", "a literal backslash is escaped");
  assert.equal(renderPathBytes(new Uint8Array([0xed, 0xa0, 0x80])).text, "\\xed\\xa0\\x80");
  assert.equal(renderPathBytes(new Uint8Array([0xc0, 0xaf])).text, "\\xc0\\xaf", "overlong");
  assert.equal(renderPathBytes(new Uint8Array([0xff, ...enc("é")])).text, "\\xffé");
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 12 }), fc.uint8Array({ maxLength: 12 }), (a, b) => {
      const same = a.length === b.length && a.every((x, i) => x === b[i]);
      assert.equal(renderPathBytes(a).text === renderPathBytes(b).text, same);
    }),
  );
});

Deno.test("code point order, as Python sorts", () => {
  assert.deepEqual(["\u{1F600}", "\uFFFD", "a", "B"].sort(compareCodePoints), [
    "B",
    "a",
    "\uFFFD",
    "\u{1F600}",
  ]);
  assert.deepEqual(["ab", "a", "abc"].sort(compareCodePoints), ["a", "ab", "abc"]);
});

Deno.test("config origins: the files git read and every include, resolved as git resolves them", () => {
  const out = enc(
    [
      "file:/etc/gitconfig\0core.pager\nless",
      "file:.git/config\0include.path\n../conf/extra.cfg",
      "file:.git/config\0includeif.onbranch:x.path\n/abs/only-if.cfg",
      "file:.git/config\0include.path\n~/team.cfg",
      "file:.git/config\0core.excludesfile\nconf/ignore",
      "file:.git/config\0core.attributesfile\n~/attrs",
      "file:.git/config\0core.bare",
      "command line:\0include.path\nrelative-from-cmdline.cfg",
      "",
    ].join("\0"),
  );
  const o = parseConfigOrigins(out, { cwd: "/p", top: "/p", home: "/h" });
  assert.ok(o !== null);
  assert.deepEqual(o.files, ["/etc/gitconfig", "/p/.git/config"]);
  assert.deepEqual(o.includes, ["/p/conf/extra.cfg", "/abs/only-if.cfg", "/h/team.cfg"]);
  assert.deepEqual(o.others.map((x) => x.abs), ["/p/conf/ignore", "/h/attrs"]);
  // No HOME: a `~/` include cannot be resolved, and git would not read it either.
  assert.deepEqual(
    parseConfigOrigins(enc("file:.git/config\0include.path\n~/x\0"), {
      cwd: "/p",
      top: "/p",
      home: undefined,
    })?.includes,
    [],
  );
  assert.equal(
    parseConfigOrigins(enc("file:.git/config\0x\ny"), { cwd: "/", top: "/", home: "/h" }),
    null,
  );
  assert.equal(parseConfigOrigins(enc("file:x\0"), { cwd: "/", top: "/", home: "/h" }), null);
  assert.equal(
    parseConfigOrigins(new Uint8Array([0xff, 0]), { cwd: "/", top: "/", home: "/h" }),
    null,
  );
});

Deno.test("git control paths: hooks, config, includes and git dirs, the stronger watch winning", () => {
  const paths = gitControlPaths(
    {
      top: "/p",
      gitDir: "/p/.git",
      commonDir: "/p/.git",
      watched: {
        hooks: "/p/tools/hooks",
        config: "/p/.git/config",
        configWorktree: "/p/.git/config.worktree",
        info: "/p/.git/info",
      },
    },
    { files: ["/p/.git/config", "/etc/gitconfig"], includes: ["/p/conf/x.cfg"], others: [] },
    (abs) => abs,
  );
  const by = new Map(paths.map((p) => [p.abs, p]));
  assert.equal(by.get("/p/tools/hooks")?.watch, "tree");
  assert.equal(by.get("/p/.git/config")?.watch, "entry");
  assert.equal(by.get("/p/conf/x.cfg")?.what, "included config file");
  assert.deepEqual(by.get("/p/.git/info")?.skipTop, ["refs"]);
  assert.equal(by.get("/p/.git")?.watch, "entry", "the worktree's .git entry itself is watched");
  assert.equal(paths.length, new Set(paths.map((p) => p.abs)).size, "one entry per path");
});

Deno.test("config origins: a program a command-valued key names by a path is listed, resolved at the top", () => {
  const out = enc(
    [
      "file:.git/config\0filter.fmt.clean\n./tools/clean.sh %f",
      'file:.git/config\0diff.img.textconv\n"tools/my conv" --x',
      "file:.git/config\0core.pager\nless -R", // a bare name: looked up on PATH
      "file:.git/config\0alias.st\nstatus", // no `!`: a git command
      "file:.git/config\0alias.x\n!bin/x.sh",
      "file:.git/config\0core.fsmonitor\nfalse",
      "",
    ].join("\0"),
  );
  const o = parseConfigOrigins(out, { cwd: "/p", top: "/p", home: "/h" });
  assert.deepEqual(o?.others.map((x) => x.abs), [
    "/p/tools/clean.sh",
    "/p/tools/my conv",
    "/p/bin/x.sh",
  ]);
});

Deno.test("git context: config given in the environment (GIT_CONFIG_COUNT) refuses; the operator's config-file choice is passed on", async () => {
  const { root, env } = await tempRepo();
  try {
    await assertRefusal(
      () => openGitContext(root, { parentEnv: { ...env, GIT_CONFIG_COUNT: "1" } }),
      "GIT_UNAVAILABLE",
      RequestError,
    );
    const cfg = `${root}/../global.cfg`;
    Deno.writeTextFileSync(cfg, `[include]\n\tpath = ${root}/conf/x.cfg\n`);
    const ctx = await openGitContext(root, { parentEnv: { ...env, GIT_CONFIG_GLOBAL: cfg } });
    assert.ok(ctx.controlPaths.some((p) => p.abs === `${root}/conf/x.cfg`), "the include");
    assert.equal(gitEnv({ GIT_CONFIG_GLOBAL: cfg, GIT_DIR: "/x" }).GIT_CONFIG_GLOBAL, cfg);
    assert.equal(gitEnv({ GIT_CONFIG_GLOBAL: cfg, GIT_DIR: "/x" }).GIT_DIR, undefined);
  } finally {
    cleanup(root);
  }
});
