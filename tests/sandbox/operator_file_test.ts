/** The operator-owned confined-programs file: its path (pure) and the custody rules of its reader. */

import { SandboxError } from "../../lib/errors.ts";
import {
  confinedFilePath,
  MAX_CONFINED_BYTES,
  readConfinedFile,
  type ReadConfinedOptions,
} from "../../lib/sandbox/mod.ts";
import { createHash } from "node:crypto";
import assert from "node:assert/strict";
import { assertRefusal } from "../_helpers/assert.ts";

Deno.test("operator file: path is <home>/.config/agentteams/confined/<name>-<digest>.json", () => {
  // Digests computed with CPython: hashlib.sha256(real.encode()).hexdigest()[:12].
  assert.deepEqual(
    confinedFilePath("/home/op/my proj", "/home/op"),
    "/home/op/.config/agentteams/confined/my_proj-305be6e855ab.json",
  );
  assert.deepEqual(
    confinedFilePath("/", "/root/"),
    "/root/.config/agentteams/confined/root-8a5edab28263.json",
  );
  assert.deepEqual(
    confinedFilePath("/srv/ré po\u{1f600}", "/root"),
    "/root/.config/agentteams/confined/r__po_-dcffcba8653b.json",
  );
  assert.deepEqual(
    confinedFilePath("/srv/repo", "/"),
    "/.config/agentteams/confined/repo-203fce37fbfc.json",
  );
  assert.ok(
    confinedFilePath("/a/proj", "/h") !== confinedFilePath("/b/proj", "/h"),
    "two checkouts with the same name never share a file",
  );
});

interface Env {
  base: string;
  project: string;
  home: string;
  dir: string;
  path: string;
  opts: ReadConfinedOptions;
}

function setup(content = '{"worker": {"exec": ["/usr/bin"], "write": ["build"]}}\n'): Env {
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-opfile-" }));
  const project = `${base}/proj`;
  const home = `${base}/home`;
  Deno.mkdirSync(project);
  const opts = { projectReal: project, home };
  const path = confinedFilePath(project, home);
  const dir = path.slice(0, path.lastIndexOf("/"));
  Deno.mkdirSync(dir, { recursive: true });
  Deno.chmodSync(dir, 0o700);
  Deno.writeTextFileSync(path, content);
  Deno.chmodSync(path, 0o600);
  return { base, project, home, dir, path, opts };
}

function withEnv(fn: (e: Env) => void, content?: string): () => void {
  return () => {
    const e = setup(content);
    try {
      fn(e);
    } finally {
      Deno.removeSync(e.base, { recursive: true });
    }
  };
}

function refusedUnsafe(e: Env, why: string): void {
  const before = Deno.lstatSync(e.path);
  assertRefusal(() => readConfinedFile(e.opts), "CONFINED_FILE_UNSAFE", SandboxError, why);
  const after = Deno.lstatSync(e.path);
  assert.deepEqual(
    [after.ino, after.size, after.mode],
    [before.ino, before.size, before.mode],
    why,
  );
}

