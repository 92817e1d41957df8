/**
 * The path rules as pure functions (`checkRelativePath`, `checkProposalPath`): a table of
 * accepted and refused paths with their codes, the order of the rules, and fast-check
 * properties checked against an independent oracle: an accepted path has no `..`, no empty or
 * `.` segment, no control character or backslash, is not absolute or `~`, and is never in the
 * control plane or the brief, case-insensitively; `..` inserted anywhere is refused; a
 * control-plane prefix in any letter case is refused as CONTROL_PLANE whoever asks.
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { ProposalError } from "../../lib/errors.ts";
import { parsePolicy } from "../../lib/policy/parse.ts";
import { staticPlane } from "../../lib/policy/control_plane.ts";
import type { Policy } from "../../lib/policy/types.ts";
import {
  checkProposalPath,
  checkRelativePath,
  MAX_NAME_BYTES,
  MAX_PATH_BYTES,
} from "../../lib/proposals/path_rules.ts";

/** The fixed control plane (these projects are not git worktrees). */
const PLANE = staticPlane("/p");

const BRIEF = JSON.stringify({
  agent_policies: {
    worker: { write_scopes: ["src/", "docs/", "a/", "b/", "x.txt", ".hidden/"] },
    reader: { write_scopes: ["docs/"] },
  },
  protected_paths: ["src/secrets", "src/*.key"],
});

function policyAt(briefPath: string, text = BRIEF): Policy {
  return parsePolicy(text, { briefPath, projectRoot: "/proj", briefSha256: "ab".repeat(32) });
}

const POLICY = policyAt("/proj/agentteams.jsonc");

/** The code a check throws, or `null` when it passes. */
function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (e) {
    assert.ok(e instanceof ProposalError, `not a ProposalError: ${String(e)}`);
    return e.code;
  }
}

// An independent statement of the rules, for the properties.
const CP_TOP = [
  ".git",
  ".claude",
  ".goose",
  ".codex",
  "sandbox",
  ".agentteams",
  ".agentteams-queue",
  ".agentteams-status",
];

/** Characters a path may not hold: C0, DEL, C1, bidi and invisible formatting, line separators. */
const REFUSED_CHARS = new Set([
  0x7f,
  0x061c,
  0x200b,
  0x200e,
  0x200f,
  0x2028,
  0x2029,
  0x202a,
  0x202b,
  0x202c,
  0x202d,
  0x202e,
  0x2060,
  0x2061,
  0x2062,
  0x2063,
  0x2064,
  0x2066,
  0x2067,
  0x2068,
  0x2069,
  0xfeff,
]);

function syntaxOk(path: string): boolean {
  for (const ch of path) {
    const c = ch.codePointAt(0) as number;
    if (c < 0x20 || (c >= 0x80 && c < 0xa0) || REFUSED_CHARS.has(c) || ch === "\\") return false;
  }
  if (path.startsWith("/") || path.startsWith("~")) return false;
  return path.split("/").every((s) => s !== "" && s !== "." && s !== "..");
}

function inControlPlane(path: string): boolean {
  const s = path.toLowerCase().split("/");
  return CP_TOP.includes(s[0]) ||
    (s[0] === ".github" && s.length > 1 && (s[1] === "agents" || s[1] === "hooks"));
}

Deno.test("checkRelativePath accepts plain relative paths unchanged", () => {
  for (
    const p of [
      "a",
      "a/b/c.txt",
      "a..b",
      "...",
      "..a",
      "a/..b/c",
      "a/.b",
      ".hidden",
      "a b/c d",
      "\u00fc/\u00f6.txt",
      "a:b",
      "a~", // a tilde after the first character is only a name
      "\u{1F600}/x",
    ]
  ) {
    const r = checkRelativePath(p);
    assert.equal(r.rel, p);
    assert.deepEqual(r.segments, p.split("/"));
  }
});

