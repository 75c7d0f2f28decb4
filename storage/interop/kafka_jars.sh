#!/usr/bin/env bash
# Fetches Apache Kafka's broker jar (org.apache.kafka:kafka_2.13) and its
# runtime dependencies from Maven Central with the machine's Maven, into a
# cache directory, and prints the classpath. A second run reuses the cache.
#
#   kafka_jars.sh <cache dir>   ->  stdout: <cache dir>/lib/*
set -euo pipefail

KAFKA_VERSION="${KAFKA_VERSION:-4.1.1}"
cache="${1:?usage: kafka_jars.sh <cache dir>}"
lib="$cache/kafka-$KAFKA_VERSION/lib"
stamp="$lib/.complete"

if [[ ! -f "$stamp" ]]; then
  work="$cache/kafka-$KAFKA_VERSION/pom"
  mkdir -p "$work" "$lib"
  cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>runnel</groupId>
  <artifactId>kafka-interop-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka-tools</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
  </dependencies>
</project>
POM
  mvn -B -q -f "$work/pom.xml" -Dmaven.repo.local="$cache/m2" \
    org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
    -DoutputDirectory="$(cd "$lib" && pwd)" -DincludeScope=runtime >&2
  touch "$stamp"
fi
echo "$(cd "$lib" && pwd)/*"
