/**
 * The host programs this tool runs itself, by absolute path: never looked up on a PATH an agent
 * could shape, and granted by exactly these names in the permission layer's `--allow-run`. Every
 * module that spawns one of them names it from here.
 *
 * | program | what for |
 * | --- | --- |
 * | `bwrap` | bubblewrap: the Linux sandbox around every confined command and gate |
 * | `sandbox-exec` | Seatbelt: the macOS sandbox |
 * | `perl` | the exec guard in front of bwrap (closes inherited descriptors, loads seccomp), and the anchored write of a proposal |
 * | `setsid` | util-linux: starts a command as the leader of its own session and process group |
 *
 * @example
 * ```ts
 * import { BWRAP_PATH, HOST_PROGRAMS } from "./programs.ts";
 * import assert from "node:assert/strict";
 * assert.equal(BWRAP_PATH, "/usr/bin/bwrap");
 * assert.ok(HOST_PROGRAMS.every((p) => p.startsWith("/")));
 * ```
 * @module
 */

/** Bubblewrap, the Linux sandbox. */
export const BWRAP_PATH = "/usr/bin/bwrap";

/** Seatbelt's launcher, the macOS sandbox. */
export const SANDBOX_EXEC_PATH = "/usr/bin/sandbox-exec";

/** Perl: the exec guard in front of bwrap, and the anchored write's helper. */
export const PERL_PATH = "/usr/bin/perl";

/**
 * util-linux `setsid`: started by `posix_spawn` in this process's group (so it is never a group
 * leader), it calls `setsid()` and execs the program, which keeps its pid as session and group
 * id. Deno's own `detached: true` does the same with `fork()` plus a `setsid()` hook, which costs
 * a few milliseconds more per spawn (the whole address space is copied on write).
 */
export const SETSID_PATH = "/usr/bin/setsid";

/** Every host program above. */
export const HOST_PROGRAMS: readonly string[] = Object.freeze([
  BWRAP_PATH,
  SANDBOX_EXEC_PATH,
  PERL_PATH,
  SETSID_PATH,
]);
