/** Program and cwd resolution: sanitized PATH, no relative programs, nothing inside the project. */

import { within } from "../../lib/fs/within.ts";
import assert from "node:assert/strict";
import { RequestError } from "../../lib/errors.ts";
import {
  diskFs,
  resolveCwd,
  type ResolveFs,
  resolveProgram,
} from "../../lib/process/resolve_program.ts";

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof RequestError, String(e));
    return e.code;
  }
  return "none";
}

/** A fake file system: executables, plain files, symlinks (path → target), directories. */
function fakeFs(spec: {
  exec?: string[];
  plain?: string[];
  links?: Record<string, string>;
  dirs?: string[];
}): ResolveFs {
  const real = (p: string): string => {
    for (let i = 0; i < 10 && spec.links?.[p] !== undefined; i++) p = spec.links[p];
    return p;
  };
  return {
    stat(p) {
      const r = real(p);
      if (spec.exec?.includes(r)) return { isFile: true, isDirectory: false, mode: 0o755 };
      if (spec.plain?.includes(r)) return { isFile: true, isDirectory: false, mode: 0o644 };
      if (spec.dirs?.includes(r)) return { isFile: false, isDirectory: true, mode: 0o755 };
      return null;
    },
    realpath(p) {
      const r = real(p);
      return spec.exec?.includes(r) || spec.plain?.includes(r) || spec.dirs?.includes(r) ? r : null;
    },
  };
}

Deno.test("a bare name is found on the PATH's absolute entries, first hit wins", () => {
  const fs = fakeFs({ exec: ["/opt/bin/make", "/usr/bin/make"], dirs: ["/p"] });
  const r = resolveProgram("make", { path: "/opt/bin:/usr/bin", projectRoot: "/p", fs });
  assert.deepEqual(r, { path: "/opt/bin/make", real: "/opt/bin/make" });
});

Deno.test("relative and empty PATH entries are dropped", () => {
  const fs = fakeFs({ exec: ["bin/make", "make", "/usr/bin/make"], dirs: ["/p"] });
  const r = resolveProgram("make", { path: "bin::.:/usr/bin", projectRoot: "/p", fs });
  assert.equal(r.path, "/usr/bin/make");
  assert.equal(
    code(() => resolveProgram("make", { path: "bin::.", projectRoot: "/p", fs })),
    "PROGRAM_NOT_FOUND",
  );
});

Deno.test("non-executable files and directories are skipped", () => {
  const fs = fakeFs({ plain: ["/a/tool"], dirs: ["/b/tool", "/p"], exec: ["/c/tool"] });
  assert.equal(resolveProgram("tool", { path: "/a:/b:/c", projectRoot: "/p", fs }).path, "/c/tool");
  assert.equal(
    code(() => resolveProgram("/a/tool", { path: "", projectRoot: "/p", fs })),
    "PROGRAM_NOT_FOUND",
  );
});

Deno.test("relative program paths are refused", () => {
  const fs = fakeFs({ exec: ["/p/x.sh", "/p/bin/x"], dirs: ["/p"] });
  for (const name of ["./x.sh", "bin/x", "a\\b"]) {
    assert.equal(
      code(() => resolveProgram(name, { path: "/usr/bin", projectRoot: "/p", fs })),
      "PROGRAM_IN_PROJECT",
      name,
    );
  }
  assert.equal(
    code(() => resolveProgram("", { path: "/usr/bin", projectRoot: "/p", fs })),
    "PROGRAM_NOT_FOUND",
  );
});

Deno.test("a program whose real path lies in the project is refused", () => {
  const fs = fakeFs({
    exec: ["/p/tools/make", "/usr/bin/real"],
    links: { "/usr/local/bin/make": "/p/tools/make", "/usr/local/bin/ok": "/usr/bin/real" },
    dirs: ["/p"],
  });
  assert.equal(
    code(() => resolveProgram("make", { path: "/usr/local/bin", projectRoot: "/p", fs })),
    "PROGRAM_IN_PROJECT",
  );
  assert.equal(
    code(() => resolveProgram("/p/tools/make", { path: "", projectRoot: "/p", fs })),
    "PROGRAM_IN_PROJECT",
  );
  assert.equal(
    code(() => resolveProgram("make", { path: "/p/tools:/usr/bin", projectRoot: "/p", fs })),
    "PROGRAM_IN_PROJECT",
    "a PATH entry inside the project is not skipped over: it is refused",
  );
  assert.deepEqual(
    resolveProgram("ok", { path: "/usr/local/bin", projectRoot: "/p", fs }),
    { path: "/usr/local/bin/ok", real: "/usr/bin/real" },
  );
});

Deno.test("within compares whole segments (the containment program resolution uses)", () => {
  assert.equal(within("/p", "/p"), true);
  assert.equal(within("/p/x", "/p"), true);
  assert.equal(within("/pp/x", "/p"), false);
  assert.equal(within("/p/x", "/p/"), true);
  assert.equal(within("/x", "/"), true);
});

Deno.test("on disk: a symlink on PATH into the project is refused; a system program is found", async () => {
  const base = Deno.realPathSync(await Deno.makeTempDir({ prefix: "at-resolve-" }));
  try {
    const project = `${base}/project`;
    const bin = `${base}/bin`;
    Deno.mkdirSync(`${project}/tools`, { recursive: true });
    Deno.mkdirSync(bin);
    Deno.writeTextFileSync(`${project}/tools/planted`, "#!/bin/sh\n", { mode: 0o755 });
    Deno.chmodSync(`${project}/tools/planted`, 0o755);
    Deno.symlinkSync(`${project}/tools/planted`, `${bin}/planted`);
    assert.equal(
      code(() => resolveProgram("planted", { path: bin, projectRoot: project, fs: diskFs })),
      "PROGRAM_IN_PROJECT",
    );
    const sh = resolveProgram("sh", {
      path: `${bin}:/usr/bin:/bin`,
      projectRoot: project,
      fs: diskFs,
    });
    assert.ok(sh.path === "/usr/bin/sh" || sh.path === "/bin/sh", sh.path);
    assert.equal(
      code(() =>
        resolveProgram("no-such-program-x", { path: "/usr/bin", projectRoot: project, fs: diskFs })
      ),
      "PROGRAM_NOT_FOUND",
    );
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("on disk: the cwd must be a directory that resolves inside the project", async () => {
  const base = Deno.realPathSync(await Deno.makeTempDir({ prefix: "at-cwd-" }));
  try {
    const project = `${base}/project`;
    Deno.mkdirSync(`${project}/lean`, { recursive: true });
    Deno.mkdirSync(`${base}/outside`);
    Deno.writeTextFileSync(`${project}/file`, "x");
    Deno.symlinkSync(`${base}/outside`, `${project}/escape`);
    assert.equal(resolveCwd(project, ".", diskFs), project);
    assert.equal(resolveCwd(project, "lean", diskFs), `${project}/lean`);
    assert.equal(code(() => resolveCwd(project, "escape", diskFs)), "CWD_NOT_ALLOWED");
    assert.equal(code(() => resolveCwd(project, "file", diskFs)), "CWD_NOT_ALLOWED");
    assert.equal(code(() => resolveCwd(project, "missing", diskFs)), "CWD_NOT_ALLOWED");
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});
