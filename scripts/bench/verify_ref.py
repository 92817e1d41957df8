#!/usr/bin/env python3
"""Reference verifier for the bench: the earlier Python implementation's cost model.

Checks every row's HMAC over json.dumps(row without mac, sort_keys=True), the prev chain and the
signed head, with the C json module and OpenSSL-backed hmac/hashlib. Prints "ok <rows>" or the
first problem. Usage: verify_ref.py <project root> <key file>
"""
import hashlib
import hmac
import json
import sys


def main() -> int:
    root, key_file = sys.argv[1], sys.argv[2]
    key = open(key_file, "rb").read().strip()
    with open(f"{root}/.agentteams/proposal-ledger.jsonl", "rb") as f:
        lines = f.read().splitlines()
    prev = ""
    for n, line in enumerate(lines, 1):
        row = json.loads(line)
        mac = row.pop("mac")
        body = json.dumps(row, sort_keys=True).encode()
        if not hmac.compare_digest(hmac.new(key, body, hashlib.sha256).hexdigest(), mac):
            print(f"row {n}: bad mac")
            return 1
        if row["prev"] != prev:
            print(f"row {n}: broken chain")
            return 1
        prev = hashlib.sha256(line).hexdigest()
    with open(f"{root}/.agentteams/proposal-ledger.head", "rb") as f:
        head = json.loads(f.read().strip())
    mac = head.pop("mac")
    body = json.dumps(head, sort_keys=True).encode()
    if not hmac.compare_digest(hmac.new(key, body, hashlib.sha256).hexdigest(), mac):
        print("head: bad mac")
        return 1
    if head["count"] != len(lines) or head["last"] != (prev or None):
        print("head: mismatch")
        return 1
    print(f"ok {len(lines)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
