/**
 * The control plane: the paths that steer agents, hosts, git or this tool itself. No proposal may
 * write them, no command may declare them as writes, no write scope or `writes` glob may name them,
 * the sandbox keeps them read-only, and the undeclared-write check watches the ones that do not
 * change in normal use. This module is the one place that answers "is this path control plane,
 * and why" — every one of those callers asks {@link controlPlaneHit} (or the table below).
 *
 * Two parts make it up:
 * - the fixed table {@link CONTROL_PLANE}: names, each with the reason it is there, matched
 *   case-folded (macOS and Windows file systems are case-insensitive, so `.Git` is `.git`);
 * - git's own resolved paths ({@link GitControlPath}): the repository (git dir and common dir),
 *   the hooks directory (`core.hooksPath`), every config file git reads and every file a config
 *   includes, `info/`, and the excludes and attributes files — wherever git says they are, so a
 *   `core.hooksPath`, an `include.path` or a linked worktree's git dir that points inside the
 *   project makes that path control plane too. They come from `openGitContext` (one `rev-parse`,
 *   one `config --list --show-origin`).
 *
 * `.github` is control plane as a whole (decided, not inherited): GitHub runs its workflows with
 * the repository's secrets, and its `agents/`, `hooks/` and instruction files steer Copilot's
 * agents; an agent that may write any of it can raise its own privileges. The operator edits it.
 *
 * @example
 * ```ts
 * import { controlPlaneHit, staticPlane } from "./control_plane.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(controlPlaneHit(".GitHub/workflows/ci.yml", staticPlane("/p"))?.entry, ".github");
 * assert.deepEqual(controlPlaneHit("src/main.ts", staticPlane("/p")), null);
 * ```
 * @module
 */
import type { GitContext, GitControlPath } from "../git/context.ts";
import { keyUnder, within } from "../fs/within.ts";
import { withoutHfsIgnorable } from "../text/chars.ts";

/** One fixed entry of the control plane. */
export interface ControlPlaneEntry {
  /** The entry's name (one path segment), lower case. */
  readonly name: string;
  /**
   * `anywhere`: a segment of that name at any depth is control plane (a nested repository's
   * `.git`, a subproject's `.claude`: an agent session or a git command started there obeys it);
   * `root`: only at the project root.
   */
  readonly where: "anywhere" | "root";
  /**
   * Whether the undeclared-write check compares it by size, mtime, ctime and inode. Not `.git`
   * (git's own writes change it; its behaviour-changing parts are watched by their resolved
   * paths) nor the runner's queue and status folders (sessions and the runner write them).
   */
  readonly watched: boolean;
  /**
   * Written while commands run, by the sessions and the runner (requests, acks, the beat,
   * results): at the project root the undeclared-write check leaves it out entirely, so the
   * runner's own writes are never a command's. Only the runner's queue and status folders.
   */
  readonly runtime?: boolean;
  /** Why it is control plane, for messages and docs. */
  readonly reason: string;
}

/** The fixed control plane, in the order messages name it. */
export const CONTROL_PLANE: readonly ControlPlaneEntry[] = Object.freeze([
  {
    name: ".git",
    where: "anywhere",
    watched: false,
    reason: "git's repository: its hooks and config run programs as whoever runs git",
  },
  {
    name: ".claude",
    where: "anywhere",
    watched: true,
    reason: "Claude Code's settings, hooks, agents and commands",
  },
  { name: ".goose", where: "anywhere", watched: true, reason: "Goose's recipes and settings" },
  { name: ".codex", where: "anywhere", watched: true, reason: "Codex's config and agents" },
  {
    name: ".mcp.json",
    where: "anywhere",
    watched: true,
    reason: "Claude Code's project MCP servers: each starts as the user, outside any sandbox",
  },
  {
    name: ".vscode",
    where: "anywhere",
    watched: true,
    reason: "VS Code's settings, tasks and MCP servers: they load agents and start programs",
  },
  {
    name: ".github",
    where: "anywhere",
    watched: true,
    reason: "GitHub's workflows (run with the repository's secrets) and Copilot's agents and hooks",
  },
  {
    name: "sandbox",
    where: "root",
    watched: true,
    reason: "the project's sandbox profiles",
  },
  {
    name: "references",
    where: "root",
    watched: true,
    reason: "the authorization triad: the decision log, waivers, grants, the approver roster and " +
      "verify keys (a write there could clear a HALT or forge an approval)",
  },
  {
    name: ".agentteams",
    where: "anywhere",
    watched: true,
    reason: "this tool's signed ledger, its head and the dispatch store",
  },
  {
    name: ".agentteams-queue",
    where: "anywhere",
    watched: false,
    runtime: true,
    reason: "the runner's request queue",
  },
  {
    name: ".agentteams-status",
    where: "anywhere",
    watched: false,
    runtime: true,
    reason: "the runner's results and liveness",
  },
].map((e) => Object.freeze(e as ControlPlaneEntry)));

