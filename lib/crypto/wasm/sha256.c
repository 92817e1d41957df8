/*
 * SHA-256 and HMAC-SHA256 over many messages in one call, for `ledger verify`.
 *
 * Built to WebAssembly by scripts/build-wasm (clang --target=wasm32, no libc). The JavaScript
 * side (lib/crypto/sha256_wasm.ts) places the ledger bytes and a row table in linear memory and
 * calls verify_rows once; a call per hash would cost more in crossings than in hashing.
 *
 * Everything here is bounds-free by construction: offsets come from the caller, who derived them
 * from the same buffer. WebAssembly traps on any access outside linear memory, so a wrong offset
 * cannot read or write outside the module.
 */
#include <stdint.h>

typedef uint32_t u32;
typedef uint8_t u8;

static const u32 K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static const u32 IV[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                          0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

#define BE32(p) (((u32)(p)[0] << 24) | ((u32)(p)[1] << 16) | ((u32)(p)[2] << 8) | (u32)(p)[3])
#define S0(x) (ROTR(x, 2) ^ ROTR(x, 13) ^ ROTR(x, 22))
#define S1(x) (ROTR(x, 6) ^ ROTR(x, 11) ^ ROTR(x, 25))
#define G0(x) (ROTR(x, 7) ^ ROTR(x, 18) ^ ((x) >> 3))
#define G1(x) (ROTR(x, 17) ^ ROTR(x, 19) ^ ((x) >> 10))
/* One round; the eight working variables rotate by renaming instead of by moves. */
#define RND(a, b, c, d, e, f, g, h, k, w)                  \
  do {                                                     \
    u32 t1 = h + S1(e) + ((e & f) ^ (~e & g)) + (k) + (w); \
    u32 t2 = S0(a) + ((a & b) ^ (a & c) ^ (b & c));        \
    d += t1;                                               \
    h = t1 + t2;                                           \
  } while (0)
/* The message schedule kept in sixteen named words (registers, not memory). */
#define W(i) w##i
#define SCHED(i, i2, i7, i15) W(i) += G1(W(i2)) + W(i7) + G0(W(i15))

static void compress(u32 st[8], const u8 *p) {
  u32 a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
  u32 w0 = BE32(p), w1 = BE32(p + 4), w2 = BE32(p + 8), w3 = BE32(p + 12);
  u32 w4 = BE32(p + 16), w5 = BE32(p + 20), w6 = BE32(p + 24), w7 = BE32(p + 28);
  u32 w8 = BE32(p + 32), w9 = BE32(p + 36), w10 = BE32(p + 40), w11 = BE32(p + 44);
  u32 w12 = BE32(p + 48), w13 = BE32(p + 52), w14 = BE32(p + 56), w15 = BE32(p + 60);
  for (int r = 0; r < 64; r += 16) {
    if (r) {
      SCHED(0, 14, 9, 1);
      SCHED(1, 15, 10, 2);
      SCHED(2, 0, 11, 3);
      SCHED(3, 1, 12, 4);
      SCHED(4, 2, 13, 5);
      SCHED(5, 3, 14, 6);
      SCHED(6, 4, 15, 7);
      SCHED(7, 5, 0, 8);
      SCHED(8, 6, 1, 9);
      SCHED(9, 7, 2, 10);
      SCHED(10, 8, 3, 11);
      SCHED(11, 9, 4, 12);
      SCHED(12, 10, 5, 13);
      SCHED(13, 11, 6, 14);
      SCHED(14, 12, 7, 15);
      SCHED(15, 13, 8, 0);
    }
    RND(a, b, c, d, e, f, g, h, K[r + 0], w0);
    RND(h, a, b, c, d, e, f, g, K[r + 1], w1);
    RND(g, h, a, b, c, d, e, f, K[r + 2], w2);
    RND(f, g, h, a, b, c, d, e, K[r + 3], w3);
    RND(e, f, g, h, a, b, c, d, K[r + 4], w4);
    RND(d, e, f, g, h, a, b, c, K[r + 5], w5);
    RND(c, d, e, f, g, h, a, b, K[r + 6], w6);
    RND(b, c, d, e, f, g, h, a, K[r + 7], w7);
    RND(a, b, c, d, e, f, g, h, K[r + 8], w8);
    RND(h, a, b, c, d, e, f, g, K[r + 9], w9);
    RND(g, h, a, b, c, d, e, f, K[r + 10], w10);
    RND(f, g, h, a, b, c, d, e, K[r + 11], w11);
    RND(e, f, g, h, a, b, c, d, K[r + 12], w12);
    RND(d, e, f, g, h, a, b, c, K[r + 13], w13);
    RND(c, d, e, f, g, h, a, b, K[r + 14], w14);
    RND(b, c, d, e, f, g, h, a, K[r + 15], w15);
  }
  st[0] += a;
  st[1] += b;
  st[2] += c;
  st[3] += d;
  st[4] += e;
  st[5] += f;
  st[6] += g;
  st[7] += h;
}

/* A streaming context: state, a partial block, and the byte count so far. */
typedef struct {
  u32 st[8];
  u8 buf[64];
  u32 fill;
  uint64_t total;
} ctx;

static void ctx_update(ctx *c, const u8 *p, u32 n) {
  c->total += n;
  if (c->fill) {
    while (n && c->fill < 64) {
      c->buf[c->fill++] = *p++;
      n--;
    }
    if (c->fill < 64) return;
    compress(c->st, c->buf);
    c->fill = 0;
  }
  while (n >= 64) {
    compress(c->st, p);
    p += 64;
    n -= 64;
  }
  while (n--) c->buf[c->fill++] = *p++;
}

static void ctx_final(ctx *c, u8 out[32]) {
  uint64_t bits = c->total * 8;
  c->buf[c->fill++] = 0x80;
  if (c->fill > 56) {
    while (c->fill < 64) c->buf[c->fill++] = 0;
    compress(c->st, c->buf);
    c->fill = 0;
  }
  while (c->fill < 56) c->buf[c->fill++] = 0;
  for (int i = 0; i < 8; i++) c->buf[56 + i] = (u8)(bits >> (56 - 8 * i));
  compress(c->st, c->buf);
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (u8)(c->st[i] >> 24);
    out[4 * i + 1] = (u8)(c->st[i] >> 16);
    out[4 * i + 2] = (u8)(c->st[i] >> 8);
    out[4 * i + 3] = (u8)c->st[i];
  }
}

