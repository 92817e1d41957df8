/**
 * The gate's whole-process floor (`deno task bench`, section 9): read the decision log and the
 * waiver ledger and HMAC-SHA256 each file's bytes once (WebCrypto), what deciding from both files
 * cannot do with less.
 *
 * Usage: deno run --allow-read scripts/bench/gate_floor.ts PROJECT KEY
 *
 * @module
 */
const [project, secret] = Deno.args;
const key = await crypto.subtle.importKey(
  "raw",
  new TextEncoder().encode(secret),
  { name: "HMAC", hash: "SHA-256" },
  false,
  ["sign"],
);
for (const f of ["security-decisions.log.csv", "security-waivers.log.csv"]) {
  await crypto.subtle.sign("HMAC", key, Deno.readFileSync(`${project}/references/${f}`));
}
