"""Entry point of the runnel-cli row (run by clients/runnel-cli/run with Debian's python3)."""

import sys

import matrix_driver
import runnel_cli_scenarios

if __name__ == "__main__":
    matrix_driver.log("runnel CLI: %s" % runnel_cli_scenarios.binary())
    sys.exit(matrix_driver.run("runnel-cli", runnel_cli_scenarios.scenarios()))
