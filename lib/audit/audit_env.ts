/**
 * The environment the audit reads: the `yaml` package's parser reads its two debug switches on
 * every parse (the audit reads no key, ever).
 *
 * @example
 * ```ts
 * import { AUDIT_ENV } from "./audit_env.ts";
 * AUDIT_ENV.includes("LOG_TOKENS"); // true
 * ```
 * @module
 */

/** The `yaml` parser's debug variables. */
export const AUDIT_ENV: readonly string[] = Object.freeze(["LOG_TOKENS", "LOG_STREAM"]);
