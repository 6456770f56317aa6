#!/bin/sh
# /usr/local/bin/svc in the runner image. A hosted runner's credential arrives as a file
# (/run/secrets/svc-run-token, mounted by the executor), never in the container's environment as
# the engine records it (`podman inspect` shows every -e and --env-file value): it is read here into
# svc's own environment only.
secret=${SVC_RUN_TOKEN_FILE:-/run/secrets/svc-run-token}
if [ -z "${SVC_RUN_TOKEN:-}" ] && [ -r "$secret" ]; then
  SVC_RUN_TOKEN=$(cat "$secret")
  export SVC_RUN_TOKEN
fi
unset SVC_RUN_TOKEN_FILE secret
exec node /opt/svc/bin/svc.js "$@"