static void ctx_init(ctx *c, const u32 st[8], uint64_t total) {
  for (int i = 0; i < 8; i++) c->st[i] = st[i];
  c->fill = 0;
  c->total = total;
}

/* HMAC key state: SHA-256 state after absorbing the inner and the outer pad. */
static u32 inner_st[8], outer_st[8];

static const char HEX[16] = {'0', '1', '2', '3', '4', '5', '6', '7',
                             '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};

static void to_hex_scalar(const u8 d[32], u8 *out) {
  for (int i = 0; i < 32; i++) {
    out[2 * i] = (u8)HEX[d[i] >> 4];
    out[2 * i + 1] = (u8)HEX[d[i] & 15];
  }
}

/* Sets the HMAC key (at most 64 bytes; the caller hashes longer keys first, per RFC 2104). */
__attribute__((export_name("hmac_setkey"))) void hmac_setkey(const u8 *key, u32 len) {
  u8 ipad[64], opad[64];
  for (int i = 0; i < 64; i++) {
    u8 k = i < (int)len ? key[i] : 0;
    ipad[i] = k ^ 0x36;
    opad[i] = k ^ 0x5c;
  }
  for (int i = 0; i < 8; i++) inner_st[i] = outer_st[i] = IV[i];
  compress(inner_st, ipad);
  compress(outer_st, opad);
}

/* Hex SHA-256 of one message: `out` receives 64 hex characters. */
__attribute__((export_name("sha256_hex"))) void sha256_hex(const u8 *p, u32 n, u8 *out) {
  ctx c;
  u8 d[32];
  ctx_init(&c, IV, 0);
  ctx_update(&c, p, n);
  ctx_final(&c, d);
  to_hex_scalar(d, out);
}

/* Hex HMAC-SHA256 of the concatenation of two byte ranges. */
static void hmac2(const u8 *a, u32 an, const u8 *b, u32 bn, u8 *out) {
  ctx c;
  u8 d[32];
  ctx_init(&c, inner_st, 64);
  ctx_update(&c, a, an);
  ctx_update(&c, b, bn);
  ctx_final(&c, d);
  ctx_init(&c, outer_st, 64);
  ctx_update(&c, d, 32);
  ctx_final(&c, d);
  to_hex_scalar(d, out);
}

__attribute__((export_name("hmac_hex"))) void hmac_hex(const u8 *p, u32 n, u8 *out) {
  hmac2(p, n, p, 0, out);
}

/* ---- Four messages at once: SHA-256 across the lanes of 128-bit vectors. ---- */

#include <wasm_simd128.h>

typedef v128_t v;

/* Whether the 64 bytes at a and b are equal (no early exit: the same time wherever they differ). */
static int eq64(const u8 *a, const u8 *b) {
  v x = wasm_v128_xor(wasm_v128_load(a), wasm_v128_load(b));
  x = wasm_v128_or(x, wasm_v128_xor(wasm_v128_load(a + 16), wasm_v128_load(b + 16)));
  x = wasm_v128_or(x, wasm_v128_xor(wasm_v128_load(a + 32), wasm_v128_load(b + 32)));
  x = wasm_v128_or(x, wasm_v128_xor(wasm_v128_load(a + 48), wasm_v128_load(b + 48)));
  return !wasm_v128_any_true(x);
}

/* 32 digest bytes as 64 lower-case hex characters, sixteen bytes a step. */
static void to_hex(const u8 d[32], u8 *out) {
  const v digits = wasm_i8x16_make('0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c',
                                   'd', 'e', 'f');
  const v low = wasm_i8x16_splat(15);
  for (int h = 0; h < 32; h += 16) {
    v x = wasm_v128_load(d + h);
    v hi = wasm_i8x16_swizzle(digits, wasm_v128_and(wasm_u8x16_shr(x, 4), low));
    v lo = wasm_i8x16_swizzle(digits, wasm_v128_and(x, low));
    wasm_v128_store(out + 2 * h, wasm_i8x16_shuffle(hi, lo, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5,
                                                    21, 6, 22, 7, 23));
    wasm_v128_store(out + 2 * h + 16, wasm_i8x16_shuffle(hi, lo, 8, 24, 9, 25, 10, 26, 11, 27, 12,
                                                         28, 13, 29, 14, 30, 15, 31));
  }
}

/* The round constants, each in all four lanes (one vector load a round instead of a splat). */
#define KV4(x) {(int32_t)(x), (int32_t)(x), (int32_t)(x), (int32_t)(x)}
static const v KV[64] = {
    KV4(0x428a2f98), KV4(0x71374491), KV4(0xb5c0fbcf), KV4(0xe9b5dba5), KV4(0x3956c25b),
    KV4(0x59f111f1), KV4(0x923f82a4), KV4(0xab1c5ed5), KV4(0xd807aa98), KV4(0x12835b01),
    KV4(0x243185be), KV4(0x550c7dc3), KV4(0x72be5d74), KV4(0x80deb1fe), KV4(0x9bdc06a7),
    KV4(0xc19bf174), KV4(0xe49b69c1), KV4(0xefbe4786), KV4(0x0fc19dc6), KV4(0x240ca1cc),
    KV4(0x2de92c6f), KV4(0x4a7484aa), KV4(0x5cb0a9dc), KV4(0x76f988da), KV4(0x983e5152),
    KV4(0xa831c66d), KV4(0xb00327c8), KV4(0xbf597fc7), KV4(0xc6e00bf3), KV4(0xd5a79147),
    KV4(0x06ca6351), KV4(0x14292967), KV4(0x27b70a85), KV4(0x2e1b2138), KV4(0x4d2c6dfc),
    KV4(0x53380d13), KV4(0x650a7354), KV4(0x766a0abb), KV4(0x81c2c92e), KV4(0x92722c85),
    KV4(0xa2bfe8a1), KV4(0xa81a664b), KV4(0xc24b8b70), KV4(0xc76c51a3), KV4(0xd192e819),
    KV4(0xd6990624), KV4(0xf40e3585), KV4(0x106aa070), KV4(0x19a4c116), KV4(0x1e376c08),
    KV4(0x2748774c), KV4(0x34b0bcb5), KV4(0x391c0cb3), KV4(0x4ed8aa4a), KV4(0x5b9cca4f),
    KV4(0x682e6ff3), KV4(0x748f82ee), KV4(0x78a5636f), KV4(0x84c87814), KV4(0x8cc70208),
    KV4(0x90befffa), KV4(0xa4506ceb), KV4(0xbef9a3f7), KV4(0xc67178f2)};
#define VROTR(x, n) wasm_v128_or(wasm_u32x4_shr((x), (n)), wasm_i32x4_shl((x), 32 - (n)))
#define VS0(x) wasm_v128_xor(wasm_v128_xor(VROTR(x, 2), VROTR(x, 13)), VROTR(x, 22))
#define VS1(x) wasm_v128_xor(wasm_v128_xor(VROTR(x, 6), VROTR(x, 11)), VROTR(x, 25))
#define VG0(x) wasm_v128_xor(wasm_v128_xor(VROTR(x, 7), VROTR(x, 18)), wasm_u32x4_shr((x), 3))
#define VG1(x) wasm_v128_xor(wasm_v128_xor(VROTR(x, 17), VROTR(x, 19)), wasm_u32x4_shr((x), 10))
#define VADD wasm_i32x4_add
#define VRND(a, b, c, d, e, f, g, h, k, w)                                                    \
  do {                                                                                        \
    v t1 = VADD(VADD(VADD(h, VS1(e)), wasm_v128_bitselect(f, g, e)), VADD((k), (w)));         \
    /* maj(a, b, c) = b ^ ((a ^ b) & (b ^ c)), where b ^ c is the last round's a ^ b. */       \
    v ab = wasm_v128_xor(a, b);                                                               \
    v t2 = VADD(VS0(a), wasm_v128_xor(b, wasm_v128_and(ab, bc)));                             \
    bc = ab;                                                                                  \
    d = VADD(d, t1);                                                                          \
    h = VADD(t1, t2);                                                                         \
  } while (0)
#define VSCHED(i, i2, i7, i15) w##i = VADD(VADD(w##i, VG1(w##i2)), VADD(w##i7, VG0(w##i15)))
/* Sixteen bytes of a lane, each 32-bit word byte-swapped (big-endian words). */
#define VBE(p, o)                                                                             \
  wasm_i8x16_shuffle(wasm_v128_load((p) + (o)), wasm_v128_load((p) + (o)), 3, 2, 1, 0, 7, 6, \
                     5, 4, 11, 10, 9, 8, 15, 14, 13, 12)
/* Words o/4 .. o/4+3 of the four lanes, transposed into four vectors (word-major). Sixteen
 * vector loads, shuffles and swaps a block instead of sixty-four scalar big-endian reads. */
#define VLOAD4(o, wa, wb, wc, wd)                                                             \
  do {                                                                                        \
    v q0 = VBE(p0, o), q1 = VBE(p1, o), q2 = VBE(p2, o), q3 = VBE(p3, o);                     \
    v t0 = wasm_i32x4_shuffle(q0, q1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(q0, q1, 2, 6, 3, 7); \
    v t2 = wasm_i32x4_shuffle(q2, q3, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(q2, q3, 2, 6, 3, 7); \
    wa = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);                                              \
    wb = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);                                              \
    wc = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);                                              \
    wd = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);                                              \
  } while (0)

