import assert from "node:assert/strict";
import {
  hostAllowed,
  normalizeHost,
  parseNetworkRule,
  parseNetworkRules,
} from "../../lib/policy/network_rules.ts";

function rulesOf(list: string[]) {
  const p = parseNetworkRules(list);
  if (!p.ok) throw new Error(p.problem);
  return p.rules;
}

Deno.test("network rules: refused forms each name the rule and say why", () => {
  const cases: [string, RegExp][] = [
    ["*", /'\*' other than|not a domain|top-level/],
    ["*.com", /top-level domain/],
    ["*.com.", /top-level domain/],
    ["a.*.example.com", /'\*' other than/],
    ["*example.com", /'\*' other than/],
    ["10.0.0.1", /IP address/],
    ["10.0.0.1:443", /IP address/],
    ["0x7f000001", /IP address/],
    ["[::1]:443", /IP address/],
    ["::1", /IP address/],
    ["example.com:0", /port/],
    ["example.com:65536", /port/],
    ["example.com:", /port/],
    ["example.com:08", /port/],
    ["example.com:http", /port/],
    ["", /empty/],
    ["exa mple.com", /not a domain/],
    ["example.com/path", /not a domain/],
    ["user@example.com", /not a domain/],
    ["-bad.example.com", /not a domain/],
    ["a..example.com", /not a domain/],
    ["example.123", /not a domain|IP/],
    ["x".repeat(64) + ".example.com", /not a domain/],
  ];
  for (const [src, why] of cases) {
    const r = parseNetworkRule(src);
    assert.equal(r.ok, false, src);
    if (!r.ok) {
      assert.match(r.problem, why, src);
      assert.ok(r.problem.includes(JSON.stringify(src)), r.problem);
    }
  }
});

Deno.test("network rules: IDN, punycode and a trailing dot are one rule", () => {
  const forms = [
    "Bücher.example",
    "xn--bcher-kva.example",
    "xn--bcher-kva.example.",
    "BÜCHER.EXAMPLE",
  ];
  const hosts = forms.map((f) => {
    const r = parseNetworkRule(f);
    assert.ok(r.ok, f);
    return r.ok ? r.rule.host : "";
  });
  assert.deepEqual(new Set(hosts), new Set(["xn--bcher-kva.example"]));
  const rules = rulesOf(["Bücher.example"]);
  for (const f of forms) assert.equal(hostAllowed(rules, f, 443), true, f);
});

Deno.test("network rules: ports default to 80 and 443; a named port is the only one", () => {
  const rules = rulesOf(["registry.npmjs.org", "localhost:8080"]);
  assert.equal(hostAllowed(rules, "registry.npmjs.org", 443), true);
  assert.equal(hostAllowed(rules, "registry.npmjs.org", 80), true);
  assert.equal(hostAllowed(rules, "registry.npmjs.org", 22), false);
  assert.equal(hostAllowed(rules, "localhost", 8080), true);
  assert.equal(hostAllowed(rules, "localhost", 443), false);
});

Deno.test("network rules: a wildcard covers names strictly below its domain", () => {
  const rules = rulesOf(["*.example.com"]);
  assert.equal(hostAllowed(rules, "a.example.com", 443), true);
  assert.equal(hostAllowed(rules, "a.b.example.com", 443), true);
  assert.equal(hostAllowed(rules, "example.com", 443), false);
  assert.equal(hostAllowed(rules, "evilexample.com", 443), false);
  assert.equal(hostAllowed(rules, "example.com.evil.net", 443), false);
  assert.equal(hostAllowed(rules, "a.example.com.", 443), true);
});

Deno.test("network rules: addresses and malformed names never match", () => {
  const rules = rulesOf(["*.example.com", "localhost:8080"]);
  for (
    const h of [
      "127.0.0.1",
      "2130706433",
      "0x7f.0.0.1",
      "[::1]",
      "::ffff:127.0.0.1",
      "",
      "a.example.com\u0000.x",
      "a example.com",
      "a.example.com:443",
      "a.example.com%2f",
    ]
  ) {
    assert.equal(hostAllowed(rules, h, 443), false, h);
    assert.equal(hostAllowed(rules, h, 8080), false, h);
  }
  assert.equal(normalizeHost("localhost"), "localhost");
});
