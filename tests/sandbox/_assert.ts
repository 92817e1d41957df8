/** Small assertion helpers (no @std/assert: JSR is unreachable here). */

import { isDeepStrictEqual } from "node:util";
import { AgentTeamsError } from "../../lib/errors.ts";

/** Throws when `cond` is falsy. */
export function assert(cond: unknown, msg = "assertion failed"): asserts cond {
  if (!cond) throw new Error(msg);
}

/** Deep strict equality. */
export function assertEquals(actual: unknown, expected: unknown, msg = ""): void {
  if (!isDeepStrictEqual(actual, expected)) {
    throw new Error(
      `${msg ? msg + ": " : ""}not equal\nactual:   ${JSON.stringify(actual)}\nexpected: ${
        JSON.stringify(expected)
      }`,
    );
  }
}

/** Asserts `fn` throws a typed error of `cls` with `code`; returns it. */
export function assertRefused<E extends AgentTeamsError>(
  fn: () => unknown,
  cls: new (...args: never[]) => E,
  code: string,
  msg = "",
): E {
  let caught: unknown = undefined;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  if (caught === undefined) throw new Error(`${msg}: expected ${code}, nothing was thrown`);
  if (!(caught instanceof cls)) {
    throw new Error(`${msg}: expected ${cls.name} ${code}, got ${String(caught)}`);
  }
  if (caught.code !== code) {
    throw new Error(`${msg}: expected code ${code}, got ${caught.code}: ${caught.message}`);
  }
  return caught;
}