/* Lane states: word w of lane k at lane_st[w * 4 + k]. */
static u32 lane_st[32] __attribute__((aligned(16)));

__attribute__((noinline)) static void compress4(const u8 *p0, const u8 *p1, const u8 *p2, const u8 *p3) {
  v a = wasm_v128_load(lane_st + 0), b = wasm_v128_load(lane_st + 4);
  v c = wasm_v128_load(lane_st + 8), d = wasm_v128_load(lane_st + 12);
  v e = wasm_v128_load(lane_st + 16), f = wasm_v128_load(lane_st + 20);
  v g = wasm_v128_load(lane_st + 24), h = wasm_v128_load(lane_st + 28);
  v w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15;
  VLOAD4(0, w0, w1, w2, w3);
  VLOAD4(16, w4, w5, w6, w7);
  VLOAD4(32, w8, w9, w10, w11);
  VLOAD4(48, w12, w13, w14, w15);
  v bc = wasm_v128_xor(b, c);
  for (int r = 0; r < 64; r += 16) {
    if (r) {
      VSCHED(0, 14, 9, 1);
      VSCHED(1, 15, 10, 2);
      VSCHED(2, 0, 11, 3);
      VSCHED(3, 1, 12, 4);
      VSCHED(4, 2, 13, 5);
      VSCHED(5, 3, 14, 6);
      VSCHED(6, 4, 15, 7);
      VSCHED(7, 5, 0, 8);
      VSCHED(8, 6, 1, 9);
      VSCHED(9, 7, 2, 10);
      VSCHED(10, 8, 3, 11);
      VSCHED(11, 9, 4, 12);
      VSCHED(12, 10, 5, 13);
      VSCHED(13, 11, 6, 14);
      VSCHED(14, 12, 7, 15);
      VSCHED(15, 13, 8, 0);
    }
    VRND(a, b, c, d, e, f, g, h, KV[r + 0], w0);
    VRND(h, a, b, c, d, e, f, g, KV[r + 1], w1);
    VRND(g, h, a, b, c, d, e, f, KV[r + 2], w2);
    VRND(f, g, h, a, b, c, d, e, KV[r + 3], w3);
    VRND(e, f, g, h, a, b, c, d, KV[r + 4], w4);
    VRND(d, e, f, g, h, a, b, c, KV[r + 5], w5);
    VRND(c, d, e, f, g, h, a, b, KV[r + 6], w6);
    VRND(b, c, d, e, f, g, h, a, KV[r + 7], w7);
    VRND(a, b, c, d, e, f, g, h, KV[r + 8], w8);
    VRND(h, a, b, c, d, e, f, g, KV[r + 9], w9);
    VRND(g, h, a, b, c, d, e, f, KV[r + 10], w10);
    VRND(f, g, h, a, b, c, d, e, KV[r + 11], w11);
    VRND(e, f, g, h, a, b, c, d, KV[r + 12], w12);
    VRND(d, e, f, g, h, a, b, c, KV[r + 13], w13);
    VRND(c, d, e, f, g, h, a, b, KV[r + 14], w14);
    VRND(b, c, d, e, f, g, h, a, KV[r + 15], w15);
  }
  wasm_v128_store(lane_st + 0, VADD(wasm_v128_load(lane_st + 0), a));
  wasm_v128_store(lane_st + 4, VADD(wasm_v128_load(lane_st + 4), b));
  wasm_v128_store(lane_st + 8, VADD(wasm_v128_load(lane_st + 8), c));
  wasm_v128_store(lane_st + 12, VADD(wasm_v128_load(lane_st + 12), d));
  wasm_v128_store(lane_st + 16, VADD(wasm_v128_load(lane_st + 16), e));
  wasm_v128_store(lane_st + 20, VADD(wasm_v128_load(lane_st + 20), f));
  wasm_v128_store(lane_st + 24, VADD(wasm_v128_load(lane_st + 24), g));
  wasm_v128_store(lane_st + 28, VADD(wasm_v128_load(lane_st + 28), h));
}

