/**
 * The project-root discovery rule (`lib/cli/project_root.ts`), on a probe: nearest directory up
 * holding `.agentteams/`, a default brief or `.git`; else the start.
 */
import assert from "node:assert/strict";
import {
  diskKindOf,
  enclosingProjects,
  findProjectRoot,
  PROJECT_MARKERS,
} from "../../lib/cli/project_root.ts";
import type { EntryKind } from "../../lib/fs/entry.ts";

function probe(on: Record<string, EntryKind>): (abs: string) => EntryKind {
  return (abs) => on[abs] ?? "missing";
}

Deno.test("findProjectRoot: the markers, in the order asked", () => {
  assert.deepEqual(PROJECT_MARKERS, [".agentteams", "agentteams.jsonc", "agentteams.json", ".git"]);
});

Deno.test("findProjectRoot: the nearest directory holding any marker, of any kind, wins", () => {
  const kinds: EntryKind[] = ["dir", "file", "symlink", "other"];
  for (const marker of PROJECT_MARKERS) {
    for (const kind of kinds) {
      const kindOf = probe({ [`/r/${marker}`]: kind, "/.git": "dir" });
      assert.equal(findProjectRoot("/r/a/b", kindOf), "/r", `${marker} as ${kind}`);
      assert.equal(findProjectRoot("/r", kindOf), "/r");
    }
  }
  // A linked worktree's .git file, below a repository: the worktree is nearer.
  const nested = probe({ "/r/.git": "dir", "/r/wt/.git": "file" });
  assert.equal(findProjectRoot("/r/wt/src", nested), "/r/wt");
  assert.equal(findProjectRoot("/r/src", nested), "/r");
  // A subproject's state dir or brief is nearer than the repository's top.
  const sub = probe({ "/r/.git": "dir", "/r/sub/.agentteams": "dir" });
  assert.equal(findProjectRoot("/r/sub/x", sub), "/r/sub");
});

Deno.test("findProjectRoot: nothing up to / leaves the start (normalized); / itself can be the root", () => {
  const none = probe({});
  assert.equal(findProjectRoot("/a/b/c", none), "/a/b/c");
  assert.equal(findProjectRoot("/a//b/./c/", none), "/a/b/c");
  assert.equal(findProjectRoot("/", none), "/");
  assert.equal(findProjectRoot("/a/b", probe({ "/agentteams.json": "file" })), "/");
  // Every directory from the start up to / is asked, once each.
  const asked: string[] = [];
  findProjectRoot("/a/b", (abs) => {
    asked.push(abs);
    return "missing";
  });
  assert.deepEqual(
    asked,
    ["/a/b", "/a", "/"].flatMap((d) => PROJECT_MARKERS.map((m) => (d === "/" ? "" : d) + "/" + m)),
  );
});

Deno.test("diskKindOf: lstat, never following; a path it may not examine counts as nothing", () => {
  const dir = Deno.makeTempDirSync({ prefix: "at-root-" });
  try {
    Deno.mkdirSync(`${dir}/p/.agentteams`, { recursive: true });
    Deno.mkdirSync(`${dir}/p/src`);
    Deno.symlinkSync("/nonexistent", `${dir}/q.json`);
    assert.equal(diskKindOf(`${dir}/p/.agentteams`), "dir");
    assert.equal(diskKindOf(`${dir}/q.json`), "symlink");
    assert.equal(diskKindOf(`${dir}/nothing`), "missing");
    assert.equal(findProjectRoot(`${dir}/p/src`, diskKindOf), `${dir}/p`);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("enclosingProjects: the directories above holding .agentteams/ or a brief (not .git), nearest first", () => {
  const kindOf = probe({
    "/r/agentteams.jsonc": "file",
    "/r/.git": "dir",
    "/r/a/.agentteams": "dir",
    "/r/a/b/.git": "file",
    "/.git": "dir",
  });
  assert.deepEqual(enclosingProjects("/r/a/b", kindOf), ["/r/a", "/r"]);
  assert.deepEqual(enclosingProjects("/r", kindOf), []);
  assert.deepEqual(enclosingProjects("/", kindOf), []);
  // A repository's top (only .git) holding the project is no enclosing project.
  assert.deepEqual(enclosingProjects("/x/y", probe({ "/x/.git": "dir" })), []);
});
