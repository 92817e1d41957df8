# Extracts RFC 9180 Appendix A.1.3 (DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, Auth) from
# the CFRG draft's final markdown into the shape of the CFRG test-vectors.json.
import json, re, sys
md = open(sys.argv[1]).read()
suite = md.index("## DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM")
sec = md.index("### Auth Setup Information", suite)
end = md.index("### AuthPSK Setup Information", sec)
text = md[sec:end]
blocks = re.findall(r"~~~\n(.*?)~~~", text, re.S)
def fields(block):
    # "name: value" where a value may continue on the following lines (hex only)
    out, cur = [], None
    for line in block.split("\n"):
        m = re.match(r"^([a-z_ A-Za-z]+):\s*(.*)$", line)
        if m:
            cur = [m.group(1), m.group(2).strip()]
            out.append(cur)
        elif line.strip() and cur is not None:
            cur[1] += line.strip()
    return out
setup = dict(fields(blocks[0]))
v = {k: (int(setup[k]) if k in ("mode", "kem_id", "kdf_id", "aead_id") else setup[k]) for k in setup}
encs, cur = [], None
for k, val in fields(blocks[1]):
    if k == "sequence number":
        cur = {"sequence_number": int(val)}
        encs.append(cur)
    else:
        cur[{"ct": "ciphertext", "pt": "plaintext"}.get(k, k)] = val
exps, cur = [], None
for k, val in fields(blocks[2]):
    if k == "exporter_context":
        cur = {"exportContext": val}
        exps.append(cur)
    elif k == "L":
        cur["exportLength"] = int(val)
    else:
        cur["exportValue"] = val
v["encryptions"] = encs
v["exports"] = exps
print(json.dumps([v], indent=2))
