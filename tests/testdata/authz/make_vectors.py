"""Writes the authz test vectors the way the earlier Python tool wrote its CSV ledgers
(csv.DictWriter, QUOTE_MINIMAL), with signatures computed here by Python's hmac and by
OpenSSL's Ed25519 (independently of the TypeScript code under test). Run once; the outputs are
committed beside it."""
import csv, hashlib, hmac, io, subprocess

WAIVER_KEY = "waiver-test-key"
DECISION_KEY = "decision-test-key"
GRANT_KEY = "grant-test-key"

def payload(values):
    return "|".join(v.strip() for v in values)

def mac(key, text):
    return hmac.new(key.encode(), text.encode(), hashlib.sha256).hexdigest()

def write(path, header, rows, eol):
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=header, lineterminator=eol)
    w.writeheader()
    for r in rows:
        w.writerow(r)
    with open(path, "w", newline="") as f:
        f.write(buf.getvalue())

WH = ["timestamp", "waiver_id", "action_reviewed", "expires_at", "max_uses", "uses", "approver",
      "ticket_id", "reason_code", "conditions_verified", "signature"]
WF = ["waiver_id", "action_reviewed", "expires_at", "max_uses", "uses", "approver", "ticket_id",
      "reason_code", "conditions_verified"]
waivers = [
    dict(timestamp="2026-11-29T10:00:00Z", waiver_id="W-7", action_reviewed="security-intel-freshness",
         expires_at="2099-12-01T00:00:00Z", max_uses="2", uses="0", approver="alice",
         ticket_id="OPS-1", reason_code="offline", conditions_verified="verified"),
    dict(timestamp="2026-11-29T10:05:00Z", waiver_id="W-8", action_reviewed="delete:docs/old, \"draft\".md",
         expires_at="2099-12-01T05:30:00+05:30", max_uses="1", uses="0", approver="@Alice",
         ticket_id="OPS-2", reason_code="cleanup\nline two", conditions_verified="verified"),
    dict(timestamp="2026-11-29T10:06:00Z", waiver_id="W-9", action_reviewed="deploy",
         expires_at="2020-01-01T00:00:00Z", max_uses="1", uses="0", approver="alice",
         ticket_id="OPS-3", reason_code="old", conditions_verified="verified"),
]
for w in waivers:
    w["signature"] = mac(WAIVER_KEY, payload([w[k] for k in WF]))
write("waivers-lf.csv", WH, waivers, "\n")
write("waivers-crlf.csv", WH, waivers, "\r\n")

DH = ["date", "plan_slug", "step", "decision", "status", "conditions", "conditions_verified",
      "evidence", "owner", "prev_digest", "signature"]
decisions = [
    dict(date="2026-11-29", plan_slug="plan-x", step="3", decision="overwrite", status="PASS",
         conditions="", conditions_verified="verified", evidence="ticket-12", owner="@security"),
    dict(date="2026-11-30", plan_slug="plan-x", step="4", decision="delete:build/out.bin",
         status="CONDITIONAL PASS", conditions="backup, first", conditions_verified="verified",
         evidence="ticket-13", owner="security"),
    dict(date="2026-11-30", plan_slug="plan-x", step="5", decision="deploy", status="HALT",
         conditions="", conditions_verified="", evidence="", owner="security"),
]
prev = ""
for d in decisions:
    d["prev_digest"] = prev
    p = payload([d["date"], d["decision"], d["status"], d["conditions_verified"],
                 d["owner"].strip().lstrip("@").lower(), d["prev_digest"]])
    d["signature"] = mac(DECISION_KEY, p)
    prev = hashlib.sha256(p.encode()).hexdigest()
# Created as the earlier tool did: header with LF, first row with CRLF, then CRLF.
buf = io.StringIO()
w = csv.DictWriter(buf, fieldnames=DH, lineterminator="\r\n")
w.writerow(dict(zip(DH, DH)))
text = buf.getvalue()[:-2] + "\n"
buf = io.StringIO()
w = csv.DictWriter(buf, fieldnames=DH, lineterminator="\r\n")
for d in decisions:
    w.writerow(d)
with open("decisions-signed.csv", "w", newline="") as f:
    f.write(text + buf.getvalue())

LH = ["timestamp", "requesting_agent", "action_reviewed", "verdict", "conditions", "conditions_verified"]
write("decisions-legacy.csv", LH, [
    dict(timestamp="2026-11-01T00:00:00Z", requesting_agent="@security", action_reviewed="rotate-logs",
         verdict="PASS", conditions="", conditions_verified="verified"),
], "\n")

# Grants: an Ed25519 write grant and an HMAC read grant, chained.
subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", "grant-op1.pem"], check=True)
subprocess.run(["openssl", "pkey", "-in", "grant-op1.pem", "-pubout", "-out", "op1.pub.pem"], check=True)
GH = ["timestamp", "grant_id", "issuer_team", "holder_team", "target_path", "permitted_ops",
      "expires_at", "max_uses", "uses", "approver", "ticket_id", "reason_code", "issuer_root",
      "prev_digest", "signature", "sig_scheme", "key_id"]
GF = ["grant_id", "issuer_team", "holder_team", "target_path", "permitted_ops", "expires_at",
      "max_uses", "uses", "approver", "ticket_id", "reason_code", "prev_digest"]
def gpayload(g):
    vals = [g[k] for k in GF]
    if g["issuer_root"].strip():
        vals.append(g["issuer_root"])
    if g["sig_scheme"].strip():
        vals.append("sig_scheme=" + g["sig_scheme"].strip())
    if g["key_id"].strip():
        vals.append("key_id=" + g["key_id"].strip())
    return payload(vals)
grants = [
    dict(timestamp="2026-11-29T10:00:00+00:00", grant_id="G-1", issuer_team="team-a", holder_team="team-b",
         target_path="docs/shared", permitted_ops="write", expires_at="2099-12-31T00:00:00+00:00",
         max_uses="1", uses="0", approver="alice", ticket_id="T-9", reason_code="cross-repo",
         issuer_root="/srv/team-a", sig_scheme="ed25519", key_id="op1"),
    dict(timestamp="2026-11-29T10:01:00+00:00", grant_id="G-2", issuer_team="team-a", holder_team="team-b",
         target_path="docs/read-only", permitted_ops="read", expires_at="2099-12-31T00:00:00Z",
         max_uses="3", uses="0", approver="alice", ticket_id="T-10", reason_code="lookup",
         issuer_root="", sig_scheme="", key_id=""),
]
prev = ""
for g in grants:
    g["prev_digest"] = prev
    p = gpayload(g)
    if g["sig_scheme"] == "ed25519":
        with open("msg.bin", "w") as f:
            f.write("agentteams-grant-v1|" + p)
        subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", "grant-op1.pem", "-rawin", "-in",
                        "msg.bin", "-out", "sig.bin"], check=True)
        g["signature"] = open("sig.bin", "rb").read().hex()
    else:
        g["signature"] = mac(GRANT_KEY, p)
    prev = hashlib.sha256(p.encode()).hexdigest()
write("grants.csv", GH, grants, "\n")
import os
for f in ["msg.bin", "sig.bin"]:
    os.remove(f)
with open("KEYS.txt", "w") as f:
    f.write(f"waiver {WAIVER_KEY}\ndecision {DECISION_KEY}\ngrant {GRANT_KEY}\n")
