/**
 * The policy lint: rules on a shape-valid brief that the schema alone cannot express. Runs at load;
 * the first violation throws `PolicyError` (`POLICY_LINT`, or `BRIEF_INVALID` for a malformed
 * name) naming the JSON path and line. Pure: it reads only its arguments.
 *
 * Refused:
 * - argument patterns that do not compile faithfully (see `pyre.ts`) or that admit a probe string
 *   (an option, a parent, absolute or home path, a response file; see `probes.ts`);
 * - a command's `prefix[0]` or a gate's `argv[0]` that is a shell or a launcher, by basename, or
 *   not a bare name or absolute path (see `program_rules.ts`); a gate whose `argv[0]` is `{file}`/`{path}`;
 * - `{file}`/`{path}` inside a larger gate argument (they must be whole arguments);
 * - unsafe write scopes (see `scope.ts`), and any scope or `writes` glob covering the brief or one
 *   of the default brief names at the project root;
 * - `writes` globs that do not start with a literal project directory or touch the control plane;
 * - gate globs and protected paths that could never match a project path;
 * - `variadic` without `args`; a `cwd` that is absolute or has `..`;
 * - `stdin_gates` that is empty or names an unknown gate;
 * - `confined_programs` keys reserved for the operator file; `mcp_grants` for the orchestrator;
 * - `write_policy: "orchestrator-only"` without an explicit `privilege_profile` of `confined` or
 *   `exclusive` (the default profile leaves the session's gate hook fail-open).
 *
 * Warned, not refused ({@link briefWarnings}): a literal write scope such as `"src"` that names an
 * existing directory covers the file `src` only, so every proposal below it would be
 * `OUT_OF_SCOPE` (the warning suggests `"src/"`); and, when the brief carries `confined_programs`,
 * a command's `writes` glob that no directory of its agent's confined `write` list can hold, so
 * that the command, confined, meets a read-only file system (the warning names the directory to
 * add).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseJsonSource } from "./json_source.ts";
 * import { validateBrief } from "./validate.ts";
 * import { lintPolicy } from "./lint.ts";
 * const src = parseJsonSource('{"agent_policies": {"w": {"write_scopes": ["docs/"]}}}', "b.json");
 * // It passes, and returns the compiled patterns.
 * assert.doesNotThrow(() => lintPolicy(validateBrief(src), src, "agentteams.jsonc"));
 * ```
 * @module
 */

import { PolicyError } from "../errors.ts";
import { AGENT_SLUG, GATE_NAME, RESERVED_CONFINED_KEYS } from "./brief_fields.ts";
import { fnmatch } from "../pycompat/fnmatch.ts";
import { protectedMatch } from "./protected_match.ts";
import { errorAt, type JsonPath, type JsonSource } from "./json_source.ts";
import { cwdProblem, matchPatternProblem, writesGlobProblem } from "./pattern_rules.ts";
import { probeArgPattern } from "./probes.ts";
import { programProblem } from "./program_rules.ts";
import { compileArgPattern } from "../pycompat/pyre.ts";
import type { RawPolicy } from "./brief_schema.ts";
import { parseNetworkRule } from "./network_rules.ts";
import {
  inWriteScopes,
  isLiteralScope,
  literalDirScopeHint,
  scopePatternProblem,
} from "./scope.ts";
import { DEFAULT_BRIEF_NAMES } from "../layout.ts";

/** Compiled argument patterns: agent → command index → one RegExp per `args` entry. */
export type CompiledArgs = ReadonlyMap<string, readonly (readonly RegExp[])[]>;

const PLACEHOLDERS = ["{file}", "{path}"];

function lint(src: JsonSource, path: JsonPath, reason: string): PolicyError {
  return errorAt("POLICY_LINT", src, path, reason);
}

/** The project paths no write scope or `writes` glob may cover. */
function briefPaths(briefRel: string | null): string[] {
  const out = [...DEFAULT_BRIEF_NAMES];
  if (briefRel !== null && !out.includes(briefRel)) out.unshift(briefRel);
  return out;
}

