/**
 * The `confined_programs` block: per agent, the programs its commands may execute (`exec`) and
 * the project directories they may write (`write`). It comes from the operator-owned file
 * (`operator_file.ts`) when one exists, otherwise from the brief; both at once is refused.
 *
 * Everything here is a pure shape check. Whether the paths exist, are free of symlinks and do not
 * overlap is decided at run time by `write_exec_roots.ts`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateConfinedPrograms } from "./confined_programs.ts";
 * const v = validateConfinedPrograms(
 *   { worker: { exec: ["/usr/bin"], write: ["build"] } },
 *   { gates: {}, protectedPaths: [] },
 * );
 * assert.deepEqual(v.programs.agents.worker.write, ["build"]);
 * ```
 * @module
 */

import { relPathProblem, segmentProblem } from "../fs/rel_path.ts";
import { SandboxError } from "../errors.ts";
import { controlPlaneHit, staticPlane } from "../policy/control_plane.ts";
import type { ConfinedAgent, ConfinedPrograms, GateDef } from "../policy/types.ts";
import { gateArgvDigest } from "./gate_argv.ts";
import { protectedCovers } from "./protected_paths.ts";
import { assertSafePath } from "./safe_path.ts";

/** The operator file's reserved key mapping gate names to their exec paths. */
export const GATE_EXEC_KEY = "gate_exec";
/** The operator file's reserved key mapping gate names to the SHA-256 of their argv at install. */
export const GATE_ARGV_KEY = "gate_argv_sha256";

/** What the validator needs besides the raw block. */
export interface ConfinedContext {
  /** The brief's `proposal_gates`. */
  readonly gates: Readonly<Record<string, GateDef>>;
  /** The brief's `protected_paths`. */
  readonly protectedPaths: readonly string[];
  /** Where the block came from (default `brief`); only the operator file may hold reserved keys. */
  readonly source?: "brief" | "operator-file";
  /** SHA-256 hex of the operator file's raw bytes (`null` for the brief). */
  readonly fileSha256?: string | null;
  /** The brief's project-relative POSIX path; a write root may not contain it. */
  readonly briefRel?: string | null;
}

