/**
 * The surface of `lib/process/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export { CHILD_ENV, childEnv, sanitizePath } from "./child_env.ts";
export { parseProcStat } from "./procfs.ts";
export { diskFs, resolveCwd, type ResolvedProgram, resolveProgram } from "./resolve_program.ts";
export { runProcess, type RunResult } from "./spawn.ts";
