/**
 * Waiting for a bwrap sandbox's PID namespace to end. bwrap reports the command's exit as soon as
 * it learns of it, before the namespace's init has exited; whatever the command left running
 * there (a background job) can run on for a moment after bwrap returned, and write after the
 * run's after-snapshot. The init's pid, as this side sees it, is what bwrap's `--info-fd` writes
 * (`{"child-pid": N, ...}`); once that process is gone (or a zombie), the kernel has killed and
 * reaped every process of the namespace, since a PID namespace's init exits last.
 *
 * @module
 */
import { parseProcStat } from "../process/procfs.ts";

/** How long to wait for the namespace before killing its init. */
export const NAMESPACE_END_MS = 2000;

/**
 * The namespace init's pid from bwrap's info text, or null. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { initPidOf } from "./namespace_end.ts";
 * assert.equal(initPidOf('{\n    "child-pid": 4242,\n    "ipc-namespace": 4026532\n}'), 4242);
 * assert.equal(initPidOf(""), null);
 * ```
 */
export function initPidOf(info: string): number | null {
  try {
    const v = JSON.parse(info) as { "child-pid"?: unknown };
    const pid = v["child-pid"];
    return typeof pid === "number" && Number.isSafeInteger(pid) && pid > 1 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number, ownNs: string | null): boolean {
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    return false;
  }
  const s = parseProcStat(stat);
  if (s === null || s.state === "Z" || s.state === "X") return false;
  // A pid reused by a process of this namespace is not the sandbox's init.
  try {
    if (ownNs !== null && Deno.readLinkSync(`/proc/${pid}/ns/pid`) === ownNs) return false;
  } catch {
    return false;
  }
  return true;
}

/**
 * Waits until the namespace whose info bwrap wrote into `infoFile` has ended (at most
 * {@link NAMESPACE_END_MS}; then its init is killed, which ends the rest), and removes the file.
 * True when a namespace had to be waited for or killed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { awaitNamespaceEnd } from "./namespace_end.ts";
 * assert.equal(await awaitNamespaceEnd("/nonexistent/info"), false); // nothing to wait for
 * ```
 */
export async function awaitNamespaceEnd(infoFile: string): Promise<boolean> {
  let text = "";
  try {
    text = Deno.readTextFileSync(infoFile);
  } catch {
    return false;
  } finally {
    try {
      Deno.removeSync(infoFile);
    } catch { /* already gone */ }
  }
  const pid = initPidOf(text);
  if (pid === null) return false;
  let ownNs: string | null = null;
  try {
    ownNs = Deno.readLinkSync("/proc/self/ns/pid");
  } catch { /* no procfs: the pid alone */ }
  if (!alive(pid, ownNs)) return false;
  const deadline = performance.now() + NAMESPACE_END_MS;
  let pause = 1;
  while (alive(pid, ownNs)) {
    if (performance.now() > deadline) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone meanwhile */ }
      const end = performance.now() + 500;
      while (alive(pid, ownNs) && performance.now() < end) {
        await new Promise((r) => setTimeout(r, 5));
      }
      return true;
    }
    await new Promise((r) => setTimeout(r, pause));
    pause = Math.min(pause * 2, 20);
  }
  return true;
}