Deno.test("checkRelativePath refuses every escaping or malformed shape with its code", () => {
  const cases: [string, string][] = [
    ["..", "PATH_OUTSIDE_PROJECT"],
    ["../x", "PATH_OUTSIDE_PROJECT"],
    ["a/../b", "PATH_OUTSIDE_PROJECT"],
    ["a/..", "PATH_OUTSIDE_PROJECT"],
    ["a/b/../../..", "PATH_OUTSIDE_PROJECT"],
    ["/", "PATH_OUTSIDE_PROJECT"],
    ["/etc/passwd", "PATH_OUTSIDE_PROJECT"],
    ["//x", "PATH_OUTSIDE_PROJECT"],
    ["~", "PATH_OUTSIDE_PROJECT"],
    ["~/x", "PATH_OUTSIDE_PROJECT"],
    ["~root/x", "PATH_OUTSIDE_PROJECT"],
    ["a\\b", "PATH_INVALID"],
    ["\\x", "PATH_INVALID"],
    ["..\\x", "PATH_INVALID"],
    ["", "PATH_INVALID"],
    ["a//b", "PATH_INVALID"],
    ["a/", "PATH_INVALID"],
    ["./a", "PATH_INVALID"],
    ["a/./b", "PATH_INVALID"],
    [".", "PATH_INVALID"],
  ];
  for (const [p, code] of cases) assert.equal(codeOf(() => checkRelativePath(p)), code, p);
  for (let c = 0; c < 0x20; c++) {
    const ch = String.fromCharCode(c);
    for (const p of [`a${ch}b`, `${ch}a`, `a/${ch}`]) {
      assert.equal(codeOf(() => checkRelativePath(p)), "PATH_INVALID", JSON.stringify(p));
    }
  }
  assert.equal(codeOf(() => checkRelativePath("a\u007fb")), "PATH_INVALID");
  // C1 controls (U+009B is a terminal's CSI), line separators and bidi formatting (a name that
  // displays as another): refused too; other non-ASCII text is a name like any other.
  for (const ch of ["\u0085", "\u009b", "\u2028", "\u2029", "\u202e", "\u2066", "\u200f"]) {
    assert.equal(codeOf(() => checkRelativePath(`src/a${ch}txt.exe`)), "PATH_INVALID", ch);
  }
  assert.equal(codeOf(() => checkRelativePath("src/ünïcode ✓ שלום.md")), null);
});

Deno.test("checkProposalPath: each rule and the order in which they apply", () => {
  const cases: [string, string, string | null][] = [
    // [path, agent, code]
    ["src/a.txt", "worker", null],
    ["SRC/A.txt", "worker", "OUT_OF_SCOPE"], // scopes match case exactly: SRC/ is not src/
    ["docs/x/y.md", "reader", null],
    [".hidden/x", "worker", null],
    ["x.txt", "worker", null],
    ["x.txt/y", "worker", "OUT_OF_SCOPE"],
    ["lib/a.ts", "worker", "OUT_OF_SCOPE"],
    ["src/a.txt", "reader", "OUT_OF_SCOPE"],
    ["src/a.txt", "ghost", "UNKNOWN_AGENT"],
    ["src/a.txt", "constructor", "UNKNOWN_AGENT"],
    ["src/a.txt", "__proto__", "UNKNOWN_AGENT"],
    ["src/secrets", "worker", "PROTECTED_PATH"],
    ["src/secrets/a/b", "worker", "PROTECTED_PATH"],
    ["Src/SECRETS/x", "worker", "PROTECTED_PATH"],
    ["src/a/b.key", "worker", "PROTECTED_PATH"],
    ["src/secrets/x", "ghost", "PROTECTED_PATH"], // protected before the agent
    ["agentteams.jsonc", "worker", "BRIEF_PATH"],
    ["AgentTeams.Jsonc", "ghost", "BRIEF_PATH"], // the brief before the agent
    ["agentteams.json", "reader", "BRIEF_PATH"],
    [".git/config", "reader", "CONTROL_PLANE"], // control plane before scope
    [".GIT/hooks/x", "ghost", "CONTROL_PLANE"],
    [".github/hooks/x", "worker", "CONTROL_PLANE"],
    [".github/Agents", "worker", "CONTROL_PLANE"],
    [".agentteams-queue", "worker", "CONTROL_PLANE"],
    ["../src/a.txt", "worker", "PATH_OUTSIDE_PROJECT"], // syntax first of all
    ["src//a.txt", "worker", "PATH_INVALID"],
  ];
  for (const [path, agent, code] of cases) {
    assert.equal(
      codeOf(() => checkProposalPath(path, agent, POLICY, PLANE)),
      code,
      `${path} ${agent}`,
    );
  }
  assert.deepEqual(checkProposalPath("src/a/b.txt", "worker", POLICY, PLANE).segments, [
    "src",
    "a",
    "b.txt",
  ]);
});

