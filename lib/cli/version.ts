/**
 * The program's version: `--version` prints it, the runner writes it into its liveness file, and
 * the SARIF driver names it.
 *
 * @module
 */

/** The version of this build. */
export const VERSION = "0.1.0";
