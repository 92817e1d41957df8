/**
 * The hot-path shape check of the brief's policy fields, and the small checker kit it and
 * `lib/artifacts/artifact_check.ts` are built from.
 *
 * The zod schemas in `schema.ts` stay the reference (they also generate the JSON Schemas), but
 * importing zod costs about 35 ms of the ~130 ms `agentteams run` / `apply` budget. These checkers
 * replay what zod 4.6.7 does for exactly the constructs those schemas use — `z.string()` with
 * `min`/`max`/`regex`, `z.int()` with `min`/`max`, `z.boolean()`, `z.enum`, `z.literal`,
 * `z.array` with `min`/`max`, `z.strictObject`, `z.record(z.string(), …)`, `.optional()` and
 * `z.union` — and report the same issues, in the same order, with zod's English messages, and the
 * same parsed data (new objects, keys in schema order, absent optional keys left out). The property
 * tests (`tests/policy/shape_check_test.ts`, `tests/artifacts/artifact_check_test.ts`) compare them
 * with zod on thousands of generated inputs; a change to a zod schema must be mirrored here, and
 * those tests fail until it is.
 *
 * Zod behaviours replayed on purpose (all visible in its source, `v4/core/schemas.js` and
 * `checks.js`):
 * - length checks (`min`/`max` on strings and arrays) still run after a type error when the value
 *   has a `length` (`""` given to an array with `min(1)` also reports a string too_small); they
 *   count a string in code points (a lone surrogate counts as one);
 * - an array longer than its `max` reports that `too_big` alone: its elements are not checked;
 * - other checks (regex, number bounds) are skipped once an issue without `continue` is reported;
 * - an unsafe integer reports `too_big`/`too_small` against the safe range and then still the
 *   schema's own bounds; NaN and ±Infinity are `invalid_type` with `received`;
 * - a strict object reports its unknown keys (including an own `__proto__`) in one
 *   `unrecognized_keys` issue after the issues of its fields;
 * - a record silently skips an own `__proto__` key (neither checked nor copied);
 * - a union whose options all fail returns the one option that failed without aborting (a string
 *   that misses a pattern) or else `invalid_union` with every option's issues.
 *
 * @example
 * ```ts
 * import { checkPolicyFields } from "./shape_check.ts";
 * checkPolicyFields({ write_policy: "default" }).ok; // true
 * checkPolicyFields({ agent_policies: { w: { comands: [] } } }).ok; // false: unrecognized key
 * ```
 * @module
 */

import { KNOWN_FRAMEWORKS, MCP_RUNNER_TOOLS } from "./brief_fields.ts";
import type { RawPolicy } from "./brief_schema.ts";
import { MAX_COMMAND_TIMEOUT } from "./types.ts";

/** Where an issue is: keys and indexes from the checked value down. */
export type IssuePath = PropertyKey[];

/**
 * One issue, field for field as zod 4.6.7 finalizes it (without `input`), `message` being zod's
 * default English text.
 */
export type ShapeIssue =
  | {
    expected: string;
    code: "invalid_type";
    format?: string;
    received?: string;
    path: IssuePath;
    message: string;
  }
  | {
    code: "too_small";
    origin: string;
    minimum: number;
    inclusive: true;
    note?: string;
    path: IssuePath;
    message: string;
  }
  | {
    code: "too_big";
    origin: string;
    maximum: number;
    inclusive: true;
    note?: string;
    path: IssuePath;
    message: string;
  }
  | { code: "invalid_value"; values: string[]; path: IssuePath; message: string }
  | {
    origin: "string";
    code: "invalid_format";
    format: "regex";
    pattern: string;
    path: IssuePath;
    message: string;
  }
  | { code: "unrecognized_keys"; keys: string[]; path: IssuePath; message: string }
  | { code: "invalid_union"; errors: ShapeIssue[][]; path: IssuePath; message: string }
  | {
    code: "invalid_key";
    origin: "record";
    issues: ShapeIssue[];
    path: IssuePath;
    message: string;
  };

/** A check's verdict: the parsed data, or every issue in zod's order. */
export type ShapeResult<T> = { ok: true; data: T } | { ok: false; issues: ShapeIssue[] };

/** An issue being collected, with zod's `continue` flag (`true`: later checks still run). */
export interface Pending {
  /** The issue as it will be reported. */
  issue: ShapeIssue;
  /** zod's `continue`: `undefined` aborts later checks, `false` also stops length checks. */
  cont: boolean | undefined;
}

