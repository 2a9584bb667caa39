#!/bin/sh
# Copies the seed corpus (fixtures, examples, stdlib) into corpus/<target>/.
# Run from anywhere; corpus/ is not committed.
set -e
cd "$(dirname "$0")"
for t in front_end differential; do
    mkdir -p "corpus/$t"
    for f in ../tests/fixtures/ok/*.ph ../tests/fixtures/err/*.ph ../examples/*.ph ../stdlib/std/*.ph; do
        cp "$f" "corpus/$t/$(basename "$(dirname "$f")")_$(basename "$f")"
    done
done
