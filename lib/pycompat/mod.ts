/**
 * The surface of `lib/pycompat/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export {
  canonical,
  canonicalBytes,
  canonicalCompact,
  canonicalString,
  compareCodePoints,
  type JsonObject,
  type JsonValue,
} from "./canonical.ts";
export { formatRecord } from "./csv_quote.ts";
export { fnmatch, fnmatchCase, hasWildcard } from "./fnmatch.ts";
export { parseInstant } from "./isoformat.ts";
export {
  compileArgPattern,
  MAX_ARG_PATTERN_LENGTH,
  MAX_REPEAT_COUNT,
  translatePythonRegex,
} from "./pyre.ts";
export { codePointSlice, pyStrip } from "./str.ts";
