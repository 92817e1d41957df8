/**
 * The surface of `lib/init/`: `agentteams init`, switching a project on (docs/init.md).
 *
 * @module
 */

export { fixCommandOf, type InitChange, initProject, type InitReport } from "./init.ts";
