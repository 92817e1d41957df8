/**
 * Declarative JSON shapes: the one definition of the artifact and brief shapes. A shape checks a
 * parsed JSON value (every object closed: an unknown field is refused, never ignored), returns
 * the parsed value (new objects, fields in shape order, absent optional fields left out) or every
 * problem with a message for people, and emits its JSON Schema (draft 2020-12) for `schemas/` and
 * `agentteams schema`.
 *
 * The constructs are the few the tool's formats need: strings (`min`/`max` in code points, as JSON
 * Schema counts them; a `pattern`), integers (`min`/`max`), booleans, string enums and literals,
 * arrays (`min`/`max` items), closed objects, string-keyed maps and unions. A shape's `label`
 * (default: its description) says in a message what the field is for.
 *
 * Why these shapes and not zod as the one definition (issue 25, measured from the installed
 * launcher, `run true --dry-run`, 60 interleaved rounds on a loaded 2-core machine): a valid
 * request took a median 252 ms here against 262 ms for the former zod-free hand checker, which is
 * what a check precompiled from zod would cost (no difference beyond the noise); a refused one
 * 184 ms against 180 ms, where loading zod only when a check fails would add its bundle chunk's
 * load, a paired median of 73 ms. So: one definition, no build step, no zod on any path here.
 *
 * @example
 * ```ts
 * import { checkShape, object, optional, string } from "./shape.ts";
 * import assert from "node:assert/strict";
 * const s = object({ rationale: string({ label: "why the change" }), note: optional(string()) });
 * const r = checkShape(s, {});
 * assert.equal(r.ok, false);
 * if (!r.ok) {
 *   assert.equal(r.issues[0].message, 'missing required field "rationale" (a string: why the change)');
 * }
 * ```
 * @module
 */

import { didYouMean } from "../text/suggest.ts";

/** Where a problem is: keys and indexes from the checked value down. */
export type ShapePath = (string | number)[];

/** What kind of problem a {@link ShapeIssue} is. */
export type ShapeIssueCode =
  | "missing"
  | "unknown"
  | "reserved"
  | "type"
  | "too_small"
  | "too_big"
  | "value"
  | "pattern";

/** One problem a shape found. */
export interface ShapeIssue {
  /** The kind of problem. */
  readonly code: ShapeIssueCode;
  /**
   * Where it is. For a missing, unknown or reserved field, the object that holds it (the field is
   * `field`); otherwise the value itself.
   */
  readonly path: ShapePath;
  /** For people, without the path: `must be a string, not a number`. */
  readonly message: string;
  /** The field a `missing`, `unknown` or `reserved` issue is about. */
  readonly field?: string;
  /** For an unknown field: the field it was probably meant to be, if one is near. */
  readonly suggestion?: string;
  /** For an unknown field: the fields its object accepts. */
  readonly known?: readonly string[];
}

/** A check's verdict: the parsed value, or every problem (unknown fields first in each object). */
export type ShapeResult<T> = { ok: true; data: T } | { ok: false; issues: ShapeIssue[] };

interface Meta {
  /** The JSON Schema `description`. */
  readonly description?: string;
  /** What a message says the value is for (default: `description`). */
  readonly label?: string;
}

/** The definition of a shape (what the checker and the emitter read). */
export type Spec =
  | Meta & {
    readonly t: "string";
    readonly min?: number;
    readonly max?: number;
    readonly pattern?: RegExp;
  }
  | Meta & { readonly t: "int"; readonly min?: number; readonly max?: number }
  | Meta & { readonly t: "boolean" }
  | Meta & { readonly t: "enum"; readonly values: readonly string[] }
  | Meta & { readonly t: "literal"; readonly value: string }
  | Meta & {
    readonly t: "array";
    readonly items: Spec;
    readonly min?: number;
    readonly max?: number;
  }
  | Meta & { readonly t: "object"; readonly fields: Readonly<Record<string, Field>> }
  | Meta & { readonly t: "record"; readonly values: Spec }
  | Meta & { readonly t: "union"; readonly options: readonly Spec[] };

