/**
 * The domain checks of the tests, the one place they are defined. The rule: generic assertions
 * come from `node:assert/strict` (imported as `assert`), every domain check from this module;
 * a test directory's own helpers may only compose these (e.g. `expectPolicyError`, which adds
 * message parts to {@link assertRefusal}), never define another.
 *
 * - {@link assertRefusal}: a call (sync or async) refused with a typed error and a code.
 * - {@link assertCliRefused}: a finished CLI run refused with a code, one refusal line, an exit.
 * - {@link assertSameTree}: two tree snapshots (`snapshotTree` of ./mod.ts) are identical.
 * - {@link hangGuard}: a generous bound after which a pending step fails the test as hung.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { assertRefusal } from "./assert.ts";
 * import { UsageError } from "../../lib/errors.ts";
 *
 * const e = assertRefusal(() => {
 *   throw new UsageError("USAGE", "no command given");
 * }, "USAGE", UsageError);
 * assert.match(e.message, /no command/);
 * ```
 * @module
 */
import assert from "node:assert/strict";
import { inspect } from "node:util";
import { AgentTeamsError } from "../../lib/errors.ts";
import { type Refusal, refusals, type RunResult, type TreeSnapshot } from "./mod.ts";

/** A class of refusals: {@link AgentTeamsError} itself or any subclass of it. */
export type RefusalClass<E extends AgentTeamsError> = abstract new (...args: never[]) => E;

/** Fails the test with `message`, keeping `cause` (what was thrown instead) for the report. */
function fail(message: string, cause?: unknown): never {
  const e = new assert.AssertionError({ message });
  if (cause !== undefined) Object.defineProperty(e, "cause", { value: cause });
  throw e;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (typeof v === "object" || typeof v === "function") && v !== null &&
    typeof (v as { then?: unknown }).then === "function";
}

function checkRefusal<E extends AgentTeamsError>(
  caught: unknown,
  code: string,
  cls: RefusalClass<E>,
  where: string,
): E {
  if (!(caught instanceof AgentTeamsError)) {
    fail(`${where}expected a refusal ${cls.name} ${code}, got ${inspect(caught)}`, caught);
  }
  if (!(caught instanceof cls)) {
    fail(
      `${where}expected a refusal ${cls.name} ${code}, got ${caught.name} ${caught.code}: ` +
        caught.message,
      caught,
    );
  }
  if (caught.code !== code) {
    fail(
      `${where}expected code ${code}, got ${caught.code} (${caught.name}): ${caught.message}`,
      caught,
    );
  }
  return caught;
}

/**
 * What {@link assertRefusal} returns for an `fn` returning `R`: the error for a synchronous `fn`,
 * a promise of it for one returning a promise, either (so: await it) when the type cannot tell.
 */
export type RefusalResult<R, E> = [R] extends [never] ? E
  : unknown extends R ? E | Promise<E>
  : [R] extends [PromiseLike<unknown>] ? Promise<E>
  : [Extract<R, PromiseLike<unknown>>] extends [never] ? E
  : E | Promise<E>;

/**
 * Calls `fn` and asserts it was refused: it threw (or, when it returned a promise, the promise
 * rejected with) an {@link AgentTeamsError} that is an instance of `cls` (default: any subclass)
 * and carries `code`. Returns the error, or a promise of it when `fn` returned a promise
 * (`await assertRefusal(...)` is right in every case). Succeeding, throwing anything else, or a
 * wrong class or code fails the test; `message` prefixes the failure.
 *
 * @example
 * ```ts ignore
 * await assertRefusal(() => loadPolicy(path), "POLICY_LINT", PolicyError);
 * const e = assertRefusal(() => parseHead(text), "LEDGER_TAMPERED", LedgerError, "a bad head");
 * ```
 */
export function assertRefusal<R, E extends AgentTeamsError = AgentTeamsError>(
  fn: () => R,
  code: string,
  cls?: RefusalClass<E>,
  message?: string,
): RefusalResult<R, E> {
  const of = cls ?? (AgentTeamsError as unknown as RefusalClass<E>);
  const where = message === undefined || message === "" ? "" : `${message}: `;
  let result: unknown;
  try {
    result = fn();
  } catch (e) {
    return checkRefusal(e, code, of, where) as RefusalResult<R, E>;
  }
  if (isThenable(result)) {
    return Promise.resolve(result).then(
      (v) => fail(`${where}expected a refusal ${of.name} ${code}, but it resolved: ${inspect(v)}`),
      (e: unknown) => checkRefusal(e, code, of, where),
    ) as RefusalResult<R, E>;
  }
  fail(`${where}expected a refusal ${of.name} ${code}, but it returned: ${inspect(result)}`);
}

/** Asserts a finished CLI run refused with `code` (exactly one refusal line) and `exit`. */
export function assertCliRefused(
  r: RunResult,
  command: string,
  code: string,
  exit = 1,
): Refusal {
  const found = refusals(r.stderr);
  assert.equal(found.length, 1, `one refusal line expected, stderr:\n${r.stderr}`);
  assert.equal(found[0].command, command, r.stderr);
  assert.equal(found[0].code, code, r.stderr);
  assert.equal(r.code, exit, `exit ${exit} expected, got ${r.code}; stderr:\n${r.stderr}`);
  return found[0];
}

/**
 * Asserts two tree snapshots are identical (every path on both sides, every field of every
 * entry: kind, mode, owner, inode, size, digest or target), naming the first difference in path
 * order.
 */
export function assertSameTree(before: TreeSnapshot, after: TreeSnapshot, what = "tree"): void {
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort();
  for (const k of keys) {
    const b = before.get(k);
    const a = after.get(k);
    if (a === undefined) fail(`${what}: ${k} was removed (it was ${inspect(b)})`);
    if (b === undefined) fail(`${what}: ${k} was created (${inspect(a)})`);
    assert.deepEqual(a, b, `${what}: ${k} changed`);
  }
}

/**
 * Resolves or rejects as `p` does; when `p` is still pending after `boundMs` (default 120 s, far
 * beyond any expected duration), fails the test: `<what> still pending after <bound>: hung`.
 * A guard against hangs, never a speed check: the bound is generous on purpose, and no caller
 * may assert anything about how long `p` took. The timer is cleared once `p` settles.
 */
export function hangGuard<T>(p: PromiseLike<T>, what: string, boundMs = 120_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const e = new assert.AssertionError({
        message: `hang guard: ${what} still pending after ${boundMs / 1000} s: hung`,
      });
      reject(e);
    }, boundMs);
  });
  return Promise.race([Promise.resolve(p), guard]).finally(() => clearTimeout(timer));
}
