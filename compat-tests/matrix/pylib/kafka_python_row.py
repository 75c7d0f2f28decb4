"""Entry point of the kafka-python row (run by clients/kafka-python/run inside its venv)."""

import sys

import kafka_python_scenarios
import matrix_driver

if __name__ == "__main__":
    matrix_driver.log("kafka-python: %s on %s" % (kafka_python_scenarios.versions(), sys.executable))
    sys.exit(matrix_driver.run("kafka-python", kafka_python_scenarios.scenarios()))