const BY_NAME: ReadonlyMap<string, ControlPlaneEntry> = new Map(
  CONTROL_PLANE.map((e) => [e.name, e]),
);

/** The first characters of the `anywhere` names (the table's names are lower case). */
const ANYWHERE_FIRST: ReadonlySet<string> = new Set(
  CONTROL_PLANE.filter((e) => e.where === "anywhere").map((e) => e.name[0]),
);

/**
 * The runner's runtime folders at the project root (the queue, the status folder): what the
 * sessions and the runner write while commands run, and what `agentteams init` git-ignores.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RUNTIME_FOLDERS } from "./control_plane.ts";
 * assert.deepEqual(RUNTIME_FOLDERS, [".agentteams-queue", ".agentteams-status"]);
 * ```
 */
export const RUNTIME_FOLDERS: readonly string[] = Object.freeze(
  CONTROL_PLANE.filter((e) => e.runtime === true).map((e) => e.name),
);

const RUNTIME: ReadonlySet<string> = new Set(RUNTIME_FOLDERS);

/**
 * Whether a project-relative path lies in a folder the sessions and the runner write while
 * commands run (its first segment, case-folded, a `runtime` entry): the undeclared-write check
 * leaves it out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isRuntimeWrite } from "./control_plane.ts";
 * assert.equal(isRuntimeWrite(".agentteams-status/runner.json"), true);
 * assert.equal(isRuntimeWrite("src/.agentteams-status/x"), false); // only at the project root
 * assert.equal(isRuntimeWrite(".agentteams/proposal-ledger.jsonl"), false);
 * ```
 */
export function isRuntimeWrite(rel: string): boolean {
  const first = rel.split("/", 1)[0];
  return RUNTIME.has(fold(first));
}

/**
 * The names the sandbox keeps read-only at any depth inside a writable root (the `anywhere`
 * entries), lower case.
 */
export const CONTROL_PLANE_NAMES: readonly string[] = Object.freeze(
  CONTROL_PLANE.filter((e) => e.where === "anywhere").map((e) => e.name),
);

/** The control plane of one project: the fixed table plus git's resolved paths. */
export interface ControlPlane {
  /** The canonical project root (no trailing `/`, `/` itself allowed). */
  readonly root: string;
  /** Git's resolved paths; empty when the project is not in a git worktree. */
  readonly git: readonly GitControlPath[];
}

/** Why a path is control plane. */
export interface ControlPlaneHit {
  /** The entry: a table name (`.git`) or, for git's paths, the project-relative path (or `abs`). */
  readonly entry: string;
  /** Why it is there. */
  readonly reason: string;
}

/**
 * The control plane of a project in a git worktree: the table and every path git resolved.
 *
 * @example
 * ```ts
 * import { planeOf } from "./control_plane.ts";
 * import assert from "node:assert/strict";
 * const plane = planeOf({
 *   root: "/work/p",
 *   controlPaths: [{ abs: "/work/p/.git/hooks", what: "hooks directory", watch: "tree" }],
 * });
 * assert.equal(plane.git[0].abs, "/work/p/.git/hooks");
 * ```
 */
export function planeOf(git: Pick<GitContext, "root" | "controlPaths">): ControlPlane {
  return { root: git.root, git: git.controlPaths };
}

/**
 * The control plane with no git paths (the fixed table only): for checks that have no project
 * at hand (the brief's lint) and projects outside any git worktree.
 *
 * @example
 * ```ts
 * import { staticPlane } from "./control_plane.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(staticPlane("/p").git.length, 0);
 * ```
 */
export function staticPlane(root: string): ControlPlane {
  return { root, git: [] };
}

/**
 * A name as a case-insensitive file system may take it: lower case, without the code points HFS+
 * ignores (`.G\u200cit` is `.git` there).
 */
function fold(s: string): string {
  return withoutHfsIgnorable(s).toLowerCase();
}

/** The first table entry a segment list names, honouring `where`; `null` when none. */
function tableHit(segments: readonly string[]): ControlPlaneHit | null {
  for (let i = 0; i < segments.length; i++) {
    const e = BY_NAME.get(fold(segments[i]));
    if (e !== undefined && (e.where === "anywhere" || i === 0)) {
      return { entry: e.name, reason: e.reason };
    }
  }
  return null;
}

function absOf(root: string, rel: string): string {
  return root === "/" ? `/${rel}` : `${root}/${rel}`;
}

/** Whether `inner` is `outer` or lies below it, compared case-folded. */
function covers(outer: string, inner: string): boolean {
  return within(fold(inner), fold(outer));
}

