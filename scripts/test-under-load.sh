#!/usr/bin/env bash
# The whole test suite (or the jest arguments given) with a CPU hog of its own beside it: `stress-ng --cpu N`
# keeps N cores busy for as long as jest runs, as other work on a shared machine does, and the suite must stay
# green (docs/development.md, "Under load"). Run it weekly, and after changing a wait or a timeout in the tests.
#
#   bash scripts/test-under-load.sh                      # the whole suite beside stress-ng --cpu 2
#   STRESS_CPUS=4 bash scripts/test-under-load.sh test/demo
#
# It prints the load average before, during (every minute) and after, and the suite's duration; it exits with
# jest's status. Extra arguments go to jest (`--json --outputFile=…` included).
set -uo pipefail
cd "$(dirname "$0")/.."

cpus=${STRESS_CPUS:-2}
if ! command -v stress-ng >/dev/null; then
  echo "test-under-load: stress-ng is not installed (apt-get install stress-ng)" >&2
  exit 2
fi

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "test-under-load: $(nproc) cores, load average $(load) before; starting stress-ng --cpu $cpus"
stress-ng --cpu "$cpus" --quiet &
hog=$!
# A line a minute with the load, so a long run's log says how busy the machine was throughout.
(while sleep 60; do echo "test-under-load: load average $(load)"; done) &
watcher=$!
stop() { kill "$hog" "$watcher" 2>/dev/null; wait "$hog" "$watcher" 2>/dev/null; }
trap 'stop; exit 130' INT TERM

started=$(date +%s)
npm test -- "$@"
status=$?
elapsed=$(($(date +%s) - started))
stop
printf 'test-under-load: jest exited %d after %dm%02ds beside stress-ng --cpu %d; load average %s after\n' \
  "$status" $((elapsed / 60)) $((elapsed % 60)) "$cpus" "$(load)"
exit "$status"