/** A field of an object: its shape, whether it may be absent, the description on the field. */
export interface Field {
  /** The value's shape. */
  readonly spec: Spec;
  /** An absent field is no problem (and is left out of the result). */
  readonly optional: boolean;
  /** A description given on the optional field itself (emitted before the value's keywords). */
  readonly description?: string;
  /** A label given on the optional field itself. */
  readonly label?: string;
}

/** A shape whose parsed value has type `T`. */
export interface Shape<T> {
  /** The definition. */
  readonly spec: Spec;
  /** Type only: the parsed value's type. */
  readonly __type?: T;
}

/** An optional field of type `T`. */
export interface Optional<T> {
  /** The field. */
  readonly field: Field;
  /** Type only: the parsed value's type. */
  readonly __type?: T;
}

/** The parsed type of a shape. */
export type Infer<S> = S extends Shape<infer T> ? T : never;

type FieldShapes = Readonly<Record<string, Shape<unknown> | Optional<unknown>>>;
type Simplify<T> = { [K in keyof T]: T[K] } & unknown;
type ObjectOf<F extends FieldShapes> = Simplify<
  & { [K in keyof F as F[K] extends Optional<unknown> ? never : K]: Infer<F[K]> }
  & {
    [K in keyof F as F[K] extends Optional<unknown> ? K : never]?: F[K] extends Optional<infer T>
      ? T
      : never;
  }
>;

// ---- constructors -----------------------------------------------------------------------------

/** Bounds and metadata of a string or an array. */
export interface SizeOptions extends Meta {
  /** At least this many code points (a string) or items (an array). */
  readonly min?: number;
  /** At most this many code points (a string) or items (an array). */
  readonly max?: number;
}

/**
 * A string, its length in code points within `min`..`max`, matching `pattern`.
 *
 * @example
 * ```ts
 * import { checkShape, string } from "./shape.ts";
 * import assert from "node:assert/strict";
 * assert.equal(checkShape(string({ max: 2 }), "😀😀").ok, true); // two code points
 * ```
 */
export function string(opts: SizeOptions & { readonly pattern?: RegExp } = {}): Shape<string> {
  return { spec: { t: "string", ...opts } };
}

/**
 * An integer (a safe one) within `min`..`max`.
 *
 * @example
 * ```ts
 * import { checkShape, int } from "./shape.ts";
 * import assert from "node:assert/strict";
 * assert.equal(checkShape(int({ min: 1 }), 1.5).ok, false);
 * ```
 */
export function int(opts: Meta & { readonly min?: number; readonly max?: number } = {}): Shape<
  number
> {
  return { spec: { t: "int", ...opts } };
}

/**
 * `true` or `false`.
 *
 * @example
 * ```ts
 * import { boolean, checkShape } from "./shape.ts";
 * import assert from "node:assert/strict";
 * assert.equal(checkShape(boolean(), "true").ok, false);
 * ```
 */
export function boolean(opts: Meta = {}): Shape<boolean> {
  return { spec: { t: "boolean", ...opts } };
}

/**
 * One of the given strings.
 *
 * @example
 * ```ts
 * import { checkShape, oneOf } from "./shape.ts";
 * import assert from "node:assert/strict";
 * const r = checkShape(oneOf(["a", "b"]), "c");
 * assert.equal(!r.ok && r.issues[0].message, 'must be one of "a", "b", not "c"');
 * ```
 */
export function oneOf<const V extends string>(values: readonly V[], opts: Meta = {}): Shape<V> {
  return { spec: { t: "enum", values: [...values], ...opts } };
}

/**
 * Exactly the string `value`.
 *
 * @example
 * ```ts
 * import { checkShape, literal } from "./shape.ts";
 * import assert from "node:assert/strict";
 * assert.equal(checkShape(literal("x"), "x").ok, true);
 * ```
 */