/**
 * Whether a normalized project-relative POSIX path is control plane, and why (`null` when it is
 * not): a table name among its segments (case-folded; `root` entries only as the first segment),
 * or a path at or below one of git's resolved paths.
 *
 * @example
 * ```ts
 * import { controlPlaneHit } from "./control_plane.ts";
 * import assert from "node:assert/strict";
 * const plane = { root: "/p", git: [{ abs: "/p/tools/hooks", what: "hooks directory", watch: "tree" as const }] };
 * assert.deepEqual(controlPlaneHit("vendor/x/.GIT/config", plane)?.entry, ".git");
 * assert.deepEqual(controlPlaneHit("tools/hooks/pre-commit", plane)?.entry, "tools/hooks");
 * assert.deepEqual(controlPlaneHit("src/sandbox/a.ts", plane), null); // `sandbox` counts at the root only
 * ```
 */
export function controlPlaneHit(rel: string, plane: ControlPlane): ControlPlaneHit | null {
  const segments = rel.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.length === 0) return null;
  const hit = tableHit(segments);
  if (hit !== null) return hit;
  const abs = absOf(plane.root, segments.join("/"));
  for (const g of plane.git) {
    if (covers(g.abs, abs)) {
      return { entry: keyUnder(plane.root, g.abs), reason: `git's ${g.what}` };
    }
  }
  return null;
}

/**
 * Whether a directory (normalized, project-relative; `.` is the root) holds part of the control
 * plane below it: a `root` table entry when it is the root, one of git's resolved paths below it.
 * (`anywhere` entries can appear under any directory; each written path is checked on its own.)
 *
 * @example
 * ```ts
 * import { controlPlaneBelow } from "./control_plane.ts";
 * import assert from "node:assert/strict";
 * const plane = { root: "/p", git: [{ abs: "/p/tools/hooks", what: "hooks directory", watch: "tree" as const }] };
 * assert.deepEqual(controlPlaneBelow("tools", plane)?.entry, "tools/hooks");
 * assert.deepEqual(controlPlaneBelow("src", plane), null);
 * ```
 */
export function controlPlaneBelow(dir: string, plane: ControlPlane): ControlPlaneHit | null {
  const segments = dir.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.length === 0) {
    const e = CONTROL_PLANE.find((x) => x.where === "root");
    if (e !== undefined) return { entry: e.name, reason: e.reason };
  }
  const abs = segments.length === 0 ? plane.root : absOf(plane.root, segments.join("/"));
  for (const g of plane.git) {
    if (covers(abs, g.abs) && fold(abs) !== fold(g.abs)) {
      return { entry: keyUnder(plane.root, g.abs), reason: `git's ${g.what}` };
    }
  }
  return null;
}

/**
 * Whether a path pattern (a write scope, a `writes` glob) names the control plane in one of its
 * segments, as the table places it. Pure: git's resolved paths are checked when a path is written.
 *
 * @example
 * ```ts
 * import { patternNamesControlPlane } from "./control_plane.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(patternNamesControlPlane(["src", ".Claude", "*"])?.entry, ".claude");
 * assert.deepEqual(patternNamesControlPlane(["build", "*"]), null);
 * ```
 */
export function patternNamesControlPlane(segments: readonly string[]): ControlPlaneHit | null {
  return tableHit(segments);
}

/**
 * Whether an entry name is control plane wherever it appears (an `anywhere` name), case-folded.
 *
 * @example
 * ```ts
 * import { isControlPlaneName } from "./control_plane.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(isControlPlaneName(".AgentTeams"), true);
 * assert.deepEqual(isControlPlaneName("sandbox"), false); // only at the project root
 * ```
 */
export function isControlPlaneName(name: string): boolean {
  // The sandbox asks this of every entry in a write root (20,000 at a time): a name whose first
  // character is ASCII folds to a name starting with that character lowercased (the code points
  // HFS+ ignores are not ASCII), so one that cannot start an `anywhere` name is answered unfolded.
  const c = name.charCodeAt(0);
  if (c < 0x80 && !ANYWHERE_FIRST.has(name[0].toLowerCase())) return false;
  return BY_NAME.get(fold(name))?.where === "anywhere";
}

/**
 * The absolute paths the sandbox keeps read-only for a project: every table entry at the root
 * (present or not: bwrap masks a missing one) and every one of git's resolved paths, inside the
 * project or not (a root granted from another workspace may hold a hooks directory or an
 * included config of this project's git).
 *
 * @example
 * ```ts
 * import { controlPlaneReadOnly } from "./control_plane.ts";
 * import assert from "node:assert/strict";
 * const ro = controlPlaneReadOnly({ root: "/p", git: [{ abs: "/p/.git", what: "git directory", watch: null }] });
 * assert.deepEqual(ro.includes("/p/.claude") && ro.includes("/p/.git"), true);
 * ```
 */
export function controlPlaneReadOnly(plane: ControlPlane): string[] {
  const out = CONTROL_PLANE.map((e) => absOf(plane.root, e.name));
  for (const g of plane.git) {
    if (!out.includes(g.abs)) out.push(g.abs);
  }
  return out;
}
