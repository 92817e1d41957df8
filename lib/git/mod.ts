/**
 * The surface of `lib/git/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export { GIT_CONFIG_ENV } from "./config_env.ts";
export {
  type GitContext,
  type GitControlPath,
  gitStatus,
  type IndexRead,
  openGitContext,
  readIndex,
  type WatchedGitPaths,
} from "./context.ts";
export type { IndexEntry } from "./index_file.ts";
export { compareBytes, compareCodePoints, renderPathBytes, startsWithBytes } from "./path_bytes.ts";
export { isGitDirListing, wouldBeGitDir } from "./repo_shape.ts";
export type { StatusEntry } from "./status_z.ts";