function checkKeys(raw: RawPolicy, src: JsonSource): void {
  const slugged: [string, Record<string, unknown> | undefined][] = [
    ["agent_policies", raw.agent_policies],
    ["mcp_grants", raw.mcp_grants],
  ];
  for (const key of Object.keys(raw.confined_programs ?? {})) {
    if (RESERVED_CONFINED_KEYS.includes(key)) {
      throw errorAt(
        "POLICY_LINT",
        src,
        ["confined_programs", key],
        "is reserved for the operator's confined-programs file; set a gate's exec in proposal_gates",
        { key: true },
      );
    }
  }
  slugged.push(["confined_programs", raw.confined_programs]);
  for (const [field, block] of slugged) {
    for (const key of Object.keys(block ?? {})) {
      if (!AGENT_SLUG.test(key)) {
        throw errorAt(
          "BRIEF_INVALID",
          src,
          [field, key],
          "is not an agent slug (lower-case letters, digits and '-', starting with a letter or digit)",
          { key: true },
        );
      }
    }
  }
  for (const key of Object.keys(raw.proposal_gates ?? {})) {
    if (!GATE_NAME.test(key)) {
      throw errorAt(
        "BRIEF_INVALID",
        src,
        ["proposal_gates", key],
        "is not a gate name (letters, digits, '_', '.', ':' and '-', at most 128)",
        { key: true },
      );
    }
  }
}

function checkGates(raw: RawPolicy, src: JsonSource): void {
  for (const [name, gate] of Object.entries(raw.proposal_gates ?? {})) {
    const base: JsonPath = ["proposal_gates", name];
    gate.argv.forEach((arg, i) => {
      const isPlaceholder = PLACEHOLDERS.includes(arg);
      if (!isPlaceholder && PLACEHOLDERS.some((p) => arg.includes(p))) {
        throw lint(
          src,
          [...base, "argv", i],
          `{file}/{path} must be whole arguments, not part of ${JSON.stringify(arg)}`,
        );
      }
      if (i === 0) {
        if (isPlaceholder) {
          throw lint(src, [...base, "argv", 0], "the gate's program may not be the proposed file");
        }
        const problem = programProblem(arg);
        if (problem !== null) {
          throw lint(src, [...base, "argv", 0], `${JSON.stringify(arg)} ${problem}`);
        }
      }
    });
    if (gate.glob !== undefined) {
      const problem = matchPatternProblem(gate.glob, "gate");
      if (problem !== null) throw lint(src, [...base, "glob"], `gate glob ${problem}`);
    }
  }
}

/** Runs one check; {@link lintFindings} passes one that collects what it throws. */
type Unit = (check: () => void) => void;

function checkScopes(
  agent: string,
  scopes: readonly string[],
  src: JsonSource,
  covered: readonly string[],
  unit: Unit,
): void {
  scopes.forEach((scope, i) =>
    unit(() => {
      const path: JsonPath = ["agent_policies", agent, "write_scopes", i];
      const problem = scopePatternProblem(scope);
      if (problem !== null) {
        throw lint(src, path, `write scope ${JSON.stringify(scope)} ${problem}`);
      }
      // Folded here, though scopes match exactly: on a case-insensitive file system a scope spelled
      // in another case reaches the brief all the same.
      const folded = scope.toLowerCase();
      const hit = covered.find((p) => inWriteScopes(p.toLowerCase(), [folded]));
      if (hit !== undefined) {
        throw lint(src, path, `write scope ${JSON.stringify(scope)} covers the brief path ${hit}`);
      }
    })
  );
}

