#!/usr/bin/python3
"""Writes docker/grafana/dashboards/runnel.json, the Grafana dashboard that
docker/compose.yaml provisions, from the table ROWS below: a row a group of
panels, a panel a line (title, PromQL, legend, unit, what Kafka calls it).
To add a panel for a new metric, add its line and run

    python3 docker/grafana/dashboard.py

compat-tests/compose_test.py checks that the JSON is this script's output
and that every metric a panel queries is one a running broker exports.
"""

import json
import os
import sys

DATASOURCE = {"type": "prometheus", "uid": "prometheus"}  # provisioning/datasources/prometheus.yml
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dashboards", "runnel.json")

BROKER = 'instance=~"$instance"'
TOPIC = 'topic=~"$topic",' + BROKER
ALL_TOPICS = 'topic="",' + BROKER  # the series without a topic label: every topic together


def rate(metric, selector, by=None):
    """Per-second rate of a counter, summed (by the given labels)."""
    inner = "rate(%s{%s}[$__rate_interval])" % (metric, selector)
    return "sum by (%s) (%s)" % (by, inner) if by else "sum(%s)" % inner


def quantile(q, histogram, selector, by):
    """The q-quantile of a histogram's rate, by the given labels."""
    return "histogram_quantile(%s, sum by (le, %s) (rate(%s_bucket{%s}[$__rate_interval])))" % (
        q, by, histogram, selector)


class Stat:
    kind, per_line, height = "stat", 6, 4

    def __init__(self, title, expr, unit, description=""):
        self.title, self.expr, self.unit, self.description, self.legend = title, expr, unit, description, ""


class Graph:
    kind, per_line, height = "timeseries", 3, 8

    def __init__(self, title, expr, legend, unit, description=""):
        self.title, self.expr, self.legend, self.unit, self.description = title, expr, legend, unit, description


PARTITION = "{{topic}}-{{partition}} on {{instance}}"

