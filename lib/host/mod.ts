/**
 * The surface of `lib/host/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export {
  BWRAP_PATH,
  HOST_PROGRAMS,
  PERL_PATH,
  SANDBOX_EXEC_PATH,
  SETSID_PATH,
} from "./programs.ts";
