/** The live scan of writable roots for control-plane names and protected matches. */

import { SandboxError } from "../../lib/errors.ts";
import { readOnlyMatcher, scanWritableRoots } from "../../lib/sandbox/mod.ts";
import assert from "node:assert/strict";
import { assertRefusal } from "../_helpers/assert.ts";

Deno.test("scan: finds control-plane names at any depth in any case, and protected matches", () => {
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-scan-" }));
  try {
    const p = base;
    for (
      const d of [
        "build/a/b/c/.GIT/objects",
        "build/.claude",
        "build/x/.Agentteams",
        "build/x/.github/workflows",
        "build/ok/src",
        "build/nogit.d",
        "tmp/.codex",
        "elsewhere/.git",
      ]
    ) Deno.mkdirSync(`${p}/${d}`, { recursive: true });
    Deno.writeTextFileSync(`${p}/build/ok/src/key.PEM`, "k");
    Deno.writeTextFileSync(`${p}/build/ok/src/main.c`, "c");
    Deno.writeTextFileSync(`${p}/build/.goose`, "a file named like the control plane");
    Deno.symlinkSync(`${p}/elsewhere`, `${p}/build/ok/link`); // never followed
    const hits = scanWritableRoots(
      [`${p}/build`, `${p}/tmp`],
      readOnlyMatcher(p, ["*.pem"], false),
    );
    assert.deepEqual(hits, [
      { path: `${p}/build/.claude`, kind: "dir" },
      { path: `${p}/build/.goose`, kind: "file" },
      { path: `${p}/build/a/b/c/.GIT`, kind: "dir" },
      { path: `${p}/build/ok/src/key.PEM`, kind: "file" },
      { path: `${p}/build/x/.Agentteams`, kind: "dir" },
      { path: `${p}/build/x/.github`, kind: "dir" },
      { path: `${p}/tmp/.codex`, kind: "dir" },
    ]);
    Deno.symlinkSync(`${p}/elsewhere/.git`, `${p}/build/.Git`);
    const withLink = scanWritableRoots([`${p}/build`], readOnlyMatcher(p, [], false));
    assert.deepEqual(withLink.find((h) => h.path === `${p}/build/.Git`)?.kind, "symlink");
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("scan: a directory that cannot be listed is refused", () => {
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-scan-" }));
  try {
    Deno.mkdirSync(`${base}/build/locked`, { recursive: true });
    Deno.writeTextFileSync(`${base}/build/locked/x`, "x");
    if (Deno.uid() !== 0) {
      Deno.chmodSync(`${base}/build/locked`, 0o000);
      assertRefusal(
        () => scanWritableRoots([`${base}/build`], readOnlyMatcher(base, [], false)),
        "CONFINED_PATH_UNSAFE",
        SandboxError,
      );
      Deno.chmodSync(`${base}/build/locked`, 0o755);
    } else {
      // Root lists every directory, so the rule is shown with a root that cannot be listed
      // for another reason (a file where a directory was expected): same refusal path.
      Deno.writeTextFileSync(`${base}/notadir`, "");
      assertRefusal(
        () => scanWritableRoots([`${base}/notadir`], readOnlyMatcher(base, [], false)),
        "CONFINED_PATH_UNSAFE",
        SandboxError,
      );
    }
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("scan: a missing root is skipped", () => {
  assert.deepEqual(scanWritableRoots(["/nonexistent-agentteams-root"], () => true), []);
});

Deno.test("scan: a directory git takes for a repository (HEAD, objects/, refs/) is a hit whatever its name", () => {
  const p = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-scan-bare-" }));
  try {
    for (const d of ["build/vendored/objects", "build/vendored/refs/heads", "build/half/objects"]) {
      Deno.mkdirSync(`${p}/${d}`, { recursive: true });
    }
    Deno.writeTextFileSync(`${p}/build/vendored/HEAD`, "ref: refs/heads/main\n");
    Deno.writeTextFileSync(`${p}/build/half/HEAD`, "ref: refs/heads/main\n"); // no refs/: not one
    const hits = scanWritableRoots([`${p}/build`], readOnlyMatcher(p, [], false));
    assert.deepEqual(hits, [{ path: `${p}/build/vendored`, kind: "dir" }]);
  } finally {
    Deno.removeSync(p, { recursive: true });
  }
});
