/**
 * The refusal of a confined program that lies under none of the exec paths, as a pure function of
 * the facts `mounts_io.ts` gathers: it names the brief key to add the program's directory to (or
 * the operator's confined-programs file), and, when the program was found through a link or is a
 * script (a version-manager shim: pyenv, asdf; a Homebrew link), the real directory too.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { execRefusalMessage } from "./exec_hint.ts";
 * const m = execRefusalMessage({
 *   program: "/usr/bin/make", programReal: "/usr/bin/make", interpreter: null,
 *   execRoots: [], owner: { kind: "agent", agent: "worker", source: null },
 *   operatorFile: "/home/op/.config/agentteams/confined/p-0123456789ab.json",
 * });
 * assert.ok(m.startsWith("program /usr/bin/make lies under none of the exec paths of the confinement (none"));
 * assert.ok(m.includes('add "/usr/bin" to confined_programs.worker.exec in the brief'));
 * ```
 * @module
 */

import { within } from "../fs/within.ts";

/** Whose exec list the confinement used: an agent's `confined_programs` entry, or a gate's. */
export type ExecOwner =
  | {
    readonly kind: "agent";
    /** The agent slug. */
    readonly agent: string;
    /** Where the confined-programs block in force came from (`null`: neither sets one). */
    readonly source: "brief" | "operator-file" | null;
  }
  | {
    readonly kind: "gate";
    /** The gate's name. */
    readonly gate: string;
  };

/** The facts of an exec refusal. */
export interface ExecRefusalFacts {
  /** The program as the command names it (absolute; found on PATH, say). */
  readonly program: string;
  /** Its real path, which the check compares. */
  readonly programReal: string;
  /** The absolute interpreter on its `#!` line, resolved; `null` for a binary. */
  readonly interpreter: string | null;
  /** The exec paths of the confinement, resolved. */
  readonly execRoots: readonly string[];
  /** Whose exec list it is; `null` when not known (a hand-built plan). */
  readonly owner: ExecOwner | null;
  /** The operator's confined-programs file of this project. */
  readonly operatorFile: string;
  /** Case-fold path comparisons. */
  readonly foldCase?: boolean;
}

function dirOf(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut <= 0 ? "/" : path.slice(0, cut);
}

/**
 * Where to add an exec path, in words: the brief key (or the operator file's) for `owner`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { execKeyPhrase } from "./exec_hint.ts";
 * assert.equal(
 *   execKeyPhrase({ kind: "agent", agent: "w", source: "operator-file" }, "/h/.config/agentteams/confined/p.json"),
 *   "w.exec in the operator's confined-programs file /h/.config/agentteams/confined/p.json",
 * );
 * ```
 */
export function execKeyPhrase(owner: ExecOwner | null, operatorFile: string): string {
  const file = `the operator's confined-programs file ${operatorFile}`;
  if (owner === null) return "the exec list of the confinement";
  if (owner.kind === "gate") {
    return `proposal_gates.${owner.gate}.exec in the brief (or gate_exec.${owner.gate} in ${file})`;
  }
  const a = owner.agent;
  if (owner.source === "operator-file") return `${a}.exec in ${file}`;
  if (owner.source === "brief") return `confined_programs.${a}.exec in the brief`;
  return `confined_programs.${a}.exec in the brief (or ${a}.exec in ${file}, which keeps ` +
    "machine paths out of the brief)";
}

/**
 * The refusal message (see the module doc).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { execRefusalMessage } from "./exec_hint.ts";
 * const m = execRefusalMessage({
 *   program: "/opt/homebrew/bin/python3",
 *   programReal: "/opt/homebrew/Cellar/python@3.12/3.12.1/bin/python3.12",
 *   interpreter: null, execRoots: ["/opt/homebrew/bin"],
 *   owner: { kind: "agent", agent: "w", source: "brief" }, operatorFile: "/h/f.json",
 * });
 * assert.ok(m.includes('add "/opt/homebrew/Cellar/python@3.12/3.12.1/bin" to confined_programs.w.exec in the brief'));
 * assert.ok(m.includes("/opt/homebrew/bin/python3 is a link to"));
 * assert.ok(m.includes("the check uses the real path"));
 * ```
 */
export function execRefusalMessage(f: ExecRefusalFacts): string {
  const fold = f.foldCase ?? false;
  const allowed = (p: string) => f.execRoots.some((e) => within(p, e, fold));
  const listed = f.execRoots.length > 0
    ? f.execRoots.join(", ")
    : f.owner?.kind === "agent"
    ? `none: confined_programs has no entry for ${f.owner.agent}`
    : "none: confined_programs has no entry";
  const realDir = dirOf(f.programReal);
  const where = execKeyPhrase(f.owner, f.operatorFile);
  let msg = `program ${f.programReal} lies under none of the exec paths of the confinement ` +
    `(${listed}); add ${JSON.stringify(realDir)} to ${where}`;
  if (f.program !== f.programReal) {
    msg += `; ${f.program} is a link to ${f.programReal} (a Homebrew or version-manager link, ` +
      `say): the check uses the real path, so listing ${
        JSON.stringify(dirOf(f.program))
      } is not enough`;
  }
  if (f.interpreter !== null) {
    msg += `; it is a script run by ${f.interpreter}`;
    if (!allowed(f.interpreter)) msg += `, so add ${JSON.stringify(dirOf(f.interpreter))} too`;
    const name = f.program.slice(f.program.lastIndexOf("/") + 1);
    if (/(^|\/)shims\//.test(f.programReal) || f.interpreter.endsWith("/env")) {
      msg += `; a shim (pyenv, asdf) runs the real program from elsewhere: name that one in the ` +
        `request (\`pyenv which ${name}\`, \`asdf which ${name}\`) and add its directory instead`;
    }
  }
  return msg;
}

/**
 * Why a script whose own path is allowed is refused where Landlock holds every exec: the kernel
 * executes its `#!` interpreter too, which lies under none of the exec paths. Names the directory
 * to add and where (as {@link execRefusalMessage} does).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { interpreterRefusalMessage } from "./exec_hint.ts";
 * const m = interpreterRefusalMessage({
 *   program: "/opt/t/tool", programReal: "/opt/t/tool", interpreter: "/usr/bin/dash",
 *   execRoots: ["/opt/t"], owner: null, operatorFile: "/h/.config/agentteams/confined/p.json",
 * });
 * assert.ok(m.startsWith("program /opt/t/tool is a script run by /usr/bin/dash, which"));
 * assert.ok(m.includes('add "/usr/bin"'));
 * ```
 */
export function interpreterRefusalMessage(f: ExecRefusalFacts): string {
  const interpreter = f.interpreter ?? "its interpreter";
  return `program ${f.programReal} is a script run by ${interpreter}, which lies under none of ` +
    `the exec paths of the confinement (${f.execRoots.join(", ")}); Landlock holds every exec ` +
    `to them, the interpreter's too: add ${JSON.stringify(dirOf(interpreter))} (or ` +
    `${JSON.stringify(interpreter)} alone) to ${execKeyPhrase(f.owner, f.operatorFile)}`;
}
