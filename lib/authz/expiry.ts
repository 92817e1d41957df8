/**
 * Expiry times as the earlier tool read them: Python's `datetime.fromisoformat`
 * (`lib/pycompat/isoformat.ts`). A value without an offset is naive: grants take it as UTC,
 * waivers refuse it (Python would have raised comparing it). Expired when the instant is at or
 * before now (equal is expired).
 *
 * @example
 * ```ts
 * import { expiryProblem } from "./expiry.ts";
 * expiryProblem("2026-12-01T00:00:00Z", new Date("2027-01-01T00:00:00Z"), "utc")?.code; // "EXPIRED"
 * ```
 * @module
 */

import { parseInstant } from "../pycompat/isoformat.ts";

/** How an instrument treats a value without an offset. */
export type NaivePolicy = "utc" | "refuse";

/** The outcome of {@link expiryProblem}: `null` when not expired. */
export type ExpiryProblem = { code: "EXPIRY_INVALID" | "EXPIRED"; reason: string } | null;

/**
 * Whether `expiresAt` has passed at `now` (equal counts as passed), or is not an instant.
 *
 * @example
 * ```ts
 * import { expiryProblem } from "./expiry.ts";
 * const now = new Date("2026-12-01T00:00:00Z");
 * expiryProblem("2026-12-01T00:00:00+00:00", now, "refuse")?.code; // "EXPIRED"
 * expiryProblem("2026-12-02T00:00:00Z", now, "refuse"); // null
 * expiryProblem("2026-12-02T00:00:00", now, "refuse")?.code; // "EXPIRY_INVALID"
 * ```
 */
export function expiryProblem(expiresAt: string, now: Date, naive: NaivePolicy): ExpiryProblem {
  const t = parseInstant(expiresAt) ?? parseInstant(expiresAt.trim());
  if (t === null) {
    return {
      code: "EXPIRY_INVALID",
      reason: `expires_at ${JSON.stringify(expiresAt)} is not a valid ISO-8601 timestamp`,
    };
  }
  if (t.naive && naive === "refuse") {
    return {
      code: "EXPIRY_INVALID",
      reason: `expires_at ${
        JSON.stringify(expiresAt)
      } has no UTC offset (write it with Z or +00:00)`,
    };
  }
  if (t.ms <= now.getTime()) {
    return { code: "EXPIRED", reason: `expired at ${expiresAt.trim()}` };
  }
  return null;
}