/* One message: up to two byte ranges hashed as one, after `prefix` bytes already absorbed into
 * `init` (64 for an HMAC pad state). */
typedef struct {
  const u8 *s1;
  const u8 *s2;
  u32 n1, n2, total, nblocks;
  uint64_t bitlen;
  const u32 *init;
  u8 *out;
} job;

typedef struct {
  job *j;
  u32 blk;
  u8 scratch[64];
} lane;

static const u8 ZERO_BLOCK[64];

static void job_set(job *j, const u32 *init, u32 prefix, const u8 *s1, u32 n1, const u8 *s2,
                    u32 n2, u8 *out) {
  j->s1 = s1;
  j->n1 = n1;
  j->s2 = s2;
  j->n2 = n2;
  j->total = n1 + n2;
  j->nblocks = (j->total + 72) / 64;
  j->bitlen = ((uint64_t)prefix + j->total) * 8;
  j->init = init;
  j->out = out;
}

/* A block that straddles the two ranges or the end: assembled in the lane's scratch. */
__attribute__((noinline)) static const u8 *assemble_block(lane *L);

/* The lane's next 64-byte block: in place when it lies inside one range, else assembled. */
static inline const u8 *next_block(lane *L) {
  job *j = L->j;
  u32 o = L->blk * 64;
  if (o + 64 <= j->n1) return j->s1 + o;
  if (o >= j->n1 && o + 64 <= j->total) return j->s2 + (o - j->n1);
  return assemble_block(L);
}