ROWS = [
    ("Overview", [
        Stat("Brokers up", 'count(up{job="runnel"} == 1)', "none",
             "Brokers whose /metrics Prometheus scraped last time (Prometheus's own up series)"),
        Stat("Messages in", rate("kafka_server_brokertopicmetrics_messagesin_total", ALL_TOPICS), "cps",
             "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec"),
        Stat("Bytes in", rate("kafka_server_brokertopicmetrics_bytesin_total", ALL_TOPICS), "Bps",
             "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec"),
        Stat("Bytes out", rate("kafka_server_brokertopicmetrics_bytesout_total", ALL_TOPICS), "Bps",
             "kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec"),
        Stat("Requests", rate("kafka_network_requestmetrics_requests_total", BROKER), "reqps",
             "kafka.network:type=RequestMetrics,name=RequestsPerSec, every API"),
        Stat("Connections", "sum(kafka_server_socket_server_metrics_connection_count{%s})" % BROKER, "none",
             "kafka.server:type=socket-server-metrics,name=connection-count, every listener"),
    ]),
    ("Topics", [
        Graph("Messages in per topic", rate("kafka_server_brokertopicmetrics_messagesin_total", TOPIC, "topic"),
              "{{topic}}", "cps", "Records appended as leader, per second"),
        Graph("Bytes in per topic", rate("kafka_server_brokertopicmetrics_bytesin_total", TOPIC, "topic"),
              "{{topic}}", "Bps", "Record batch bytes appended as leader, per second"),
        Graph("Bytes out per topic", rate("kafka_server_brokertopicmetrics_bytesout_total", TOPIC, "topic"),
              "{{topic}}", "Bps", "Record bytes sent to consumers, per second"),
    ]),
    ("Requests and connections", [
        Graph("Requests per API", rate("kafka_network_requestmetrics_requests_total", BROKER, "request"),
              "{{request}}", "reqps", "Requests read, per second, by API"),
        Graph("Requests per API and version",
              rate("kafka_network_requestmetrics_requests_total", BROKER, "request, version"),
              "{{request}} v{{version}}", "reqps", "Requests read, per second, by API and version"),
        Graph("Connections per listener",
              "sum by (instance, listener) (kafka_server_socket_server_metrics_connection_count{%s})" % BROKER,
              "{{listener}} on {{instance}}", "none", "Open connections, by broker and listener"),
    ]),
    ("Request errors and latency", [
        Graph("Errors per API", rate("kafka_network_requestmetrics_errors_total", 'error!="NONE",' + BROKER,
                                     "request, error"),
              "{{request}} {{error}}", "cps",
              "kafka.network:type=RequestMetrics,name=ErrorsPerSec: error codes answered other than NONE, per second"),
        Graph("Request time p99 per API", quantile(0.99, "kafka_network_requestmetrics_totaltimems", BROKER, "request"),
              "{{request}}", "ms", "kafka.network:type=RequestMetrics,name=TotalTimeMs, 99th percentile"),
        Graph("Request time p50 per API", quantile(0.5, "kafka_network_requestmetrics_totaltimems", BROKER, "request"),
              "{{request}}", "ms", "kafka.network:type=RequestMetrics,name=TotalTimeMs, median"),
        Graph("Requests in flight", "kafka_network_requestchannel_requestqueuesize{%s}" % BROKER, "{{instance}}",
              "none", "Requests read and not yet answered (Kafka's RequestQueueSize and its handlers together)"),
        Graph("Request memory", "kafka_network_socketserver_memorypoolused{%s}" % BROKER, "{{instance}}", "bytes",
              "kafka.network:type=SocketServer,name=MemoryPoolUsed (queued.max.request.bytes bounds it)"),
    ]),
    ("Replication", [
        Stat("Active controllers", "sum(kafka_controller_kafkacontroller_activecontrollercount{%s})" % BROKER, "none",
             "kafka.controller:type=KafkaController,name=ActiveControllerCount: 1 in a healthy cluster"),
        Stat("Offline partitions", "sum(kafka_controller_kafkacontroller_offlinepartitionscount{%s})" % BROKER,
             "none", "kafka.controller:type=KafkaController,name=OfflinePartitionsCount"),
        Stat("Under-replicated", "sum(kafka_server_replicamanager_underreplicatedpartitions{%s})" % BROKER, "none",
             "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions"),
        Stat("Under min ISR", "sum(kafka_server_replicamanager_underminisrpartitioncount{%s})" % BROKER, "none",
             "kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount: acks=all produce fails"),
        Stat("Partitions", "sum(kafka_server_replicamanager_partitioncount{%s})" % BROKER, "none",
             "kafka.server:type=ReplicaManager,name=PartitionCount, replicas over every broker"),
        Stat("Producer ids", "sum(kafka_server_replicamanager_produceridcount{%s})" % BROKER, "none",
             "kafka.server:type=ReplicaManager,name=ProducerIdCount"),
        Graph("Leaders per broker", "kafka_server_replicamanager_leadercount{%s}" % BROKER, "{{instance}}", "none",
              "kafka.server:type=ReplicaManager,name=LeaderCount"),
        Graph("ISR shrinks and expands",
              "sum by (instance) (rate(kafka_server_replicamanager_isrshrinks_total{%s}[$__rate_interval])) - "
              "sum by (instance) (rate(kafka_server_replicamanager_isrexpands_total{%s}[$__rate_interval]))"
              % (BROKER, BROKER), "{{instance}}", "cps",
              "IsrShrinksPerSec less IsrExpandsPerSec: above zero while replicas fall out"),
        Graph("fsync p99", quantile(0.99, "kafka_log_logflushstats_logflushrateandtimems", BROKER, "instance"),
              "{{instance}}", "ms", "kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs, 99th percentile"),
    ]),
    ("Groups", [
        Graph("Groups per coordinator", "kafka_coordinator_group_groupmetadatamanager_numgroups{%s}" % BROKER,
              "{{instance}}", "none", "kafka.coordinator.group:type=GroupMetadataManager,name=NumGroups"),
        Graph("Groups rebalancing",
              "kafka_coordinator_group_groupmetadatamanager_numgroupspreparingrebalance{%s} + "
              "kafka_coordinator_group_groupmetadatamanager_numgroupscompletingrebalance{%s}" % (BROKER, BROKER),
              "{{instance}}", "none", "NumGroupsPreparingRebalance plus NumGroupsCompletingRebalance"),
        Graph("Consumer lag", "sum by (consumergroup, topic) (kafka_consumergroup_lag{%s})" % TOPIC,
              "{{consumergroup}} {{topic}}", "short",
              "High watermark less the committed offset, summed over the topic's partitions (kafka_exporter's name)"),
        Graph("Appends per group commit",
              "sum by (instance) (rate(runnel_log_group_commit_size_sum{%s}[$__rate_interval])) / "
              "sum by (instance) (rate(runnel_log_group_commit_size_count{%s}[$__rate_interval]))" % (BROKER, BROKER),
              "{{instance}}", "none", "acks=all appends made durable by one fdatasync round, on average"),
    ]),
    ("Partitions", [
        Graph("Log size", "kafka_log_log_size{%s}" % TOPIC, PARTITION, "bytes",
              "kafka.log:type=Log,name=Size: bytes of the partition's segments, per replica"),
        Graph("Log segments", "kafka_log_log_numlogsegments{%s}" % TOPIC, PARTITION, "none",
              "kafka.log:type=Log,name=NumLogSegments"),
        Graph("Records retained", "kafka_log_log_logendoffset{%s} - kafka_log_log_logstartoffset{%s}" % (TOPIC, TOPIC),
              PARTITION, "short", "Log end offset less log start offset"),
        Graph("Log end offset", "kafka_log_log_logendoffset{%s}" % TOPIC, PARTITION, "short",
              "kafka.log:type=Log,name=LogEndOffset"),
        Graph("Log start offset", "kafka_log_log_logstartoffset{%s}" % TOPIC, PARTITION, "short",
              "kafka.log:type=Log,name=LogStartOffset"),
    ]),
]


