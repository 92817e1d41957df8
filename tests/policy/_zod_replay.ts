/**
 * The scaffolding of the zod-replay tests (`tests/policy/shape_check_test.ts`,
 * `tests/artifacts/artifact_check_test.ts`), which check that a hand-written checker of
 * `lib/policy/shape_check.ts` gives what its zod schema gives: the object generators, the
 * comparison of one verdict, and the deterministic sweep of edits around a full valid value.
 *
 * @example
 * ```ts
 * import { assertAgrees, ReplayStats } from "./_zod_replay.ts";
 * import { PolicyFieldsSchema } from "../../lib/policy/brief_schema.ts";
 * import { checkPolicyFields } from "../../lib/policy/shape_check.ts";
 * assertAgrees(PolicyFieldsSchema, checkPolicyFields, { write_policy: "x" }, new ReplayStats());
 * ```
 * @module
 */

import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import type { ShapeResult } from "../../lib/policy/shape_check.ts";

// ---- comparing one verdict ---------------------------------------------------------------------

/** The part of a zod `safeParse` result the comparison reads. */
export type ZodVerdict =
  | { success: true; data: unknown }
  | { success: false; error: { issues: readonly ZodIssueLike[] } };

/** The part of a zod issue the comparison reads. */
export interface ZodIssueLike {
  /** The issue code. */
  code: string;
  /** Where the issue is. */
  path: PropertyKey[];
  /** zod's English message. */
  message: string;
}

/** What the checker and zod saw, for the assertions that the inputs covered what they should. */
export class ReplayStats {
  /** Inputs both accepted. */
  ok = 0;
  /** Inputs both refused. */
  failed = 0;
  /** The code of every issue reported. */
  codes = new Set<string>();
  /** The code of every first issue reported. */
  firstCodes = new Set<string>();
  /** Every message reported, through `normalize`. */
  messages = new Set<string>();
  /** @param normalize how a message is recorded (by default with numbers as N). */
  constructor(
    readonly normalize: (message: string) => string = (m) => m.replace(/[0-9]+/g, "N"),
  ) {}
}

/** The nested key order of a value, so that `{a, b}` and `{b, a}` differ. */
export function keyOrder(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(keyOrder);
  if (typeof v === "object" && v !== null) {
    return Reflect.ownKeys(v).map((k) => [k, keyOrder((v as Record<PropertyKey, unknown>)[k])]);
  }
  return null;
}

/**
 * Asserts that a checker's result equals zod's entirely: the verdict; the data, key order
 * included; or the issues in order, field for field and key order included, the first one (what
 * the callers report) compared first, path, message and keys. Counts the case in `stats`.
 */
function assertReplays(
  zod: ZodVerdict,
  mine: ShapeResult<unknown>,
  stats: ReplayStats,
): void {
  assert.equal(mine.ok, zod.success, "verdict");
  if (zod.success && mine.ok) {
    stats.ok++;
    assert.deepStrictEqual(mine.data, zod.data);
    assert.deepStrictEqual(keyOrder(mine.data), keyOrder(zod.data));
  } else if (!zod.success && !mine.ok) {
    stats.failed++;
    const theirs = zod.error.issues;
    const first = theirs[0];
    const myFirst = mine.issues[0];
    assert.deepStrictEqual(myFirst.path, first.path);
    assert.equal(myFirst.message, first.message);
    assert.deepStrictEqual(
      "keys" in myFirst ? myFirst.keys : undefined,
      "keys" in first ? first.keys : undefined,
    );
    assert.deepStrictEqual(mine.issues, theirs);
    assert.deepStrictEqual(keyOrder(mine.issues), keyOrder(theirs));
    stats.firstCodes.add(myFirst.code);
    for (const i of mine.issues) {
      stats.codes.add(i.code);
      stats.messages.add(stats.normalize(i.message));
    }
  }
}

/** A zod schema, as far as the comparison uses it. */
export interface ZodLike {
  /** zod's `safeParse`. */
  safeParse(value: unknown): ZodVerdict;
}

/**
 * Asserts that a checker agrees with its zod schema on `value`: {@link assertReplays} on zod's
 * verdict; or, where zod itself throws (a TypeError comparing a `length` that has no primitive
 * value, as `{"length": {}}` from the JSONC parser, whose objects have no prototype), that the
 * checker refuses instead. Returns zod's verdict, `null` where zod threw.
 *
 * @example
 * ```ts
 * import { assertAgrees, ReplayStats } from "./_zod_replay.ts";
 * import { PolicyFieldsSchema } from "../../lib/policy/brief_schema.ts";
 * import { checkPolicyFields } from "../../lib/policy/shape_check.ts";
 * assertAgrees(PolicyFieldsSchema, checkPolicyFields, { write_policy: "x" }, new ReplayStats());
 * ```
 */
export function assertAgrees(
  schema: ZodLike,
  check: (value: unknown) => ShapeResult<unknown>,
  value: unknown,
  stats: ReplayStats,
): ZodVerdict | null {
  let zod: ZodVerdict;
  try {
    zod = schema.safeParse(value);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    assert.equal(check(value).ok, false, "zod threw; not refused");
    return null;
  }
  assertReplays(zod, check(value), stats);
  return zod;
}

