"""security_properties.py FILE: a driver's --security FILE (JSON, one entry
per security column; ../security_columns.py) as Java properties on stdout,
for the Java-based drivers (clients/java, clients/kafka-cli):
    columns=<id>,<id>,...        the columns, in the file's order
    <id>.<key>=<value>           each column's keys as in FILE
    <id>.client.<setting>=<v>    the Java client's settings for the column
                                 (security.protocol, ssl.*, sasl.*): what a
                                 user writes in a client.properties file
"""

import json
import sys


def java_client(column):
    """Kafka's Java client settings for a column: PEM trust and key stores
    (KIP-651), the JAAS line of the mechanism's login module."""
    c = {"security.protocol": column["security_protocol"]}
    if "ca_pem" in column:
        # ssl.endpoint.identification.algorithm stays https, the default: the
        # broker's certificate names 127.0.0.1.
        c.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": column["ca_pem"]})
    if "client_keystore_pem" in column:
        c.update({"ssl.keystore.type": "PEM", "ssl.keystore.location": column["client_keystore_pem"]})
    if "sasl_mechanism" in column:
        module = ("org.apache.kafka.common.security.plain.PlainLoginModule" if column["sasl_mechanism"] == "PLAIN"
                  else "org.apache.kafka.common.security.scram.ScramLoginModule")
        c.update({"sasl.mechanism": column["sasl_mechanism"],
                  "sasl.jaas.config": '%s required username="%s" password="%s";'
                                      % (module, column["sasl_username"], column["sasl_password"])})
    return c


def escape(text):
    """java.util.Properties.load's escapes for a value."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def main(path):
    with open(path) as f:
        doc = json.load(f)
    lines = ["columns=" + ",".join(doc)]
    for sid, column in doc.items():
        lines += ["%s.%s=%s" % (sid, k, escape(str(v))) for k, v in sorted(column.items())]
        lines += ["%s.client.%s=%s" % (sid, k, escape(v)) for k, v in sorted(java_client(column).items())]
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