export function literal<const V extends string>(value: V, opts: Meta = {}): Shape<V> {
  return { spec: { t: "literal", value, ...opts } };
}

/**
 * A list of `items`, `min`..`max` long.
 *
 * @example
 * ```ts
 * import { array, checkShape, string } from "./shape.ts";
 * import assert from "node:assert/strict";
 * const r = checkShape(array(string(), { min: 1 }), []);
 * assert.equal(!r.ok && r.issues[0].message, "must not be empty");
 * ```
 */
export function array<T>(items: Shape<T>, opts: SizeOptions = {}): Shape<T[]> {
  return { spec: { t: "array", items: items.spec, ...opts } };
}

/**
 * A closed object: these fields (an {@link optional} one may be absent) and no other.
 *
 * @example
 * ```ts
 * import { checkShape, object, string } from "./shape.ts";
 * import assert from "node:assert/strict";
 * const r = checkShape(object({ dispatch: string() }), { dispatch: "x", nonce: 1 });
 * assert.equal(!r.ok && r.issues[0].message, 'unknown field "nonce"');
 * ```
 */
export function object<F extends FieldShapes>(fields: F, opts: Meta = {}): Shape<ObjectOf<F>> {
  const out: Record<string, Field> = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = "field" in v ? v.field : { spec: v.spec, optional: false };
  }
  return { spec: { t: "object", fields: out, ...opts } };
}

/**
 * A map from names to `values` (any name but `__proto__`, which is refused).
 *
 * @example
 * ```ts
 * import { checkShape, int, record } from "./shape.ts";
 * import assert from "node:assert/strict";
 * const r = checkShape(record(int()), { a: "1" });
 * assert.deepEqual(!r.ok && r.issues[0].path, ["a"]);
 * ```
 */
export function record<T>(values: Shape<T>, opts: Meta = {}): Shape<Record<string, T>> {
  return { spec: { t: "record", values: values.spec, ...opts } };
}

/**
 * The first of `options` the value matches.
 *
 * @example
 * ```ts
 * import { checkShape, literal, string, union } from "./shape.ts";
 * import assert from "node:assert/strict";
 * const s = union([string({ pattern: /^[0-9]+$/ }), literal("none")]);
 * assert.equal(checkShape(s, "none").ok, true);
 * ```
 */
export function union<S extends readonly Shape<unknown>[]>(
  options: S,
  opts: Meta = {},
): Shape<Infer<S[number]>> {
  return { spec: { t: "union", options: options.map((o) => o.spec), ...opts } };
}

/**
 * An object field that may be absent; `opts` describe the field itself.
 *
 * @example
 * ```ts
 * import { checkShape, object, optional, string } from "./shape.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(checkShape(object({ cwd: optional(string()) }), {}), { ok: true, data: {} });
 * ```
 */
export function optional<T>(shape: Shape<T>, opts: Meta = {}): Optional<T> {
  return { field: { spec: shape.spec, optional: true, ...opts } };
}

// ---- describing values --------------------------------------------------------------------------

/**
 * The JSON type of a value in words, for messages: `a string`, `an integer`, `a list`, `null`.
 *
 * @example
 * ```ts
 * import { jsonTypeName } from "./shape.ts";
 * import assert from "node:assert/strict";
 * assert.equal(jsonTypeName([1]), "a list");
 * assert.equal(jsonTypeName(1.5), "a number");
 * ```
 */
export function jsonTypeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "an object";
  if (typeof v === "number") return Number.isInteger(v) ? "an integer" : "a number";
  if (typeof v === "string") return "a string";
  if (typeof v === "boolean") return "a boolean";
  return typeof v;
}

const TYPE_WORDS = {
  string: "a string",
  int: "an integer",
  boolean: "true or false",
  object: "an object",
  record: "an object",
  array: "a list",
} as const;