/** zod's parse payload: the value being built and the issues so far. */
export interface Payload {
  /** The input, or the new value built from it. */
  value: unknown;
  /** The issues so far, in order. */
  issues: Pending[];
}

/** A check run after a schema's type test, like a zod check (`.min()`, `.regex()`, …). */
export interface Check {
  /** Length checks run whenever the value has a `length`, even after a type error. */
  readonly sized: boolean;
  /** The limit of a `maxLength` check (an array longer than it is not looked into). */
  readonly maximum?: number;
  /** Adds issues to the payload when the value fails. */
  run(p: Payload): void;
}

/** A schema: checks a value, returns the parsed value and its issues. */
export interface Checker {
  /** Set by `optional()`: an absent key is no issue and is left out of the result. */
  readonly optional?: true;
  /** Checks `value`. */
  run(value: unknown): Payload;
}

// ---- zod's helpers (v4/core/util.js), ported as they are --------------------------------------

function aborted(issues: Pending[], start: number): boolean {
  for (let i = start; i < issues.length; i++) if (issues[i].cont !== true) return true;
  return false;
}

function explicitlyAborted(issues: Pending[]): boolean {
  for (const i of issues) if (i.cont === false) return true;
  return false;
}

function isObject(v: unknown): v is Record<PropertyKey, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isPlainObject(o: unknown): o is Record<PropertyKey, unknown> {
  if (!isObject(o)) return false;
  const ctor = o.constructor;
  if (ctor === undefined) return true;
  if (typeof ctor !== "function") return true;
  const prot: unknown = ctor.prototype;
  if (!isObject(prot)) return false;
  return Object.prototype.hasOwnProperty.call(prot, "isPrototypeOf");
}

function parsedType(data: unknown): unknown {
  const t = typeof data;
  if (t === "number") return Number.isNaN(data) ? "nan" : "number";
  if (t === "object") {
    if (data === null) return "null";
    if (Array.isArray(data)) return "array";
    const obj = data as { constructor?: { name?: unknown } };
    if (
      Object.getPrototypeOf(obj) !== Object.prototype && "constructor" in obj && obj.constructor
    ) {
      return obj.constructor.name;
    }
  }
  return t;
}

/** zod's `TypeDictionary`: an ordinary object, so inherited names resolve as they do in zod. */
const TYPE_NAMES: Record<string, unknown> = { nan: "NaN" };

function typeNameOf(type: unknown, input?: unknown): unknown {
  if (type === "number" && typeof input === "number" && !Number.isFinite(input)) {
    return String(input);
  }
  return TYPE_NAMES[type as string] ?? type;
}

function stringifyPrimitive(v: string): string {
  return `"${v}"`;
}

const SIZABLE: Record<string, string> = {
  string: "characters",
  file: "bytes",
  array: "items",
  set: "items",
  map: "entries",
};

function lengthOrigin(input: unknown): string {
  if (Array.isArray(input)) return "array";
  if (typeof input === "string") return "string";
  return "unknown";
}

