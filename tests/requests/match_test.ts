/** matchRequest and its parts: prefix, patterns, arity, `..`, NUL, cwd, stdin, expected writes. */

import { compileArgPattern } from "../../lib/pycompat/pyre.ts";
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { RequestError } from "../../lib/errors.ts";
import type { AgentPolicy } from "../../lib/policy/types.ts";
import { fullMatch, matchArgv } from "../../lib/requests/argv.ts";
import { matchRequest, type RequestFields } from "../../lib/requests/match.ts";
import { hasParentSegment, normaliseCwd, normaliseRelative } from "../../lib/requests/arg_paths.ts";
import { checkDeclaration, declaredMatcher, writeAllowed } from "../../lib/requests/writes.ts";
import { entry, refMatchers } from "./_helpers.ts";
import { assertRefusal } from "../_helpers/assert.ts";

const guards = {
  briefRel: "agentteams.jsonc",
  plane: { root: "/p", git: [] },
  matchers: refMatchers(["secrets/", "*.pem"]),
};

const lake = entry({ prefix: ["lake", "build"], args: ["[A-Z][A-Za-z0-9_.]*"] });
const pytest = entry({
  prefix: ["pytest", "-q"],
  args: ["tests", "tests/[a-z_]+\\.py"],
  variadic: true,
  cwd: "py",
});
const fmt = entry({ prefix: ["deno", "fmt"], args: ["src/[a-z_/]+\\.ts"], writes: ["src/*.ts"] });
const check = entry({ prefix: ["deno", "check"], args: ["src/[a-z_/]+\\.ts"] });
const lean = entry({ prefix: ["lean"], args: ["--stdin"], stdinGates: ["lean-lint"] });

const agent: AgentPolicy = {
  writeScopes: ["docs/", "notes.md"],
  commands: [lake, pytest, fmt, check, lean],
};

function req(argv: string[], extra: Partial<RequestFields> = {}): RequestFields {
  return { argv, hasStdin: false, ...extra };
}

Deno.test("an argv matching prefix and patterns returns its entry", () => {
  const m = matchRequest(req(["lake", "build", "Mathlib.Foo"]), agent, guards);
  assert.equal(m.entry, lake);
  assert.equal(m.index, 0);
  assert.equal(m.cwd, ".");
  assert.deepEqual(m.writes, []);
});

