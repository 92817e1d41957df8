/**
 * The network allowlist of a command entry (`network: ["registry.npmjs.org", "*.example.com"]`):
 * which names a confined command may reach through the run's proxy. Pure: parsing a rule,
 * normalising a host name and deciding whether a request matches are the one place these rules
 * live; the brief's lint, the plan and the proxy all call them.
 *
 * A rule is a DNS name, optionally `*.` followed by a name of at least two labels (`*.com` and a
 * bare `*` are refused: a wildcard over a whole top-level domain is no allowlist), optionally
 * followed by `:PORT`. Without a port a rule allows 80 and 443. Names are compared in their ASCII
 * (punycode) form, lower-cased, with one trailing dot dropped, so `Bücher.example`,
 * `xn--bcher-kva.example` and `xn--bcher-kva.example.` are one rule. IP literals are never rules
 * and never match: the allowlist names domains.
 *
 * @example
 * ```ts
 * import { hostAllowed, parseNetworkRules } from "./network_rules.ts";
 * import assert from "node:assert/strict";
 * const parsed = parseNetworkRules(["registry.npmjs.org", "*.example.com:8443"]);
 * assert.ok(parsed.ok);
 * if (parsed.ok) {
 *   assert.equal(hostAllowed(parsed.rules, "registry.npmjs.org", 443), true);
 *   assert.equal(hostAllowed(parsed.rules, "a.example.com", 8443), true);
 *   assert.equal(hostAllowed(parsed.rules, "example.com", 8443), false);
 *   assert.equal(hostAllowed(parsed.rules, "a.example.com", 443), false);
 * }
 * ```
 * @module
 */

/** Ports a rule without `:PORT` allows. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

/** One parsed allowlist rule. */
export interface NetworkRule {
  /** The rule as written in the brief. */
  readonly source: string;
  /** The name in ASCII lower case, without the `*.` of a wildcard. */
  readonly host: string;
  /** True for `*.name`: any name strictly below `host`. */
  readonly wildcard: boolean;
  /** The ports it allows. */
  readonly ports: readonly number[];
}

/** A rule's problem, in words naming the user's rule. */
export type RuleResult =
  | { readonly ok: true; readonly rule: NetworkRule }
  | { readonly ok: false; readonly problem: string };

/** All rules of one entry, or the first problem. */
export type RulesResult =
  | { readonly ok: true; readonly rules: readonly NetworkRule[] }
  | { readonly ok: false; readonly problem: string };

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * IDNA's ToASCII as the web's URL parser does it (lower case, punycode), or `""` when it refuses
 * the name. A web built-in: `node:url` would load Deno's Node layer at every command's start.
 */
function domainToASCII(name: string): string {
  try {
    return new URL(`http://${name}/`).hostname;
  } catch {
    return "";
  }
}
const MAX_NAME = 253;

/**
 * A host name's comparable form (ASCII, lower case, one trailing dot dropped), or `null` when it
 * is not a DNS name: empty, an IP literal (v4 in any of its numeric spellings, v6 in brackets or
 * not), a label that is empty, too long or holds other characters, or a name over 253 octets.
 *
 * @example
 * ```ts
 * import { normalizeHost } from "./network_rules.ts";
 * import assert from "node:assert/strict";
 * assert.equal(normalizeHost("Bücher.Example."), "xn--bcher-kva.example");
 * assert.equal(normalizeHost("127.0.0.1"), null);
 * assert.equal(normalizeHost("[::1]"), null);
 * assert.equal(normalizeHost("0x7f.1"), null);
 * ```
 */
export function normalizeHost(name: string): string | null {
  if (name.length === 0 || name.length > 2 * MAX_NAME) return null;
  if (name.includes(":") || name.includes("[") || name.includes("%")) return null;
  const trimmed = name.endsWith(".") ? name.slice(0, -1) : name;
  if (trimmed.length === 0 || trimmed.endsWith(".")) return null;
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u0020\u007f/\\?#@*]/.test(trimmed)) return null;
  const ascii = domainToASCII(trimmed);
  if (ascii === "" || ascii.length > MAX_NAME) return null;
  const labels = ascii.split(".");
  if (!labels.every((l) => LABEL.test(l))) return null;
  // WHATWG URL parsing reads a name whose last label is numeric (decimal, 0x hex, octal) as IPv4.
  if (/^(0x[0-9a-f]*|[0-9]+)$/.test(labels[labels.length - 1])) return null;
  return ascii;
}

