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
import { parsePolicy } from "../../lib/policy/parse.ts";
import type { Policy } from "../../lib/policy/types.ts";

/** parsePolicy options for a brief at `/proj/agentteams.jsonc`. */
export const OPTS = Object.freeze({
  briefPath: "/proj/agentteams.jsonc",
  projectRoot: "/proj",
  briefSha256: "ab".repeat(32),
});

/** Asserts that `caught` is a `PolicyError` with `code` whose message holds every `parts` string. */
function assertPolicyError(caught: unknown, code: string, parts: readonly string[]): PolicyError {
  assert.ok(caught instanceof PolicyError, `expected PolicyError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  for (const part of parts) {
    assert.ok(
      caught.message.includes(part),
      `message lacks ${JSON.stringify(part)}: ${caught.message}`,
    );
  }
  return caught;
}

/**
 * Asserts that `fn` throws a `PolicyError` with `code`, whose message contains every `parts`
 * string; returns the error.
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
  let caught: unknown = null;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  return assertPolicyError(caught, code, parts);
}

/** Async version of {@link expectPolicyError}. */
export async function expectPolicyErrorAsync(
  fn: () => Promise<unknown>,
  code: string,
  ...parts: string[]
): Promise<PolicyError> {
  let caught: unknown = null;
  try {
    await fn();
  } catch (e) {
    caught = e;
  }
  return assertPolicyError(caught, code, parts);
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
