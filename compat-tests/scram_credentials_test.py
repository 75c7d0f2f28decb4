#!/usr/bin/python3
"""SCRAM users (label "security") managed with Kafka 4.1.1's own kafka-configs
(kafka.admin.ConfigCommand, jars as for acl_test) against a real Runnel:

  - --alter --add-config 'SCRAM-SHA-256=[iterations=8192,password=...]' and
    'SCRAM-SHA-512=[password=...]' (the tool's 4096), one mechanism a call:
    both in one --add-config are one request naming the user twice, which
    Kafka's controller refuses ("A user credential cannot be altered twice
    in the same request") and so does Runnel;
  - --describe --entity-type users [--entity-name alice] prints what Kafka
    prints ("SCRAM credential configs for user-principal 'alice' are
    SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096");
  - --alter --delete-config SCRAM-SHA-512 removes one mechanism;
  - the errors as the tool prints them: too many iterations, deleting what
    is not there, too few iterations (refused by the tool itself), and
    ClusterAuthorizationException without ALTER / DESCRIBE on the cluster;
  - the stored credential (runnel-scram-credentials.json in the log dir) is
    the StoredKey and ServerKey Kafka's ScramFormatter derives from the
    password and the salt the tool chose (computed here with hashlib), the
    password nowhere; all of it survives a restart.

  /usr/bin/python3 compat-tests/scram_credentials_test.py build/debug/runnel <kafka jar cache dir>
"""

import os
import sys

from kafka_harness import kafka_classpath
from runnel_harness import Runnel, run_tests, runnel_binary
from scram_admin import ConfigsTool, check_stored, described, describe_raw

TOOL = None  # ConfigsTool, from argv
AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "allow.everyone.if.no.acl.found": "false"}
ALICE = "alice-secret"
BOB = "bob-secret"
STORED = "runnel-scram-credentials.json"


def eq(got, want, what):
    assert got == want, "%s: got %r, want %r" % (what, got, want)


def stored_text(broker):
    with open(os.path.join(broker.log_dir, STORED)) as f:
        return f.read()


def test_alter_describe_delete_restart():
    with Runnel() as broker:
        b = broker.bootstrap
        # Both mechanisms in one --add-config: one request naming alice twice.
        err = TOOL.refused(b, "--alter", "--add-config",
                           "SCRAM-SHA-256=[iterations=8192,password=%s],SCRAM-SHA-512=[password=%s]" % (ALICE, ALICE),
                           "--entity-type", "users", "--entity-name", "alice")
        assert "DuplicateResourceException: A user credential cannot be altered twice in the same request" in err, err
        eq(TOOL.describe(b), "", "--describe after the refused alteration")

        out = TOOL.add(b, "alice", "SCRAM-SHA-256=[iterations=8192,password=%s]" % ALICE)
        eq(out, "Completed updating config for user alice.\n", "kafka-configs --alter output")
        TOOL.add(b, "alice", "SCRAM-SHA-512=[password=%s]" % ALICE)
        TOOL.add(b, "bob", "SCRAM-SHA-512=[iterations=16384,password=%s]" % BOB)

        eq(TOOL.describe(b, "alice"),
           "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, "
           "SCRAM-SHA-512=iterations=4096\n", "--describe --entity-name alice")
        eq(described(TOOL.describe(b)),
           {"alice": {"SCRAM-SHA-256": 8192, "SCRAM-SHA-512": 4096}, "bob": {"SCRAM-SHA-512": 16384}},
           "--describe of every user")
        eq(TOOL.describe(b, "nobody"), "", "--describe of a user without credentials")

        text = stored_text(broker)
        check_stored(text, "alice", "SCRAM-SHA-256", ALICE, 8192)
        check_stored(text, "alice", "SCRAM-SHA-512", ALICE, 4096)
        check_stored(text, "bob", "SCRAM-SHA-512", BOB, 16384)

        # --add-config of a mechanism the user has replaces it (a new salt).
        TOOL.add(b, "bob", "SCRAM-SHA-512=[iterations=8192,password=%s-2]" % BOB)
        check_stored(stored_text(broker), "bob", "SCRAM-SHA-512", BOB + "-2", 8192)

        TOOL.delete(b, "alice", "SCRAM-SHA-512")
        eq(described(TOOL.describe(b, "alice")), {"alice": {"SCRAM-SHA-256": 8192}}, "after --delete-config")
        before = stored_text(broker)

        broker.restart()
        eq(stored_text(broker), before, "%s after a restart" % STORED)
        eq(described(TOOL.describe(broker.bootstrap)),
           {"alice": {"SCRAM-SHA-256": 8192}, "bob": {"SCRAM-SHA-512": 8192}}, "--describe after a restart")
        eq(describe_raw(broker.port, ["alice"]), (0, {"alice": (0, "", {"SCRAM-SHA-256": 8192})}),
           "DescribeUserScramCredentials after a restart")

        broker.restart(graceful=False)  # SIGKILL
        eq(described(TOOL.describe(broker.bootstrap)),
           {"alice": {"SCRAM-SHA-256": 8192}, "bob": {"SCRAM-SHA-512": 8192}}, "--describe after SIGKILL")