/** A validated block, plus the gates with any operator-file `gate_exec` merged in. */
export interface ValidatedConfined {
  /** The per-agent entries and their source. */
  readonly programs: ConfinedPrograms;
  /** `ctx.gates`, each gate's `exec` taken from `gate_exec` where the operator file sets it. */
  readonly gates: Readonly<Record<string, GateDef>>;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function invalid(message: string, details: Record<string, unknown>): SandboxError {
  return new SandboxError("CONFINED_INVALID", message, { details });
}

/**
 * Checks one exec entry: an absolute path or a `~/` path, plain characters, no `.` or `..`
 * segment (`/.` would be `/`), and not `/` or `~` itself. Returns it with trailing slashes dropped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateExecPath } from "./confined_programs.ts";
 * assert.equal(validateExecPath("~/.elan/", "confined_programs.prover.exec"), "~/.elan");
 * ```
 */
export function validateExecPath(
  path: unknown,
  what: string,
  details: Record<string, unknown> = {},
): string {
  if (typeof path !== "string" || !(path.startsWith("/") || path.startsWith("~/"))) {
    throw invalid(`${what}: entries must be absolute or ~/ paths, got ${JSON.stringify(path)}`, {
      ...details,
      path,
    });
  }
  assertSafePath(path, what, details);
  const trimmed = path.replace(/\/+$/, "");
  if (trimmed === "" || trimmed === "~" || /^~?\/*$/.test(trimmed)) {
    throw invalid(`${what}: ${JSON.stringify(path)} is the whole file system or home; too broad`, {
      ...details,
      path,
    });
  }
  const segs = trimmed.split("/");
  if (segs.includes("..") || segs.includes(".")) {
    throw invalid(
      `${what}: ${JSON.stringify(path)} has a '.' or '..' segment; give the plain path`,
      { ...details, path },
    );
  }
  return trimmed;
}

/**
 * Checks one write root: project-relative, literal (no wildcard), plain segments, not the project
 * root, not in the control plane (any segment named like one, in any case), not covered by
 * `protected_paths`, not containing the brief (compared case-folded). Returns it without a
 * trailing slash.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateWriteRoot } from "./confined_programs.ts";
 * assert.equal(validateWriteRoot("lean/.lake/", [], "confined_programs.prover.write"), "lean/.lake");
 * ```
 */
export function validateWriteRoot(
  rel: unknown,
  protectedPaths: readonly string[],
  what: string,
  details: Record<string, unknown> = {},
  briefRel: string | null = null,
): string {
  if (typeof rel !== "string" || rel === "") {
    throw invalid(`${what}: entries must be non-empty strings, got ${JSON.stringify(rel)}`, {
      ...details,
      path: rel,
    });
  }
  assertSafePath(rel, what, details);
  const d = { ...details, path: rel };
  const shown = JSON.stringify(rel);
  const problem = relPathProblem(rel);
  if (problem === "absolute" || problem === "home") {
    throw invalid(`${what}: ${shown} must be a project-relative path`, d);
  }
  if (/[*?[]/.test(rel)) {
    throw invalid(`${what}: ${shown} contains a wildcard; give a literal directory`, d);
  }
  const trimmed = rel.replace(/\/+$/, "");
  if (trimmed === "" || trimmed === ".") {
    throw invalid(`${what}: ${shown} is the project root; refused`, d);
  }
  if (segmentProblem(trimmed.split("/")) !== null) {
    throw invalid(
      `${what}: ${shown} must be a plain relative path (no '.', '..' or empty segment)`,
      d,
    );
  }
  const plane = controlPlaneHit(trimmed, staticPlane("/"));
  if (plane !== null) {
    throw invalid(`${what}: ${shown} is in the control plane (${plane.entry}); refused`, d);
  }
  if (protectedCovers(trimmed, protectedPaths)) {
    throw invalid(`${what}: ${shown} is covered by protected_paths; refused`, d);
  }
  if (briefRel && protectedCovers(briefRel, [trimmed])) {
    throw invalid(`${what}: ${shown} contains the brief (${briefRel}); refused`, d);
  }
  return trimmed;
}

function validateAgent(
  agent: string,
  spec: unknown,
  protectedPaths: readonly string[],
  briefRel: string | null,
): ConfinedAgent {
  const base = `confined_programs.${agent}`;
  if (!isPlainObject(spec)) {
    throw invalid(`${base} must be an object {exec, write}`, { agent });
  }
  const extra = Object.keys(spec).filter((k) => k !== "exec" && k !== "write");
  if (extra.length > 0) {
    throw invalid(`${base}: unknown key ${JSON.stringify(extra[0])}; only exec and write`, {
      agent,
      key: extra[0],
    });
  }
  const exec = spec.exec;
  const write = spec.write ?? [];
  if (!Array.isArray(exec) || exec.length === 0) {
    throw invalid(`${base}.exec must be a non-empty list; nothing could run`, { agent });
  }
  if (!Array.isArray(write)) {
    throw invalid(`${base}.write must be a list`, { agent });
  }
  const execOut = exec.map((p) => validateExecPath(p, `${base}.exec`, { agent }));
  const writeOut = write.map((r) =>
    validateWriteRoot(r, protectedPaths, `${base}.write`, { agent }, briefRel)
  );
  return Object.freeze({
    exec: Object.freeze([...new Set(execOut)]),
    write: Object.freeze([...new Set(writeOut)]),
  });
}

/** Checks each gate's brief-set `exec` entries, whether or not a block is set. */
function validateBriefGateExec(gates: Readonly<Record<string, GateDef>>): void {
  for (const [name, gate] of Object.entries(gates)) {
    for (const p of gate.exec ?? []) {
      validateExecPath(p, `proposal_gates.${name}.exec`, { gate: name });
    }
  }
}

function mergeGateExec(
  gates: Readonly<Record<string, GateDef>>,
  gateExec: unknown,
  argvDigests: unknown,
): Record<string, GateDef> {
  if (!isPlainObject(gateExec)) {
    throw invalid(`${GATE_EXEC_KEY} must map gate names to non-empty lists of paths`, {});
  }
  if (!isPlainObject(argvDigests)) {
    throw invalid(`${GATE_ARGV_KEY} must map gate names to sha256 strings`, {});
  }
  const execNames = Object.keys(gateExec).sort();
  const digestNames = Object.keys(argvDigests).sort();
  if (execNames.join("\0") !== digestNames.join("\0")) {
    throw invalid(
      `${GATE_ARGV_KEY} must name exactly the gates in ${GATE_EXEC_KEY}; reinstall the operator file`,
      { gate_exec: execNames, gate_argv_sha256: digestNames },
    );
  }
  const replaced = new Map<string, GateDef>();
  for (const name of execNames) {
    const paths = gateExec[name];
    const digest = argvDigests[name];
    const gate = Object.hasOwn(gates, name) ? gates[name] : undefined;
    if (gate === undefined) {
      throw invalid(`${GATE_EXEC_KEY}.${name}: no such gate in proposal_gates`, { gate: name });
    }
    if (!Array.isArray(paths) || paths.length === 0) {
      throw invalid(`${GATE_EXEC_KEY}.${name} must be a non-empty list of paths`, { gate: name });
    }
    if (typeof digest !== "string") {
      throw invalid(`${GATE_ARGV_KEY}.${name} must be a sha256 string`, { gate: name });
    }
    if (gate.exec !== null && gate.exec.length > 0) {
      throw invalid(
        `${GATE_EXEC_KEY}.${name}: the brief already sets this gate's exec; keep one`,
        { gate: name },
      );
    }
    if (digest !== gateArgvDigest(gate.argv)) {
      throw invalid(
        `${GATE_EXEC_KEY}.${name}: the gate's argv changed since the operator file was installed; ` +
          "review and reinstall it",
        { gate: name },
      );
    }
    const exec = paths.map((p) => validateExecPath(p, `${GATE_EXEC_KEY}.${name}`, { gate: name }));
    replaced.set(name, Object.freeze({ ...gate, exec: Object.freeze(exec) }));
  }
  // Built with fromEntries so a gate or agent named `__proto__` stays an ordinary key.
  return Object.fromEntries(
    Object.entries(gates).map(([name, gate]) => [name, replaced.get(name) ?? gate]),
  );
}

/**
 * Validates a raw `confined_programs` block (from the brief or the operator file) against the
 * brief's gates and protected paths. Fails closed with `SandboxError("CONFINED_INVALID")`, or
 * `CONFINED_PATH_UNSAFE` for a path with a refused character; the message and `details` name the
 * agent (or gate) and the path.
 *
 * Refused: a non-object block or entry; keys other than `exec`/`write`; an empty or missing
 * `exec`; exec entries that are not absolute or `~/`, are `/` or `~`, or hold `..`; write roots
 * that are absolute, `~`, wildcarded, the project root, non-plain, in the control plane, covered
 * by `protected_paths`, or containing the brief; a brief-set gate `exec` entry of the wrong shape. The reserved
 * keys `gate_exec` / `gate_argv_sha256` are allowed only in the operator file, must name exactly
 * the same gates, each an existing gate whose brief entry sets no `exec` and whose argv digest
 * still matches.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateConfinedPrograms } from "./confined_programs.ts";
 * assert.throws(
 *   () => validateConfinedPrograms({ a: { exec: ["relative"] } }, { gates: {}, protectedPaths: [] }),
 *   { code: "CONFINED_INVALID", message: /confined_programs\.a\.exec.*"relative"/ },
 * );
 * ```
 */
export function validateConfinedPrograms(raw: unknown, ctx: ConfinedContext): ValidatedConfined {
  const source = ctx.source ?? "brief";
  validateBriefGateExec(ctx.gates);
  if (!isPlainObject(raw)) {
    throw invalid("confined_programs must be an object of {agent: {exec, write}}", { source });
  }
  let gates: Readonly<Record<string, GateDef>> = ctx.gates;
  const hasReserved = Object.hasOwn(raw, GATE_EXEC_KEY) || Object.hasOwn(raw, GATE_ARGV_KEY);
  if (hasReserved) {
    if (source !== "operator-file") {
      throw invalid(
        `confined_programs.${GATE_EXEC_KEY} / ${GATE_ARGV_KEY} are reserved for the operator file; ` +
          "set a gate's exec in proposal_gates",
        { source },
      );
    }
    gates = mergeGateExec(ctx.gates, raw[GATE_EXEC_KEY] ?? {}, raw[GATE_ARGV_KEY] ?? {});
  }
  const entries: [string, ConfinedAgent][] = [];
  for (const [agent, spec] of Object.entries(raw)) {
    if (agent === GATE_EXEC_KEY || agent === GATE_ARGV_KEY) continue;
    if (agent === "") throw invalid("confined_programs: an agent name may not be empty", {});
    entries.push([agent, validateAgent(agent, spec, ctx.protectedPaths, ctx.briefRel ?? null)]);
  }
  const agents: Record<string, ConfinedAgent> = Object.fromEntries(entries);
  return Object.freeze({
    programs: Object.freeze({
      agents: Object.freeze(agents),
      source,
      fileSha256: source === "operator-file" ? (ctx.fileSha256 ?? null) : null,
    }),
    gates: Object.freeze(gates),
  });
}

/** The operator file as `readConfinedFile` returns it. */
export interface ConfinedFile {
  /** The parsed JSON. */
  readonly data: unknown;
  /** SHA-256 hex of the raw bytes. */
  readonly sha256: string;
}

/** The block in force and the gates it produced. */
export interface SelectedConfined {
  /** `null` when neither the brief nor the operator file sets `confined_programs`. */
  readonly programs: ConfinedPrograms | null;
  /** The gates, with operator-file `gate_exec` merged in. */
  readonly gates: Readonly<Record<string, GateDef>>;
}

/**
 * Picks the block in force: the operator file wins over the brief's `confined_programs`, and both
 * being present (the brief's key set to anything but `null`) is refused (`CONFINED_INVALID`).
 * Gates' brief-set `exec` lists are validated either way.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { selectConfinedPrograms } from "./confined_programs.ts";
 * const s = selectConfinedPrograms({
 *   brief: undefined,
 *   file: { data: { w: { exec: ["/usr/bin"] } }, sha256: "ab".repeat(32) },
 *   gates: {},
 *   protectedPaths: [],
 * });
 * assert.equal(s.programs?.source, "operator-file");
 * ```
 */
export function selectConfinedPrograms(opts: {
  brief: unknown;
  file: ConfinedFile | null;
  gates: Readonly<Record<string, GateDef>>;
  protectedPaths: readonly string[];
  briefRel?: string | null;
}): SelectedConfined {
  const briefSet = opts.brief !== undefined && opts.brief !== null;
  if (briefSet && opts.file !== null) {
    throw invalid(
      "confined_programs is set in both the brief and the operator file; keep one so it is clear " +
        "which applies",
      {},
    );
  }
  if (opts.file !== null) {
    return validateConfinedPrograms(opts.file.data, {
      gates: opts.gates,
      protectedPaths: opts.protectedPaths,
      source: "operator-file",
      fileSha256: opts.file.sha256,
      briefRel: opts.briefRel,
    });
  }
  if (briefSet) {
    return validateConfinedPrograms(opts.brief, {
      gates: opts.gates,
      protectedPaths: opts.protectedPaths,
      source: "brief",
      briefRel: opts.briefRel,
    });
  }
  validateBriefGateExec(opts.gates);
  return Object.freeze({ programs: null, gates: opts.gates });
}
