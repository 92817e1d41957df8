#!/bin/sh
# Installs a prebuilt agentteams release binary, verified before it lands on PATH.
#
# Usage: sh install.sh --from URL|DIR --pubkey FILE [--prefix DIR] [--target TRIPLE]
#   --from    the release: a URL (https://...; the files are fetched with curl or wget) or a
#             local directory holding SHA256SUMS, SHA256SUMS.minisig and agentteams-<target>
#   --pubkey  the release's minisign public key file (published with the project; never take it
#             from the same place as the release)
#   --prefix  install PREFIX/bin/agentteams (default ~/.local)
#   --target  the binary's target triple (default: this machine's)
#
# Order: fetch SHA256SUMS, its signature and the one binary into a private temporary directory;
# verify the signature over SHA256SUMS (minisign when installed; else OpenSSL 1.1.1+ with Ed25519
# and BLAKE2b-512; with neither it refuses: it never installs unverified); check the binary's
# SHA-256 against its line; only then copy it next to PREFIX/bin/agentteams and rename it into
# place. Any failure leaves PREFIX as it was. POSIX sh (checked with `sh -n` and run under dash).
set -eu

prog=install.sh
from=""
pubkey=""
prefix=""
target=""

die() {
  printf '%s: refused: %s; nothing was installed\n' "$prog" "$1" >&2
  exit 1
}
usage() {
  printf '%s: %s (usage: sh install.sh --from URL|DIR --pubkey FILE [--prefix DIR] [--target TRIPLE])\n' "$prog" "$1" >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --from|--pubkey|--prefix|--target)
      [ $# -ge 2 ] || usage "$1 needs a value"
      case "$1" in
        --from) from=$2 ;;
        --pubkey) pubkey=$2 ;;
        --prefix) prefix=$2 ;;
        --target) target=$2 ;;
      esac
      shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown argument $1" ;;
  esac
done
[ -n "$from" ] || usage "--from is missing: name the release URL or directory"
[ -n "$pubkey" ] || usage "--pubkey is missing: name the release's minisign public key file"
[ -f "$pubkey" ] || die "the public key $pubkey is not a file"
if [ -z "$prefix" ]; then
  [ -n "${HOME:-}" ] || usage "HOME is not set: give --prefix"
  prefix=$HOME/.local
