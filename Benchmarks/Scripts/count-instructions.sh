#!/bin/bash
# Counts the instructions OpenCoreData's side of one store workload executes, for A/B comparisons of two
# builds: callgrind counts instructions, not seconds, so two builds compare within about 0.5 % where
# timings on a shared VM move by 5-10 %. Cache misses are not counted: confirm a change that moves memory
# around with timed runs (ab pairs of the benchmark itself).
#
#   Benchmarks/Scripts/count-instructions.sh WORKLOAD FUNCTION-PATTERN BINARY [BINARY...]
#
# WORKLOAD is a store workload key (insert_accessors, update_all, ...); FUNCTION-PATTERN is a callgrind
# --toggle-collect pattern naming the function whose instructions count, with what it calls: for example
# '$s8OCDGraph22NSManagedObjectContextC4saveyyKF' (save()) or '*NSManagedObjectContextC5fetch*'. Each
# BINARY is a release build of OCDBenchmarks (copy .build/<triple>/release/OCDBenchmarks aside between
# builds). Runs the --quick sizes with one repetition, Swift's hashing seeded the same in every run.
# Needs valgrind (apt-get install valgrind).
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
workload=$1; pattern=$2; shift 2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for binary in "$@"; do
    # valgrind cannot read the DWARF that swiftc writes; the symbol table is enough for callgrind.
    objcopy --strip-debug "$binary" "$scratch/bench"
    count=$(SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$scratch/out" \
        --toggle-collect="$pattern" "$scratch/bench" --quick --only "$workload" --store-repetitions 1 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    echo "$binary $workload ${count:-none}"
done
