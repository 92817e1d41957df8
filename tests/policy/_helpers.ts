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
import fc from "fast-check";
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

// ---- generators shared by the zod-replay property tests ----------------------------------------
// (tests/policy/shape_check_test.ts and tests/proposals/artifact_check_test.ts)

/** A fast-check arbitrary of anything. */
export type Arb = fc.Arbitrary<unknown>;

/** The nested key order of a value, so that `{a, b}` and `{b, a}` differ. */
export function keyOrder(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(keyOrder);
  if (typeof v === "object" && v !== null) {
    return Reflect.ownKeys(v).map((k) => [k, keyOrder((v as Record<PropertyKey, unknown>)[k])]);
  }
  return null;
}

/** An object with exactly these own enumerable entries (an own `__proto__` included), in order. */
export function build(entries: [string, unknown][], nullProto: boolean): Record<string, unknown> {
  const o: Record<string, unknown> = nullProto ? Object.create(null) : {};
  for (const [k, v] of entries) {
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return o;
}

/** A field of a generated strict object. */
export type Field = { arb: Arb; required: boolean };
/** A required field. */
export const req = (arb: Arb): Field => ({ arb, required: true });
/** An optional field. */
export const opt = (arb: Arb): Field => ({ arb, required: false });

/** What a test's generators differ in. */
export interface ObjectKitOptions {
  /** Values that fit nowhere, mixed into every wrong value. */
  readonly junk: Arb;
  /** Keys tried as unknown keys. */
  readonly extraKeys: fc.Arbitrary<string>;
  /** How many unknown keys at most, for a given `bad`. */
  readonly maxExtras: (bad: number) => number;
}

/** `mix` and `anObject` over a test's junk and unknown keys. */
export interface ObjectKit {
  /** `good` mostly; with `bad` > 0, also `wrong` or junk (weight `bad` against 12). */
  mix(good: Arb, wrong: Arb, bad: number): Arb;
  /**
   * A strict object: each field present (optional ones sometimes absent, required ones absent
   * only when `bad`), extra keys only when `bad`, in a shuffled order, on either prototype.
   */
  anObject(shape: Record<string, Field>, bad: number): Arb;
}

/**
 * The object generators of a zod-replay property test.
 *
 * @example
 * ```ts
 * import fc from "fast-check";
 * import { objectKit, req } from "./_helpers.ts";
 * const { anObject } = objectKit({
 *   junk: fc.constant(null),
 *   extraKeys: fc.constant("x"),
 *   maxExtras: () => 1,
 * });
 * anObject({ a: req(fc.string()) }, 0);
 * ```
 */
export function objectKit(opts: ObjectKitOptions): ObjectKit {
  const { junk, extraKeys, maxExtras } = opts;
  const mix = (good: Arb, wrong: Arb, bad: number): Arb =>
    bad === 0 ? good : fc.oneof({ arbitrary: good, weight: 12 }, {
      arbitrary: fc.oneof(wrong, junk),
      weight: bad,
    });
  const anObject = (shape: Record<string, Field>, bad: number): Arb => {
    const fields = Object.entries(shape).map(([key, f]) => {
      // An optional field may also be present as `undefined`, which zod keeps as a key.
      const arb = f.required
        ? f.arb
        : fc.oneof({ arbitrary: f.arb, weight: 15 }, fc.constant(undefined));
      const entry = arb.map((v): [string, unknown] | null => [key, v]);
      if (f.required && bad === 0) return entry;
      return fc.option(entry, { nil: null, freq: f.required ? 20 : 2 });
    });
    const extras = bad === 0
      ? fc.constant([] as [string, unknown][])
      : fc.array(fc.tuple(extraKeys, junk), { maxLength: maxExtras(bad) }).map((es) =>
        es.filter((e, i) => es.findIndex((f) => f[0] === e[0]) === i)
      );
    const good = fc.tuple(fc.tuple(...fields), extras, fc.boolean()).chain(([fs, es, np]) => {
      const entries = [...fs.filter((e) => e !== null), ...es.filter(([k]) => !(k in shape))];
      return fc.shuffledSubarray(entries, { minLength: entries.length }).map((e) => build(e, np));
    });
    return mix(good, fc.constantFrom<unknown>([], [{}], "", { length: 1 }), bad);
  };
  return { mix, anObject };
}
