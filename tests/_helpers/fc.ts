/**
 * fast-check, for property tests: a test-only package, so it is named here by its `npm:` specifier
 * and not in deno.json's imports (Deno fetches every package listed there on the tool's first
 * run, and the tool never needs this one).
 *
 * @module
 */
export * from "npm:fast-check@4.11.0";
export { default } from "npm:fast-check@4.11.0";