const PLURAL: Readonly<Record<string, string>> = {
  string: "strings",
  int: "integers",
  boolean: "booleans",
  object: "objects",
  record: "objects",
  array: "lists",
};

/**
 * What a shape accepts, in a few words: `a string`, `a list of strings`, `one of "a", "b"`.
 *
 * @example
 * ```ts
 * import { array, describeShape, string } from "./shape.ts";
 * import assert from "node:assert/strict";
 * assert.equal(describeShape(array(string()).spec), "a list of strings");
 * ```
 */
export function describeShape(spec: Spec): string {
  switch (spec.t) {
    case "enum":
      return `one of ${spec.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "literal":
      return JSON.stringify(spec.value);
    case "union":
      return spec.options.map(describeShape).join(" or ");
    case "array": {
      const plural = PLURAL[spec.items.t];
      return plural === undefined ? "a list" : `a list of ${plural}`;
    }
    case "string":
      return spec.pattern === undefined ? "a string" : `a string matching ${spec.pattern}`;
    default:
      return TYPE_WORDS[spec.t];
  }
}

function labelOf(spec: Spec, field?: Field): string | undefined {
  return field?.label ?? field?.description ?? spec.label ?? spec.description;
}

// ---- checking -----------------------------------------------------------------------------------

const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/** Code points of `s` (JSON Schema's string length); a lone surrogate counts as one. */
function codePointLength(s: string): number {
  if (!HIGH_SURROGATE.test(s)) return s.length;
  let count = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    if ((s.charCodeAt(i) & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

interface Run {
  readonly issues: ShapeIssue[];
}

function push(
  run: Run,
  code: ShapeIssueCode,
  path: ShapePath,
  message: string,
  extra: Partial<ShapeIssue> = {},
): void {
  run.issues.push({ code, path: [...path], message, ...extra });
}

function typeIssue(run: Run, spec: Spec, path: ShapePath, value: unknown): void {
  push(run, "type", path, `must be ${describeShape(spec)}, not ${jsonTypeName(value)}`);
}

function sizeIssues(
  run: Run,
  path: ShapePath,
  length: () => number,
  units: number,
  min: number | undefined,
  max: number | undefined,
  unit: string,
): void {
  if (min !== undefined && units < min * 2 && length() < min) {
    push(
      run,
      "too_small",
      path,
      min === 1 ? "must not be empty" : `must have at least ${min} ${unit}`,
    );
  }
  if (max !== undefined && units > max && length() > max) {
    push(run, "too_big", path, `must have at most ${max} ${unit}`);
  }
}

/** Checks `value`; returns the parsed value (meaningful only when no issue was added). */
function check(run: Run, spec: Spec, value: unknown, path: ShapePath, field?: Field): unknown {
  switch (spec.t) {
    case "string": {
      if (typeof value !== "string") return typeIssue(run, spec, path, value);
      const before = run.issues.length;
      sizeIssues(
        run,
        path,
        () => codePointLength(value),
        value.length,
        spec.min,
        spec.max,
        "characters",
      );
      if (run.issues.length === before && spec.pattern !== undefined) {
        spec.pattern.lastIndex = 0;
        if (!spec.pattern.test(value)) {
          const label = labelOf(spec, field);
          push(
            run,
            "pattern",
            path,
            `must match ${spec.pattern}${label === undefined ? "" : ` (${label})`}`,
          );
        }
      }
      return value;
    }
    case "int": {
      if (typeof value !== "number" || !Number.isInteger(value)) {
        return typeIssue(run, spec, path, value);
      }
      // Past the safe range an integer is not exact: it is out of range whatever the bounds.
      const min = spec.min ?? Number.MIN_SAFE_INTEGER;
      const max = spec.max ?? Number.MAX_SAFE_INTEGER;
      if (value < min || value < Number.MIN_SAFE_INTEGER) {
        push(run, "too_small", path, `must be at least ${Math.max(min, Number.MIN_SAFE_INTEGER)}`);
      }
      if (value > max || value > Number.MAX_SAFE_INTEGER) {
        push(run, "too_big", path, `must be at most ${Math.min(max, Number.MAX_SAFE_INTEGER)}`);
      }
      return value;
    }
    case "boolean":
      if (typeof value !== "boolean") typeIssue(run, spec, path, value);
      return value;
    case "enum":
    case "literal": {
      const ok = spec.t === "enum" ? spec.values.includes(value as string) : value === spec.value;
      if (!ok || typeof value !== "string") {
        const shown = typeof value === "string" ? JSON.stringify(value) : jsonTypeName(value);
        push(run, "value", path, `must be ${describeShape(spec)}, not ${shown}`);
      }
      return value;
    }
    case "array": {
      if (!Array.isArray(value)) return typeIssue(run, spec, path, value);
      const before = run.issues.length;
      sizeIssues(run, path, () => value.length, value.length, spec.min, spec.max, "items");
      // A list past its maximum is not looked into: its items could be many.
      if (run.issues.length > before) return value;
      const out: unknown[] = new Array(value.length);
      for (let i = 0; i < value.length; i++) {
        out[i] = check(run, spec.items, value[i], [...path, i]);
      }
      return out;
    }
    case "object":
      return checkObject(run, spec, value, path);
    case "record": {
      if (!isObject(value)) return typeIssue(run, spec, path, value);
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        if (key === "__proto__") {
          push(run, "reserved", path, 'the name "__proto__" is not allowed here', {
            field: key,
          });
          continue;
        }
        out[key] = check(run, spec.values, value[key], [...path, key]);
      }
      return out;
    }
    case "union": {
      for (const option of spec.options) {
        const trial: Run = { issues: [] };
        const parsed = check(trial, option, value, path);
        if (trial.issues.length === 0) return parsed;
      }
      const label = labelOf(spec, field);
      const shown = typeof value === "string" ? JSON.stringify(value) : jsonTypeName(value);
      push(
        run,
        "value",
        path,
        `must be ${describeShape(spec)}, not ${shown}${label === undefined ? "" : ` (${label})`}`,
      );
      return value;
    }
  }
}

function checkObject(
  run: Run,
  spec: Extract<Spec, { t: "object" }>,
  value: unknown,
  path: ShapePath,
): unknown {
  if (!isObject(value)) return typeIssue(run, spec, path, value);
  const known = Object.keys(spec.fields);
  const at = (k: string): unknown => Object.hasOwn(value, k) ? value[k] : undefined;
  const missing = known.filter((k) => !spec.fields[k].optional && at(k) === undefined);
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(spec.fields, key)) continue;
    // A near spelling of a known field, or else the one required field that is missing.
    const suggestion = didYouMean(key, known) ?? (missing.length === 1 ? missing[0] : null);
    push(
      run,
      "unknown",
      path,
      `unknown field ${JSON.stringify(key)}${
        suggestion === null ? "" : ` (did you mean ${JSON.stringify(suggestion)}?)`
      }`,
      suggestion === null ? { field: key, known } : { field: key, known, suggestion },
    );
  }
  const out: Record<string, unknown> = {};
  for (const key of known) {
    const field = spec.fields[key];
    const v = at(key);
    if (v === undefined) {
      if (!field.optional) {
        const label = labelOf(field.spec, field);
        push(
          run,
          "missing",
          path,
          `missing required field ${JSON.stringify(key)} (${describeShape(field.spec)}${
            label === undefined ? "" : `: ${label}`
          })`,
          { field: key },
        );
      }
      continue;
    }
    out[key] = check(run, field.spec, v, [...path, key], field);
  }
  return out;
}

/**
 * Checks `value` against `shape`: the parsed value (new objects, fields in shape order, absent
 * optional fields left out), or every problem. In each object its unknown fields come first, then
 * its fields' problems in shape order.
 *
 * @example
 * ```ts
 * import { checkShape, object, string } from "./shape.ts";
 * import assert from "node:assert/strict";
 * const r = checkShape(object({ dispatch: string() }), { nonce: "x" });
 * assert.equal(!r.ok && r.issues[0].message, 'unknown field "nonce" (did you mean "dispatch"?)');
 * ```
 */
export function checkShape<T>(shape: Shape<T>, value: unknown): ShapeResult<T> {
  const run: Run = { issues: [] };
  const data = check(run, shape.spec, value, []);
  return run.issues.length === 0
    ? { ok: true, data: data as T }
    : { ok: false, issues: run.issues };
}

/**
 * The fields an object shape accepts (for "did you mean" and "allowed here").
 *
 * @example
 * ```ts
 * import { fieldsOf, object, optional, string } from "./shape.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(fieldsOf(object({ a: string(), b: optional(string()) })), ["a", "b"]);
 * ```
 */
export function fieldsOf(shape: Shape<unknown>): readonly string[] {
  return shape.spec.t === "object" ? Object.keys(shape.spec.fields) : [];
}

// ---- JSON Schema --------------------------------------------------------------------------------

function withDescription(out: Record<string, unknown>, spec: Spec): Record<string, unknown> {
  if (spec.description !== undefined) out.description = spec.description;
  return out;
}

function emit(spec: Spec): Record<string, unknown> {
  switch (spec.t) {
    case "string": {
      const out: Record<string, unknown> = { type: "string" };
      if (spec.min !== undefined) out.minLength = spec.min;
      if (spec.max !== undefined) out.maxLength = spec.max;
      if (spec.pattern !== undefined) out.pattern = spec.pattern.source;
      return withDescription(out, spec);
    }
    case "int": {
      const out: Record<string, unknown> = { type: "integer" };
      if (spec.min !== undefined) out.minimum = spec.min;
      if (spec.max !== undefined) out.maximum = spec.max;
      return withDescription(out, spec);
    }
    case "boolean":
      return withDescription({ type: "boolean" }, spec);
    case "enum":
      return withDescription({ type: "string", enum: [...spec.values] }, spec);
    case "literal":
      return withDescription({ type: "string", const: spec.value }, spec);
    case "array": {
      const out: Record<string, unknown> = {};
      if (spec.min !== undefined) out.minItems = spec.min;
      if (spec.max !== undefined) out.maxItems = spec.max;
      out.type = "array";
      out.items = emit(spec.items);
      return withDescription(out, spec);
    }
    case "object": {
      const properties: Record<string, unknown> = {};
      const required: string[] = [];
      for (const [key, field] of Object.entries(spec.fields)) {
        const inner = emit(field.spec);
        properties[key] = field.description === undefined
          ? inner
          : { description: field.description, ...inner };
        if (!field.optional) required.push(key);
      }
      const out: Record<string, unknown> = { type: "object", properties };
      if (required.length > 0) out.required = required;
      out.additionalProperties = false;
      return withDescription(out, spec);
    }
    case "record":
      return withDescription({
        type: "object",
        propertyNames: { type: "string" },
        additionalProperties: emit(spec.values),
      }, spec);
    case "union":
      return withDescription({ anyOf: spec.options.map(emit) }, spec);
  }
}

/**
 * The JSON Schema (draft 2020-12) of a shape, with its `$id` and `title` first.
 *
 * @example
 * ```ts
 * import { jsonSchema, object, string } from "./shape.ts";
 * import assert from "node:assert/strict";
 * const s = jsonSchema(object({ a: string() }), "https://x.invalid/a.json", "a");
 * assert.deepEqual(Object.keys(s), [
 *   "$schema", "$id", "title", "type", "properties", "required", "additionalProperties",
 * ]);
 * ```
 */
export function jsonSchema(
  shape: Shape<unknown>,
  id: string,
  title: string,
): Record<string, unknown> {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: id,
    title,
    ...emit(shape.spec),
  };
}