def test_errors():
    with Runnel() as broker:
        b = broker.bootstrap
        err = TOOL.refused(b, "--alter", "--add-config", "SCRAM-SHA-256=[iterations=16385,password=x]",
                           "--entity-type", "users", "--entity-name", "alice")
        assert "UnacceptableCredentialException: Too many iterations" in err, err
        # The tool refuses too few iterations itself, before any request.
        err = TOOL.refused(b, "--alter", "--add-config", "SCRAM-SHA-256=[iterations=1000,password=x]",
                           "--entity-type", "users", "--entity-name", "alice")
        # (after SLF4J's notice that it has no binding)
        eq(err.strip().splitlines()[-1], "Iterations 1000 is less than the minimum 4096 required for SCRAM-SHA-256",
           "too few")
        err = TOOL.refused(b, "--alter", "--delete-config", "SCRAM-SHA-512", "--entity-type", "users",
                           "--entity-name", "carol")
        assert "ResourceNotFoundException: Attempt to delete a user credential that does not exist" in err, err
        TOOL.add(b, "carol", "SCRAM-SHA-256=[password=carol-secret]")
        err = TOOL.refused(b, "--alter", "--delete-config", "SCRAM-SHA-512", "--entity-type", "users",
                           "--entity-name", "carol")
        assert "ResourceNotFoundException" in err, err
        eq(described(TOOL.describe(b)), {"carol": {"SCRAM-SHA-256": 4096}}, "only what was accepted")
        eq(describe_raw(broker.port, ["nobody", "carol", "carol"]),
           (0, {"nobody": (91, "Attempt to describe a user credential that does not exist: nobody", {}),
                "carol": (92, "Cannot describe SCRAM credentials for the same user twice in a single request: "
                              "carol", {})}),
           "DescribeUserScramCredentials of an unknown and a repeated user")


def test_authorization():
    # Every plaintext connection is User:ANONYMOUS; without ACLs it may do nothing.
    with Runnel(overrides=AUTHORIZER) as broker:
        b = broker.bootstrap
        err = TOOL.refused(b, "--alter", "--add-config", "SCRAM-SHA-256=[password=x]", "--entity-type", "users",
                           "--entity-name", "alice")
        assert "ClusterAuthorizationException" in err, err
        eq(describe_raw(broker.port), (31, {}), "DescribeUserScramCredentials without DESCRIBE on the cluster")
        assert not os.path.exists(os.path.join(broker.log_dir, STORED)) or "alice" not in stored_text(broker)
    with Runnel(overrides=dict(AUTHORIZER, **{"super.users": "User:ANONYMOUS"})) as broker:
        TOOL.add(broker.bootstrap, "alice", "SCRAM-SHA-256=[password=x]")
        eq(described(TOOL.describe(broker.bootstrap)), {"alice": {"SCRAM-SHA-256": 4096}}, "a super user")


if __name__ == "__main__":
    runnel_binary()  # argv[1], checked before anything starts
    TOOL = ConfigsTool(kafka_classpath(sys.argv[2] if len(sys.argv) > 2 else None))
    sys.exit(run_tests([
        ("kafka-configs SCRAM users: --alter, --describe, --delete-config, restarts", test_alter_describe_delete_restart),
        ("kafka-configs SCRAM errors as Kafka prints them", test_errors),
        ("SCRAM APIs need ALTER and DESCRIBE on the cluster", test_authorization),
    ]))
