/** Pure path rules: unsafe characters, containment, fnmatch, protected coverage, gate exec. */

import fc from "fast-check";
import { SandboxError } from "../../lib/errors.ts";
import { fnmatch as fnmatchFold } from "../../lib/policy/fnmatch.ts";
import { overlaps, within } from "../../lib/fs/within.ts";
import { isControlPlaneName } from "../../lib/policy/control_plane.ts";
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
import { assert, assertEquals, assertRefused } from "./_assert.ts";

Deno.test("safe path: every control character, quotes and backslash are refused", () => {
  for (let c = 0; c < 0x20; c++) {
    assertEquals(unsafePathChar(`/a${String.fromCharCode(c)}b`), String.fromCharCode(c));
  }
  for (const ch of ['"', "'", "\\", "\x7f", "\x80", "\x9f"]) {
    assertEquals(unsafePathChar(`/a${ch}b`), ch);
  }
  for (const ok of ["/usr/bin", "/Users/op/My Project (2)/x", "/srv/ré/ü", "/a;b&c$d`e"]) {
    assertEquals(unsafePathChar(ok), null, ok);
  }
  assertRefused(() => assertSafePath("", "x"), SandboxError, "CONFINED_PATH_UNSAFE");
  assertRefused(() => assertSafePath("/a\nb", "x"), SandboxError, "CONFINED_PATH_UNSAFE");
});

Deno.test("within: segment-aware, optionally case-folded", () => {
  assert(within("/a/b", "/a"));
  assert(within("/a", "/a"));
  assert(within("/a", "/"));
  assert(!within("/ab", "/a"));
  assert(!within("/a", "/a/b"));
  assert(within("/A/B", "/a", true));
  assert(!within("/A/B", "/a", false));
  assert(overlaps("/a", "/a/b") && overlaps("/a/b", "/a") && !overlaps("/a/b", "/a/c"));
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
  for (const [name, pat] of yes) assert(fnmatchFold(name, pat), `${name} ~ ${pat}`);
  for (const [name, pat] of no) assert(!fnmatchFold(name, pat), `${name} !~ ${pat}`);
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
  assert(protectedCovers("secrets", ["secrets/"]));
  assert(protectedCovers("Secrets/a/b", ["./secrets"]));
  assert(!protectedCovers("secretsx", ["secrets"]));
  assert(protectedCovers("build/k/a.pem", ["*.pem"]));
  assert(protectedCovers("reports/p2/fidelity.json", ["reports/*/fidelity.json"]));
  assert(!protectedCovers("build/x", ["/abs", "", ".", "../up"]), "patterns outside the project");
  assertEquals(literalProtected(["a/", "*.pem", "./b", "/abs", "c[1]"]), ["a", "b"]);
  for (const n of [".git", ".GIT", ".Claude", ".agentteams-status", ".GitHub"]) {
    assert(isControlPlaneName(n), n);
  }
  for (const n of ["sandbox", "git", ".gitignore", ".github2"]) assert(!isControlPlaneName(n), n);
});

Deno.test("gate exec: declared exec, else the program and its shebang interpreter", () => {
  const gate = { name: "g", glob: null, argv: ["/opt/g"], exec: null };
  assertEquals(gateExecPaths(gate, "/opt/g", null), ["/opt/g"]);
  assertEquals(gateExecPaths(gate, "/opt/g", "/usr/bin/python3"), ["/opt/g", "/usr/bin/python3"]);
  assertEquals(gateExecPaths({ ...gate, exec: [] }, "/opt/g", null), ["/opt/g"]);
  assertEquals(gateExecPaths({ ...gate, exec: ["/opt/tool"] }, "/opt/g", "/bin/sh"), ["/opt/tool"]);
  assertEquals(parseShebang("#!/bin/sh -e\necho"), "/bin/sh");
  assertEquals(parseShebang("#! /usr/bin/env python3"), "/usr/bin/env");
  assertEquals(parseShebang("#!python3"), null);
  assertEquals(parseShebang("echo"), null);
  // `/` itself would make the whole file system the gate's interpreter (and its exec path).
  assertEquals(parseShebang("#!/\n"), null);
  assertEquals(parseShebang("#! / sh"), null);
  assert(execAllows("/usr/bin/make", ["/usr/bin"]));
  assert(execAllows("/opt/tool", ["/opt/tool"]));
  assert(!execAllows("/usr/binx/make", ["/usr/bin"]));
  assert(execAllows("/USR/BIN/make", ["/usr/bin"], true));
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${dir}/s`, "#!/bin/sh\necho hi\n");
    assertEquals(readShebang(`${dir}/s`), "/bin/sh");
    assertEquals(readShebang(`${dir}/missing`), null);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