Deno.test("operator file: absent file or directory reads as null", () => {
  const base = Deno.realPathSync(Deno.makeTempDirSync());
  try {
    assert.deepEqual(readConfinedFile({ projectReal: `${base}/p`, home: `${base}/home` }), null);
    Deno.mkdirSync(`${base}/home/.config/agentteams/confined`, { recursive: true, mode: 0o700 });
    assert.deepEqual(readConfinedFile({ projectReal: `${base}/p`, home: `${base}/home` }), null);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test(
  "operator file: a custodied file is read with the sha256 of its raw bytes",
  withEnv((e) => {
    const got = readConfinedFile(e.opts);
    assert.ok(got !== null, "read");
    // The one JSON reader gives objects without a prototype: compared as JSON.
    assert.equal(
      JSON.stringify(got.data),
      JSON.stringify({ worker: { exec: ["/usr/bin"], write: ["build"] } }),
    );
    assert.equal(Object.getPrototypeOf(got.data), null);
    const raw = Deno.readFileSync(e.path);
    assert.deepEqual(got.sha256, createHash("sha256").update(raw).digest("hex"));
    assert.deepEqual(got.path, e.path);
    Deno.chmodSync(e.path, 0o644); // readable by others is fine; writable is not
    assert.ok(readConfinedFile(e.opts) !== null, "0644 accepted");
    Deno.chmodSync(e.path, 0o400);
    assert.ok(readConfinedFile(e.opts) !== null, "0400 accepted");
  }),
);

for (const mode of [0o620, 0o602, 0o666]) {
  Deno.test(
    `operator file: a group- or world-writable file (0${mode.toString(8)}) is refused`,
    withEnv((e) => {
      Deno.chmodSync(e.path, mode);
      refusedUnsafe(e, "writable file");
    }),
  );
}

for (const mode of [0o750, 0o755, 0o701, 0o777]) {
  Deno.test(
    `operator file: a directory that is not 0700 (0${mode.toString(8)}) is refused`,
    withEnv((e) => {
      Deno.chmodSync(e.dir, mode);
      refusedUnsafe(e, "dir mode");
    }),
  );
}

Deno.test(
  "operator file: a symlinked file is refused, even to a good file",
  withEnv((e) => {
    Deno.renameSync(e.path, `${e.dir}/elsewhere.json`);
    Deno.symlinkSync(`${e.dir}/elsewhere.json`, e.path);
    refusedUnsafe(e, "symlink file");
  }),
);

Deno.test(
  "operator file: a symlinked directory is refused",
  withEnv((e) => {
    const real = `${e.base}/realdir`;
    Deno.renameSync(e.dir, real);
    Deno.symlinkSync(real, e.dir);
    refusedUnsafe(e, "symlink dir");
  }),
);

Deno.test(
  "operator file: a directory that is a file is refused",
  withEnv((e) => {
    Deno.removeSync(e.dir, { recursive: true });
    Deno.writeTextFileSync(e.dir, "not a dir");
    assertRefusal(() => readConfinedFile(e.opts), "CONFINED_FILE_UNSAFE", SandboxError);
  }),
);

Deno.test(
  "operator file: a FIFO is refused without blocking",
  withEnv((e) => {
    Deno.removeSync(e.path);
    const r = new Deno.Command("/usr/bin/mkfifo", { args: ["-m", "600", e.path] }).outputSync();
    assert.ok(r.success, "mkfifo");
    refusedUnsafe(e, "FIFO");
  }),
);

Deno.test(
  "operator file: more than 64 KiB is refused, exactly 64 KiB is read",
  withEnv((e) => {
    Deno.writeTextFileSync(e.path, "{}" + " ".repeat(MAX_CONFINED_BYTES - 2));
    assert.ok(readConfinedFile(e.opts) !== null, "64 KiB accepted");
    Deno.writeTextFileSync(e.path, "{}" + " ".repeat(MAX_CONFINED_BYTES - 1));
    refusedUnsafe(e, "too large");
  }),
);

for (
  const [what, bytes] of [
    ["not JSON", new TextEncoder().encode("not json")],
    ["a JSON array", new TextEncoder().encode("[1]")],
    ["JSON null", new TextEncoder().encode("null")],
    ["not UTF-8", new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
  ] as const
) {
  Deno.test(
    `operator file: ${what} is refused as CONFINED_INVALID`,
    withEnv((e) => {
      Deno.writeFileSync(e.path, bytes);
      assertRefusal(() => readConfinedFile(e.opts), "CONFINED_INVALID", SandboxError, what);
    }),
  );
}

Deno.test("operator file: a file inside the project is refused", () => {
  const base = Deno.realPathSync(Deno.makeTempDirSync());
  try {
    const project = base;
    const home = `${base}/home`; // HOME inside the project: agents' commands could write it
    const path = confinedFilePath(project, home);
    const dir = path.slice(0, path.lastIndexOf("/"));
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    Deno.chmodSync(dir, 0o700);
    Deno.writeTextFileSync(path, "{}", { mode: 0o600 });
    const e = assertRefusal(
      () => readConfinedFile({ projectReal: project, home }),
      "CONFINED_FILE_UNSAFE",
      SandboxError,
    );
    assert.ok(e.message.includes("inside the project"), e.message);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test(
  "operator file: a file or directory owned by someone else is refused",
  withEnv((e) => {
    if (Deno.uid() === 0) {
      Deno.chownSync(e.path, 65534, 65534);
      refusedUnsafe(e, "file owner");
      Deno.chownSync(e.path, 0, 0);
      Deno.chownSync(e.dir, 65534, 65534);
      refusedUnsafe(e, "dir owner");
    } else {
      // Not root: the same rule, checked against a uid that is not the owner.
      const other = (Deno.uid() ?? 0) + 1;
      assertRefusal(
        () => readConfinedFile({ ...e.opts, uid: other }),
        "CONFINED_FILE_UNSAFE",
        SandboxError,
      );
    }
  }),
);