static const u8 *assemble_block(lane *L) {
  job *j = L->j;
  u32 o = L->blk * 64;
  /* Assembled in runs (the first range, the second, the 0x80, the zeros): no test per byte
   * of which range it falls in. */
  u8 *d = L->scratch;
  u32 k = 0;
  if (o < j->n1) {
    u32 m = j->n1 - o < 64 ? j->n1 - o : 64;
    const u8 *src = j->s1 + o;
    for (u32 x = 0; x < m; x++) d[x] = src[x];
    k = m;
  }
  if (k < 64 && o + k < j->total) {
    u32 q = o + k - j->n1;
    u32 m = j->total - (o + k) < 64 - k ? j->total - (o + k) : 64 - k;
    const u8 *src = j->s2 + q;
    for (u32 x = 0; x < m; x++) d[k + x] = src[x];
    k += m;
  }
  if (k < 64 && o + k == j->total) d[k++] = 0x80;
  for (; k < 64; k++) d[k] = 0;
  if (L->blk == j->nblocks - 1) {
    for (int k = 0; k < 8; k++) L->scratch[56 + k] = (u8)(j->bitlen >> (56 - 8 * k));
  }
  return L->scratch;
}

static void lane_start(lane *L, int k, job *j) {
  L->j = j;
  L->blk = 0;
  if (j) {
    for (int w = 0; w < 8; w++) lane_st[w * 4 + k] = j->init[w];
  }
}

static void lane_finish(int k, job *j) {
  for (int w = 0; w < 8; w++) {
    u32 x = lane_st[w * 4 + k];
    j->out[4 * w] = (u8)(x >> 24);
    j->out[4 * w + 1] = (u8)(x >> 16);
    j->out[4 * w + 2] = (u8)(x >> 8);
    j->out[4 * w + 3] = (u8)x;
  }
}

/* Hashes `n` jobs, four at a time; each lane takes the next job as soon as its own is done. */
static void run_jobs(job *jobs, u32 n) {
  lane L[4];
  u32 next = 0;
  int active = 0;
  for (int k = 0; k < 4; k++) {
    lane_start(&L[k], k, next < n ? &jobs[next++] : 0);
    if (L[k].j) active++;
  }
  while (active) {
    const u8 *p[4];
    for (int k = 0; k < 4; k++) p[k] = L[k].j ? next_block(&L[k]) : ZERO_BLOCK;
    compress4(p[0], p[1], p[2], p[3]);
    for (int k = 0; k < 4; k++) {
      if (!L[k].j) continue;
      if (++L[k].blk < L[k].j->nblocks) continue;
      lane_finish(k, L[k].j);
      lane_start(&L[k], k, next < n ? &jobs[next++] : 0);
      if (!L[k].j) active--;
    }
  }
}

/*
 * The two passes over a table of ledger rows. `table` holds 6 words per row:
 *   line start, line length, cut start, cut end, mac hex offset, prev hex offset
 * (absolute offsets into linear memory). The signed text is the line without [cut start, cut
 * end): its top-level mac member. A cut start of 0xffffffff skips the MAC; a prev hex offset of
 * 0xffffffff means "prev is not 64 characters".
 *
 * mac_rows sets bit 0 of flags[i] when the HMAC of row i's signed text equals the 64 characters
 * at its mac offset. chain_rows writes 64 hex characters of SHA-256(line) to hashes + 64*i and
 * sets bit 1 of flags[i] when the row's prev equals the previous row's line hash (for the first
 * row of the call, only when `chained`, in which case the previous row's hex hash sits just
 * before `hashes`). Neither clears the other's bit, so the two can run on separate copies of the
 * rows (separate instances, on separate threads) and their flags be OR-ed.
 *
 * `scratch` must hold n * (sizeof(job) + 64) bytes, 16-aligned. Callers pass a few thousand rows
 * per call, so the engine's optimizing tier takes over after the first calls.
 */
