/* TestU01 on 32-bit little-endian words read from stdin (SPEC.md section 11.4).
 *
 *   testu01-stdin NAME small|crush|big [TEST]
 *
 * Runs SmallCrush, Crush or BigCrush, or with TEST (1-based, as numbered in
 * TestU01's guide) only that test, through bbattery_Repeat*, on the generator
 * unif01_CreateExternGenBits(NAME, next word of stdin). Built by
 * run-testu01.sh against a TestU01 built in a temporary directory.
 *
 * If stdin ends before the battery does, it says so on stderr and exits 3: the
 * run is incomplete, whatever TestU01 printed so far. After a complete
 * battery it prints "testu01-stdin: done, N words read" and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bbattery.h"
#include "unif01.h"

#define BUF 65536
static unsigned int buf[BUF];
static size_t pos = BUF, len = BUF;
static unsigned long long words;

static unsigned int next(void) {
  if (pos == len) {
    len = fread(buf, 4, BUF, stdin);
    pos = 0;
    if (len == 0) {
      fflush(stdout);
      fprintf(stderr, "testu01-stdin: standard input ended after %llu words; the battery is incomplete\n", words);
      exit(3);
    }
  }
  words++;
  return buf[pos++];
}

int main(int argc, char **argv) {
  int rep[201] = {0};
  int ntests;
  void (*all)(unif01_Gen *);
  void (*some)(unif01_Gen *, int *);
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: testu01-stdin NAME small|crush|big [TEST]\n");
    return 2;
  }
  if (!strcmp(argv[2], "small")) {
    ntests = 10, all = bbattery_SmallCrush, some = bbattery_RepeatSmallCrush;
  } else if (!strcmp(argv[2], "crush")) {
    ntests = 96, all = bbattery_Crush, some = bbattery_RepeatCrush;
  } else if (!strcmp(argv[2], "big")) {
    ntests = 106, all = bbattery_BigCrush, some = bbattery_RepeatBigCrush;
  } else {
    fprintf(stderr, "testu01-stdin: unknown battery %s (small, crush or big)\n", argv[2]);
    return 2;
  }
  unif01_Gen *gen = unif01_CreateExternGenBits(argv[1], next);
  if (argc == 4) {
    char *end;
    long t = strtol(argv[3], &end, 10);
    if (*end || t < 1 || t > ntests) {
      fprintf(stderr, "testu01-stdin: test %s is not in 1..%d\n", argv[3], ntests);
      return 2;
    }
    rep[t] = 1;
    some(gen, rep);
  } else {
    all(gen);
  }
  unif01_DeleteExternGenBits(gen);
  fflush(stdout);
  printf("testu01-stdin: done, %llu words read\n", words);
  return 0;
}