Deno.test("checkProposalPath: a brief elsewhere, and the default names whatever the brief", () => {
  const nested = policyAt("/proj/conf/team.jsonc");
  assert.equal(nested.briefRel, "conf/team.jsonc");
  for (const p of ["conf/team.jsonc", "CONF/Team.JSONC", "agentteams.jsonc", "agentteams.json"]) {
    assert.equal(codeOf(() => checkProposalPath(p, "worker", nested, PLANE)), "BRIEF_PATH", p);
  }
  const outside = policyAt("/elsewhere/brief.jsonc");
  assert.equal(outside.briefRel, null);
  for (const p of ["agentteams.jsonc", "AGENTTEAMS.JSON"]) {
    assert.equal(codeOf(() => checkProposalPath(p, "worker", outside, PLANE)), "BRIEF_PATH", p);
  }
  // A file that only shares the brief's name, deeper down, is an ordinary file.
  assert.equal(
    codeOf(() => checkProposalPath("src/agentteams.jsonc", "worker", POLICY, PLANE)),
    null,
  );
});

Deno.test("a .git segment at any depth is refused (a nested repository's hooks and config)", () => {
  // `src/vendor/.git/hooks/post-checkout` runs when git is used inside src/vendor, and a planted
  // `src/.git` file (`gitdir: ...`) turns src/ into a repository whose config the agent chose.
  for (const p of ["src/vendor/.git/hooks/post-checkout", "src/.git", "src/x/.GIT/config"]) {
    assert.equal(codeOf(() => checkProposalPath(p, "worker", POLICY, PLANE)), "CONTROL_PLANE", p);
  }
  // Every other control-plane entry counts at depth too; `sandbox` only at the root.
  for (const p of ["src/.claude/settings.json", "docs/x/.AgentTeams/y", "src/.github/hooks/h"]) {
    assert.equal(codeOf(() => checkProposalPath(p, "worker", POLICY, PLANE)), "CONTROL_PLANE", p);
  }
  assert.equal(codeOf(() => checkProposalPath("src/sandbox/x", "worker", POLICY, PLANE)), null);
  assert.equal(
    codeOf(() => checkProposalPath("sandbox/x", "worker", POLICY, PLANE)),
    "CONTROL_PLANE",
  );
});

Deno.test("checkRelativePath: names and paths longer than a file system takes, and lone surrogates", () => {
  // Limits in UTF-8 bytes: a two-byte character counts twice.
  const name = (bytes: number) => "n".repeat(bytes);
  assert.equal(codeOf(() => checkRelativePath(`src/${name(MAX_NAME_BYTES)}`)), null);
  assert.equal(codeOf(() => checkRelativePath(`src/${name(MAX_NAME_BYTES + 1)}`)), "PATH_INVALID");
  assert.equal(
    codeOf(() => checkRelativePath("\u00e9".repeat(MAX_NAME_BYTES / 2 + 1))),
    "PATH_INVALID",
  );
  // Short segments (`d/d/.../x` or `.../xx`), so only the total is over.
  const long = (bytes: number) => {
    const dirs = Math.floor((bytes - 1) / 2);
    return "d/".repeat(dirs) + "x".repeat(bytes - 2 * dirs);
  };
  assert.equal(long(MAX_PATH_BYTES).length, MAX_PATH_BYTES);
  assert.equal(codeOf(() => checkRelativePath(long(MAX_PATH_BYTES))), null);
  assert.equal(codeOf(() => checkRelativePath(long(MAX_PATH_BYTES + 1))), "PATH_INVALID");
  for (const p of ["src/\ud800.txt", "\udc00", "a/b\ud83d"]) {
    assert.equal(codeOf(() => checkRelativePath(p)), "PATH_INVALID", JSON.stringify(p));
  }
  assert.equal(codeOf(() => checkRelativePath("src/\u{1F600}.txt")), null, "a pair is well formed");
});

// ---------------------------------------------------------------------------------------------
// Properties

const randomCase = (s: string) =>
  fc.array(fc.boolean(), { minLength: s.length, maxLength: s.length }).map((flips) =>
    Array.from(s, (c, i) => (flips[i] ? c.toUpperCase() : c)).join("")
  );

const plainSegment = fc.oneof(
  fc.constantFrom("a", "b", "src", "docs", "x.txt", "a..b", "...", "..x", ".hidden", "\u00e9"),
  fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/).filter((s) => s !== "." && s !== ".."),
);

