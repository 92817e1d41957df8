/**
 * The surface of `lib/release/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export { minisignPublicKeyText } from "./minisign.ts";
export { signRelease, verifyRelease } from "./release_dir.ts";
