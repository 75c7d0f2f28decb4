#!/bin/bash
# The image's HEALTHCHECK, with nothing but bash (debian:12-slim has no curl):
# exits 0 when GET <admin listener>/v1/status/ready answers 200, which Runnel
# does once its logs are recovered and, in a cluster, it is registered.
# The admin listener is the first URL of RUNNEL_RUNNEL_ADMIN_LISTENERS (the
# image sets it; docker exec and HEALTHCHECK see the container's
# environment); a wildcard host is reached on loopback. Given a URL instead
# (`runnel-healthcheck http://127.0.0.1:2379/health`), checks that one.
set -uo pipefail

if (($#)); then
  url=$1
else
  listeners=${RUNNEL_RUNNEL_ADMIN_LISTENERS:?no admin listener: set RUNNEL_RUNNEL_ADMIN_LISTENERS}
  url=${listeners%%,*}/v1/status/ready
fi
rest=${url#http://}
hostport=${rest%%/*}
path=/
[[ $rest == */* ]] && path=/${rest#*/}
host=${hostport%:*} port=${hostport##*:}
host=${host#[} host=${host%]}
case $host in
  "" | 0.0.0.0) host=127.0.0.1 ;;
  ::) host=::1 ;;
esac

exec 3<>"/dev/tcp/$host/$port" || exit 1
printf 'GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$path" "$hostport" >&3
IFS= read -r -t 5 status <&3 || exit 1
[[ $status =~ ^HTTP/1\.[01]\ 200\  ]]
