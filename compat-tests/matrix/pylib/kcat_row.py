"""Entry point of the kcat row (run by clients/kcat/run with Debian's python3)."""

import subprocess
import sys

import kcat_scenarios
import matrix_driver

if __name__ == "__main__":
    version = subprocess.run(["kcat", "-V"], capture_output=True, text=True).stdout.splitlines()
    matrix_driver.log("kcat: %s" % " ".join(version[4:5] or version[:1]))
    sys.exit(matrix_driver.run("kcat", kcat_scenarios.scenarios()))