// ---- a deterministic sweep ---------------------------------------------------------------------

/** A key or index path into a JSON value. */
type NodePath = (string | number)[];

type Json = Record<string | number, unknown>;

/** The path of every node of `v` (the root included), depth first: `{a: [1]}` has `[]`, `["a"]`, `["a", 0]`. */
function nodePaths(v: unknown, at: NodePath = []): NodePath[] {
  const here = [at];
  if (Array.isArray(v)) v.forEach((x, i) => here.push(...nodePaths(x, [...at, i])));
  else if (typeof v === "object" && v !== null) {
    for (const [k, x] of Object.entries(v)) here.push(...nodePaths(x, [...at, k]));
  }
  return here;
}

/** A copy of the JSON value `full` with `edit` applied to the node at `path` (via its parent). */
function edited(full: unknown, path: NodePath, edit: (parent: Json, key: string | number) => void) {
  const root = { top: JSON.parse(JSON.stringify(full)) };
  let parent: Json = root;
  let key: string | number = "top";
  for (const k of path) {
    parent = parent[key] as Json;
    key = k;
  }
  edit(parent, key);
  return root.top;
}

/**
 * Copies of the JSON value `full` with each node in turn (see {@link nodePaths}) replaced by
 * every `edges` value, removed (but the root), and, when it is a non-array object, given each of
 * `extraKeys` (as an own enumerable key, `__proto__` included): `{a: 1}` with edges `[null]` and
 * extra keys `["x"]` gives 5 copies.
 */
function sweepEdits(
  full: unknown,
  edges: readonly unknown[],
  extraKeys: readonly string[],
): unknown[] {
  const out: unknown[] = [];
  for (const path of nodePaths(full)) {
    for (const edge of edges) out.push(edited(full, path, (p, k) => (p[k] = edge)));
    if (path.length > 0) out.push(edited(full, path, (p, k) => delete p[k]));
    for (const extra of extraKeys) {
      out.push(edited(full, path, (p, k) => {
        const node = p[k];
        if (typeof node !== "object" || node === null || Array.isArray(node)) return;
        Object.defineProperty(node, extra, { value: 1, enumerable: true, configurable: true });
      }));
    }
  }
  return out;
}

/**
 * Runs `agree` on every copy of {@link sweepEdits}; returns how many nodes `full` has (so a test
 * can pin that the sweep covered all of them).
 *
 * @example
 * ```ts
 * import { sweep } from "./_zod_replay.ts";
 * let cases = 0;
 * sweep({ a: 1 }, [null], ["x"], () => cases++); // 2 nodes; cases is 5
 * ```
 */
export function sweep(
  full: unknown,
  edges: readonly unknown[],
  extraKeys: readonly string[],
  agree: (value: unknown) => void,
): number {
  for (const v of sweepEdits(full, edges, extraKeys)) agree(v);
  return nodePaths(full).length;
}

/** What a sweep must have reached: see {@link assertSeen}. */
export interface Seen {
  /** Codes that some issue had. */
  readonly codes?: readonly string[];
  /** Codes that some first issue had. */
  readonly firstCodes?: readonly string[];
  /** Messages (as `stats.normalize` records them) that some issue had. */
  readonly messages: readonly string[];
}

/**
 * Asserts that `stats` recorded every code and message of `seen`.
 *
 * @example
 * ```ts
 * import { assertSeen, ReplayStats } from "./_zod_replay.ts";
 * assertSeen(new ReplayStats(), { messages: [] });
 * ```
 */
export function assertSeen(stats: ReplayStats, seen: Seen): void {
  for (const code of seen.codes ?? []) {
    assert.ok(stats.codes.has(code), `no ${code}: ${[...stats.codes]}`);
  }
  for (const code of seen.firstCodes ?? []) {
    assert.ok(stats.firstCodes.has(code), `no first ${code}: ${[...stats.firstCodes]}`);
  }
  for (const m of seen.messages) {
    assert.ok(stats.messages.has(m), `no "${m}" in ${[...stats.messages].join("\n")}`);
  }
}

// ---- generators --------------------------------------------------------------------------------

/** A fast-check arbitrary of anything. */
export type Arb = fc.Arbitrary<unknown>;

/**
 * Anything, exotic objects included (null prototypes, boxed values, dates, maps, sparse and typed
 * arrays), with object keys from `keys` and the awkward `length`, `__proto__` and `constructor`.
 *
 * @example
 * ```ts
 * import { exoticValues } from "./_zod_replay.ts";
 * exoticValues(["kind"], { maxDepth: 3 });
 * ```
 */
export function exoticValues(
  keys: readonly string[],
  constraints: { maxDepth: number; withObjectString?: boolean },
): Arb {
  return fc.anything({
    key: fc.constantFrom(...keys, "length", "__proto__", "constructor"),
    withNullPrototype: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSparseArray: true,
    withTypedArray: true,
    ...constraints,
  });
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
 * import fc from "../_helpers/fc.ts";
 * import { objectKit, req } from "./_zod_replay.ts";
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
