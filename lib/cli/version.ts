/**
 * The version `--version` prints and the runner writes into its liveness file.
 *
 * @module
 */

/** The version of this build. */
export const VERSION = "0.1.0";
