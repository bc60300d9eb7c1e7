#!/bin/bash
# Every second, per running broker process whose command line matches PATTERN (pgrep -f): the process's
# CPU ticks (user + system, all threads) and its context switches summed over its threads (voluntary,
# involuntary). bench/scratch/ctx-sum.mjs takes a window per process from it.
#   bench/scratch/ctx-sample.sh PATTERN > ctx.log &   (then run the bench, then kill it)
pattern=${1:?usage: ctx-sample.sh PATTERN}
while true; do
  now=$(date +%s.%N)
  for pid in $(pgrep -f "$pattern"); do
    read -r line < /proc/$pid/stat 2>/dev/null || continue
    rest=${line##*) }; set -- $rest
    cpu=$(( ${12} + ${13} ))
    v=0; n=0
    for s in /proc/$pid/task/*/status; do
      while read -r k val; do
        case $k in voluntary_ctxt_switches:) v=$((v + val));; nonvoluntary_ctxt_switches:) n=$((n + val));; esac
      done < "$s" 2>/dev/null
    done
    echo "$now $pid $(tr '\0' ' ' < /proc/$pid/cmdline | grep -o '[a-z0-9/._-]*dist/main.js') $cpu $v $n"
  done
  sleep 1
done
