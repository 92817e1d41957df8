/**
 * What the runner pins at start: the SHA-256 of the brief's bytes, of the operator's
 * confined-programs file and of the grants ledger (null when absent). A change to any of them
 * while serving stops the runner: it serves only under the policy it started with.
 *
 * @module
 */
import { GRANTS_REL } from "../authz/paths.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { QueueError } from "../errors.ts";
import { join } from "../fs/path.ts";

/** The pinned hashes. */
export interface Pins {
  readonly brief: string | null;
  readonly confined: string | null;
  readonly grants: string | null;
}

/** Where the pinned files are. */
export interface PinPaths {
  readonly brief: string;
  readonly confined: string | null;
  readonly grants: string;
}

function hashOrNull(path: string | null): string | null {
  if (path === null) return null;
  try {
    return sha256Hex(Deno.readFileSync(path));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/**
 * The pin paths of a project.
 *
 * @example
 * ```ts
 * import { pinPaths } from "./pins.ts";
 * pinPaths("/p", "/p/agentteams.jsonc", null).grants; // "/p/references/capability-grants.log.csv"
 * ```
 */
export function pinPaths(root: string, brief: string, confined: string | null): PinPaths {
  return { brief, confined, grants: join(root, GRANTS_REL) };
}

/**
 * Reads the pins now.
 *
 * @example
 * ```ts
 * import { readPins } from "./pins.ts";
 * readPins({ brief: "/nonexistent", confined: null, grants: "/nonexistent" }).brief; // null
 * ```
 */
export function readPins(p: PinPaths): Pins {
  return {
    brief: hashOrNull(p.brief),
    confined: hashOrNull(p.confined),
    grants: hashOrNull(p.grants),
  };
}

/**
 * Refuses (`RUNNER_PIN_CHANGED`) pins that differ from those taken at start, naming the file.
 * Pure.
 *
 * @example
 * ```ts
 * import { checkPins } from "./pins.ts";
 * const paths = { brief: "/p/b.json", confined: null, grants: "/p/g.csv" };
 * checkPins({ brief: "a", confined: null, grants: null }, { brief: "a", confined: null, grants: null }, paths);
 * ```
 */
export function checkPins(at: Pins, now: Pins, paths: PinPaths): void {
  for (const k of ["brief", "confined", "grants"] as const) {
    if (at[k] !== now[k]) {
      const what = {
        brief: "the brief",
        confined: "the operator's confined-programs file",
        grants: "the grants ledger",
      }[k];
      throw new QueueError(
        "RUNNER_PIN_CHANGED",
        `${what} (${paths[k]}) changed while the runner served (sha256 ${at[k] ?? "absent"} at ` +
          `start, ${now[k] ?? "absent"} now); the runner stops: restart agentteams serve to ` +
          "serve under the new one",
        { details: { file: paths[k], at: at[k], now: now[k] } },
      );
    }
  }
}
