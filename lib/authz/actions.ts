/**
 * The action grammar of the decision log: what an action id a decision names may look like, and
 * the ids each act of the project is checked under. One place, for `decision sign` (which refuses
 * an unknown form, listing the forms), the HALT check every act makes (`lib/authz/stop.ts`) and
 * the gate.
 *
 * | form              | names                                                                  |
 * | ----------------- | ---------------------------------------------------------------------- |
 * | `*`               | every act of the project: the operator's emergency stop (HALT only)    |
 * | `delete:PATH`     | deleting PATH (a deletion proposal), or under it                       |
 * | `write:PATH`      | writing PATH (any proposal applied there), or under it; a grant's root |
 * | `run:PROGRAM`     | running PROGRAM (a command request whose program it is)                |
 * | `grant:ID`        | the capability grant ID                                                |
 * | `delete`, `write`, `run` | every act of that kind (a HALT reaches each `verb:PATH`)        |
 * | `NAME`            | a named gate (`agentteams gate NAME`): letters, digits, `.`, `_`, `-`  |
 *
 * A path is literal (no wildcards: `write:docs` reaches everything under `docs/`); `*` stands
 * alone. Anything else is refused (`ACTION_FORM`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { actionFormProblem } from "./actions.ts";
 * assert.equal(actionFormProblem("*", "HALT"), null);
 * assert.equal(actionFormProblem("delete:*", "HALT")?.code, "ACTION_FORM");
 * ```
 * @module
 */
import type { Problem } from "./verdict.ts";

/** The action that names every act: a HALT on it is the operator's emergency stop. */
export const EVERYTHING = "*";

/** The forms an action id may take, as messages list them. */
export const ACTION_FORMS: readonly string[] = Object.freeze([
  "* (every act: the emergency stop; HALT and HALT-RETRACTED only)",
  "delete:PATH",
  "write:PATH",
  "run:PROGRAM",
  "grant:ID",
  "delete, write or run (every act of that kind)",
  "NAME (a named gate: letters, digits, '.', '_', '-')",
]);

const VERBS = new Set(["delete", "write", "run", "grant"]);
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Whether an action id is `*` (stripped).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isEverything } from "./actions.ts";
 * assert.equal(isEverything(" * "), true);
 * ```
 */
export function isEverything(action: string): boolean {
  return action.trim() === EVERYTHING;
}

/**
 * Why an action id is not one of the grammar's forms (for a row with this verdict), or `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { actionFormProblem } from "./actions.ts";
 * assert.equal(actionFormProblem("write:docs/shared", "HALT"), null);
 * assert.equal(actionFormProblem("*", "PASS")?.code, "ACTION_FORM"); // a clearance names one act
 * assert.equal(actionFormProblem("deploy:prod", "HALT")?.code, "ACTION_FORM");
 * ```
 */
export function actionFormProblem(action: string, verdict: string): Problem | null {
  const a = action.trim();
  const v = verdict.trim().toUpperCase();
  const refuse = (why: string): Problem => ({
    code: "ACTION_FORM",
    reason: `action ${JSON.stringify(action)} ${why}; the forms are: ${ACTION_FORMS.join("; ")}`,
  });
  if (a === EVERYTHING) {
    return v === "HALT" || v === "HALT-RETRACTED"
      ? null
      : refuse(`is the emergency stop, which only a HALT (or its retraction) may name, not ${v}`);
  }
  if (a === "") return refuse("is empty");
  if (/[\s*?[\]{}]/.test(a)) {
    return refuse(
      "holds a wildcard or a space (paths are literal: write:docs reaches everything under docs/)",
    );
  }
  const colon = a.indexOf(":");
  if (colon < 0) {
    return NAME_RE.test(a) ? null : refuse("is not a gate name");
  }
  const verb = a.slice(0, colon).toLowerCase();
  const rest = a.slice(colon + 1);
  if (!VERBS.has(verb)) return refuse(`names ${JSON.stringify(verb)}, which is not a known kind`);
  if (rest === "") return refuse(`names no ${verb === "run" ? "program" : "path"} after the ':'`);
  if (rest.split("/").includes("..")) return refuse("holds a '..' segment");
  return null;
}

/**
 * The action ids an apply of a proposal for `rel` (project-relative) is checked under: `write:`
 * for any proposal, and `delete:` for a deletion.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyActions } from "./actions.ts";
 * assert.deepEqual(applyActions("src/a.ts", false), ["write:src/a.ts"]);
 * assert.deepEqual(applyActions("old.txt", true), ["write:old.txt", "delete:old.txt"]);
 * ```
 */
export function applyActions(rel: string, deletion: boolean): string[] {
  return deletion ? [`write:${rel}`, `delete:${rel}`] : [`write:${rel}`];
}

/**
 * The action ids a run of `program` (a command request's `argv[0]`) is checked under: the
 * program as written and, when it is a path, its file name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runActions } from "./actions.ts";
 * assert.deepEqual(runActions("git"), ["run:git"]);
 * assert.deepEqual(runActions("/usr/bin/git"), ["run:/usr/bin/git", "run:git"]);
 * ```
 */
export function runActions(program: string): string[] {
  const base = program.split("/").at(-1) ?? program;
  return base !== "" && base !== program ? [`run:${program}`, `run:${base}`] : [`run:${program}`];
}

/**
 * The action ids a run is checked under once its program is resolved: {@link runActions} of
 * `argv[0]` as written, of the path it resolved to, and of that path's canonical form (symlinks
 * followed), without repeats. A HALT on `run:/usr/bin/git` then stops a request that names `git`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolvedRunActions } from "./actions.ts";
 * assert.deepEqual(resolvedRunActions("git", "/usr/bin/git", "/usr/bin/git"), ["run:git", "run:/usr/bin/git"]);
 * ```
 */
export function resolvedRunActions(program: string, path: string, real: string): string[] {
  return [...new Set([...runActions(program), ...runActions(path), ...runActions(real)])];
}

/**
 * The action id a dispatch for `agent` is checked under (only `*` reaches it among the forms
 * `decision sign` takes, and a gate named `dispatch`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dispatchActions } from "./actions.ts";
 * assert.deepEqual(dispatchActions("worker"), ["dispatch:worker"]);
 * ```
 */
export function dispatchActions(agent: string): string[] {
  return [`dispatch:${agent}`];
}
