import assert from "node:assert/strict";
import { perInvocation } from "../../lib/cli/per_invocation.ts";
import type { Ctx } from "../../lib/cli/command_spec.ts";

function ctxOf(parsed: Ctx["parsed"]): Ctx {
  return {
    name: "run",
    parsed,
    env: {},
    project: "/p",
    json: false,
    now: () => new Date(0),
    note: () => {},
  };
}

Deno.test("perInvocation: once per parsed arguments, again for another invocation, a rejection kept", async () => {
  let made = 0;
  const count = perInvocation((_ctx: Ctx) => ++made);
  const parsed = { flags: {}, positionals: {} };
  // Two contexts of one invocation (the needs' and the command's) share the parsed arguments.
  assert.equal(count(ctxOf(parsed)), 1);
  assert.equal(count({ ...ctxOf(parsed), name: "permissions" }), 1);
  assert.equal(count(ctxOf({ flags: {}, positionals: {} })), 2);
  // A value that is undefined is remembered too.
  let calls = 0;
  const nothing = perInvocation((_ctx: Ctx) => {
    calls++;
    return undefined;
  });
  nothing(ctxOf(parsed));
  nothing(ctxOf(parsed));
  assert.equal(calls, 1);
  // A failure is computed once and every caller sees the same error.
  let tries = 0;
  const failing = perInvocation((_ctx: Ctx) => Promise.reject(new Error(`try ${++tries}`)));
  const first = failing(ctxOf(parsed));
  await assert.rejects(first, /try 1/);
  await assert.rejects(failing(ctxOf(parsed)), /try 1/);
  assert.equal(tries, 1);
});
