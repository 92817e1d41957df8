/**
 * The argument-pattern probe: a sample of dangerous argument shapes that no command pattern may
 * admit. Each form below is filled with each stem (`{}` is replaced), and a pattern that fullmatches
 * any result is refused at load (`POLICY_LINT`).
 *
 * This is a sample, not a proof. A pattern can admit an option or a path that no probe string
 * happens to hit (for instance `-q` when only `-x`-shaped probes exist, or a path around a stem
 * not listed here). It catches the broad shapes (`.*`, `[a-z].*`, `.+\.lean`, `-.*`) that would
 * reopen the door the allowlist closes; narrow patterns remain the operator's job. At run time an
 * argument with a `..` segment is refused regardless of the pattern.
 *
 * @example
 * ```ts
 * import { probeArgPattern } from "./probes.ts";
 * import { compileArgPattern } from "../pycompat/pyre.ts";
 * probeArgPattern(compileArgPattern(".+\\.lean"))?.sample; // "../x.lean"
 * probeArgPattern(compileArgPattern("[A-Z][A-Za-z0-9]*\\.lean")); // null
 * ```
 * @module
 */

/** What a probe form stands for. */
export type ProbeKind =
  | "an option"
  | "a parent path"
  | "an absolute path"
  | "a home path"
  | "a response file";

/** One probe form: `{}` is replaced by each stem. */
export interface ProbeForm {
  /** The form, e.g. `--{}`. */
  readonly form: string;
  /** What an argument of this shape is. */
  readonly kind: ProbeKind;
}

/**
 * The probe forms. The first fourteen are the earlier implementation's; the rest are added here:
 * `@{}` (many compilers and CLIs read further options from an `@file`), a bare `..`, `./../{}`,
 * `~root/{}` and `/tmp/{}`.
 */
export const PROBE_FORMS: readonly ProbeForm[] = Object.freeze(
  [
    { form: "-{}", kind: "an option" },
    { form: "--{}", kind: "an option" },
    { form: "--plugin={}", kind: "an option" },
    { form: "../{}", kind: "a parent path" },
    { form: "a/../{}", kind: "a parent path" },
    { form: "a/../../{}", kind: "a parent path" },
    { form: "b/../{}", kind: "a parent path" },
    { form: "z/../{}", kind: "a parent path" },
    { form: "x/../{}", kind: "a parent path" },
    { form: "foo/../{}", kind: "a parent path" },
    { form: "0/../{}", kind: "a parent path" },
    { form: "/{}", kind: "an absolute path" },
    { form: "/etc/{}", kind: "an absolute path" },
    { form: "~/{}", kind: "a home path" },
    { form: "@{}", kind: "a response file" },
    { form: "..", kind: "a parent path" },
    { form: "./../{}", kind: "a parent path" },
    { form: "~root/{}", kind: "a home path" },
    { form: "/tmp/{}", kind: "an absolute path" },
  ] as const,
);

/** The stems each form is filled with (the earlier implementation's set). */
export const PROBE_STEMS: readonly string[] = Object.freeze([
  "x",
  "x.lean",
  "x.py",
  "x.json",
  "x.txt",
  "x.md",
  "1",
  "CX-1",
  "a-b",
  "MathAgents",
]);

/** A probe string a pattern admitted. */
export interface ProbeHit {
  /** The argument the pattern fullmatched. */
  readonly sample: string;
  /** What that argument is. */
  readonly kind: ProbeKind;
}

/**
 * Every probe string, in table order (forms outer, stems inner), each once.
 *
 * @example
 * ```ts
 * import { probeStrings } from "./probes.ts";
 * probeStrings()[0]; // { sample: "-x", kind: "an option" }
 * ```
 */
export function probeStrings(): ProbeHit[] {
  const seen = new Set<string>();
  const out: ProbeHit[] = [];
  for (const { form, kind } of PROBE_FORMS) {
    for (const stem of PROBE_STEMS) {
      const sample = form.replaceAll("{}", stem);
      if (seen.has(sample)) continue;
      seen.add(sample);
      out.push({ sample, kind });
    }
  }
  return out;
}

/**
 * The first probe string a compiled (anchored) pattern admits, or `null` when it admits none.
 *
 * @example
 * ```ts
 * import { probeArgPattern } from "./probes.ts";
 * probeArgPattern(/^(?:-.*)$/v); // { sample: "-x", kind: "an option" }
 * ```
 */
export function probeArgPattern(pattern: RegExp): ProbeHit | null {
  for (const hit of probeStrings()) {
    if (pattern.test(hit.sample)) return hit;
  }
  return null;
}
