/**
 * The variables that choose which config files git reads. The operator's git obeys them, so the
 * tool's own git calls pass them on (its control plane is then the files the operator's git reads),
 * and the permission layer grants them. `GIT_CONFIG_COUNT` (config given in the environment
 * itself) refuses the act instead. A module of its own, so that naming them loads no git code.
 *
 * @module
 */

/** See the module doc. */
export const GIT_CONFIG_ENV: readonly string[] = Object.freeze([
  "XDG_CONFIG_HOME",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "GIT_CONFIG_NOSYSTEM",
  "GIT_CONFIG_COUNT",
]);
