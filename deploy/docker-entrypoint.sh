#!/bin/sh
# Brook's container entry point. In a Kubernetes StatefulSet a pod's name ends with its ordinal
# (brook-0, brook-1, ...) and its HOSTNAME is that name: the node id is the ordinal + 1 (ids start at 1)
# unless BROOK_NODE_ID is set, so one pod template serves every member.
set -eu
if [ -z "${BROOK_NODE_ID:-}" ]; then
  ordinal="${HOSTNAME##*-}"
  case "$ordinal" in
    '' | *[!0-9]*) ;;
    *) BROOK_NODE_ID=$((ordinal + 1)); export BROOK_NODE_ID ;;
  esac
fi
exec "$@"