function checkCommands(
  agent: string,
  raw: RawPolicy,
  src: JsonSource,
  covered: readonly string[],
  unit: Unit,
): RegExp[][] {
  const gates = raw.proposal_gates ?? {};
  const commands = raw.agent_policies?.[agent]?.commands ?? [];
  // Each entry's program, each argument pattern, its variadic, cwd, each writes glob and each
  // stdin gate is its own unit: `brief check` reports every problem of every entry at once.
  return commands.map((entry, n) => {
    const base: JsonPath = ["agent_policies", agent, "commands", n];
    const program = entry.prefix[0];
    unit(() => {
      const problem = programProblem(program);
      if (problem !== null) {
        throw lint(src, [...base, "prefix", 0], `${JSON.stringify(program)} ${problem}`);
      }
    });
    const args = entry.args ?? [];
    const compiled: RegExp[] = [];
    args.forEach((pattern, i) =>
      unit(() => {
        const path: JsonPath = [...base, "args", i];
        let re: RegExp;
        try {
          re = compileArgPattern(pattern);
        } catch (cause) {
          if (cause instanceof PolicyError) {
            throw errorAt("POLICY_LINT", src, path, cause.message, { cause });
          }
          throw cause;
        }
        const hit = probeArgPattern(re);
        if (hit !== null) {
          throw lint(
            src,
            path,
            `argument pattern ${JSON.stringify(pattern)} admits ${hit.kind} (${
              JSON.stringify(hit.sample)
            }); narrow it`,
          );
        }
        compiled.push(re);
      })
    );
    unit(() => {
      if (entry.variadic === true && args.length === 0) {
        throw lint(src, [...base, "variadic"], "variadic needs at least one args pattern");
      }
    });
    unit(() => {
      if (entry.cwd === undefined) return;
      const cwd = cwdProblem(entry.cwd);
      if (cwd !== null) {
        throw lint(src, [...base, "cwd"], `cwd ${JSON.stringify(entry.cwd)} ${cwd}`);
      }
    });
    (entry.writes ?? []).forEach((glob, i) =>
      unit(() => {
        const path: JsonPath = [...base, "writes", i];
        const bad = writesGlobProblem(glob);
        if (bad !== null) throw lint(src, path, `writes glob ${JSON.stringify(glob)} ${bad}`);
        const hit = covered.find((p) => fnmatch(p, glob) || protectedMatch(p, [glob]));
        if (hit !== undefined) {
          throw lint(src, path, `writes glob ${JSON.stringify(glob)} covers the brief path ${hit}`);
        }
      })
    );
    const network = entry.network;
    if (Array.isArray(network)) {
      network.forEach((rule, i) =>
        unit(() => {
          const r = parseNetworkRule(rule);
          if (!r.ok) throw lint(src, [...base, "network", i], r.problem);
        })
      );
    }
    if (entry.stdin_gates !== undefined) {
      unit(() => {
        if (entry.stdin_gates?.length === 0) {
          throw lint(src, [...base, "stdin_gates"], "is empty; stdin content would run ungated");
        }
      });
      entry.stdin_gates.forEach((gate, i) =>
        unit(() => {
          if (!Object.hasOwn(gates, gate)) {
            throw lint(
              src,
              [...base, "stdin_gates", i],
              `names ${JSON.stringify(gate)}, which is not in proposal_gates`,
            );
          }
        })
      );
    }
    return compiled;
  });
}

function checkProtected(raw: RawPolicy, src: JsonSource): void {
  (raw.protected_paths ?? []).forEach((p, i) => {
    const problem = matchPatternProblem(p, "protected");
    if (problem !== null) {
      throw lint(src, ["protected_paths", i], `protected path ${JSON.stringify(p)} ${problem}`);
    }
  });
}

function checkSwitch(raw: RawPolicy, src: JsonSource): void {
  if (raw.write_policy !== "orchestrator-only") return;
  const profile = raw.privilege_profile;
  if (profile !== "confined" && profile !== "exclusive") {
    throw lint(
      src,
      profile === undefined ? ["write_policy"] : ["privilege_profile"],
      'write_policy "orchestrator-only" needs an explicit privilege_profile of "confined" or ' +
        `"exclusive"${profile === undefined ? "" : `, not ${JSON.stringify(profile)}`}`,
    );
  }
}

function checkGrants(raw: RawPolicy, src: JsonSource): void {
  for (const [agent, grant] of Object.entries(raw.mcp_grants ?? {})) {
    if (agent === "orchestrator") {
      throw errorAt(
        "POLICY_LINT",
        src,
        ["mcp_grants", agent],
        "the orchestrator uses the CLI, not the agentteams_runner server",
        { key: true },
      );
    }
    const seen = new Set<string>();
    grant.tools.forEach((tool, i) => {
      if (seen.has(tool)) {
        throw errorAt("BRIEF_INVALID", src, ["mcp_grants", agent, "tools", i], "repeats a tool");
      }
      seen.add(tool);
    });
  }
}

/**
 * Runs every lint rule on validated policy fields; returns the compiled argument patterns.
 * `briefRel` is the brief's project-relative path (`null` when it lies outside the project).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseJsonSource } from "./json_source.ts";
 * import { validateBrief } from "./validate.ts";
 * import { lintPolicy } from "./lint.ts";
 * const text = '{"agent_policies": {"w": {"commands": [{"prefix": ["lake"], "args": [".*"]}]}}}';
 * const src = parseJsonSource(text, "b.json");
 * assert.throws(() => lintPolicy(validateBrief(src), src, null), {
 *   code: "POLICY_LINT",
 *   message: /agent_policies\.w\.commands\[0\]\.args\[0\]: argument pattern "\.\*" admits an option \("-x"\)/,
 * });
 * ```
 */
