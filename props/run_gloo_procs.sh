#!/bin/sh
# Runs the gloo_procs property suites: every rank a process under distrun, all processes with one
# rapidcheck seed (RC_PARAMS's own seed=N if given, else a random one, printed for replaying).
# Usage: run_gloo_procs.sh DISTRUN DIST_PROPS [gtest args]; DIST_PROPS_PROCS processes (4).
set -eu
distrun=$1
props=$2
shift 2
procs=${DIST_PROPS_PROCS:-4}
params=${RC_PARAMS:-}
case " $params" in
  *" seed="*) ;;
  *) params="${params:+$params }seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')" ;;
esac
echo "gloo_procs: RC_PARAMS=\"$params\" distrun -n $procs -- dist_props --gtest_filter='*/gloo_procs.*' $*"
RC_PARAMS=$params exec "$distrun" -n "$procs" -- "$props" --gtest_filter='*/gloo_procs.*' "$@"
