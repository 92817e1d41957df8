/** Pure path rules: unsafe characters, containment, fnmatch, protected coverage, gate exec. */

import fc from "../_helpers/fc.ts";
import { SandboxError } from "../../lib/errors.ts";
import { fnmatch as fnmatchFold } from "../../lib/pycompat/fnmatch.ts";
import { overlaps, within } from "../../lib/fs/within.ts";
import {
  controlPlaneHit,
  isControlPlaneName,
  staticPlane,
} from "../../lib/policy/control_plane.ts";
import {
  assertSafePath,
  execAllows,
  gateExecPaths,
  literalProtected,
  parseShebang,
  protectedCovers,
  readShebang,
  unsafePathChar,
} from "../../lib/sandbox/mod.ts";
import assert from "node:assert/strict";
import { assertRefusal } from "../_helpers/assert.ts";

Deno.test("safe path: every control character, quotes and backslash are refused", () => {
  for (let c = 0; c < 0x20; c++) {
    assert.deepEqual(unsafePathChar(`/a${String.fromCharCode(c)}b`), String.fromCharCode(c));
  }
  for (const ch of ['"', "'", "\\", "\x7f", "\x80", "\x9f"]) {
    assert.deepEqual(unsafePathChar(`/a${ch}b`), ch);
  }
  for (const ok of ["/usr/bin", "/Users/op/My Project (2)/x", "/srv/ré/ü", "/a;b&c$d`e"]) {
    assert.deepEqual(unsafePathChar(ok), null, ok);
  }
  assertRefusal(() => assertSafePath("", "x"), "CONFINED_PATH_UNSAFE", SandboxError);
  assertRefusal(() => assertSafePath("/a\nb", "x"), "CONFINED_PATH_UNSAFE", SandboxError);
});

Deno.test("within: segment-aware, optionally case-folded", () => {
  assert.ok(within("/a/b", "/a"));
  assert.ok(within("/a", "/a"));
  assert.ok(within("/a", "/"));
  assert.ok(!within("/ab", "/a"));
  assert.ok(!within("/a", "/a/b"));
  assert.ok(within("/A/B", "/a", true));
  assert.ok(!within("/A/B", "/a", false));
  assert.ok(overlaps("/a", "/a/b") && overlaps("/a/b", "/a") && !overlaps("/a/b", "/a/c"));
});

Deno.test("within property: a path is within each of its ancestors and never a sibling prefix", () => {
  const seg = fc.stringMatching(/^[a-z]{1,4}$/);
  fc.assert(
    fc.property(fc.array(seg, { minLength: 1, maxLength: 5 }), seg, (segs, extra) => {
      const path = "/" + segs.join("/");
      for (let i = 1; i <= segs.length; i++) {
        if (!within(path, "/" + segs.slice(0, i).join("/"))) return false;
      }
      return !within(path + extra, path) || extra === "";
    }),
  );
});

Deno.test("fnmatch: Python semantics, case-folded", () => {
  const yes: [string, string][] = [
    ["lean/MathAgents/X/CX.lean", "lean/*.lean"], // * crosses /
    ["a.PEM", "*.pem"],
    ["x/.env", "*.env"],
    ["a1", "a[0-9]"],
    ["ab", "a[!0-9]"],
    ["a]", "a[]]"],
    ["a[", "a["],
    ["a?", "a?"],
  ];
  const no: [string, string][] = [
    ["a1", "a[!0-9]"],
    ["a", "a?"],
    ["ab", "a[z-a]"], // an empty range never matches
    ["a.lean.bak", "*.lean"],
  ];
  for (const [name, pat] of yes) assert.ok(fnmatchFold(name, pat), `${name} ~ ${pat}`);
  for (const [name, pat] of no) assert.ok(!fnmatchFold(name, pat), `${name} !~ ${pat}`);
});

Deno.test("fnmatch property: a literal pattern matches itself in any case, * matches all", () => {
  const name = fc.stringMatching(/^[A-Za-z0-9._/-]{1,20}$/);
  fc.assert(
    fc.property(
      name,
      (n) =>
        fnmatchFold(n.toUpperCase(), n) && fnmatchFold(n, "*") && fnmatchFold(n, n.toLowerCase()),
    ),
  );
});

