#!/bin/bash
# 5 runs of the default msf/bic bench; wall time of each command, its ratio
# usage: five-runs.sh NAME [extra streamspec bench arguments, e.g. --repeats 9]
cd "$(dirname "$0")/../../.."
out=bench/results/bench-cli
echo "run,started_utc,wall_s,ratio_bic_over_msf,ratio_spread_within_run,msf_median_cpu_s,bic_median_cpu_s,load_before,load_after" > $out/$1.csv
for i in 1 2 3 4 5; do
  start=$(date -u +%FT%TZ); t0=$(date +%s.%N)
  ${STREAMSPEC:-streamspec} bench connectivity --engine msf --baseline bic --json $out/$1-$i.json "${@:2}" > $out/$1-$i.log 2>&1
  t1=$(date +%s.%N)
  ${PYTHON:-python} - "$out/$1-$i.json" "$i" "$start" "$(echo "$t1 - $t0" | bc)" >> $out/$1.csv <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); r = d["ratios"]["bic"]; s = d["subjects"]
print(f'{sys.argv[2]},{sys.argv[3]},{float(sys.argv[4]):.1f},{r["median"]!r},{r["spread"]:.4f},{s["msf"]["median_cpu_s"]:.4f},{s["bic"]["median_cpu_s"]:.4f},"{d["load_average_before"]}","{d["load_average_after"]}"')
PY
done
