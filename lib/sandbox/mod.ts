/**
 * Confinement: the confined-programs block and its operator file, root resolution, the bwrap and
 * Seatbelt backends, the start-up probe, and the façade that wraps one command.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /srv/repo
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

export {
  BWRAP_FULL,
  bwrapArgv,
  type BwrapFeatures,
  bwrapIsolationFlags,
  type BwrapPlan,
  parseBwrapHelp,
} from "./bwrap.ts";
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
} from "./confined_programs.ts";
export {
  confineArgv,
  type ConfinedCommand,
  DEFAULT_SANDBOX_PROGRAMS,
  type SandboxPrograms,
} from "./wrapper_chain.ts";
export {
  type Backend,
  decideConfinement,
  type DecideInput,
  execAllowlistGap,
  landlockGap,
} from "./backend_choice.ts";
export {
  type ExecAllowlist,
  execAllowlist,
  INNER_GUARD_SCRIPT,
  innerGuardArgv,
  type InnerGuardSpec,
  LANDLOCK_ACCESS_FS_EXECUTE,
  type LandlockFacts,
  landlockFacts,
  type LandlockRule,
  loaderCandidates,
  parseLandlockProbe,
  rulesetAttrHex,
} from "./landlock.ts";
export { lazyBackend } from "./backend_choice_io.ts";
export { compactArgvJson, gateArgvDigest } from "./gate_argv.ts";
export { execAllows, gateExecPaths, parseShebang, readShebang } from "./gate_exec.ts";
export { guardFacts } from "./read_only_guards.ts";
export {
  CONFINED_DIR_REL,
  confinedFileName,
  confinedFilePath,
  MAX_CONFINED_BYTES,
  MAX_MCP_GRANTS_BYTES,
  MCP_GRANTS_DIR_REL,
  OPERATOR_VERIFY_KEYS_DIR_REL,
} from "./operator_file.ts";
export {
  type ConfinedFileRead,
  type OperatorFileOptions,
  type OperatorFileRead,
  readConfinedFile,
  type ReadConfinedOptions,
  readOperatorFile,
} from "./operator_file_read.ts";
export { buildPlan, type ConfinementPlan, type GuardFact, type PlanInput } from "./mounts.ts";
export { prepareConfinement, type PrepareOptions } from "./mounts_io.ts";
export {
  execKeyPhrase,
  type ExecOwner,
  type ExecRefusalFacts,
  execRefusalMessage,
  interpreterRefusalMessage,
} from "./exec_hint.ts";
export {
  bwrapProbeArgv,
  type ProbeOptions,
  type ProbeResult,
  probeSandbox,
  probeSandboxHost,
  type SandboxHost,
  sandboxHost,
  type SandboxKind,
  seatbeltProbeArgv,
} from "./host_probe.ts";
export { literalProtected, protectedCovers } from "./protected_paths.ts";
export { checkRoots, type ResolvedRoots, type RootFacts } from "./write_exec_roots.ts";
export { resolveRoots, type ResolveRootsOptions } from "./write_exec_roots_io.ts";
export {
  makePrivateTmpdir,
  removeMaskPoints,
  removePrivateTmpdir,
  removePrivateTmpdirSoon,
} from "./run_dir.ts";
export { assertSafePath, unsafePathChar } from "./safe_path.ts";
export { readOnlyMatcher, type ScanHit, scanWritableRoots } from "./write_root_scan.ts";
export { ScanCache, scanCachePath } from "./write_root_scan_cache.ts";
export { cachedProbe, probeCachePath, probeIdentity } from "./probe_cache.ts";
export { seatbeltArgv, seatbeltParams, type SeatbeltPlan, seatbeltProfile } from "./seatbelt.ts";
export {
  type ConfinedRunResult,
  executeRun,
  type PreparedRun,
  prepareRun,
  runConfined,
} from "./confined_run.ts";
export {
  guardedIdentities,
  guardedPathsChanged,
  newReadOnlyEntries,
  scrubGrantedRoots,
} from "./read_only_guards.ts";
export { hiddenFromConfined } from "./hidden_dirs.ts";
export { withConfinedPrograms } from "./confined_programs_io.ts";
export {
  grantedPlaceProblem,
  type GrantedRoot,
  type GrantedRootBounds,
  type KeepClear,
} from "./write_exec_roots.ts";
export {
  confinedWriteProblems,
  existingHidden,
  grantKeepClear,
  homeRealOf,
} from "./write_exec_roots_io.ts";
export { runTmpParent } from "./run_dir.ts";
