#!/bin/bash
# The image's entrypoint: every RUNNEL_* environment variable becomes one
# `--override key=value` to `runnel serve config/server.properties`, with the
# rule apache/kafka's image applies to KAFKA_* (docker/README.md):
#
#   drop the RUNNEL_ prefix, lower-case, then  ___ -> -   __ -> _   _ -> .
#
#   RUNNEL_LOG_DIRS=/d                  log.dirs=/d
#   RUNNEL_RUNNEL_ETCD_ENDPOINTS=...    runnel.etcd.endpoints=...  (Runnel's own keys keep their prefix)
#
# As in apache/kafka's image, listeners defaults to advertised.listeners with
# every host made 0.0.0.0; with neither set, to PLAINTEXT://0.0.0.0:9092 (the
# shipped file's 127.0.0.1 is unreachable from outside a container; its
# advertised 127.0.0.1:9092 fits `docker run -p 127.0.0.1:9092:9092`).
# RUNNEL_BROKERS is the CLI's bootstrap list, not a broker config, and is
# left alone. Arguments that start with `-` go to `runnel serve` after the
# overrides, so they win (`docker run IMAGE --override k=v`); other
# arguments are run instead (`docker run IMAGE runnel apis`).
set -euo pipefail

if (($#)) && [[ $1 != -* ]]; then
  exec "$@"
fi

# RUNNEL_LOG_DIRS -> log.dirs (see the header).
config_key() {
  local key=${1#RUNNEL_}
  key=${key,,}
  key=${key//___/-}
  key=${key//__/$'\x01'}
  key=${key//_/.}
  printf '%s' "${key//$'\x01'/_}"
}

if [[ -z ${RUNNEL_LISTENERS-} ]]; then
  if [[ -n ${RUNNEL_ADVERTISED_LISTENERS-} ]]; then
    RUNNEL_LISTENERS=$(sed -E 's#://(\[[^]]*\]|[^:,]*):#://0.0.0.0:#g' <<<"$RUNNEL_ADVERTISED_LISTENERS")
  else
    RUNNEL_LISTENERS=PLAINTEXT://0.0.0.0:9092
  fi
  export RUNNEL_LISTENERS
fi

overrides=()
while IFS= read -r name; do
  [[ $name == RUNNEL_BROKERS ]] && continue
  overrides+=(--override "$(config_key "$name")=${!name}")
done < <(compgen -e | grep '^RUNNEL_' | sort)

exec runnel serve config/server.properties "${overrides[@]}" "$@"