fi
case "$prefix" in /*) ;; *) prefix=$(pwd)/$prefix ;; esac

if [ -z "$target" ]; then
  case "$(uname -m)" in
    x86_64|amd64) arch=x86_64 ;;
    aarch64|arm64) arch=aarch64 ;;
    *) die "no release binary for this machine's architecture $(uname -m)" ;;
  esac
  case "$(uname -s)" in
    Linux) target=$arch-unknown-linux-gnu ;;
    Darwin) target=$arch-apple-darwin ;;
    *) die "no release binary for this system, $(uname -s)" ;;
  esac
fi
case "$target" in
  x86_64-unknown-linux-gnu|aarch64-unknown-linux-gnu|x86_64-apple-darwin|aarch64-apple-darwin) ;;
  *) die "$target is not a release target" ;;
esac
binary=agentteams-$target

work=$(mktemp -d "${TMPDIR:-/tmp}/agentteams-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'rm -rf "$work"; exit 1' INT TERM
chmod 700 "$work"

# fetch NAME: the release's NAME into $work/NAME.
fetch() {
  case "$from" in
    https://*|http://*)
      url=${from%/}/$1
      if command -v curl >/dev/null 2>&1; then
        curl -fsSL --proto '=https,http' -o "$work/$1" "$url" || die "could not download $url"
      elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$work/$1" "$url" || die "could not download $url"
      else
        die "neither curl nor wget is installed to download $url"
      fi ;;
    *)
      [ -f "$from/$1" ] || die "the release $from has no $1 (an incomplete release, or not one)"
      cp "$from/$1" "$work/$1" || die "could not copy $from/$1" ;;
  esac
}
fetch SHA256SUMS
fetch SHA256SUMS.minisig

# hex FILE SKIP COUNT: COUNT bytes of FILE from SKIP, as lower-case hex.
hex() {
  dd if="$1" bs=1 skip="$2" count="$3" 2>/dev/null | od -An -v -tx1 | tr -d ' \n'
}
# b64line FILE N OUT BYTES: line N of FILE, base64-decoded into OUT, which must hold BYTES bytes.
b64line() {
  sed -n "$2p" "$1" | tr -d '\r' | openssl base64 -d -A >"$3" 2>/dev/null || return 1
  [ "$(wc -c <"$3" | tr -d ' ')" = "$4" ]
}

verify_with_openssl() {
  d=$work/v
  mkdir "$d"
  # The public key: "untrusted comment: ..." then base64("Ed" || key id || key).
  line=2
  [ "$(sed -n 1p "$pubkey" | cut -c1-19)" = "untrusted comment: " ] || line=1
  b64line "$pubkey" "$line" "$d/pub" 42 || die "$pubkey is not a minisign public key"
  [ "$(hex "$d/pub" 0 2)" = 4564 ] || die "$pubkey is not an Ed25519 minisign key"
  # The signature: its algorithm ("ED", pre-hashed with BLAKE2b-512), key id and signature.
  [ "$(sed -n 1p "$work/SHA256SUMS.minisig" | cut -c1-19)" = "untrusted comment: " ] &&
    [ "$(sed -n 3p "$work/SHA256SUMS.minisig" | cut -c1-17)" = "trusted comment: " ] &&
    b64line "$work/SHA256SUMS.minisig" 2 "$d/sig" 74 &&
    b64line "$work/SHA256SUMS.minisig" 4 "$d/global" 64 ||
    die "SHA256SUMS.minisig is not a minisign signature"
  [ "$(hex "$d/sig" 0 2)" = 4544 ] ||
    die "SHA256SUMS.minisig is not a pre-hashed (ED) signature; releases are signed pre-hashed"
  [ "$(hex "$d/sig" 2 8)" = "$(hex "$d/pub" 2 8)" ] ||
    die "SHA256SUMS is signed by another key than $pubkey"
  # SPKI DER of the Ed25519 key: the fixed 12-byte prefix, then the 32 key bytes.
  printf '\060\052\060\005\006\003\053\145\160\003\041\000' >"$d/pub.der"
  dd if="$d/pub" bs=1 skip=10 count=32 2>/dev/null >>"$d/pub.der"
  openssl pkey -pubin -inform DER -in "$d/pub.der" -out "$d/pub.pem" 2>/dev/null ||
    die "OpenSSL could not read the Ed25519 key in $pubkey"
  dd if="$d/sig" bs=1 skip=10 count=64 2>/dev/null >"$d/sig64"
  openssl dgst -blake2b512 -binary "$work/SHA256SUMS" >"$d/hash"
  openssl pkeyutl -verify -pubin -inkey "$d/pub.pem" -rawin -in "$d/hash" \
    -sigfile "$d/sig64" >/dev/null 2>&1 ||
    die "the signature over SHA256SUMS does not verify: SHA256SUMS or its signature was changed"
  # The global signature binds the trusted comment: signature || comment bytes.
  cp "$d/sig64" "$d/global.msg"
  sed -n 3p "$work/SHA256SUMS.minisig" | tr -d '\r\n' | cut -c18- | tr -d '\n' >>"$d/global.msg"
  openssl pkeyutl -verify -pubin -inkey "$d/pub.pem" -rawin -in "$d/global.msg" \
    -sigfile "$d/global" >/dev/null 2>&1 ||
    die "the trusted comment's signature does not verify: SHA256SUMS.minisig was changed"
}

openssl_can() {
  command -v openssl >/dev/null 2>&1 &&
    openssl dgst -blake2b512 </dev/null >/dev/null 2>&1 &&
    openssl pkeyutl -help 2>&1 | grep -q rawin &&
    openssl genpkey -algorithm ed25519 >/dev/null 2>&1
}

if command -v minisign >/dev/null 2>&1; then
  verifier=minisign
  minisign -V -H -q -p "$pubkey" -x "$work/SHA256SUMS.minisig" -m "$work/SHA256SUMS" \
    >/dev/null 2>&1 ||
    die "minisign: the signature over SHA256SUMS does not verify under $pubkey (changed, or signed by another key)"
elif openssl_can; then
  verifier=openssl
  verify_with_openssl
else
  die "neither minisign nor an OpenSSL with Ed25519 and BLAKE2b-512 is installed to verify the release's signature: install minisign (apt-get install minisign; brew install minisign) and run again"
fi

# The binary's line in the signed list: exactly "HEX  agentteams-<target>".
want=$(awk -v n="$binary" '($2 == n || $2 == "*" n) && $1 ~ /^[0-9a-f]+$/ && length($1) == 64 { print $1 }' "$work/SHA256SUMS")
[ -n "$want" ] || die "the release has no $binary (SHA256SUMS does not list it)"
[ "$(printf '%s\n' "$want" | wc -l | tr -d ' ')" = 1 ] || die "SHA256SUMS lists $binary twice"
fetch "$binary"
if command -v sha256sum >/dev/null 2>&1; then
  got=$(sha256sum "$work/$binary" | cut -d' ' -f1)
elif command -v shasum >/dev/null 2>&1; then
  got=$(shasum -a 256 "$work/$binary" | cut -d' ' -f1)
else
  got=$(openssl dgst -sha256 -r "$work/$binary" | cut -d' ' -f1)
fi
[ "$got" = "$want" ] ||
  die "$binary has SHA-256 $got, not the $want the signed SHA256SUMS lists (changed or truncated: download it again)"

bin=$prefix/bin
mkdir -p "$bin"
tmp=$(mktemp "$bin/.agentteams.XXXXXX")
cp "$work/$binary" "$tmp" && chmod 755 "$tmp" && mv -f "$tmp" "$bin/agentteams" || {
  rm -f "$tmp"
  die "could not write $bin/agentteams"
}
printf 'installed %s (%s; signature checked with %s, SHA-256 %s)\n' "$bin/agentteams" "$binary" "$verifier" "$got"
case ":${PATH:-}:" in
  *":$bin:"*) ;;
  *) printf 'put it on your PATH: export PATH="%s:$PATH"\n' "$bin" ;;
esac