__attribute__((export_name("mac_rows"))) void mac_rows(u32 n, const u32 *table, u8 *flags,
                                                       u8 *scratch) {
  job *jobs = (job *)scratch;
  u8 *mac = scratch + n * sizeof(job); /* 32 bytes per row */
  u32 m = 0;
  for (u32 i = 0; i < n; i++) {
    const u32 *t = table + 6 * i;
    if (t[2] == 0xffffffffu) continue;
    const u8 *line = (const u8 *)(uintptr_t)t[0];
    const u8 *cs = (const u8 *)(uintptr_t)t[2];
    const u8 *ce = (const u8 *)(uintptr_t)t[3];
    job_set(&jobs[m++], inner_st, 64, line, (u32)(cs - line), ce, (u32)((line + t[1]) - ce),
            mac + 32 * i);
  }
  run_jobs(jobs, m);
  m = 0;
  for (u32 i = 0; i < n; i++) {
    if (table[6 * i + 2] == 0xffffffffu) continue;
    job_set(&jobs[m++], outer_st, 64, mac + 32 * i, 32, 0, 0, mac + 32 * i);
  }
  run_jobs(jobs, m);
  u8 hex[64];
  for (u32 i = 0; i < n; i++) {
    const u32 *t = table + 6 * i;
    if (t[2] == 0xffffffffu) continue;
    to_hex(mac + 32 * i, hex);
    if (eq64(hex, (const u8 *)(uintptr_t)t[4])) flags[i] |= 1;
  }
}

__attribute__((export_name("chain_rows"))) void chain_rows(u32 n, const u32 *table, u8 *hashes,
                                                           u8 *flags, u8 *scratch, u32 chained) {
  job *jobs = (job *)scratch;
  u8 *dig = scratch + n * sizeof(job); /* 32 bytes per row */
  for (u32 i = 0; i < n; i++) {
    const u32 *t = table + 6 * i;
    job_set(&jobs[i], IV, 0, (const u8 *)(uintptr_t)t[0], t[1], 0, 0, dig + 32 * i);
  }
  run_jobs(jobs, n);
  for (u32 i = 0; i < n; i++) to_hex(dig + 32 * i, hashes + 64 * i);
  for (u32 i = 0; i < n; i++) {
    const u32 *t = table + 6 * i;
    if ((i > 0 || chained) && t[5] != 0xffffffffu &&
        eq64(hashes + 64 * i - 64, (const u8 *)(uintptr_t)t[5])) {
      flags[i] |= 2;
    }
  }
}

/* Both passes: flags[i] gets bit 0 (mac_rows) and bit 1 (chain_rows), nothing else. */
__attribute__((export_name("verify_rows"))) void verify_rows(u32 n, const u32 *table, u8 *hashes,
                                                             u8 *flags, u8 *scratch, u32 chained) {
  for (u32 i = 0; i < n; i++) flags[i] = 0;
  mac_rows(n, table, flags, scratch);
  chain_rows(n, table, hashes, flags, scratch, chained);
}

/* ---- The ledger line's layout: the one scanner (lib/ledger/scan.ts calls it). ----
 *
 * A row is the canonical JSON of an object; its signed text is the line without its top-level
 * `mac` member (and the ", " beside it). scan_row accepts only the canonical layout ("{",
 * members separated by ", ", keys and values by ": ", "}") and finds the top-level `mac`,
 * `prev` and `time` members without building the object. Every read stays inside [start, end).
 * The slots (i32, positions absolute):
 *   0 cut start (the mac member and one separator) or -1, 1 cut end (exclusive) or -1,
 *   2 the mac value's first character when the value is 64 characters long, else -1,
 *   3 prev's first character when 64 long; -2 when ""; -3 otherwise; -1 absent,
 *   4 1 when a top-level time string is present, 5 1 when a top-level mac string is present.
 */
typedef int32_t i32;

/* The offset just past the string starting at i (a quote), or -1: sixteen bytes a step. */
static i32 skip_string(const u8 *b, i32 i, i32 end) {
  i32 j = i + 1;
  const v q = wasm_i8x16_splat('"'), bs = wasm_i8x16_splat('\\');
  for (;;) {
    while (j + 16 <= end) {
      v x = wasm_v128_load(b + j);
      u32 m = wasm_i8x16_bitmask(wasm_v128_or(wasm_i8x16_eq(x, q), wasm_i8x16_eq(x, bs)));
      if (m) {
        j += __builtin_ctz(m);
        break;
      }
      j += 16;
    }
    if (j >= end) return -1;
    if (j + 16 > end) {
      while (j < end && b[j] != '"' && b[j] != '\\') j++;
      if (j >= end) return -1;
    }
    if (b[j] == '"') return j + 1;
    j += 2; /* a backslash and the character it escapes */
    if (j >= end) return -1;
  }
}

/* The offset just past the JSON value starting at i, or -1. */
static i32 skip_value(const u8 *b, i32 i, i32 end) {
  u8 c = b[i];
  if (c == '"') return skip_string(b, i, end);
  if (c == '{' || c == '[') {
    i32 depth = 0;
    for (i32 j = i; j < end; j++) {
      u8 d = b[j];
      if (d == '"') {
        j = skip_string(b, j, end) - 1;
        if (j < 0) return -1;
      } else if (d == '{' || d == '[') {
        depth++;
      } else if (d == '}' || d == ']') {
        depth--;
        if (depth == 0) return j + 1;
      }
    }
    return -1;
  }
  /* A number, true, false or null: runs to the next separator. */
  i32 j = i;
  while (j < end && b[j] != ',' && b[j] != '}') j++;
  return j == i ? -1 : j;
}