Deno.test("prefix elements compare by exact string equality", () => {
  assertRefusal(
    () => matchRequest(req(["Lake", "build", "X"]), agent, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  assertRefusal(
    () => matchRequest(req(["lake", "build "]), agent, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  assertRefusal(
    () => matchRequest(req(["/usr/bin/lake", "build", "X"]), agent, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  assertRefusal(() => matchRequest(req(["lake"]), agent, guards), "ARGV_NOT_ALLOWED", RequestError);
});

Deno.test("each argument must match its pattern in full", () => {
  const e = assertRefusal(
    () => matchRequest(req(["lake", "build", "Mathlib.Foo; rm -rf /"]), agent, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  assert.match(e.message, /does not match/);
  assertRefusal(
    () => matchRequest(req(["lake", "build", "lower"]), agent, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  assert.equal(fullMatch(/a/, "ab"), false, "an unanchored pattern still has to span the argument");
  assert.equal(
    fullMatch(/a|ab/, "ab"),
    false,
    "alternation order is JS's: the leftmost branch wins",
  );
  assert.equal(fullMatch(/^(?:a|ab)$/, "ab"), true);
  const sticky = /^[a-z]+$/gy;
  assert.equal(fullMatch(sticky, "abc"), true);
  assert.equal(fullMatch(sticky, "abc"), true, "g/y flags do not make matching stateful");
});

Deno.test("arity equals the pattern count unless variadic", () => {
  assertRefusal(
    () => matchRequest(req(["lake", "build"]), agent, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  assertRefusal(
    () => matchRequest(req(["lake", "build", "A", "B"]), agent, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  const py = (args: string[]) => req(["pytest", "-q", ...args], { cwd: "py" });
  assert.equal(matchRequest(py(["tests", "tests/a.py"]), agent, guards).entry, pytest);
  assert.equal(
    matchRequest(py(["tests", "tests/a.py", "tests/b_c.py"]), agent, guards).entry,
    pytest,
  );
  assertRefusal(() => matchRequest(py(["tests"]), agent, guards), "ARGV_NOT_ALLOWED", RequestError);
  assertRefusal(
    () => matchRequest(py(["tests", "tests/a.py", "-x"]), agent, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  assertRefusal(
    () => matchRequest(py(["other", "tests/a.py"]), agent, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  const none = entry({ prefix: ["true"], variadic: true });
  assert.equal(matchArgv(["true"], none).ok, true, "variadic without patterns takes no arguments");
  assert.equal(matchArgv(["true", "x"], none).ok, false);
});

Deno.test("a .. segment is refused whatever the pattern admits, on / and on \\", () => {
  const loose = entry({ prefix: ["cat"], args: [".+"] });
  const a: AgentPolicy = { writeScopes: [], commands: [loose] };
  for (const arg of ["..", "../x", "a/../b", "a\\..\\b", "x/..", "..\\x"]) {
    const e = assertRefusal(
      () => matchRequest(req(["cat", arg]), a, guards),
      "PARENT_SEGMENT",
      RequestError,
    );
    assert.match(e.message, /\.\./);
  }
  assert.equal(matchRequest(req(["cat", "a..b"]), a, guards).entry, loose);
  assert.equal(matchRequest(req(["cat", "...x"]), a, guards).entry, loose);
  assertRefusal(
    () => matchRequest(req(["../bin/cat", "x"]), a, guards),
    "PARENT_SEGMENT",
    RequestError,
  );
});

Deno.test("property: any argument with a .. segment is refused as PARENT_SEGMENT", () => {
  const loose = entry({ prefix: ["cat"], args: ["[\\s\\S]*"], variadic: true });
  const a: AgentPolicy = { writeScopes: [], commands: [loose] };
  const seg = fc.stringMatching(/^[a-z.]{0,4}$/);
  fc.assert(
    fc.property(
      fc.array(seg, { maxLength: 3 }),
      fc.array(seg, { maxLength: 3 }),
      fc.constantFrom("/", "\\"),
      (before, after, sep) => {
        const arg = [...before, "..", ...after].join(sep);
        assert.equal(hasParentSegment(arg), true);
        assertRefusal(
          () => matchRequest(req(["cat", arg]), a, guards),
          "PARENT_SEGMENT",
          RequestError,
        );
      },
    ),
  );
});

/** A `..` glued to an option or a separator is a parent segment all the same (issue 13, hole 5). */
const PARENT_REFUSED = [
  "..",
  "../x",
  "x/..",
  "a/../b",
  "a\\..\\b",
  "..\\x",
  "x\\..",
  "--output=../x",
  "-o../x",
  "k:../x",
  "a,../b",
  "--dir=..",
  "-o..",
  "--output=..\\x",
  "@../x",
  "=..",
  // Fail-closed: git's `main..` (HEAD implied) is refused; the operator writes `main..HEAD`.
  "main..",
  "x...",
  "...",
  ".../x",
  // Before a list separator or white space a program may split paths on (probe finding H).
  "src,..,x",
  "--allow-write=..,src",
  "lib:..:x",
  "..;x",
  ".. x",
  "a..\tb",
];

const PARENT_ALLOWED = [
  "a..b",
  "HEAD~1..HEAD",
  "main..HEAD",
  "v1.0...v2.0",
  "..foo",
  "...x",
  "..foo/bar",
  "--output=..x",
  ".",
  "./x",
  ".hidden",
  "a.b",
  "",
  "-o.",
  "x/./y",
];

/** The rule, spelled out character by character (a second implementation to test against). */
function parentByHand(s: string): boolean {
  for (let i = 0; i + 1 < s.length; i++) {
    if (s[i] !== "." || s[i + 1] !== ".") continue;
    if (i + 2 === s.length || "/\\,:;".includes(s[i + 2]) || /\s/.test(s[i + 2])) return true;
  }
  return false;
}

Deno.test("hasParentSegment: a .. followed by /, \\, a list separator, white space or the end is refused whatever precedes it", () => {
  for (const arg of PARENT_REFUSED) {
    assert.equal(hasParentSegment(arg), true, JSON.stringify(arg));
    assert.equal(parentByHand(arg), true, JSON.stringify(arg));
  }
  for (const arg of PARENT_ALLOWED) {
    assert.equal(hasParentSegment(arg), false, JSON.stringify(arg));
    assert.equal(parentByHand(arg), false, JSON.stringify(arg));
  }
});

Deno.test("matchRequest: a .. glued to an option is PARENT_SEGMENT even when the pattern admits it", () => {
  const loose = entry({ prefix: ["sort"], args: ["[\\s\\S]*"], variadic: true });
  const a: AgentPolicy = { writeScopes: [], commands: [loose] };
  for (const arg of PARENT_REFUSED) {
    const e = assertRefusal(
      () => matchRequest(req(["sort", arg]), a, guards),
      "PARENT_SEGMENT",
      RequestError,
    );
    assert.equal(e.message, `argument 1 ${JSON.stringify(arg)} has a .. path segment`);
  }
  for (const arg of PARENT_ALLOWED.filter((x) => x !== "")) {
    assert.equal(matchRequest(req(["sort", arg]), a, guards).entry, loose, JSON.stringify(arg));
  }
});

Deno.test("property: any argument holding ../ or ..\\ or ending in .. is refused, whatever surrounds it", () => {
  const loose = entry({ prefix: ["cat"], args: ["[\\s\\S]*"], variadic: true });
  const a: AgentPolicy = { writeScopes: [], commands: [loose] };
  // Prefixes and suffixes from an alphabet rich in the characters that glue: `.`, `=`, `-`, `:`,
  // `,`, `@`, `~`, separators, letters; and arbitrary strings.
  const glue = fc.oneof(
    fc.stringMatching(/^[a-z.=:,@~\/\\-]{0,8}$/),
    fc.string({ maxLength: 8 }),
  );
  fc.assert(
    fc.property(glue, glue, fc.constantFrom("../", "..\\", ".."), (before, after, dots) => {
      const arg = dots === ".." ? `${before}..` : `${before}${dots}${after}`;
      assert.equal(hasParentSegment(arg), true, JSON.stringify(arg));
      if (!arg.includes("\0")) {
        assertRefusal(
          () => matchRequest(req(["cat", arg]), a, guards),
          "PARENT_SEGMENT",
          RequestError,
        );
      }
    }),
  );
  // And the rule is exactly that: it agrees with the character-by-character reading everywhere.
  fc.assert(
    fc.property(fc.oneof(glue, fc.stringMatching(/^[a.\/\\]{0,12}$/)), (arg) => {
      assert.equal(hasParentSegment(arg), parentByHand(arg), JSON.stringify(arg));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("NUL in an argument and malformed argv are refused", () => {
  assertRefusal(
    () => matchRequest(req(["lake", "build", "A\0B"]), agent, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  assertRefusal(() => matchRequest(req([]), agent, guards), "ARTIFACT_INVALID", RequestError);
  assertRefusal(
    () => matchRequest({ argv: [1 as unknown as string], hasStdin: false }, agent, guards),
    "ARTIFACT_INVALID",
    RequestError,
  );
  assertRefusal(
    () => matchRequest(req(["lake"]), undefined, guards),
    "UNKNOWN_AGENT",
    RequestError,
  );
  assertRefusal(
    () => matchRequest(req(["lake"]), { writeScopes: [], commands: [] }, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
});

Deno.test("cwd must equal the pinned cwd after normalising ./", () => {
  const py = ["pytest", "-q", "tests", "tests/a.py"];
  for (const cwd of ["py", "./py", "py/", "./py/", ".//py"]) {
    assert.equal(matchRequest(req(py, { cwd }), agent, guards).cwd, "py", cwd);
  }
  assertRefusal(() => matchRequest(req(py), agent, guards), "CWD_NOT_ALLOWED", RequestError);
  assertRefusal(
    () => matchRequest(req(py, { cwd: "." }), agent, guards),
    "CWD_NOT_ALLOWED",
    RequestError,
  );
  assertRefusal(
    () => matchRequest(req(py, { cwd: "Py" }), agent, guards),
    "CWD_NOT_ALLOWED",
    RequestError,
  );
  for (const cwd of ["/abs/py", "~/py", "py/../py", "../x", "py\\x", "p\0y"]) {
    assertRefusal(
      () => matchRequest(req(py, { cwd }), agent, guards),
      "CWD_NOT_ALLOWED",
      RequestError,
    );
  }
  const lakeArgv = ["lake", "build", "A"];
  for (const cwd of [undefined, "", ".", "./", "./."]) {
    assert.equal(matchRequest(req(lakeArgv, { cwd }), agent, guards).cwd, ".");
  }
  assert.deepEqual(normaliseCwd("./a/./b/"), { ok: true, rel: "a/b", dir: true });
});

Deno.test("stdin_from_content only for entries that register stdin gates", () => {
  assert.equal(
    matchRequest(req(["lean", "--stdin"], { hasStdin: true }), agent, guards).entry,
    lean,
  );
  assertRefusal(
    () => matchRequest(req(["lake", "build", "A"], { hasStdin: true }), agent, guards),
    "STDIN_NOT_ALLOWED",
    RequestError,
  );
});

Deno.test("expected writes must lie in the entry's globs or the agent's scopes", () => {
  const argv = ["deno", "fmt", "src/a.ts"];
  const ok = matchRequest(
    req(argv, { expectedWrites: ["src/a.ts", "./src/deep/b.ts", "docs/x.md", "notes.md"] }),
    agent,
    guards,
  );
  assert.equal(ok.entry, fmt);
  assert.deepEqual(ok.writes.map((w) => w.rel), [
    "src/a.ts",
    "src/deep/b.ts",
    "docs/x.md",
    "notes.md",
  ]);
  assert.equal(
    matchRequest(req(argv, { expectedWrites: ["SRC/A.TS"] }), agent, guards).entry,
    fmt,
    "entry write globs match case-insensitively",
  );
  assert.equal(
    matchRequest(req(argv, { expectedWrites: ["docs/"] }), agent, guards).writes[0].dir,
    true,
  );
  assertRefusal(
    () => matchRequest(req(argv, { expectedWrites: ["lib/x.ts"] }), agent, guards),
    "WRITES_NOT_ALLOWED",
    RequestError,
  );
  const e = assertRefusal(
    () =>
      matchRequest(
        req(["deno", "check", "src/a.ts"], { expectedWrites: ["src/a.ts"] }),
        agent,
        guards,
      ),
    "WRITES_NOT_ALLOWED",
    RequestError,
  );
  assert.match(e.message, /src\/a\.ts/);
});

Deno.test("expected writes are never control plane, protected, the brief, absolute, ~ or ..", () => {
  const argv = ["deno", "fmt", "src/a.ts"];
  const wide = entry({ prefix: ["deno", "fmt"], args: ["src/[a-z_/]+\\.ts"], writes: ["*"] });
  const a: AgentPolicy = { writeScopes: ["./"], commands: [wide] };
  for (
    const bad of [
      ".git/hooks/pre-commit",
      ".GIT/config",
      ".claude/settings.json",
      ".github/agents/x.md",
      ".github/",
      ".agentteams/proposal-ledger.jsonl",
      "sandbox/x",
      "vendor/.git/hooks/x",
      "agentteams.jsonc",
      "AgentTeams.JSONC",
      "/etc/passwd",
      "~/.bashrc",
      "../outside",
      "src/../../x",
      "a\\b",
      "a\0b",
      ".",
      "./",
    ]
  ) {
    assertRefusal(
      () => matchRequest(req(argv, { expectedWrites: [bad] }), a, guards),
      "WRITES_NOT_ALLOWED",
      RequestError,
    );
  }
  assertRefusal(
    () => matchRequest(req(argv, { expectedWrites: [3 as unknown as string] }), a, guards),
    "ARTIFACT_INVALID",
    RequestError,
  );
  // A protected path the entry's own writes do not cover: the agent's scope `./` does not help.
  const narrow = entry({ prefix: ["deno", "fmt"], args: ["src/[a-z_/]+\\.ts"], writes: ["src/*"] });
  const scoped: AgentPolicy = { writeScopes: ["./"], commands: [narrow] };
  for (const bad of ["secrets/key.txt", "server.pem", "docs/server.pem"]) {
    const e = assertRefusal(
      () => matchRequest(req(argv, { expectedWrites: [bad] }), scoped, guards),
      "WRITES_NOT_ALLOWED",
      RequestError,
    );
    assert.match(e.message, /is a protected path/, bad);
    assert.ok(e.message.includes(JSON.stringify(bad)), e.message);
  }
});

Deno.test("owned protected writes: an entry whose own writes glob covers a protected path may declare it", () => {
  const record = "reports/*/counterexamples.json";
  const g = { ...guards, matchers: refMatchers([record, "secrets/"]) };
  const owner = entry({ prefix: ["tools/record.py"], writes: [record] });
  const argv = ["tools/record.py"];
  const a: AgentPolicy = { writeScopes: [], commands: [owner] };
  const m = matchRequest(
    req(argv, { expectedWrites: ["reports/p1/counterexamples.json"] }),
    a,
    g,
  );
  assert.equal(m.entry, owner);
  assert.equal(
    matchRequest(req(argv, { expectedWrites: ["Reports/P2/CounterExamples.JSON"] }), a, g).entry,
    owner,
    "ownership matches case-insensitively, like the protected match",
  );
  // Only through write scopes (the entry's writes do not cover it): refused.
  const other = entry({ prefix: ["tools/other.py"], writes: ["reports/*/notes.md"] });
  const viaScopes: AgentPolicy = { writeScopes: ["reports/"], commands: [other] };
  const e = assertRefusal(
    () =>
      matchRequest(
        req(["tools/other.py"], { expectedWrites: ["reports/p1/counterexamples.json"] }),
        viaScopes,
        g,
      ),
    "WRITES_NOT_ALLOWED",
    RequestError,
  );
  assert.match(e.message, /"reports\/p1\/counterexamples\.json" is a protected path/);
  assert.match(e.message, /write scopes and expected_writes never do/);
  // A directory declaration over the protected record is not owned by the file glob.
  assertRefusal(
    () => matchRequest(req(argv, { expectedWrites: ["secrets/"] }), a, g),
    "WRITES_NOT_ALLOWED",
    RequestError,
  );
  // Another protected path the same entry does not own stays refused.
  assertRefusal(
    () =>
      matchRequest(
        req(argv, { expectedWrites: ["reports/p1/counterexamples.json", "secrets/k"] }),
        a,
        g,
      ),
    "WRITES_NOT_ALLOWED",
    RequestError,
  );
});

Deno.test("owned protected writes never reach the control plane or the brief", () => {
  const g = { ...guards, matchers: refMatchers([".git/", ".agentteams/", "agentteams.jsonc"]) };
  const greedy = entry({
    prefix: ["tool"],
    writes: [".git/*", ".agentteams/*", "agentteams.jsonc", ".claude/*", "vendor/.git/*"],
  });
  const a: AgentPolicy = { writeScopes: [], commands: [greedy] };
  for (
    const bad of [
      ".git/hooks/pre-commit",
      ".agentteams/proposal-ledger.jsonl",
      "agentteams.jsonc",
      ".claude/settings.json",
      "vendor/.git/config",
    ]
  ) {
    const e = assertRefusal(
      () => matchRequest(req(["tool"], { expectedWrites: [bad] }), a, g),
      "WRITES_NOT_ALLOWED",
      RequestError,
    );
    assert.match(e.message, /control plane|the brief/, bad);
  }
});

Deno.test("declaredMatcher: a protected changed path is declared only when the entry owns it", () => {
  const g = { ...guards, matchers: refMatchers(["reports/*/counterexamples.json"]) };
  const rel = "reports/p1/counterexamples.json";
  const owned = declaredMatcher([rel], {
    guards: g,
    entryWrites: ["reports/*/counterexamples.json"],
  });
  assert.equal(owned(rel), true);
  const viaScope = declaredMatcher(["reports/"], {
    guards: g,
    entryWrites: ["reports/*/notes.md"],
  });
  assert.equal(viaScope(rel), false, "a directory declaration over a protected path");
  assert.equal(viaScope("reports/p1/notes.md"), true);
  assert.equal(declaredMatcher([rel], { guards: g })(rel), false, "no entry, no ownership");
  const plane = declaredMatcher([".git/config"], { guards: g, entryWrites: ["*"] });
  assert.equal(plane(".git/config"), false, "the control plane is never owned");
});

Deno.test("several entries sharing a prefix: any full match wins, else the closest refusal", () => {
  const narrow = entry({ prefix: ["make"], args: ["test"] });
  const withCwd = entry({ prefix: ["make"], args: ["docs"], cwd: "site" });
  const withWrites = entry({ prefix: ["make"], args: ["build"], writes: ["out/*"] });
  const a: AgentPolicy = { writeScopes: [], commands: [narrow, withCwd, withWrites] };
  assert.equal(matchRequest(req(["make", "docs"], { cwd: "site" }), a, guards).entry, withCwd);
  assert.equal(
    matchRequest(req(["make", "build"], { expectedWrites: ["out/x"] }), a, guards).entry,
    withWrites,
  );
  assertRefusal(
    () => matchRequest(req(["make", "docs"]), a, guards),
    "CWD_NOT_ALLOWED",
    RequestError,
  );
  assertRefusal(
    () => matchRequest(req(["make", "build"], { expectedWrites: ["elsewhere.txt"] }), a, guards),
    "WRITES_NOT_ALLOWED",
    RequestError,
  );
  assertRefusal(
    () => matchRequest(req(["make", "clean"]), a, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  const e = assertRefusal(
    () => matchRequest(req(["make", "test", "extra"]), a, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  assert.match(e.message, /argument/);
  const two = entry({ prefix: ["tool"], args: ["a", "b"] });
  const one = entry({ prefix: ["tool"], args: ["a"] });
  const e2 = assertRefusal(
    () => matchRequest(req(["tool", "a", "x"]), { writeScopes: [], commands: [one, two] }, guards),
    "ARGV_NOT_ALLOWED",
    RequestError,
  );
  assert.match(e2.message, /argument 2 "x" does not match/, "the entry that got further is named");
});

Deno.test("normaliseRelative refuses escapes and keeps directories", () => {
  assert.deepEqual(normaliseRelative("./a//b/"), { ok: true, rel: "a/b", dir: true });
  assert.deepEqual(normaliseRelative("a"), { ok: true, rel: "a", dir: false });
  for (const bad of ["/a", "~", "~x/y", "a/../b", "a\\b", "a\0"]) {
    assert.equal(normaliseRelative(bad).ok, false, bad);
  }
});

Deno.test("declaredMatcher: exact files, and anything below a declared directory", () => {
  const declared = declaredMatcher(["out/", "./report.md", "/abs", "../x", "."]);
  assert.equal(declared("report.md"), true);
  assert.equal(declared("out/a"), true);
  assert.equal(declared("out/deep/a.o"), true);
  assert.equal(declared("out"), false);
  assert.equal(declared("outside"), false);
  assert.equal(declared("report.md.bak"), false);
  assert.equal(declared("abs"), false);
  assert.equal(declared("x"), false);
  const guarded = declaredMatcher(["out/"], {
    guards,
    allowed: (rel) => rel.startsWith("out/") && !rel.endsWith(".exe"),
  });
  assert.equal(guarded("out/a.o"), true);
  assert.equal(guarded("out/.git/hooks/x"), false, "a nested .git is never declared");
  assert.equal(guarded("out/secrets/k"), true, "protected patterns are project-relative");
  assert.equal(guarded("out/k.pem"), false, "a protected path is never declared");
  assert.equal(guarded("out/a.exe"), false, "each path must be allowed on its own");
});

Deno.test("property: no declaration ever covers the control plane", () => {
  const segment = fc.constantFrom(
    ".git",
    ".claude",
    ".GitHub",
    "agents",
    "hooks",
    "sandbox",
    "src",
    ".agentteams",
    "x",
  );
  fc.assert(
    fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.boolean(), (segs, dir) => {
      const value = segs.join("/") + (dir ? "/" : "");
      const decl = checkDeclaration(value, guards);
      const folded = segs.map((s) => s.toLowerCase());
      // The table's names at any depth; `sandbox` at the root only.
      const plane = folded.some((s) => [".git", ".claude", ".github", ".agentteams"].includes(s)) ||
        folded[0] === "sandbox";
      assert.equal(typeof decl === "string", plane, value);
    }),
  );
});

Deno.test("writeAllowed asks a directory declaration about a child", () => {
  const m = refMatchers();
  const e = entry({ prefix: ["x"], writes: ["build/*"] });
  assert.equal(writeAllowed({ rel: "build", dir: true }, e, { writeScopes: [] }, m), true);
  assert.equal(writeAllowed({ rel: "build", dir: false }, e, { writeScopes: [] }, m), false);
  assert.equal(writeAllowed({ rel: "docs", dir: true }, e, { writeScopes: ["docs/"] }, m), true);
});

Deno.test("an argument mismatch names the brief's own pattern, never its compiled form", () => {
  const compiled = compileArgPattern("src/[a-z_/]+\\.ts");
  const e = entry({
    prefix: ["deno", "check"],
    args: ["src/[a-z_/]+\\.ts"],
    argPatterns: [compiled],
  });
  const v = matchArgv(["deno", "check", "lib/x.ts"], e);
  assert.equal(v.ok, false);
  assert.ok(!v.ok && v.reason.includes(JSON.stringify("src/[a-z_/]+\\.ts")), JSON.stringify(v));
  assert.ok(!v.ok && !v.reason.includes(String(compiled)), JSON.stringify(v));
});
