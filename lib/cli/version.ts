/**
 * The program's version, for `--version` and the SARIF driver.
 *
 * @module
 */

/** The version printed by `--version`. */
export const VERSION = "0.1.0";