def variable(name, label, query):
    """A multi-value template variable; All is `.+` (so the series without the label stay out)."""
    return {"name": name, "label": label, "type": "query", "datasource": DATASOURCE,
            "query": {"query": query, "refId": name}, "definition": query, "refresh": 2, "sort": 1,
            "multi": True, "includeAll": True, "allValue": ".+",
            "current": {"selected": True, "text": ["All"], "value": ["$__all"]}}


VARIABLES = [
    variable("instance", "Broker", "label_values(kafka_server_brokertopicmetrics_messagesin_total, instance)"),
    variable("topic", "Topic", 'label_values(kafka_log_log_size{instance=~"$instance"}, topic)'),
]


def panel_json(panel, pid, x, y, width):
    out = {
        "id": pid, "type": panel.kind, "title": panel.title, "description": panel.description,
        "datasource": DATASOURCE, "gridPos": {"x": x, "y": y, "w": width, "h": panel.height},
        "targets": [{"refId": "A", "datasource": DATASOURCE, "expr": panel.expr, "legendFormat": panel.legend}],
        "fieldConfig": {"defaults": {"unit": panel.unit, "min": 0}, "overrides": []},
    }
    if panel.kind == "stat":
        out["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                          "colorMode": "value", "graphMode": "area", "textMode": "auto"}
    else:
        out["options"] = {"legend": {"displayMode": "table", "placement": "bottom", "calcs": ["lastNotNull", "max"]},
                          "tooltip": {"mode": "multi", "sort": "desc"}}
    return out


def dashboard():
    panels, y, pid = [], 0, 1
    for title, row in ROWS:
        panels.append({"id": pid, "type": "row", "title": title, "collapsed": False,
                       "gridPos": {"x": 0, "y": y, "w": 24, "h": 1}, "panels": []})
        pid, y = pid + 1, y + 1
        for start in range(0, len(row), row[0].per_line):
            line = row[start:start + row[0].per_line]
            width = 24 // len(line)
            for i, panel in enumerate(line):
                panels.append(panel_json(panel, pid, i * width, y, width))
                pid += 1
            y += line[0].height
    return {
        "uid": "runnel", "title": "Runnel", "tags": ["runnel", "kafka"], "editable": True,
        "schemaVersion": 39, "version": 1, "refresh": "10s", "timezone": "browser",
        "time": {"from": "now-30m", "to": "now"}, "annotations": {"list": []},
        "templating": {"list": VARIABLES}, "panels": panels,
    }


def text():
    return json.dumps(dashboard(), indent=2) + "\n"


if __name__ == "__main__":
    with open(OUT, "w") as f:
        f.write(text())
    sys.stderr.write("wrote %s\n" % OUT)