Deno.test("protected: literal patterns cover what is below them; wildcards match anywhere", () => {
  assert.ok(protectedCovers("secrets", ["secrets/"]));
  assert.ok(protectedCovers("Secrets/a/b", ["./secrets"]));
  assert.ok(!protectedCovers("secretsx", ["secrets"]));
  assert.ok(protectedCovers("build/k/a.pem", ["*.pem"]));
  assert.ok(protectedCovers("reports/p2/fidelity.json", ["reports/*/fidelity.json"]));
  assert.ok(
    !protectedCovers("build/x", ["/abs", "", ".", "../up"]),
    "patterns outside the project",
  );
  assert.deepEqual(literalProtected(["a/", "*.pem", "./b", "/abs", "c[1]"]), ["a", "b"]);
  for (const n of [".git", ".GIT", ".Claude", ".agentteams-status", ".GitHub"]) {
    assert.ok(isControlPlaneName(n), n);
  }
  for (const n of ["sandbox", "git", ".gitignore", ".github2"]) {
    assert.ok(!isControlPlaneName(n), n);
  }
});

Deno.test("gate exec: declared exec, else the program and its shebang interpreter", () => {
  const gate = { name: "g", glob: null, argv: ["/opt/g"], exec: null };
  assert.deepEqual(gateExecPaths(gate, "/opt/g", null), ["/opt/g"]);
  assert.deepEqual(gateExecPaths(gate, "/opt/g", "/usr/bin/python3"), [
    "/opt/g",
    "/usr/bin/python3",
  ]);
  assert.deepEqual(gateExecPaths({ ...gate, exec: [] }, "/opt/g", null), ["/opt/g"]);
  assert.deepEqual(gateExecPaths({ ...gate, exec: ["/opt/tool"] }, "/opt/g", "/bin/sh"), [
    "/opt/tool",
  ]);
  assert.deepEqual(parseShebang("#!/bin/sh -e\necho"), "/bin/sh");
  assert.deepEqual(parseShebang("#! /usr/bin/env python3"), "/usr/bin/env");
  assert.deepEqual(parseShebang("#!python3"), null);
  assert.deepEqual(parseShebang("echo"), null);
  // `/` itself would make the whole file system the gate's interpreter (and its exec path).
  assert.deepEqual(parseShebang("#!/\n"), null);
  assert.deepEqual(parseShebang("#! / sh"), null);
  assert.ok(execAllows("/usr/bin/make", ["/usr/bin"]));
  assert.ok(execAllows("/opt/tool", ["/opt/tool"]));
  assert.ok(!execAllows("/usr/binx/make", ["/usr/bin"]));
  assert.ok(execAllows("/USR/BIN/make", ["/usr/bin"], true));
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${dir}/s`, "#!/bin/sh\necho hi\n");
    assert.deepEqual(readShebang(`${dir}/s`), "/bin/sh");
    assert.deepEqual(readShebang(`${dir}/missing`), null);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("isControlPlaneName answers as the table's fold does, for every first character (its ASCII shortcut included)", () => {
  const plane = staticPlane("/p");
  // Below the root, only an `anywhere` entry is a hit: the table's own reading of a name.
  const byTable = (n: string) => controlPlaneHit(`sub/${n}`, plane) !== null;
  const unit = fc.constantFrom(
    ".",
    "g",
    "G",
    "i",
    "t",
    "c",
    "l",
    "a",
    "u",
    "d",
    "e",
    "s",
    "r",
    "h",
    "b",
    "o",
    "x",
    "-",
    "\u200c",
    "\u200f",
    "\u202a",
    "\u206f",
    "\ufeff",
    "\u212a",
    "\u0130",
    "\u00e9",
    "\u017f",
  );
  fc.assert(
    fc.property(fc.string({ unit, minLength: 1, maxLength: 12 }), (n) => {
      if (n === "." || n === "..") return;
      assert.equal(isControlPlaneName(n), byTable(n), JSON.stringify(n));
    }),
    { numRuns: 5000 },
  );
  for (const n of ["\u200c.git", "\ufeff.Claude", ".G\u200cit", ".GIT", "Sandbox", "git"]) {
    assert.equal(isControlPlaneName(n), byTable(n), JSON.stringify(n));
  }
  assert.ok(isControlPlaneName("\u200c.git"), "an ignorable first code point is folded away");
});