const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/** Code points of `s`; a surrogate pair counts once, a lone surrogate as one. */
function codePointLength(s: string): number {
  const units = s.length;
  if (!HIGH_SURROGATE.test(s)) return units;
  let count = units;
  for (let i = 0; i < units - 1; i++) {
    if ((s.charCodeAt(i) & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

// ---- issues ------------------------------------------------------------------------------------

function typeMessage(expected: string, input: unknown): string {
  return `Invalid input: expected ${typeNameOf(expected)}, received ${
    typeNameOf(parsedType(input), input)
  }`;
}

function invalidType(expected: string, input: unknown): Pending {
  return {
    issue: { expected, code: "invalid_type", path: [], message: typeMessage(expected, input) },
    cont: undefined,
  };
}

function tooSmall(origin: string, minimum: number, note?: string): Pending {
  const unit = SIZABLE[origin];
  const message = unit === undefined
    ? `Too small: expected ${origin} to be >=${minimum}`
    : `Too small: expected ${origin} to have >=${minimum} ${unit}`;
  const issue: ShapeIssue = note === undefined
    ? { origin, code: "too_small", minimum, inclusive: true, path: [], message }
    : { code: "too_small", minimum, note, origin, inclusive: true, path: [], message };
  return { issue, cont: true };
}

function tooBig(origin: string, maximum: number, note?: string): Pending {
  const unit = SIZABLE[origin];
  const message = unit === undefined
    ? `Too big: expected ${origin} to be <=${maximum}`
    : `Too big: expected ${origin} to have <=${maximum} ${unit}`;
  const issue: ShapeIssue = note === undefined
    ? { origin, code: "too_big", maximum, inclusive: true, path: [], message }
    : { code: "too_big", maximum, note, origin, inclusive: true, path: [], message };
  return { issue, cont: true };
}

function invalidValue(values: readonly string[]): Pending {
  const message = values.length === 1
    ? `Invalid input: expected ${stringifyPrimitive(values[0])}`
    : `Invalid option: expected one of ${values.map(stringifyPrimitive).join("|")}`;
  return {
    issue: { code: "invalid_value", values: [...values], path: [], message },
    cont: undefined,
  };
}

/** Moves `from`'s issues onto `to`, under `key`. */
function prefixInto(to: Payload, key: PropertyKey, from: Pending[]): void {
  for (const p of from) {
    p.issue.path.unshift(key);
    to.issues.push(p);
  }
}

/** Whether `x` can be compared with a number (`x >= 0` does not throw). */
function comparable(x: unknown): boolean {
  try {
    void ((x as number) >= 0);
    return true;
  } catch {
    return false;
  }
}

function runChecks(p: Payload, checks: readonly Check[]): Payload {
  let isAborted = aborted(p.issues, 0);
  for (const check of checks) {
    if (check.sized) {
      if (explicitlyAborted(p.issues)) continue;
      const v = p.value;
      if (v === null || v === undefined || (v as { length?: unknown }).length === undefined) {
        continue;
      }
      // Where zod would throw comparing a `length` that has no primitive value (an object
      // without a prototype, as the JSONC parser builds them), the value has already failed its
      // type: the length check adds nothing, and the input is refused instead of crashing.
      if (!comparable((v as { length: unknown }).length)) continue;
    } else if (isAborted) {
      continue;
    }
    const before = p.issues.length;
    check.run(p);
    if (p.issues.length !== before && !isAborted) isAborted = aborted(p.issues, before);
  }
  return p;
}

// ---- checks ------------------------------------------------------------------------------------

/**
 * `.min(n)` on a string (code points) or an array (items).
 *
 * @example
 * ```ts
 * import { minLength, str } from "./shape_check.ts";
 * str(minLength(1)).run("").issues.length; // 1
 * ```
 */
export function minLength(minimum: number): Check {
  return {
    sized: true,
    run(p) {
      const input = p.value as { length: unknown };
      const units = input.length as number;
      const length = typeof input === "string" && units >= minimum && units < minimum * 2
        ? codePointLength(input)
        : units;
      if (length >= minimum) return;
      p.issues.push(tooSmall(lengthOrigin(input), minimum));
    },
  };
}

/**
 * `.max(n)` on a string (code points) or an array (items).
 *
 * @example
 * ```ts
 * import { maxLength, str } from "./shape_check.ts";
 * str(maxLength(2)).run("😀😀").issues.length; // 0: two code points
 * ```
 */
export function maxLength(maximum: number): Check {
  return {
    sized: true,
    maximum,
    run(p) {
      const input = p.value as { length: unknown };
      const units = input.length as number;
      const length = typeof input === "string" && units > maximum ? codePointLength(input) : units;
      if (length <= maximum) return;
      p.issues.push(tooBig(lengthOrigin(input), maximum));
    },
  };
}

/**
 * `.regex(re)` on a string.
 *
 * @example
 * ```ts
 * import { pattern, str } from "./shape_check.ts";
 * str(pattern(/^[a-z]+$/)).run("A").issues[0].issue.message;
 * // "Invalid string: must match pattern /^[a-z]+$/"
 * ```
 */
export function pattern(re: RegExp): Check {
  const text = re.toString();
  return {
    sized: false,
    run(p) {
      re.lastIndex = 0;
      if (re.test(p.value as string)) return;
      p.issues.push({
        issue: {
          origin: "string",
          code: "invalid_format",
          format: "regex",
          pattern: text,
          path: [],
          message: `Invalid string: must match pattern ${text}`,
        },
        cont: true,
      });
    },
  };
}

/**
 * `.min(n)` on a number (inclusive).
 *
 * @example
 * ```ts
 * import { atLeast, int } from "./shape_check.ts";
 * int(atLeast(1)).run(0).issues.length; // 1
 * ```
 */
export function atLeast(minimum: number): Check {
  return {
    sized: false,
    run(p) {
      if ((p.value as number) >= minimum) return;
      p.issues.push(tooSmall("number", minimum));
    },
  };
}

/**
 * `.max(n)` on a number (inclusive).
 *
 * @example
 * ```ts
 * import { atMost, int } from "./shape_check.ts";
 * int(atMost(10)).run(11).issues.length; // 1
 * ```
 */
export function atMost(maximum: number): Check {
  return {
    sized: false,
    run(p) {
      if ((p.value as number) <= maximum) return;
      p.issues.push(tooBig("number", maximum));
    },
  };
}

const SAFE_NOTE = "Integers must be within the safe integer range.";

/** `z.int()`'s own check (zod's `$ZodCheckNumberFormat`, format `safeint`). */
const SAFE_INT: Check = {
  sized: false,
  run(p) {
    const input = p.value as number;
    if (!Number.isInteger(input)) {
      p.issues.push({
        issue: {
          expected: "int",
          format: "safeint",
          code: "invalid_type",
          path: [],
          message: typeMessage("int", input),
        },
        cont: false,
      });
      return;
    }
    if (!Number.isSafeInteger(input)) {
      p.issues.push(
        input > 0
          ? tooBig("int", Number.MAX_SAFE_INTEGER, SAFE_NOTE)
          : tooSmall("int", Number.MIN_SAFE_INTEGER, SAFE_NOTE),
      );
    }
    // A safe integer is inside the safeint range, so zod's range comparison adds nothing.
  },
};

// ---- schemas -----------------------------------------------------------------------------------

function fail(value: unknown, issue: Pending): Payload {
  return { value, issues: [issue] };
}

/**
 * `z.string()` with checks.
 *
 * @example
 * ```ts
 * import { str } from "./shape_check.ts";
 * str().run(1).issues[0].issue.message; // "Invalid input: expected string, received number"
 * ```
 */
export function str(...checks: Check[]): Checker {
  return {
    run(value) {
      const p: Payload = typeof value === "string"
        ? { value, issues: [] }
        : fail(value, invalidType("string", value));
      return checks.length === 0 ? p : runChecks(p, checks);
    },
  };
}

/**
 * `z.int()` with checks: a finite number, then a safe integer, then the checks.
 *
 * @example
 * ```ts
 * import { int } from "./shape_check.ts";
 * int().run(1.5).issues[0].issue.message; // "Invalid input: expected int, received number"
 * ```
 */
export function int(...checks: Check[]): Checker {
  const all = [SAFE_INT, ...checks];
  return {
    run(value) {
      if (typeof value === "number" && Number.isFinite(value)) {
        return runChecks({ value, issues: [] }, all);
      }
      const received = typeof value === "number"
        ? Number.isNaN(value) ? "NaN" : String(value)
        : undefined;
      const message = typeMessage("number", value);
      const issue: ShapeIssue = received === undefined
        ? { expected: "number", code: "invalid_type", path: [], message }
        : { expected: "number", code: "invalid_type", received, path: [], message };
      return runChecks(fail(value, { issue, cont: undefined }), all);
    },
  };
}

/**
 * `z.boolean()`.
 *
 * @example
 * ```ts
 * import { bool } from "./shape_check.ts";
 * bool().run("true").issues.length; // 1
 * ```
 */
export function bool(): Checker {
  return {
    run(value) {
      return typeof value === "boolean"
        ? { value, issues: [] }
        : fail(value, invalidType("boolean", value));
    },
  };
}

/**
 * `z.enum(values)` (string values).
 *
 * @example
 * ```ts
 * import { oneOf } from "./shape_check.ts";
 * oneOf(["a", "b"]).run("c").issues[0].issue.message; // 'Invalid option: expected one of "a"|"b"'
 * ```
 */
export function oneOf(values: readonly string[]): Checker {
  const set = new Set<unknown>(values);
  const list = [...values];
  return {
    run(value) {
      return set.has(value) ? { value, issues: [] } : fail(value, invalidValue(list));
    },
  };
}

/**
 * `z.literal(value)` (a string).
 *
 * @example
 * ```ts
 * import { literal } from "./shape_check.ts";
 * literal("x").run("y").issues[0].issue.message; // 'Invalid input: expected "x"'
 * ```
 */
export function literal(expected: string): Checker {
  return {
    run(value) {
      return value === expected ? { value, issues: [] } : fail(value, invalidValue([expected]));
    },
  };
}

/**
 * `schema.optional()`: `undefined` passes; as an object field, an absent key is left out.
 *
 * @example
 * ```ts
 * import { optional, str } from "./shape_check.ts";
 * optional(str()).run(undefined).issues.length; // 0
 * ```
 */
export function optional(inner: Checker): Checker {
  return {
    optional: true,
    run(value) {
      return value === undefined ? { value, issues: [] } : inner.run(value);
    },
  };
}

/**
 * `z.array(element)` with checks (`minLength`, `maxLength`). An array past a `maxLength` reports
 * that alone, as zod does, not the issues of its elements.
 *
 * @example
 * ```ts
 * import { list, minLength, str } from "./shape_check.ts";
 * list(str(), minLength(1)).run([]).issues[0].issue.message;
 * // "Too small: expected array to have >=1 items"
 * ```
 */
export function list(element: Checker, ...checks: Check[]): Checker {
  // zod's `capSize`: the `max` checks among the leading length checks. An array longer than one of
  // them gets that check's issue alone (made aborting), before any element is looked at.
  const caps: [number, Check][] = [];
  for (const check of checks) {
    if (!check.sized) break;
    if (check.maximum !== undefined && check.maximum >= 0) caps.push([check.maximum, check]);
  }
  const cap = Math.min(...caps.map(([max]) => max));
  return {
    run(input) {
      if (!Array.isArray(input)) return runChecks(fail(input, invalidType("array", input)), checks);
      if (input.length > cap) {
        for (const [max, check] of caps) {
          if (input.length > max) {
            const p: Payload = { value: input, issues: [] };
            check.run(p);
            p.issues[0].cont = false; // so every later check is skipped
            return p;
          }
        }
      }
      const out: unknown[] = new Array(input.length);
      const p: Payload = { value: out, issues: [] };
      for (let i = 0; i < input.length; i++) {
        const r = element.run(input[i]);
        if (r.issues.length > 0) prefixInto(p, i, r.issues);
        out[i] = r.value;
      }
      return checks.length === 0 ? p : runChecks(p, checks);
    },
  };
}

/**
 * `z.strictObject(shape)`: the fields in shape order, then every other key (an own `__proto__`
 * included) as one `unrecognized_keys` issue. The result holds the shape's keys that are present,
 * in shape order.
 *
 * @example
 * ```ts
 * import { strictObject, str } from "./shape_check.ts";
 * strictObject({ a: str() }).run({ a: "x", b: 1 }).issues[0].issue.message;
 * // 'Unrecognized key: "b"'
 * ```
 */
export function strictObject(shape: Readonly<Record<string, Checker>>): Checker {
  const keys = Object.keys(shape).filter((k) => k !== "__proto__");
  const known = new Set(Object.keys(shape));
  return {
    run(input) {
      if (!isObject(input)) return fail(input, invalidType("object", input));
      const out: Record<string, unknown> = {};
      const p: Payload = { value: out, issues: [] };
      for (const key of keys) {
        const field = shape[key];
        const r = field.run(input[key]);
        const present = key in input;
        // An absent key reads as `undefined`, which an optional field accepts: its issues come
        // only from a present key.
        if (r.issues.length > 0) {
          prefixInto(p, key, r.issues);
        } else if (!present && !field.optional) {
          p.issues.push({
            issue: {
              code: "invalid_type",
              expected: "nonoptional",
              path: [key],
              message: typeMessage("nonoptional", undefined),
            },
            cont: undefined,
          });
        }
        if (present) out[key] = r.value;
      }
      const unknown: string[] = [];
      for (const key in input) if (!known.has(key)) unknown.push(key);
      if (unknown.length > 0) {
        const message = `Unrecognized key${unknown.length > 1 ? "s" : ""}: ${
          unknown.map(stringifyPrimitive).join(", ")
        }`;
        p.issues.push({
          issue: { code: "unrecognized_keys", keys: unknown, path: [], message },
          cont: true,
        });
      }
      return p;
    },
  };
}

/**
 * `z.record(z.string(), value)`: every own enumerable key but `__proto__` (which is skipped, not
 * refused); a symbol key is an `invalid_key`.
 *
 * @example
 * ```ts
 * import { record, str } from "./shape_check.ts";
 * record(str()).run({ a: 1 }).issues[0].issue.path; // ["a"]
 * ```
 */
export function record(value: Checker): Checker {
  return {
    run(input) {
      if (!isPlainObject(input)) return fail(input, invalidType("record", input));
      const out: Record<string, unknown> = {};
      const p: Payload = { value: out, issues: [] };
      for (const key of Reflect.ownKeys(input)) {
        if (key === "__proto__") continue;
        if (!Object.prototype.propertyIsEnumerable.call(input, key)) continue;
        if (typeof key === "symbol") {
          p.issues.push({
            issue: {
              code: "invalid_key",
              origin: "record",
              issues: [invalidType("string", key).issue],
              path: [key],
              message: "Invalid key in record",
            },
            cont: undefined,
          });
          continue;
        }
        const r = value.run(input[key]);
        if (r.issues.length > 0) prefixInto(p, key, r.issues);
        out[key] = r.value;
      }
      return p;
    },
  };
}

/**
 * `z.union(options)`: the first option that passes; when none does, the only option that failed
 * without aborting, else `invalid_union` with every option's issues.
 *
 * @example
 * ```ts
 * import { literal, union } from "./shape_check.ts";
 * union([literal("a"), literal("b")]).run("c").issues[0].issue.message; // "Invalid input"
 * ```
 */
export function union(options: readonly Checker[]): Checker {
  return {
    run(value) {
      const results: Payload[] = [];
      for (const option of options) {
        const r = option.run(value);
        if (r.issues.length === 0) return r;
        results.push(r);
      }
      const live = results.filter((r) => !aborted(r.issues, 0));
      if (live.length === 1) return live[0];
      return fail(value, {
        issue: {
          code: "invalid_union",
          errors: results.map((r) => r.issues.map((i) => i.issue)),
          path: [],
          message: "Invalid input",
        },
        cont: undefined,
      });
    },
  };
}

/**
 * Runs a checker on a value: zod's `safeParse`, as `{ ok, data }` or `{ ok, issues }`.
 *
 * @example
 * ```ts
 * import { runChecker, str } from "./shape_check.ts";
 * runChecker(str(), "x"); // { ok: true, data: "x" }
 * ```
 */
export function runChecker(checker: Checker, value: unknown): ShapeResult<unknown> {
  const r = checker.run(value);
  return r.issues.length === 0
    ? { ok: true, data: r.value }
    : { ok: false, issues: r.issues.map((p) => p.issue) };
}

// ---- the policy fields (mirror of schema.ts) ---------------------------------------------------

const nonEmpty = str(minLength(1));

const commandEntry = strictObject({
  prefix: list(nonEmpty, minLength(1)),
  args: optional(list(str())),
  variadic: optional(bool()),
  cwd: optional(nonEmpty),
  writes: optional(list(nonEmpty)),
  stdin_gates: optional(list(nonEmpty)),
  timeout: optional(int(atLeast(1), atMost(MAX_COMMAND_TIMEOUT))),
  network: optional(bool()),
});

const agentPolicy = strictObject({
  write_scopes: optional(list(str())),
  commands: optional(list(commandEntry)),
});

const gate = strictObject({
  glob: optional(nonEmpty),
  argv: list(str(), minLength(1)),
  exec: optional(list(nonEmpty, minLength(1))),
});

const confinedAgent = strictObject({
  exec: list(nonEmpty, minLength(1)),
  write: list(nonEmpty),
});

const mcpGrant = strictObject({
  tools: list(oneOf(MCP_RUNNER_TOOLS), minLength(1)),
  approval: optional(oneOf(["staged", "direct"])),
});

const policyFields = strictObject({
  write_policy: optional(oneOf(["default", "orchestrator-only"])),
  privilege_profile: optional(oneOf(["cooperative", "confined", "exclusive"])),
  write_policy_frameworks: optional(list(oneOf(KNOWN_FRAMEWORKS))),
  agent_policies: optional(record(agentPolicy)),
  proposal_gates: optional(record(gate)),
  confined_programs: optional(record(confinedAgent)),
  protected_paths: optional(list(nonEmpty)),
  allow_unconfined_runs: optional(bool()),
  mcp_grants: optional(record(mcpGrant)),
  deletions_need_clearance: optional(bool()),
});

/**
 * Checks the brief's policy fields exactly as `PolicyFieldsSchema.safeParse` does: the same
 * issues in the same order, or the same parsed data.
 *
 * @example
 * ```ts
 * import { checkPolicyFields } from "./shape_check.ts";
 * const r = checkPolicyFields({ write_policy: "none" });
 * if (!r.ok) r.issues[0].message; // 'Invalid option: expected one of "default"|"orchestrator-only"'
 * ```
 */
export function checkPolicyFields(value: unknown): ShapeResult<RawPolicy> {
  return runChecker(policyFields, value) as ShapeResult<RawPolicy>;
}
