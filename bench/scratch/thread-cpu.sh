#!/bin/bash
# Samples every second the CPU ticks of each thread of the running broker processes whose command line
# matches PATTERN (an extended regex for pgrep -f, e.g. "(brook-old|wt-perf)/dist/main.js") into stdout,
# with the main thread's schedstat; bench/scratch/thread-cpu-sum.mjs reads it.
#   bench/scratch/thread-cpu.sh PATTERN > threads.log &   (then run the bench, then kill it)
pattern=${1:?usage: thread-cpu.sh PATTERN}
while true; do
  for pid in $(pgrep -f "$pattern"); do
    echo "$(date +%s.%N) $pid $(cat /proc/$pid/cmdline | tr '\0' ' ' | grep -o "[a-z0-9-]*/dist/main.js") SCHED $(cat /proc/$pid/task/$pid/schedstat)"
    for t in /proc/$pid/task/*; do
      read -r line < $t/stat 2>/dev/null || continue
      comm=$(cat $t/comm 2>/dev/null)
      rest=${line##*) }; set -- $rest; echo "  ${t##*/} $comm ${12} ${13}"
    done
  done
  sleep 1
done
