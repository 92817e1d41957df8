/**
 * Shared helpers for the policy tests.
 *
 * @example
 * ```ts
 * import { expectPolicyError } from "./_helpers.ts";
 * expectPolicyError(() => { throw new Error("x"); }, "POLICY_LINT"); // fails: not a PolicyError
 * ```
 * @module
 */

import assert from "node:assert/strict";
import { PolicyError } from "../../lib/errors.ts";
import { assertRefusal } from "../_helpers/assert.ts";
import { parsePolicy } from "../../lib/policy/parse.ts";
import type { Policy } from "../../lib/policy/types.ts";

/** parsePolicy options for a brief at `/proj/agentteams.jsonc`. */
export const OPTS = Object.freeze({
  briefPath: "/proj/agentteams.jsonc",
  projectRoot: "/proj",
  briefSha256: "ab".repeat(32),
});

/** Asserts that `e`'s message holds every `parts` string; returns `e`. */
function withParts(e: PolicyError, parts: readonly string[]): PolicyError {
  for (const part of parts) {
    assert.ok(e.message.includes(part), `message lacks ${JSON.stringify(part)}: ${e.message}`);
  }
  return e;
}

/**
 * Asserts that `fn` throws a `PolicyError` with `code` ({@link assertRefusal}), whose message
 * contains every `parts` string; returns the error.
 *
 * @example
 * ```ts
 * import { expectPolicyError } from "./_helpers.ts";
 * ```
 */
export function expectPolicyError(
  fn: () => unknown,
  code: string,
  ...parts: string[]
): PolicyError {
  const e = assertRefusal(fn, code, PolicyError);
  if (e instanceof Promise) {
    e.catch(() => {}); // its verdict is moot: a promise is not a throw
    assert.fail("expectPolicyError: fn returned a promise (use expectPolicyErrorAsync)");
  }
  return withParts(e, parts);
}

/** Async version of {@link expectPolicyError}. */
export async function expectPolicyErrorAsync(
  fn: () => Promise<unknown>,
  code: string,
  ...parts: string[]
): Promise<PolicyError> {
  return withParts(await assertRefusal(fn, code, PolicyError), parts);
}

/** Parses a brief given as an object (serialized as JSON) with {@link OPTS}. */
export function parseObject(brief: unknown): Policy {
  return parsePolicy(JSON.stringify(brief, null, 2), OPTS);
}

/** A brief with one agent `worker` holding one command entry. */
export function withCommand(
  entry: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { agent_policies: { worker: { commands: [entry] } }, ...extra };
}
