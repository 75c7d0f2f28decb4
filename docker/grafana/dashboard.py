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
