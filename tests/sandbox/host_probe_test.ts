/**
 * The host probe asked without blocking (`sandboxHostAsync`, what the backend's probe uses) gives
 * the answer the blocking one gives, and one answer per process whichever asks first: the probe
 * and every plan see the same bwrap features and Landlock ABI. Needs bwrap and perl (Linux).
 */
import assert from "node:assert/strict";
import {
  probeSandboxHost,
  probeSandboxHostAsync,
  sandboxHost,
  sandboxHostAsync,
} from "../../lib/sandbox/host_probe.ts";

Deno.test({
  name: "host probe: the async probe answers as the blocking one; one memo for both",
  // Seatbelt hosts have no bwrap to ask (reported as ignored there, not as a pass).
  ignore: Deno.build.os !== "linux",
}, async () => {
  assert.deepEqual(await probeSandboxHostAsync(), probeSandboxHost());
  const first = sandboxHostAsync();
  const second = sandboxHostAsync();
  const [a, b] = await Promise.all([first, second]);
  assert.equal(a, b, "asked once");
  assert.equal(sandboxHost(), a, "the blocking memo is the same answer");
  assert.equal(await sandboxHostAsync(), a);
  // A program that is missing answers as a bwrap without features would, not with a throw.
  const none = await probeSandboxHostAsync("/nonexistent/bwrap", "/nonexistent/perl");
  assert.deepEqual(none, probeSandboxHost("/nonexistent/bwrap", "/nonexistent/perl"));
  assert.equal(none.landlock.abi, 0);
});