export function lintPolicy(raw: RawPolicy, src: JsonSource, briefRel: string | null): CompiledArgs {
  return lintUnits(raw, src, briefRel, (check) => check());
}

/**
 * The lint's checks, in their order, each unit run through `unit` (which runs it, and may catch
 * what it throws): the one sequence `lintPolicy` and `lintFindings` share.
 */
function lintUnits(
  raw: RawPolicy,
  src: JsonSource,
  briefRel: string | null,
  unit: Unit,
): CompiledArgs {
  unit(() => checkKeys(raw, src));
  unit(() => checkSwitch(raw, src));
  unit(() => checkGates(raw, src));
  const covered = briefPaths(briefRel);
  const compiled = new Map<string, RegExp[][]>();
  for (const [agent, policy] of Object.entries(raw.agent_policies ?? {})) {
    checkScopes(agent, policy.write_scopes ?? [], src, covered, unit);
    compiled.set(agent, checkCommands(agent, raw, src, covered, unit));
  }
  unit(() => checkProtected(raw, src));
  unit(() => checkGrants(raw, src));
  return compiled;
}

/**
 * Every lint problem of a shape-checked brief at once (the `brief check` command), where
 * `lintPolicy` stops at the first: the same checks in the same order, each unit (the keys, the
 * switch, the gates, each write scope, each part of each command entry: its program, each
 * argument pattern, its variadic and cwd, each writes glob and stdin gate; the protected paths,
 * the grants) reporting its first problem. Returns `[]` for a brief `lintPolicy` accepts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseJsonSource } from "./json_source.ts";
 * import { validateBrief } from "./validate.ts";
 * import { lintFindings } from "./lint.ts";
 * const text = '{"agent_policies": {"a": {"write_scopes": ["/abs"]}, "b": {"write_scopes": ["../up"]}}}';
 * const src = parseJsonSource(text, "b.json");
 * assert.equal(lintFindings(validateBrief(src), src, null).length, 2);
 * ```
 */
export function lintFindings(
  raw: RawPolicy,
  src: JsonSource,
  briefRel: string | null,
): PolicyError[] {
  const out: PolicyError[] = [];
  lintUnits(raw, src, briefRel, (check) => {
    try {
      check();
    } catch (e) {
      if (!(e instanceof PolicyError)) throw e;
      out.push(e);
    }
  });
  return out;
}

/**
 * The project-relative paths the warnings ask about: each agent's literal, safe write scopes
 * (the caller says which of them are existing directories).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { literalScopes } from "./lint.ts";
 * assert.deepEqual(literalScopes({ w: { writeScopes: ["src", "docs/", "a/*.md"] } }), ["src"]);
 * ```
 */
export function literalScopes(
  agents: Readonly<Record<string, { readonly writeScopes: readonly string[] }>>,
): string[] {
  const out = new Set<string>();
  for (const ap of Object.values(agents)) {
    for (const s of ap.writeScopes) {
      if (isLiteralScope(s) && scopePatternProblem(s) === null) out.add(s);
    }
  }
  return [...out];
}

/**
 * Warnings (not refusals) on a linted brief, each naming the file, line, column and JSON path: a
 * literal write scope that names one of `dirs` (project-relative paths known to be existing
 * directories) covers only a file of that name. Pure: which paths are directories is passed in.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseJsonSource } from "./json_source.ts";
 * import { validateBrief } from "./validate.ts";
 * import { scopeWarnings } from "./lint.ts";
 * const src = parseJsonSource('{"agent_policies": {"w": {"write_scopes": ["src"]}}}', "b.json");
 * assert.deepEqual(scopeWarnings(validateBrief(src), src, new Set(["src"])), [
 *   'b.json:1:44: agent_policies.w.write_scopes[0]: write scope "src" is an existing directory, but ' +
 *   'the scope "src" names the file src only; write "src/" for the directory',
 * ]);
 * ```
 */
