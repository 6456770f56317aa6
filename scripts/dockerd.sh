#!/bin/sh
# Docker for the suite (.ci/run, and by hand): `scripts/dockerd.sh start` starts dockerd in the
# background with the settings that work on hosts like ours and waits until `docker info` answers;
# `scripts/dockerd.sh stop` stops the dockerd it started (and only that one). A dockerd already
# answering is used as it is and left running.
#
# Debian 12 as root without CAP_SYS_RESOURCE and with hybrid cgroups: the systemd cgroup driver,
# crun, and file limits above the hard limit fail every container, so the config names cgroupfs,
# overlay2 and no default ulimits. No bridge and no firewall rules are made: a runner's `bridge`
# network is then a namespace with loopback only, and it reaches a loopback `svc server` through
# the socket the executor mounts in (docs/hosted.md, "Networking").
set -eu
state=${SVC_DOCKERD_STATE:-/run/svc-dockerd}
usage() { echo "usage: scripts/dockerd.sh start|stop" >&2; exit 2; }
[ $# -eq 1 ] || usage

case $1 in
start)
  if docker info >/dev/null 2>&1; then echo "dockerd: already answering" >&2; exit 0; fi
  command -v dockerd >/dev/null || { echo "dockerd: not installed (apt-get install docker.io)" >&2; exit 1; }
  mkdir -p "$state" && chmod 0700 "$state"
  cat > "$state/daemon.json" <<'JSON'
{"exec-opts": ["native.cgroupdriver=cgroupfs"], "storage-driver": "overlay2", "bridge": "none", "iptables": false, "ip-masq": false}
JSON
  # setsid: the daemon outlives this shell and the terminal's signals; its log stays for a failure.
  setsid dockerd --config-file "$state/daemon.json" --pidfile "$state/dockerd.pid" >"$state/dockerd.log" 2>&1 </dev/null &
  i=0
  until docker info >/dev/null 2>&1; do
    i=$((i + 1))
    if [ $i -gt 120 ]; then echo "dockerd: no answer after 60 s; its log: $state/dockerd.log" >&2; tail -5 "$state/dockerd.log" >&2; exit 1; fi
    sleep 0.5
  done
  echo "dockerd: started (log $state/dockerd.log)" >&2
  ;;
stop)
  [ -f "$state/dockerd.pid" ] || { echo "dockerd: not started by this script" >&2; exit 0; }
  pid=$(cat "$state/dockerd.pid")
  kill "$pid" 2>/dev/null || true
  i=0
  while kill -0 "$pid" 2>/dev/null && [ $i -lt 60 ]; do i=$((i + 1)); sleep 0.5; done
  rm -f "$state/dockerd.pid"
  echo "dockerd: stopped" >&2
  ;;
*) usage ;;
esac
