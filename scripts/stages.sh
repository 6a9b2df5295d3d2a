#!/usr/bin/env bash
# Run stages, each given as two arguments, a NAME and a shell COMMAND: in order, every one of
# them whatever the ones before did (Ctrl-C, SIGINT, stops after the stage it interrupted).
# Then a table of each stage's result and time. Exit status 0 if every stage passed, 1 if not.
# scripts/test.sh runs its stages with it.
set -uo pipefail
if [ $# -eq 0 ] || [ $(($# % 2)) -ne 0 ]; then
    echo "usage: stages.sh NAME COMMAND [NAME COMMAND ...]" >&2
    exit 2
fi
names=() results=() times=()
failed=0 interrupted=0
trap 'interrupted=1' INT
while [ $# -gt 0 ]; do
    name="$1" command="$2"
    shift 2
    names+=("$name")
    if [ "$interrupted" = 1 ]; then
        results+=("not run (interrupted)") times+=("")
        failed=1
        continue
    fi
    echo "== $name: $command"
    started=$SECONDS
    bash -c "$command"
    status=$?
    elapsed=$((SECONDS - started))
    times+=("$((elapsed / 60)) min $((elapsed % 60)) s")
    if [ "$status" = 0 ]; then
        results+=("passed")
    else
        results+=("FAILED (exit status $status)")
        failed=1
    fi
done
echo
echo "stage            result                       time"
for i in "${!names[@]}"; do
    printf '%-16s %-28s %s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
done
printf '%-16s %-28s %s\n' "(all)" "$([ "$failed" = 0 ] && echo passed || echo FAILED)" "$((SECONDS / 60)) min $((SECONDS % 60)) s"
exit "$failed"