export function scopeWarnings(
  raw: RawPolicy,
  src: JsonSource,
  dirs: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  for (const [agent, policy] of Object.entries(raw.agent_policies ?? {})) {
    (policy.write_scopes ?? []).forEach((scope, i) => {
      if (!isLiteralScope(scope) || !dirs.has(scope)) return;
      out.push(
        errorAt(
          "POLICY_LINT",
          src,
          ["agent_policies", agent, "write_scopes", i],
          `write scope ${JSON.stringify(scope)} is an existing directory, but ${
            literalDirScopeHint(scope)
          }`,
        ).message,
      );
    });
  }
  return out;
}

/**
 * The directory part of a `writes` glob that the sandbox would have to make writable: its
 * segments before the first one holding a glob character, less the last segment when the whole
 * glob is literal (a file).
 */
function writesDir(glob: string): string {
  const segs = glob.split("/").filter((x) => x !== "");
  const firstGlob = segs.findIndex((x) => /[*?[]/.test(x));
  return (firstGlob < 0 ? segs.slice(0, -1) : segs.slice(0, firstGlob)).join("/");
}

/** Whether two project-relative directories are the same or one holds the other. */
function nested(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/**
 * Warnings on a brief that carries `confined_programs` (so no operator file may replace it): an
 * agent with commands but no entry there, whose commands cannot run confined at all; and a
 * command's `writes` glob that no directory of its agent's confined `write` list holds or lies
 * in, which the sandbox leaves read-only, so the command would fail writing it. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseJsonSource } from "./json_source.ts";
 * import { validateBrief } from "./validate.ts";
 * import { confinedWriteWarnings } from "./lint.ts";
 * const src = parseJsonSource(JSON.stringify({
 *   agent_policies: { w: { commands: [{ prefix: ["touch"], writes: ["src/*"] }] } },
 *   confined_programs: { w: { exec: ["/usr/bin"], write: [] } },
 * }), "b.json");
 * const out = confinedWriteWarnings(validateBrief(src), src);
 * assert.equal(out.length, 1);
 * assert.ok(out[0].includes('add "src" to confined_programs.w.write'));
 * ```
 */
export function confinedWriteWarnings(raw: RawPolicy, src: JsonSource): string[] {
  const confined = raw.confined_programs;
  if (confined === undefined) return [];
  const out: string[] = [];
  for (const [agent, policy] of Object.entries(raw.agent_policies ?? {})) {
    const commands = policy.commands ?? [];
    if (commands.length === 0) continue;
    const entry = Object.hasOwn(confined, agent) ? confined[agent] : undefined;
    if (entry === undefined) {
      out.push(
        errorAt(
          "POLICY_LINT",
          src,
          ["agent_policies", agent, "commands"],
          `confined_programs has no entry for ${agent}, so none of its commands can run confined; ` +
            `add "${agent}": {"exec": [...], "write": [...]} to confined_programs`,
        ).message,
      );
      continue;
    }
    const roots = entry.write.map((r) => r.replace(/\/+$/, ""));
    commands.forEach((cmd, i) => {
      (cmd.writes ?? []).forEach((glob, j) => {
        const dir = writesDir(glob);
        if (dir === "" || roots.some((r) => nested(dir, r))) return;
        out.push(
          errorAt(
            "POLICY_LINT",
            src,
            ["agent_policies", agent, "commands", i, "writes", j],
            `confined, ${JSON.stringify(cmd.prefix[0])} cannot write ${JSON.stringify(glob)}: ` +
              `no directory of confined_programs.${agent}.write holds it, and the sandbox leaves ` +
              `the rest of the project read-only; add ${
                JSON.stringify(dir)
              } to confined_programs.${agent}.write`,
          ).message,
        );
      });
    });
  }
  return out;
}

/**
 * Every warning on a linted brief, in one list: {@link scopeWarnings} (given which literal
 * scopes are existing directories) then {@link confinedWriteWarnings}. The one list the loader
 * and `brief check` report.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseJsonSource } from "./json_source.ts";
 * import { validateBrief } from "./validate.ts";
 * import { briefWarnings } from "./lint.ts";
 * const src = parseJsonSource('{"agent_policies": {"w": {"write_scopes": ["src"]}}}', "b.json");
 * assert.equal(briefWarnings(validateBrief(src), src, new Set(["src"])).length, 1);
 * ```
 */
export function briefWarnings(
  raw: RawPolicy,
  src: JsonSource,
  dirs: ReadonlySet<string>,
): string[] {
  return [...scopeWarnings(raw, src, dirs), ...confinedWriteWarnings(raw, src)];
}