static int key_is(const u8 *b, i32 s, i32 len, const char *word, i32 wlen) {
  if (len != wlen) return 0;
  for (i32 k = 0; k < len; k++)
    if (b[s + k] != (u8)word[k]) return 0;
  return 1;
}

/* Scans the line [start, end) (no newline) into out[6]; 1 when it has the canonical layout with
 * no duplicate mac, prev or time. */
static int scan_row_at(const u8 *b, i32 start, i32 end, i32 *out) {
  out[0] = -1;
  out[1] = -1;
  out[2] = -1;
  out[3] = -1;
  out[4] = 0;
  out[5] = 0;
  if (end - start < 2 || b[start] != '{' || b[end - 1] != '}') return 0;
  i32 close = end - 1;
  if (close == start + 1) return 1; /* {} */
  i32 i = start + 1;
  for (;;) {
    if (b[i] != '"') return 0;
    i32 keyEnd = skip_string(b, i, close);
    if (keyEnd < 0 || b[keyEnd] != ':' || b[keyEnd + 1] != ' ') return 0;
    i32 v = keyEnd + 2;
    i32 vEnd = skip_value(b, v, close);
    if (vEnd < 0) return 0;
    i32 klen = keyEnd - i - 2;
    int isString = b[v] == '"';
    if (key_is(b, i + 1, klen, "mac", 3)) {
      if (out[5] || !isString) return 0;
      out[5] = 1;
      out[2] = vEnd - v == 66 ? v + 1 : -1;
      if (i > start + 1) {
        out[0] = i - 2;
        out[1] = vEnd;
      } else if (vEnd < close) {
        out[0] = i;
        out[1] = vEnd + 2;
      } else {
        out[0] = i;
        out[1] = vEnd;
      }
    } else if (key_is(b, i + 1, klen, "prev", 4)) {
      if (out[3] != -1 || !isString) return 0;
      i32 len = vEnd - v - 2;
      out[3] = len == 64 ? v + 1 : len == 0 ? -2 : -3;
    } else if (key_is(b, i + 1, klen, "time", 4)) {
      if (out[4] || !isString) return 0;
      out[4] = 1;
    }
    if (vEnd == close) return 1;
    if (b[vEnd] != ',' || b[vEnd + 1] != ' ') return 0;
    i = vEnd + 2;
  }
}

__attribute__((export_name("scan_row"))) u32 scan_row(const u8 *b, u32 start, u32 end,
                                                      i32 *out) {
  return (u32)scan_row_at(b, (i32)start, (i32)end, out);
}

/* The first newline in [from, end), or end. */
static u32 find_newline(const u8 *b, u32 from, u32 end) {
  u32 j = from;
  const v nl = wasm_i8x16_splat('\n');
  while (j + 16 <= end) {
    u32 m = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(b + j), nl));
    if (m) return j + __builtin_ctz(m);
    j += 16;
  }
  while (j < end && b[j] != '\n') j++;
  return j;
}

/*
 * The form of the line [from, e) as a ledger row, the one decision `lineForm` (row.ts) and
 * scan_lines share, with the scan's slots in out[6]:
 *   bit 0: scanned (the canonical layout with top-level mac, prev and time strings),
 *   bit 1: prev is "" (scanned rows), bit 2: the line is over max_row bytes (nothing scanned).
 * A line that is neither scanned nor too long is left to the caller (a JSON reading names what
 * is wrong with it).
 */
static u8 line_status_at(const u8 *b, u32 from, u32 e, i32 *out, u32 max_row) {
  if (e - from > max_row) return 4;
  if (!(scan_row_at(b, (i32)from, (i32)e, out) && out[5] && out[4] && out[3] != -1)) return 0;
  return out[3] == -2 ? 3 : 1;
}

__attribute__((export_name("line_status"))) u32 line_status(const u8 *b, u32 start, u32 end,
                                                            i32 *out, u32 max_row) {
  return line_status_at(b, start, end, out, max_row);
}

/*
 * Finds up to `max` complete lines in [from, end) and judges each (line_status_at): for line k,
 * table + 6*k gets the verify table's six words (cut and mac offsets only when the line is a
 * scanned row with a 64-character mac; prev only when 64 characters) and status[k] its form
 * bits. Returns the number of lines; the last one ends at table[6*(k-1)] + table[6*(k-1)+1] (its
 * newline just after).
 */
__attribute__((export_name("scan_lines"))) u32 scan_lines(const u8 *b, u32 from, u32 end,
                                                          u32 *table, u8 *status, u32 max,
                                                          u32 max_row) {
  u32 k = 0;
  i32 out[6];
  while (k < max && from < end) {
    u32 e = find_newline(b, from, end);
    if (e >= end) break;
    u32 *t = table + 6 * k;
    t[0] = (u32)(uintptr_t)b + from;
    t[1] = e - from;
    t[2] = t[3] = t[4] = t[5] = 0xffffffffu;
    u8 st = line_status_at(b, from, e, out, max_row);
    if (st & 1) {
      if (out[2] >= 0) {
        t[2] = (u32)(uintptr_t)b + (u32)out[0];
        t[3] = (u32)(uintptr_t)b + (u32)out[1];
        t[4] = (u32)(uintptr_t)b + (u32)out[2];
      }
      if (out[3] >= 0) t[5] = (u32)(uintptr_t)b + (u32)out[3];
    }
    status[k++] = st;
    from = e + 1;
  }
  return k;
}