const trickySegment = fc.oneof(
  plainSegment,
  fc.constantFrom("", ".", "..", "~", "~a", "a\\b", "\u0000", "a\nb", "\u007f", "\t"),
  fc.constantFrom(...CP_TOP, ".github", "agents", "hooks", "agentteams.jsonc").chain(randomCase),
  fc.string({ maxLength: 6 }),
);

// Well-formed strings only: lone surrogates are a separate case (apply_target_refusals_test).
const trickyPath = fc.oneof(
  fc.array(trickySegment, { minLength: 1, maxLength: 6 }).map((s) => s.join("/")),
  fc.tuple(fc.constantFrom("/", "~/", "./", "../"), fc.array(trickySegment, { maxLength: 4 }))
    .map(([pre, s]) => pre + s.join("/")),
  fc.string({ maxLength: 24 }),
  fc.string({ unit: "binary", maxLength: 24 }),
).filter((s) => s.isWellFormed());

Deno.test("property: checkRelativePath accepts exactly the plain paths, unchanged", () => {
  fc.assert(
    fc.property(trickyPath, (path) => {
      const code = codeOf(() => checkRelativePath(path));
      assert.equal(code === null, syntaxOk(path), `${JSON.stringify(path)}: ${code}`);
      if (code === null) {
        const r = checkRelativePath(path);
        assert.equal(r.rel, path);
        assert.ok(r.segments.every((s) => s !== "" && s !== "." && s !== ".."));
        assert.ok(!path.startsWith("/") && !path.startsWith("~"));
      } else {
        assert.ok(code === "PATH_INVALID" || code === "PATH_OUTSIDE_PROJECT", code);
      }
    }),
    { numRuns: 3000 },
  );
});

Deno.test("property: an accepted proposal path is never control plane, the brief, or escaping", () => {
  const agents = fc.constantFrom("worker", "reader", "ghost");
  const scoped = fc.tuple(
    fc.constantFrom("src", "docs", "a", "b", ".hidden", "SRC", "Docs"),
    fc.array(trickySegment, { minLength: 1, maxLength: 4 }),
  ).map(([first, rest]) => [first, ...rest].join("/"));
  fc.assert(
    fc.property(fc.oneof(trickyPath, scoped), agents, (path, agent) => {
      const code = codeOf(() => checkProposalPath(path, agent, POLICY, PLANE));
      if (code !== null) return;
      assert.ok(syntaxOk(path), JSON.stringify(path));
      assert.ok(!inControlPlane(path), `accepted a control-plane path ${JSON.stringify(path)}`);
      const lower = path.toLowerCase();
      assert.ok(lower !== "agentteams.jsonc" && lower !== "agentteams.json", path);
      assert.notEqual(agent, "ghost");
    }),
    { numRuns: 3000 },
  );
});

Deno.test("property: a control-plane prefix in any letter case is CONTROL_PLANE, whoever asks", () => {
  const entry = fc.oneof(
    fc.constantFrom(...CP_TOP).map((e) => [e]),
    fc.constantFrom("agents", "hooks").map((e) => [".github", e]),
  ).chain((parts) => fc.tuple(...parts.map(randomCase)));
  fc.assert(
    fc.property(
      entry,
      fc.array(plainSegment, { maxLength: 3 }),
      fc.constantFrom("worker", "reader", "ghost"),
      (parts, rest, agent) => {
        const path = [...parts, ...rest].join("/");
        assert.equal(
          codeOf(() => checkProposalPath(path, agent, POLICY, PLANE)),
          "CONTROL_PLANE",
          path,
        );
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("property: '..' inserted as a segment anywhere is refused as outside the project", () => {
  fc.assert(
    fc.property(
      fc.array(plainSegment, { minLength: 0, maxLength: 5 }),
      fc.nat(),
      fc.integer({ min: 1, max: 3 }),
      (segs, at, times) => {
        const s = [...segs];
        const i = segs.length === 0 ? 0 : at % (segs.length + 1);
        s.splice(i, 0, ...Array(times).fill(".."));
        const path = s.join("/");
        assert.equal(codeOf(() => checkRelativePath(path)), "PATH_OUTSIDE_PROJECT", path);
        assert.equal(
          codeOf(() => checkProposalPath(path, "worker", POLICY, PLANE)),
          "PATH_OUTSIDE_PROJECT",
          path,
        );
      },
    ),
    { numRuns: 2000 },
  );
});