/**
 * Parses one rule as written in a brief.
 *
 * @example
 * ```ts
 * import { parseNetworkRule } from "./network_rules.ts";
 * import assert from "node:assert/strict";
 * const r = parseNetworkRule("*.Example.com:8080");
 * assert.ok(r.ok && r.rule.wildcard && r.rule.host === "example.com" && r.rule.ports[0] === 8080);
 * assert.equal(parseNetworkRule("*.com").ok, false);
 * assert.equal(parseNetworkRule("10.0.0.1").ok, false);
 * ```
 */
export function parseNetworkRule(source: string): RuleResult {
  const bad = (why: string): RuleResult => ({
    ok: false,
    problem: `network rule ${JSON.stringify(source)}: ${why}`,
  });
  if (source.length === 0) return bad("is empty; write a domain such as registry.npmjs.org");
  if (source.includes("[") || source.split(":").length > 2) {
    return bad("is an IP address; the allowlist names domains, never addresses");
  }
  let namePart = source;
  let ports = DEFAULT_PORTS;
  const colon = source.lastIndexOf(":");
  if (colon >= 0) {
    const portText = source.slice(colon + 1);
    namePart = source.slice(0, colon);
    if (!/^[1-9][0-9]{0,4}$/.test(portText) || Number(portText) > 65535) {
      return bad(`has port ${JSON.stringify(portText)}; a port is a number from 1 to 65535`);
    }
    ports = [Number(portText)];
  }
  let wildcard = false;
  if (namePart.startsWith("*.")) {
    wildcard = true;
    namePart = namePart.slice(2);
  }
  if (namePart.includes("*")) {
    return bad("has a '*' other than a leading '*.'; write '*.example.com' for every name below");
  }
  if (/^[0-9.]+$/.test(namePart) || /^0x/i.test(namePart)) {
    return bad("is an IP address; the allowlist names domains, never addresses");
  }
  const host = normalizeHost(namePart);
  if (host === null) {
    return bad("is not a domain name (letters, digits and hyphens in dot-separated labels)");
  }
  if (wildcard && host.split(".").length < 2) {
    return bad(`covers a whole top-level domain; name the domain, as in '*.example.${host}'`);
  }
  return { ok: true, rule: { source, host, wildcard, ports } };
}

/**
 * Parses a command entry's list, refusing at the first bad rule.
 *
 * @example
 * ```ts
 * import { parseNetworkRules } from "./network_rules.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parseNetworkRules(["a.example", "*"]).ok, false);
 * assert.equal(parseNetworkRules([]).ok, true);
 * ```
 */
export function parseNetworkRules(sources: readonly string[]): RulesResult {
  const rules: NetworkRule[] = [];
  for (const s of sources) {
    const r = parseNetworkRule(s);
    if (!r.ok) return r;
    rules.push(r.rule);
  }
  return { ok: true, rules };
}

/**
 * Whether a request for `host:port` is allowed by `rules`. The host is normalised as the rules
 * are; an IP literal or a malformed name is never allowed. A wildcard allows names strictly below
 * its domain, not the domain itself.
 *
 * @example
 * ```ts
 * import { hostAllowed, parseNetworkRules } from "./network_rules.ts";
 * import assert from "node:assert/strict";
 * const p = parseNetworkRules(["localhost:8080"]);
 * assert.ok(p.ok);
 * if (p.ok) {
 *   assert.equal(hostAllowed(p.rules, "LOCALHOST.", 8080), true);
 *   assert.equal(hostAllowed(p.rules, "127.0.0.1", 8080), false);
 * }
 * ```
 */
export function hostAllowed(rules: readonly NetworkRule[], host: string, port: number): boolean {
  const name = normalizeHost(host);
  if (name === null) return false;
  return rules.some((r) =>
    r.ports.includes(port) && (r.wildcard ? name.endsWith("." + r.host) : name === r.host)
  );
}
