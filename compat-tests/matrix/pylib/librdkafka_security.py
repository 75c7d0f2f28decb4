"""librdkafka's configuration for a security column (matrix_driver's
ctx.security, one entry of the --security file): shared by the
confluent-kafka rows and kcat (-X key=value)."""


def config(col):
    """librdkafka's keys for a security column (matrix_driver's ctx.security)."""
    c = {}
    if col:
        c["security.protocol"] = col["security_protocol"]
    if "ca_pem" in col:
        # librdkafka 2.x checks the host name by default; 1.x did not: asked for on both.
        c.update({"ssl.ca.location": col["ca_pem"], "ssl.endpoint.identification.algorithm": "https"})
    if "client_cert_pem" in col:
        c.update({"ssl.certificate.location": col["client_cert_pem"], "ssl.key.location": col["client_key_pem"]})
    if "sasl_mechanism" in col:
        c.update({"sasl.mechanisms": col["sasl_mechanism"], "sasl.username": col["sasl_username"],
                  "sasl.password": col["sasl_password"]})
    return c
