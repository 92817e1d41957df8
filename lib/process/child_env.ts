/**
 * The environment a command, gate or git call receives: a short allowlist copied from the parent,
 * a PATH of absolute entries, and never a key, token or `DENO_*` variable.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { childEnv } from "./child_env.ts";
 * const env = childEnv({ HOME: "/home/op", PATH: ".:/usr/bin", GITHUB_TOKEN: "x" });
 * assert.deepEqual(env, { HOME: "/home/op", PATH: "/usr/bin" });
 * ```
 * @module
 */

/** Variable names copied from the parent when present (plus every `LC_*`). */
export const PASSED_ENV_NAMES: readonly string[] = Object.freeze([
  "HOME",
  "LANG",
  "TMPDIR",
  "USER",
  "LOGNAME",
  "TERM",
]);

/**
 * Every variable building a child's environment reads (names and `LC_*`), PATH included: the
 * permission layer grants exactly these.
 */
export const CHILD_ENV: readonly string[] = Object.freeze([...PASSED_ENV_NAMES, "LC_*", "PATH"]);

/** The PATH a child gets when the parent's PATH has no absolute entry. */
export const FALLBACK_PATH = "/usr/bin:/bin";

/**
 * Name shapes that are never passed, whatever an allowlist says: keys, tokens, secrets,
 * passwords, credentials, this tool's own settings, Deno's settings, loader injection and git
 * redirection. Matched case-insensitively.
 */
const NEVER_PASSED: readonly RegExp[] = [
  /KEY/i,
  /TOKEN/i,
  /SECRET/i,
  /PASS(WORD|WD|PHRASE)?/i,
  /CREDENTIAL/i,
  /AUTH/i,
  /COOKIE/i,
  /PRIVATE/i,
  /^AGENTTEAMS/i,
  /^DENO_/i,
  /^LD_/i,
  /^DYLD_/i,
  /^NODE_OPTIONS$/i,
  /^GIT_/i,
];

/** Names a caller may set explicitly (`set`) even though a parent's copy would be refused. */
const SETTABLE_EXCEPTIONS: readonly RegExp[] = [
  /^GIT_(OPTIONAL_LOCKS|TERMINAL_PROMPT)$/,
  // The operator's choice of config files, passed to the tool's own git calls only.
  /^GIT_CONFIG_(GLOBAL|SYSTEM|NOSYSTEM)$/,
];

/**
 * Returns true when a variable name must never reach a child (keys, tokens, `DENO_*`, ...).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSecretName } from "./child_env.ts";
 * assert.equal(isSecretName("AGENTTEAMS_PROPOSAL_LEDGER_KEY"), true);
 * assert.equal(isSecretName("LANG"), false);
 * ```
 */
export function isSecretName(name: string): boolean {
  return NEVER_PASSED.some((re) => re.test(name));
}

/**
 * Keeps only the absolute entries of a PATH value (a relative or empty entry would search the
 * working directory, which lies in the project). Duplicates are dropped; order is kept.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sanitizePath } from "./child_env.ts";
 * assert.equal(sanitizePath("bin::/usr/bin:./x:/bin:/usr/bin"), "/usr/bin:/bin");
 * ```
 */
export function sanitizePath(value: string | undefined): string {
  if (value === undefined) return "";
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const entry of value.split(":")) {
    if (!entry.startsWith("/") || entry.includes("\0") || seen.has(entry)) continue;
    seen.add(entry);
    kept.push(entry);
  }
  return kept.join(":");
}

/** Options of {@link childEnv}. */
export interface ChildEnvOptions {
  /** Further names to copy from the parent; secret-shaped names are still refused. */
  readonly extraNames?: readonly string[];
  /** Values set by the caller (e.g. a confined run's `TMPDIR`); secret-shaped names are refused. */
  readonly set?: Readonly<Record<string, string>>;
}

function validName(name: string): boolean {
  return name.length > 0 && !name.includes("=") && !name.includes("\0");
}

/**
 * Builds a child's whole environment from the parent's: the allowlist (`HOME`, `LANG`, `LC_*`,
 * `TMPDIR`, `USER`, `LOGNAME`, `TERM`, plus `extraNames`), a sanitized `PATH`, then `set`.
 * A secret-shaped name is dropped from every source.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { childEnv } from "./child_env.ts";
 * assert.equal(childEnv(Deno.env.toObject(), { set: { TMPDIR: "/tmp/run-1" } }).TMPDIR, "/tmp/run-1");
 * ```
 */
export function childEnv(
  parent: Readonly<Record<string, string | undefined>>,
  options: ChildEnvOptions = {},
): Record<string, string> {
  const wanted = new Set([...PASSED_ENV_NAMES, ...(options.extraNames ?? [])]);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined || !validName(name) || value.includes("\0")) continue;
    if (!wanted.has(name) && !name.startsWith("LC_")) continue;
    if (isSecretName(name)) continue;
    env[name] = value;
  }
  const path = sanitizePath(parent.PATH);
  env.PATH = path === "" ? FALLBACK_PATH : path;
  for (const [name, value] of Object.entries(options.set ?? {})) {
    if (!validName(name) || value.includes("\0")) continue;
    if (isSecretName(name) && !SETTABLE_EXCEPTIONS.some((re) => re.test(name))) continue;
    env[name] = name === "PATH" ? sanitizePath(value) || FALLBACK_PATH : value;
  }
  return env;
}
