/**
 * The surface of `lib/fs/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export { anchoredRemoveTree, anchoredReplace, MAX_ANCHORED_TARGET } from "./anchored_write.ts";
export {
  atomicWriteFile,
  atomicWriteFileSync,
  fillNewFileSync,
  fsyncDirSync,
  isTempNameFor,
} from "./atomic_write.ts";
export {
  describeKind,
  type EntryKind,
  entryKind,
  kindOfInfo,
  lstatOrNull,
  lstatOrNullSync,
  realPathLoose,
} from "./entry.ts";
export { takeFlock, withFlock } from "./flock.ts";
export { basename, dirname, isAbsolute, join, normalize, relative, resolve, sep } from "./path.ts";
export { childKind, readChild, walkDirs } from "./path_walk.ts";
export { forEachLineAt, readAtSync, readWholeFileSync, readWholeOpenedSync } from "./read_at.ts";
export {
  isPlainRel,
  normalizeRel,
  REL_PATH_PROBLEMS,
  relPathProblem,
  segmentProblem,
} from "./rel_path.ts";
export {
  custodyProblem,
  type CustodyRule,
  OPEN_DEADLINE_MS,
  openWithin,
  readRegularFile,
  readRegularFileSync,
  readRegularFileWithin,
  readWholeFileWithin,
} from "./safe_read.ts";
export {
  checkPin,
  claimName,
  createNewIn,
  type DirPin,
  inPinnedDir,
  listNames,
  lstatName,
  NameRefused,
  pinDir,
  publishNewIn,
  readNameWithin,
  removeIn,
  replaceIn,
} from "./session_dir.ts";
export { keyUnder, overlaps, within } from "./within.ts";
