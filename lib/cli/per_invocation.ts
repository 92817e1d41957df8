/**
 * Values worked out once per CLI invocation. The permission needs (computed before narrowing) and
 * the command itself share one parsed-arguments object, so a value keyed by it is computed once
 * and seen identically by both; nothing outlives the invocation (an embedding process that runs
 * the CLI again computes it again).
 *
 * @module
 */
import type { Ctx } from "./command_spec.ts";

/**
 * Wraps `make` so it runs once per invocation (per `ctx.parsed`); later calls return the first
 * result (further arguments are the first call's). A rejected promise is kept like any other value, so every caller sees the same refusal.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { perInvocation } from "./per_invocation.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx;
 * let made = 0;
 * const count = perInvocation((_ctx: Ctx) => ++made);
 * count(ctx);
 * count(ctx); // 1: `make` ran once for this invocation
 * ```
 */
export function perInvocation<T, A extends unknown[] = []>(
  make: (ctx: Ctx, ...args: A) => T,
): (ctx: Ctx, ...args: A) => T {
  const made = new WeakMap<object, { value: T }>();
  return (ctx, ...args) => {
    let m = made.get(ctx.parsed);
    if (m === undefined) {
      m = { value: make(ctx, ...args) };
      made.set(ctx.parsed, m);
    }
    return m.value;
  };
}
