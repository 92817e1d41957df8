/**
 * Where a named directory is audited from (its team's root, and the folder inside it the user
 * named). A module of its own, with no reader behind it, so the command table can place the
 * audit's permissions without loading the audit.
 *
 * @module
 */
import { join } from "../fs/path.ts";

/** The folder names a host loads agents from, which a team keeps below its root. */
const FRAMEWORK_FOLDERS: ReadonlySet<string> = new Set([
  ".claude",
  ".github",
  ".codex",
  ".goose",
  "recipes",
]);

/**
 * Where a named directory is audited from: a framework's agent folder (`.claude/agents`,
 * `.github/agents`, `.codex/agents`, `.goose`, a `recipes` folder) or any folder in one is judged
 * from its team's root (the directory holding that framework folder), and only the files in it
 * count; any other directory is a team root itself (`scope` empty). Below `project` only the
 * part of the path inside it is searched (a project kept under some `recipes/` folder is not a
 * recipe folder). Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { auditRootOf } from "./root.ts";
 * assert.deepEqual(auditRootOf("/p/.claude/agents", "/p"), { base: "/p", scope: ".claude/agents" });
 * assert.deepEqual(auditRootOf("/p/sub/.github/agents", "/p"), { base: "/p/sub", scope: ".github/agents" });
 * assert.deepEqual(auditRootOf("/p/team", "/p"), { base: "/p/team", scope: "" });
 * ```
 */
export function auditRootOf(abs: string, project: string): { base: string; scope: string } {
  const inside = abs === project || abs.startsWith(project.endsWith("/") ? project : `${project}/`);
  const start = inside ? project : "/";
  const rest = abs === start ? [] : abs.slice(start.length).split("/").filter((s) => s !== "");
  const i = rest.findIndex((s) => FRAMEWORK_FOLDERS.has(s));
  if (i < 0) return { base: abs, scope: "" };
  const base = join(start, ...rest.slice(0, i));
  return { base, scope: rest.slice(i).join("/") };
}
