/**
 * Program and working-directory resolution. The decisions are pure functions over a small
 * file-system interface ({@link ResolveFs}); {@link diskFs} is the thin wrapper over Deno.
 *
 * `argv[0]` is looked up on a sanitized PATH (absolute entries only). A relative program path
 * (`./x.sh`, `bin/x`) is refused, since it would name a file in the project. The real path of what
 * was found (symlinks followed) must lie outside the project.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p and git at /usr/bin/git
 * import assert from "node:assert/strict";
 * import { diskFs, resolveProgram } from "./resolve_program.ts";
 * const found = resolveProgram("git", { path: "/usr/bin:/bin", projectRoot: "/work/p", fs: diskFs });
 * assert.equal(found.path, "/usr/bin/git");
 * ```
 * @module
 */

import { RequestError } from "../errors.ts";
import { within } from "../fs/within.ts";
import { sanitizePath } from "./child_env.ts";

/** What resolution needs to know about a path. */
export interface ResolveFs {
  /** `stat` (following symlinks): `null` when absent or unreadable. */
  stat(
    path: string,
  ):
    | { readonly isFile: boolean; readonly isDirectory: boolean; readonly mode: number | null }
    | null;
  /** The canonical path (symlinks followed), `null` when it cannot be resolved. */
  realpath(path: string): string | null;
}

/**
 * Absent or unreadable is `null`; a path Deno's permission flags forbid is not. That refusal
 * (`NotCapable`) is thrown: skipping a PATH entry the launch flags left out would resolve another
 * program than the operator's PATH names.
 */
function nullUnlessNotCapable(e: unknown): null {
  if (e instanceof Deno.errors.NotCapable) throw e;
  return null;
}

/**
 * {@link ResolveFs} over the real file system. A missing or unreadable path is `null`; a path the
 * launch flags do not grant throws Deno's `NotCapable`.
 */
export const diskFs: ResolveFs = {
  stat(path) {
    try {
      const info = Deno.statSync(path);
      return { isFile: info.isFile, isDirectory: info.isDirectory, mode: info.mode };
    } catch (e) {
      return nullUnlessNotCapable(e);
    }
  },
  realpath(path) {
    try {
      return Deno.realPathSync(path);
    } catch (e) {
      return nullUnlessNotCapable(e);
    }
  },
};

/** Where to look and what must not contain the result. */
export interface ResolveOptions {
  /** The PATH value to search; sanitized again here. */
  readonly path: string | undefined;
  /** The project root (any form; it is canonicalised through `fs.realpath`). */
  readonly projectRoot: string;
  /** File-system access. */
  readonly fs: ResolveFs;
}

/** A resolved program. */
export interface ResolvedProgram {
  /** The path to execute (as found on PATH, or as given when absolute). */
  readonly path: string;
  /** Its canonical path (symlinks followed). */
  readonly real: string;
}

/**
 * True when `path` is a regular file with an execute bit (following symlinks).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diskFs, isExecutable } from "./resolve_program.ts";
 * assert.equal(isExecutable(diskFs, "/bin/sh"), true);
 * assert.equal(isExecutable(diskFs, "/etc"), false); // a directory
 * ```
 */
export function isExecutable(fs: ResolveFs, path: string): boolean {
  const st = fs.stat(path);
  return st !== null && st.isFile && (st.mode === null || (st.mode & 0o111) !== 0);
}

/**
 * Resolves `argv[0]`. Throws `PROGRAM_IN_PROJECT` for a relative path or a program whose real path
 * lies in the project, `PROGRAM_NOT_FOUND` when nothing executable is found.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveProgram } from "./resolve_program.ts";
 * const fs = {
 *   stat: (p: string) => p === "/usr/bin/make" ? { isFile: true, isDirectory: false, mode: 0o755 } : null,
 *   realpath: (p: string) => p,
 * };
 * assert.equal(resolveProgram("make", { path: "/usr/bin", projectRoot: "/p", fs }).path, "/usr/bin/make");
 * ```
 */
export function resolveProgram(name: string, options: ResolveOptions): ResolvedProgram {
  const { fs } = options;
  if (name === "" || name.includes("\0")) {
    throw new RequestError("PROGRAM_NOT_FOUND", "argv[0] is empty or contains NUL");
  }
  if (!name.startsWith("/") && (name.includes("/") || name.includes("\\"))) {
    throw new RequestError(
      "PROGRAM_IN_PROJECT",
      `argv[0] ${JSON.stringify(name)} is a relative path, which names a file in the project`,
    );
  }
  let found: string | null = null;
  if (name.startsWith("/")) {
    if (isExecutable(fs, name)) found = name;
  } else {
    for (const dir of sanitizePath(options.path).split(":")) {
      if (dir === "") continue;
      const candidate = dir.endsWith("/") ? dir + name : `${dir}/${name}`;
      if (isExecutable(fs, candidate)) {
        found = candidate;
        break;
      }
    }
  }
  if (found === null) {
    throw new RequestError(
      "PROGRAM_NOT_FOUND",
      `argv[0] ${JSON.stringify(name)} was not found as an executable file on the sanitized PATH`,
    );
  }
  const real = fs.realpath(found);
  const root = fs.realpath(options.projectRoot);
  if (real === null || root === null) {
    throw new RequestError("PROGRAM_NOT_FOUND", `cannot resolve the real path of ${found}`);
  }
  if (within(real, root)) {
    throw new RequestError(
      "PROGRAM_IN_PROJECT",
      `argv[0] ${JSON.stringify(name)} resolves inside the project (${real})`,
    );
  }
  return { path: found, real };
}

/**
 * Resolves a normalised project-relative working directory to an absolute path, refusing
 * (`CWD_NOT_ALLOWED`) one that is missing, not a directory, or whose real path leaves the project
 * (a symlinked directory pointing elsewhere).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p
 * import { diskFs, resolveCwd } from "./resolve_program.ts";
 * resolveCwd("/work/p", ".", diskFs); // "/work/p" (canonical)
 * ```
 */
export function resolveCwd(projectRoot: string, rel: string, fs: ResolveFs): string {
  const root = fs.realpath(projectRoot);
  if (root === null) {
    throw new RequestError("CWD_NOT_ALLOWED", "the project root cannot be resolved");
  }
  if (rel === ".") return root;
  const real = fs.realpath(`${root}/${rel}`);
  // Outside the project is refused before anything is read there (the launch flags need not
  // grant it, and its refusal is this one, not Deno's).
  if (real !== null && !within(real, root)) {
    throw new RequestError(
      "CWD_NOT_ALLOWED",
      `cwd ${JSON.stringify(rel)} resolves outside the project`,
    );
  }
  const st = real === null ? null : fs.stat(real);
  if (real === null || st === null || !st.isDirectory) {
    throw new RequestError("CWD_NOT_ALLOWED", `cwd ${JSON.stringify(rel)} is not a directory`);
  }
  return real;
}
