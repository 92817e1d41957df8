/**
 * Confinement: the confined-programs block and its operator file, root resolution, the bwrap and
 * Seatbelt backends, the start-up probe, and the façade that wraps one command.
 *
 * @example
 * ```ts
 * import { confineArgv, decideConfinement, prepareConfinement, probeSandbox } from "./mod.ts";
 * const backend = decideConfinement({ probe: await probeSandbox(), allowUnconfined: false, direct: false });
 * const plan = prepareConfinement({
 *   project: "/srv/repo", home: "/home/op", tmpdir: "/tmp/agentteams-run-x",
 *   agent: { exec: ["/usr/bin"], write: ["build"] }, cwd: ".", argv: ["/usr/bin/make"],
 *   env: { PATH: "/usr/bin:/bin" }, network: false, protectedPaths: [], hiddenDirs: [],
 *   controlPlane: { git: [] },
 * });
 * const cmd = confineArgv(plan, backend);
 * ```
 * @module
 */

export { bwrapArgv, bwrapIsolationFlags, type BwrapPlan } from "./bwrap.ts";
export {
  type ConfinedContext,
  type ConfinedFile,
  GATE_ARGV_KEY,
  GATE_EXEC_KEY,
  selectConfinedPrograms,
  type SelectedConfined,
  validateConfinedPrograms,
  type ValidatedConfined,
  validateExecPath,
  validateWriteRoot,
} from "./programs_block.ts";
export {
  confineArgv,
  type ConfinedCommand,
  DEFAULT_SANDBOX_PROGRAMS,
  type SandboxPrograms,
} from "./launch.ts";
export { type Backend, decideConfinement, type DecideInput } from "./decide.ts";
export { lazyBackend } from "./backend.ts";
export { compactArgvJson, gateArgvDigest } from "./gate_argv.ts";
export { execAllows, gateExecPaths, parseShebang, readShebang } from "./gate_exec.ts";
export { guardFacts } from "./guards_io.ts";
export {
  CONFINED_DIR_REL,
  confinedFileName,
  confinedFilePath,
  MAX_CONFINED_BYTES,
} from "./operator_file.ts";
export {
  type ConfinedFileRead,
  readConfinedFile,
  type ReadConfinedOptions,
} from "./operator_file_read.ts";
export { buildPlan, type ConfinementPlan, type GuardFact, type PlanInput } from "./plan.ts";
export { prepareConfinement, type PrepareOptions } from "./prepare.ts";
export {
  execKeyPhrase,
  type ExecOwner,
  type ExecRefusalFacts,
  execRefusalMessage,
} from "./exec_hint.ts";
export {
  bwrapProbeArgv,
  type ProbeOptions,
  type ProbeResult,
  probeSandbox,
  type SandboxKind,
  seatbeltProbeArgv,
} from "./probe.ts";
export { literalProtected, protectedCovers } from "./protected.ts";
export { checkRoots, type ResolvedRoots, type RootFacts } from "./roots.ts";
export { resolveRoots, type ResolveRootsOptions } from "./roots_io.ts";
export { makePrivateTmpdir, removeMaskPoints, removePrivateTmpdir } from "./run_dir.ts";
export { assertSafePath, unsafePathChar } from "./safe_path.ts";
export { readOnlyMatcher, type ScanHit, scanWritableRoots } from "./root_scan.ts";
export { seatbeltArgv, seatbeltParams, type SeatbeltPlan, seatbeltProfile } from "./seatbelt.ts";
export {
  type ConfinedRunResult,
  executeRun,
  type PreparedRun,
  prepareRun,
  runConfined,
} from "./execute.ts";
export {
  guardedIdentities,
  guardedPathsChanged,
  newReadOnlyEntries,
  scrubGrantedRoots,
} from "./guards_io.ts";
export { hiddenFromConfined } from "./hidden.ts";
export { withConfinedPrograms } from "./programs_load.ts";
export {
  grantedPlaceProblem,
  type GrantedRoot,
  type GrantedRootBounds,
  type KeepClear,
} from "./roots.ts";
export { confinedWriteProblems, existingHidden, grantKeepClear, homeRealOf } from "./roots_io.ts";
export { runTmpParent } from "./run_dir.ts";
