#!/bin/sh
# Runs the property suites with every rank a process under distrun: gloo_procs (the default) or
# nccl_procs (DIST_PROPS_PROCS_BACKEND=nccl_procs; one process per GPU); or under mpirun:
# mpi_procs (DIST_PROPS_PROCS_BACKEND=mpi_procs; MASTER_PORT picks the store's port, 29619).
# All processes get one rapidcheck seed (RC_PARAMS's own seed=N if given, else a random one,
# printed for replaying). Fails when a property fails, and when no test ran (the filter matched
# none, or all skipped).
# Usage: run_procs.sh DISTRUN DIST_PROPS [gtest args]; DIST_PROPS_PROCS processes (4).
set -eu
distrun=$1
props=$2
shift 2
procs=${DIST_PROPS_PROCS:-4}
suite=${DIST_PROPS_PROCS_BACKEND:-gloo_procs}
case "$suite" in
  gloo_procs|nccl_procs|mpi_procs) ;;
  *) echo "run_procs.sh: DIST_PROPS_PROCS_BACKEND=$suite: expected gloo_procs, nccl_procs or mpi_procs" >&2
     exit 2 ;;
esac
params=${RC_PARAMS:-}
case " $params" in
  *" seed="*) ;;
  *) params="${params:+$params }seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')" ;;
esac
log=$(mktemp "${TMPDIR:-/tmp}/run_procs.XXXXXX")
trap 'rm -f "$log" "$log.status"' EXIT
# Every line prefixed with its rank as "[r] ", as distrun does (mpirun's tags are rewritten).
launch() {
  if [ "$suite" = mpi_procs ]; then
    RC_PARAMS=$params mpirun --allow-run-as-root --oversubscribe --tag-output -n "$procs" \
      -x RC_PARAMS -x GTEST_COLOR=no -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT="${MASTER_PORT:-29619}" \
      "$props" --gtest_filter="*/$suite.*" "$@" 2>&1
  else
    RC_PARAMS=$params "$distrun" -n "$procs" -- "$props" --gtest_filter="*/$suite.*" "$@" 2>&1
  fi
}
launcher=distrun
[ "$suite" = mpi_procs ] && launcher=mpirun
echo "$suite: RC_PARAMS=\"$params\" $launcher -n $procs -- dist_props --gtest_filter='*/$suite.*' $*"
{ launch "$@" || echo $? >"$log.status"; } |
  sed -u -e 's/^\[[0-9]*,\([0-9]*\)\]<std[a-z]*>:/[\1] /' \
    -e 's/\[[0-9]*,\([0-9]*\)\]<std[a-z]*>:/\n[\1] /g' | tee "$log"
if [ -s "$log.status" ]; then exit "$(cat "$log.status")"; fi

# The gtest summary (every process runs the same tests): how many matched, how many passed. Read
# anywhere in a line: a process's partial line (rapidcheck writes "Using configuration: " and its
# seed apart) can glue another's output onto it.
matched=$(grep -o '\[==========\] Running [0-9]* tests* from' "$log" | head -n 1 | tr -dc 0-9)
passed=$(grep -o '\[       OK \] [^ ]*' "$log" | sort -u | wc -l)
if [ -z "$matched" ] || [ "$matched" -eq 0 ]; then
  echo "run_procs.sh: FAILED: no test ran: the gtest filter matched no test" >&2
  exit 1
fi
if [ "$passed" -eq 0 ]; then
  echo "run_procs.sh: FAILED: no test ran: all $matched selected tests skipped (is $suite in" \
    "DIST_PROPS_BACKENDS? can it run here?)" >&2
  exit 1
fi
echo "$suite: $passed of $matched selected tests ran and passed on $procs processes" \
  "($((matched - passed)) skipped)"
