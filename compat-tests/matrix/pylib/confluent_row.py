"""Entry point of the two confluent-kafka rows: confluent_row.py <client id> --bootstrap ... --cache ...
Run by clients/librdkafka-debian/run (Debian's python3) and clients/confluent-kafka-pypi/run (a venv)."""

import sys

import confluent_scenarios
import matrix_driver

if __name__ == "__main__":
    client_id = sys.argv.pop(1)
    matrix_driver.log("%s: %s on %s" % (client_id, confluent_scenarios.versions(), sys.executable))
    sys.exit(matrix_driver.run(client_id, confluent_scenarios.scenarios()))