/* ---- Acts' dispatch tags: the rule lib/ledger/dispatch_acts.ts states, written once here. ----
 *
 * An act's row (it begins `{"action": "apply-proposal", `, `{"action": "delete-proposal", ` or
 * `{"action": "run-request-start", `) names its dispatch by its first `"dispatch": "` followed by
 * 12 lower-case hex characters and a quote; any other line, or an act's row whose first such
 * pattern is not so followed, names none. */
#define NO_TAG 0xffffffffu
static const u8 DISPATCH[13] = {'"', 'd', 'i', 's', 'p', 'a', 't', 'c', 'h', '"', ':', ' ', '"'};
#define ACT_START(s) {(const u8 *)(s), sizeof(s) - 1}
static const struct {
  const u8 *p;
  u32 n;
} ACT_STARTS[3] = {ACT_START("{\"action\": \"apply-proposal\", "),
                   ACT_START("{\"action\": \"delete-proposal\", "),
                   ACT_START("{\"action\": \"run-request-start\", ")};

/* Whether [at, e) begins with the n bytes at w. */
static int has_at(const u8 *b, u32 at, u32 e, const u8 *w, u32 n) {
  if (e - at < n) return 0;
  for (u32 k = 0; k < n; k++)
    if (b[at + k] != w[k]) return 0;
  return 1;
}

/* The tag after a pattern ending at t, or NO_TAG: 12 lower-case hex characters, then a quote. */
static u32 tag_after(const u8 *b, u32 t, u32 e) {
  if (e - t < 13) return NO_TAG;
  for (u32 k = 0; k < 12; k++) {
    u8 c = b[t + k];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return NO_TAG;
  }
  return b[t + 12] == '"' ? (u32)(uintptr_t)b + t : NO_TAG;
}

/* The tag of the line [s, e) (absolute offset), or NO_TAG. The pattern is looked for sixteen
 * positions a step (a quote followed by a `d`), the first full match deciding. */
static u32 act_tag_at(const u8 *b, u32 s, u32 e) {
  int act = 0;
  for (int a = 0; a < 3; a++) act |= has_at(b, s, e, ACT_STARTS[a].p, ACT_STARTS[a].n);
  if (!act) return NO_TAG;
  const v q = wasm_i8x16_splat('"'), d = wasm_i8x16_splat('d');
  u32 j = s;
  while (j + 17 <= e) {
    u32 m = wasm_i8x16_bitmask(wasm_v128_and(wasm_i8x16_eq(wasm_v128_load(b + j), q),
                                             wasm_i8x16_eq(wasm_v128_load(b + j + 1), d)));
    while (m) {
      u32 i = j + __builtin_ctz(m);
      if (has_at(b, i, e, DISPATCH, 13)) return tag_after(b, i + 13, e);
      m &= m - 1;
    }
    j += 16;
  }
  for (; j < e; j++)
    if (b[j] == '"' && has_at(b, j, e, DISPATCH, 13)) return tag_after(b, j + 13, e);
  return NO_TAG;
}

/* Whether the 12-byte tags at absolute offsets a and b are the same bytes. */
static int same_tag(u32 a, u32 b) {
  const u8 *x = (const u8 *)(uintptr_t)a, *y = (const u8 *)(uintptr_t)b;
  for (int i = 0; i < 12; i++)
    if (x[i] != y[i]) return 0;
  return 1;
}

/* For up to `max` complete lines in [from, end): the tags the lines of at most `max_line` bytes
 * name, in line order, as runs: into tags, a pair of words per run of consecutive lines naming
 * the same tag (the absolute offset of its first line's tag, the number of lines in the run).
 * Returns the number of runs (so tags needs two words a line at most). */
__attribute__((export_name("act_tags"))) u32 act_tags(const u8 *b, u32 from, u32 end, u32 *tags,
                                                      u32 max, u32 max_line) {
  u32 k = 0, m = 0;
  while (k < max && from < end) {
    u32 e = find_newline(b, from, end);
    if (e >= end) break;
    if (e - from <= max_line) {
      u32 t = act_tag_at(b, from, e);
      if (t != NO_TAG) {
        if (m > 0 && same_tag(tags[2 * m - 2], t)) {
          tags[2 * m - 1]++;
        } else {
          tags[2 * m] = t;
          tags[2 * m + 1] = 1;
          m++;
        }
      }
    }
    k++;
    from = e + 1;
  }
  return m;
}

/* Bytes of scratch verify_rows needs per row. */
__attribute__((export_name("scratch_per_row"))) u32 scratch_per_row(void) {
  return (u32)sizeof(job) + 64;
}
