/* Word streams for the batteries that `phobosc fill` does not write directly
 * (SPEC.md section 11.4). Built by the evidence scripts into a temporary
 * directory; writes 32-bit little-endian words to stdout until the reader
 * closes the pipe.
 *
 *   streams f32words < fill_f32      each f32 of `phobosc fill f32` (a multiple
 *                                    of 2^-24 in [0, 1)) as the word u * 2^32,
 *                                    that is its 24 random bits shifted up 8
 *   streams f32packed < fill_f32     the same 24 bits of each f32, packed: four
 *                                    elements fill three words, most
 *                                    significant bit first (so no word holds
 *                                    bits that are zero by construction)
 *   streams interleave F1 .. Fn      one word from each file in turn (FIFOs fed
 *                                    by `phobosc fill u32` of n keys)
 *   streams hash32 SEED              the seed's counter stream
 *                                    hash32(c ^ hash32(SEED)), c = 0, 1, 2, ...
 *                                    (stdlib/std/random.ph; c wraps at 2^32 as
 *                                    the i32 counter does)
 *   streams selftest                 checks hash32 against known values
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF 4096

static uint32_t hash32(uint32_t x) { /* lowbias32, as std/random.ph */
  x ^= x >> 16;
  x *= 0x7feb352du; /* 2146121005 */
  x ^= x >> 15;
  x *= 0x846ca68bu; /* -2073254261 as i32 */
  x ^= x >> 16;
  return x;
}

static void put(const uint32_t *w, size_t n) {
  /* words are written in the machine's order; the scripts check that it is
   * little-endian, as the fills are */
  if (fwrite(w, 4, n, stdout) != n) exit(0); /* reader closed the pipe */
}

static int f32words(void) {
  float in[BUF];
  uint32_t out[BUF];
  size_t n;
  unsigned long long total = 0;
  while ((n = fread(in, 4, BUF, stdin)) > 0) {
    for (size_t i = 0; i < n; i++) {
      float u = in[i];
      if (!(u >= 0.0f && u < 1.0f)) {
        fprintf(stderr, "streams f32words: element %llu = %a is not in [0, 1)\n", total + i, u);
        return 2;
      }
      double m = (double)u * 16777216.0; /* exact: u is a multiple of 2^-24 */
      if (m != (double)(uint32_t)m) {
        fprintf(stderr, "streams f32words: element %llu = %a is not a multiple of 2^-24\n", total + i, u);
        return 2;
      }
      out[i] = (uint32_t)m << 8;
    }
    put(out, n);
    total += n;
  }
  fprintf(stderr, "streams f32words: input ended after %llu elements\n", total);
  return 3;
}

/* the 24 bits of an f32 of `phobosc fill f32`, checked */
static uint32_t f32bits(float u, unsigned long long i) {
  if (!(u >= 0.0f && u < 1.0f)) {
    fprintf(stderr, "streams: element %llu = %a is not in [0, 1)\n", i, u);
    exit(2);
  }
  double m = (double)u * 16777216.0; /* exact: u is a multiple of 2^-24 */
  if (m != (double)(uint32_t)m) {
    fprintf(stderr, "streams: element %llu = %a is not a multiple of 2^-24\n", i, u);
    exit(2);
  }
  return (uint32_t)m;
}

static int f32packed(void) {
  float in[BUF];
  uint32_t out[BUF];
  size_t n;
  unsigned long long total = 0;
  while ((n = fread(in, 4, BUF, stdin)) == BUF) { /* BUF is a multiple of 4 */
    size_t k = 0;
    for (size_t i = 0; i < n; i += 4) {
      uint32_t a = f32bits(in[i], total + i), b = f32bits(in[i + 1], total + i + 1),
               c = f32bits(in[i + 2], total + i + 2), d = f32bits(in[i + 3], total + i + 3);
      out[k++] = a << 8 | b >> 16;
      out[k++] = b << 16 | c >> 8;
      out[k++] = c << 24 | d;
    }
    put(out, k);
    total += n;
  }
  fprintf(stderr, "streams f32packed: input ended after %llu elements\n", total + n);
  return 3;
}

static void interleave(int n, char **paths) {
  FILE **f = calloc((size_t)n, sizeof *f);
  uint32_t out[BUF];
  for (int i = 0; i < n; i++) {
    f[i] = fopen(paths[i], "rb");
    if (!f[i]) {
      perror(paths[i]);
      exit(2);
    }
  }
  /* BUF / n words from each stream per round, word by word */
  uint32_t per = BUF / (uint32_t)n, in[BUF];
  for (;;) {
    for (int i = 0; i < n; i++) {
      if (fread(in + (size_t)i * per, 4, per, f[i]) != per) {
        fprintf(stderr, "streams interleave: %s ended\n", paths[i]);
        exit(3);
      }
    }
    for (uint32_t j = 0; j < per; j++)
      for (int i = 0; i < n; i++) out[j * (uint32_t)n + (uint32_t)i] = in[(size_t)i * per + j];
    put(out, (size_t)per * (size_t)n);
  }
}

static void hash32_stream(uint32_t seed) {
  uint32_t out[BUF], hs = hash32(seed), c = 0;
  for (;;) {
    for (int i = 0; i < BUF; i++) out[i] = hash32(c++ ^ hs);
    put(out, BUF);
  }
}

static int selftest(void) {
  /* tests/tests/known_answers.rs: hash32_known_values */
  static const uint32_t cases[][2] = {{0, 0},
                                      {1, 0x688990c0},
                                      {2, 0xd1132181},
                                      {0xffffffff, 0x6768824a},
                                      {0x80000000, 0xcc4b4124},
                                      {12345, 0x912efcf7}};
  uint32_t one = 1;
  if (*(unsigned char *)&one != 1) {
    fprintf(stderr, "streams: this machine is not little-endian\n");
    return 1;
  }
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (hash32(cases[i][0]) != cases[i][1]) {
      fprintf(stderr, "streams selftest: hash32(%#x) = %#x, want %#x\n", cases[i][0],
              hash32(cases[i][0]), cases[i][1]);
      return 1;
    }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "f32words")) return f32words();
  if (argc == 2 && !strcmp(argv[1], "f32packed")) return f32packed();
  if (argc >= 3 && !strcmp(argv[1], "interleave")) interleave(argc - 2, argv + 2);
  if (argc == 3 && !strcmp(argv[1], "hash32")) hash32_stream((uint32_t)strtoul(argv[2], 0, 0));
  if (argc == 2 && !strcmp(argv[1], "selftest")) return selftest();
  fprintf(stderr, "usage: streams f32words | f32packed | interleave F1 .. Fn | hash32 SEED | selftest\n");
  return 2;
}
